// The settings dialog: one section at a time (general, workspace, accounts, performance
// history in AI context, models, usage, the workspace's
// AI activity, data, brand profiles, templates), each in its own file here but for the short general one.

import { useState } from "react";
import type { BrandProfile, ContentTemplate } from "../../shared/api/generated";
import { useMethod, useWrite } from "../../shared/api/query";
import { Dialog } from "../../shared/ui/Dialog";
import { useApp } from "../../shared/context";
import type { Lang, MessageId } from "../../shared/i18n";
import type { Theme } from "../../shared/lib/prefs";
import { MemoryList } from "../memory";
import { Brands } from "./Brands";
import { Data } from "./Data";
import { Models } from "./Models";
import { Permissions } from "./Permissions";
import { Templates } from "./Templates";
import { Usage } from "../usage";
import { AiActivity } from "../activity";
import { WorkspaceSync } from "../sync";
import { Accounts, PerformanceContextSetting } from "../performance";

export type SettingsSection = "general" | "workspace" | "accounts" | "performance" | "models" | "usage" | "aiActivity" | "memory" | "permissions" | "data" | "brands" | "templates";

export interface SettingsProps {
  section: SettingsSection;
  onSection: (s: SettingsSection) => void;
  lang: Lang;
  theme: Theme;
  onLang: (l: Lang) => void;
  onTheme: (t: Theme) => void;
  brands: BrandProfile[];
  templates: ContentTemplate[];
  onLibraryChanged: () => void;
  onDataChanged: (replaced: boolean) => void;
  onNewFromTemplate: (id: string) => void;
  onClose: () => void;
}

export function Settings(props: SettingsProps) {
  const { t } = useApp();
  const sections: SettingsSection[] = ["general", "workspace", "accounts", "performance", "models", "usage", "aiActivity", "memory", "permissions", "data", "brands", "templates"];
  return (
    <Dialog title={t("settings.title")} onClose={props.onClose} testId="settings" wide>
      <div className="settings">
        <nav className="settings-nav" role="tablist" aria-label={t("settings.title")}>
          {sections.map((s) => (
            <button
              key={s}
              type="button"
              role="tab"
              aria-selected={props.section === s}
              data-testid={`settings-${s}`}
              onClick={() => props.onSection(s)}
            >
              {t(`settings.${s}` as MessageId)}
            </button>
          ))}
        </nav>
        <div className="settings-body">
          {props.section === "general" && <General {...props} />}
          {props.section === "workspace" && <WorkspaceSync />}
          {props.section === "accounts" && <Accounts />}
          {props.section === "performance" && <PerformanceContextSetting />}
          {props.section === "models" && <Models />}
          {props.section === "usage" && <Usage />}
          {props.section === "aiActivity" && <AiActivity />}
          {props.section === "memory" && <MemoryList />}
          {props.section === "permissions" && <Permissions />}
          {props.section === "data" && <Data onDataChanged={props.onDataChanged} />}
          {props.section === "brands" && <Brands brands={props.brands} onChanged={props.onLibraryChanged} />}
          {props.section === "templates" && (
            <Templates templates={props.templates} onChanged={props.onLibraryChanged} onNew={props.onNewFromTemplate} />
          )}
        </div>
      </div>
    </Dialog>
  );
}

function General({ lang, theme, onLang, onTheme }: SettingsProps) {
  const { t, toast } = useApp();
  const ws = useMethod("workspace.get", {}, { report: true }).data ?? null;
  const info = useMethod("app.info", {}, { report: true, refetchOnMount: false }).data ?? null;
  // The stored name until the person types another.
  const [typed, setName] = useState<string | null>(null);
  const name = typed ?? ws?.displayName ?? "";
  const update = useWrite("workspace.update");
  const saveName = async () => {
    if (!name.trim() || name === ws?.displayName) return;
    if (await update.run({ displayName: name.trim() })) toast(t("settings.nameSaved"));
  };
  return (
    <div className="form">
      <label className="field">
        <span className="small muted">{t("settings.language")}</span>
        <select data-testid="lang-select" value={lang} onChange={(e) => onLang(e.target.value as Lang)}>
          <option value="zh">简体中文</option>
          <option value="en">English</option>
        </select>
      </label>
      <label className="field">
        <span className="small muted">{t("settings.theme")}</span>
        <select data-testid="theme-select" value={theme} onChange={(e) => onTheme(e.target.value as Theme)}>
          <option value="system">{t("theme.system")}</option>
          <option value="light">{t("theme.light")}</option>
          <option value="dark">{t("theme.dark")}</option>
        </select>
      </label>
      <label className="field">
        <span className="small muted">{t("settings.displayName")}</span>
        <div className="row">
          <input
            data-testid="display-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            onBlur={() => void saveName()}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.nativeEvent.isComposing && e.keyCode !== 229) void saveName();
            }}
          />
          <button type="button" onClick={() => void saveName()} disabled={!name.trim() || name === ws?.displayName}>
            {t("common.save")}
          </button>
        </div>
        <span className="small muted">{t("settings.displayNameHelp")}</span>
      </label>
      <div className="field">
        <span className="small muted">{t("settings.dataDir")}</span>
        <code data-testid="data-dir">{info?.dataDir ?? "…"}</code>
        <span className="small muted">{t("settings.dataDirHelp")}</span>
      </div>
      {info && (
        <p className="small muted" data-testid="app-about">
          {t("settings.about", { version: info.version, schema: info.schemaVersion })}
        </p>
      )}
    </div>
  );
}
