// Workspace sync: the indicator, the conflict view, the three-way merge, members and the
// workspace settings section.
// This face is the only module other features and the app import (see boundary.test.ts).
export { ConflictView } from "./ConflictView";
export { SyncIndicator } from "./SyncIndicator";
export { WorkspaceSync } from "./Workspace";
export { compose, merge3 } from "./merge3";
export { OTHER_WINDOW_MS, syncStoreFor, useSync } from "./status";
