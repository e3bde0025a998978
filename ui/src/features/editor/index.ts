// The project screen: the Markdown editor, saving, kept text, conflicts and following sync,
// with the side panels and dialogs of the other features around it.
// This face is the only module other features and the app import (see boundary.test.ts).
export { type ProjectViewHandle, type Reveal } from "./ProjectView";
export { type PanelTab, TABS } from "./tabs";
/** The project screen, loaded on demand (App preloads it when idle). */
export const loadProjectView = () => import("./ProjectView");
