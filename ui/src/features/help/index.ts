// Help: about, keyboard shortcuts, report a problem.
// This face is the only module other features and the app import (see boundary.test.ts).
export { HelpDialog, type HelpTab } from "./HelpDialog";
export { SHORTCUTS, keysFor } from "./shortcuts";
