// A project's version history: the list and restoring a version.
// This face is the only module other features and the app import (see boundary.test.ts).
export { HistoryPanel, versionMessage } from "./HistoryPanel";
