// Help: about, keyboard shortcuts, report a problem.
// This face is the only module other features and the app import (see boundary.test.ts).
import { lazy } from "react";
// The dialog loads on demand (it is not on the first screen).
export type { HelpTab } from "./HelpDialog";
export const HelpDialog = lazy(() => import("./HelpDialog").then((m) => ({ default: m.HelpDialog })));
export { SHORTCUTS, keysFor } from "./shortcuts";
