// Platform drafts: the drafts panel with its per-platform previews, and saved drafts.
// This face is the only module other features and the app import (see boundary.test.ts).
export { DraftPreview } from "./DraftPreview";
export { asDraft, editedContent } from "./draftContent";
/** The drafts panel, loaded on demand. */
export const loadDraftsPanel = () => import("./DraftsPanel");
