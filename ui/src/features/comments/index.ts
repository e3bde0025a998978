// Comments on a project: the side panel that lists, adds and resolves them.
// This face is the only module other features and the app import (see boundary.test.ts).
export { CommentsPanel } from "./CommentsPanel";
