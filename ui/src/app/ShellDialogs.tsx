// What opens over the window: help, the command palette, the new-project dialog and
// settings (each loaded on first use).
import { type Dispatch, type SetStateAction, Suspense } from "react";
import type { BrandProfile, ContentTemplate, Project } from "../shared/api/generated";
import type { Lang } from "../shared/i18n";
import type { Theme } from "../shared/lib/prefs";
import { HelpDialog, type HelpTab } from "../features/help";
import { Settings, type SettingsSection } from "../features/settings";
import type { Command } from "./CommandPalette";
import { CommandPalette, NewProjectDialog } from "./deferred";

export interface ShellDialogsProps {
  help: HelpTab | null;
  setHelp: Dispatch<SetStateAction<HelpTab | null>>;
  palette: boolean;
  commands: Command[];
  onClosePalette: () => void;
  newDialog: { templateId?: string } | null;
  setNewDialog: Dispatch<SetStateAction<{ templateId?: string } | null>>;
  onCreated: (p: Project) => void;
  settings: SettingsSection | null;
  setSettings: Dispatch<SetStateAction<SettingsSection | null>>;
  lang: Lang;
  theme: Theme;
  onLang: (lang: Lang) => void;
  onTheme: (theme: Theme) => void;
  brands: BrandProfile[];
  templates: ContentTemplate[];
  onLibraryChanged: () => void;
  onDataChanged: (replaced: boolean) => void;
}

export function ShellDialogs(p: ShellDialogsProps) {
  const { help, setHelp, newDialog, setNewDialog, settings, setSettings } = p;
  return (
    <>
      {help && (
        <Suspense fallback={null}>
          <HelpDialog tab={help} onTab={setHelp} onClose={() => setHelp(null)} />
        </Suspense>
      )}
      {p.palette && (
        <Suspense fallback={null}>
          <CommandPalette commands={p.commands} onClose={p.onClosePalette} />
        </Suspense>
      )}
      {newDialog && (
        <Suspense fallback={null}>
          <NewProjectDialog
            templates={p.templates}
            brands={p.brands}
            initialTemplateId={newDialog.templateId}
            onCreated={p.onCreated}
            onClose={() => setNewDialog(null)}
          />
        </Suspense>
      )}
      {settings && (
        <Suspense fallback={null}>
          <Settings
            section={settings}
            onSection={setSettings}
            lang={p.lang}
            theme={p.theme}
            onLang={p.onLang}
            onTheme={p.onTheme}
            brands={p.brands}
            templates={p.templates}
            onLibraryChanged={p.onLibraryChanged}
            onDataChanged={p.onDataChanged}
            onNewFromTemplate={(id) => {
              setSettings(null);
              setNewDialog({ templateId: id });
            }}
            onClose={() => setSettings(null)}
          />
        </Suspense>
      )}
    </>
  );
}
