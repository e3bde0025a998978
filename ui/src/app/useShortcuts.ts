// The window's global shortcuts (Mod+K, F1, Esc, Mod+Shift+D/O, Mod+S/N/\/J/1-5), read
// from what is open now. Nothing acts during an input-method composition.
import { type Dispatch, type RefObject, type SetStateAction, useEffect, useLayoutEffect, useRef } from "react";
import type { HelpTab } from "../features/help";
import type { SettingsSection } from "../features/settings";
import { type PanelTab, type ProjectViewHandle, TABS } from "../features/editor";

type Set<S> = Dispatch<SetStateAction<S>>;

export interface ShortcutState {
  palette: boolean;
  settings: SettingsSection | null;
  newDialog: { templateId?: string } | null;
  selectedId: string | null;
  tab: PanelTab;
  help: HelpTab | null;
  dashboard: boolean;
}

export interface ShortcutSetters {
  setPalette: Set<boolean>;
  setHelp: Set<HelpTab | null>;
  setSettings: Set<SettingsSection | null>;
  setNewDialog: Set<{ templateId?: string } | null>;
  setDashboard: Set<boolean>;
  setSidebar: Set<boolean>;
  setTab: Set<PanelTab>;
}

export function useShortcuts(state: ShortcutState, setters: ShortcutSetters, view: RefObject<ProjectViewHandle | null>) {
  const stateRef = useRef(state);
  useLayoutEffect(() => {
    stateRef.current = state;
  });
  // State setters keep their identity: the listener is added once.
  const { setPalette, setHelp, setSettings, setNewDialog, setDashboard, setSidebar, setTab } = setters;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.isComposing || e.keyCode === 229) return;
      const s = stateRef.current;
      const modKey = e.ctrlKey || e.metaKey;
      const k = e.key.toLowerCase();
      if (modKey && !e.altKey && !e.shiftKey && k === "k") {
        e.preventDefault();
        setPalette((p) => !p);
        return;
      }
      // The shortcut list, from anywhere (F1, or Mod+/ where F1 is taken).
      if ((e.key === "F1" && !modKey) || (modKey && !e.altKey && e.key === "/")) {
        e.preventDefault();
        setPalette(false);
        setHelp((h) => (h === "shortcuts" ? null : "shortcuts"));
        return;
      }
      if (e.key === "Escape") {
        // A form or overlay inside handled it (closing itself, not everything).
        if (e.defaultPrevented) return;
        // The sync popover closes itself (its own listener), and only itself.
        if (document.querySelector("[data-testid=sync-popover]")) return;
        if (s.palette) setPalette(false);
        else if (s.help) setHelp(null);
        else if (s.settings) setSettings(null);
        else if (s.newDialog) setNewDialog(null);
        else if (s.dashboard) setDashboard(false);
        // Esc stops the AI first when it runs, then closes what is open.
        else if (view.current?.stopAi()) e.preventDefault();
        else if (view.current?.closeOverlay()) e.preventDefault();
        return;
      }
      if (s.palette || s.settings || s.newDialog || s.help) return;
      if (!modKey || e.altKey) return;
      if (k === "d" && e.shiftKey) {
        e.preventDefault();
        setDashboard((d) => !d);
        return;
      }
      if (k === "o" && e.shiftKey && s.selectedId) {
        e.preventDefault();
        view.current?.openOptimize();
        return;
      }
      if (k === "s" && !e.shiftKey) {
        e.preventDefault();
        // In the save dialog, the dialog's own handler confirms.
        if ((e.target as HTMLElement | null)?.dataset?.testid !== "version-message") view.current?.openSaveVersion();
      } else if (k === "n" && !e.shiftKey) {
        e.preventDefault();
        setNewDialog({});
      } else if (e.key === "\\" || e.code === "Backslash") {
        e.preventDefault();
        setSidebar((v) => !v);
      } else if (k === "j" && !e.shiftKey && s.selectedId) {
        e.preventDefault();
        // Focus follows: into the AI panel's composer (a task typed next goes there, not
        // into the article), and back into the editor when the panel goes.
        const toAi = s.tab !== "ai";
        setTab(toAi ? "ai" : "history");
        if (toAi) view.current?.focusAi();
        else view.current?.focusEditor();
      } else if (/^[1-5]$/.test(e.key) && s.selectedId) {
        e.preventDefault();
        setTab(TABS[Number(e.key) - 1]);
      }
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [setPalette, setHelp, setSettings, setNewDialog, setDashboard, setSidebar, setTab, view]);
}
