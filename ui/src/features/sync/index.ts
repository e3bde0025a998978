// Workspace sync: the indicator, the conflict view (drawing the core's merge regions),
// members and the workspace settings section.
// This face is the only module other features and the app import (see boundary.test.ts).
import { lazy } from "react";
// The conflict view (CodeMirror's merge view) loads on demand: the app imports this face
// for the sync indicator, and CodeMirror must not come with it onto the first screen.
export const ConflictView = lazy(() => import("./ConflictView").then((m) => ({ default: m.ConflictView })));
export { SyncIndicator } from "./SyncIndicator";
export { WorkspaceSync } from "./Workspace";
export { compose, type Merge3, type OverlapSegment, type Segment, type Side } from "./result";
export { syncStoreFor, useSync } from "./status";
