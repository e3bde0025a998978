// Optimize: the dialog that runs the engine's optimizer and reviews its drafts.
// This face is the only module other features and the app import (see boundary.test.ts).
/** The optimize dialog, loaded on demand. */
export const loadOptimizeDialog = () => import("./OptimizeDialog");
