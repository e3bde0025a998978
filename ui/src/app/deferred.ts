// What is not on the first screen (the project list) loads later: the editor (CodeMirror)
// while the list is already usable, the palette (Ctrl+K) and the new-project dialog
// (Ctrl+N). Once the list is painted, `preloadRest` fetches their code (and the
// dashboard's), so opening any of them is instant.
import { lazy } from "react";
import { loadProjectView } from "../features/editor";
import { loadPerformanceDashboard } from "../features/performance";

export const ProjectView = lazy(() => loadProjectView().then((m) => ({ default: m.ProjectView })));
const loadCommandPalette = () => import("./CommandPalette");
export const CommandPalette = lazy(() => loadCommandPalette().then((m) => ({ default: m.CommandPalette })));
const loadNewProjectDialog = () => import("./NewProjectDialog");
export const NewProjectDialog = lazy(() => loadNewProjectDialog().then((m) => ({ default: m.NewProjectDialog })));

export function preloadRest(): void {
  void loadProjectView();
  void loadCommandPalette();
  void loadNewProjectDialog();
  void loadPerformanceDashboard();
}
