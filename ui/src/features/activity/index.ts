// The AI activity view: every AI change accepted or rejected, for a project (from
// History) or the workspace (from Settings), with filters and CSV export.
// This face is the only module other features and the app import (see boundary.test.ts).
export { AiActivity } from "./AiActivity";
