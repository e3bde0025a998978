// The project screen's outside: what App may ask of it (the handle), where to take the
// person once it is open (Reveal), and its props.
import type { ReactNode } from "react";
import type { BrandProfile, Project } from "../../shared/api/generated";
import type { SourceTarget } from "../drafting";
import type { PanelTab } from "./tabs";

export interface ProjectViewHandle {
  openSaveVersion(): void;
  togglePreview(): void;
  compareWithHead(): void;
  focusComment(): void;
  toggleArchive(): void;
  focusEditor(): void;
  /** Moves focus to the AI panel's composer (Ctrl/Cmd+J), once the panel shows it;
   * until then to the panel's tab, so nothing typed meanwhile goes into the article. */
  focusAi(): void;
  /** Closes the topmost overlay; false when none was open. */
  closeOverlay(): boolean;
  /** Stops the AI session's running turn; false when nothing ran. */
  stopAi(): boolean;
  /** Compacts the open AI session now; false when none is open or something runs. */
  compactAi(): boolean;
  /** Opens the one-click optimize dialog (Ctrl/Cmd+Shift+O). */
  openOptimize(): void;
  flush(): Promise<void>;
}

/** A place to show once the project is open: a search hit's match. */
export interface Reveal {
  projectId: string;
  /** UTF-16 offsets in the source (of the version, for a version). */
  span: { from: number; to: number } | null;
  version: number | null;
  commentId: string | null;
  /** Changes on every request, so choosing the same hit again shows it again. */
  seq: number;
}

export interface ProjectViewProps {
  projectId: string;
  /** Where to take the person once the project is loaded. */
  reveal?: Reveal | null;
  tab: PanelTab;
  onTab: (tab: PanelTab) => void;
  brands: BrandProfile[];
  /** Reports title/head/updatedAt/archived changes for the sidebar. */
  onProjectChanged: (p: Project) => void;
  /** Shown first in the top bar (the "show sidebar" button when it is hidden). */
  leading?: ReactNode;
  /** Opens Settings → AI models (the AI panel's offer when no model is set up). */
  onSetUpModel?: () => void;
  /** Opens a project (this one or another) at a place: an Ask citation's source. */
  onOpenSource?: (target: SourceTarget) => void;
  /** Opens Settings → Memory ("Why this change?" naming a memory item). */
  onOpenMemory?: () => void;
}
