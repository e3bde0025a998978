import { useEffect, useState } from "react";
import type { AppInfo, BackupInfo, BrandProfile, ContentTemplate, ProgressEvent, Workspace } from "../api/generated";
import { Dialog } from "../components/Dialog";
import { useApp } from "../context";
import { formatFullTime, has, type Lang, type MessageId } from "../i18n";
import type { Theme } from "../lib/prefs";
import { DeleteButton } from "../settings/DeleteButton";
import { Models } from "../settings/Models";
import { Usage } from "../settings/Usage";

export type SettingsSection = "general" | "models" | "usage" | "data" | "brands" | "templates";

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
  onDataChanged: () => void;
  onNewFromTemplate: (id: string) => void;
  onClose: () => void;
}

export function Settings(props: SettingsProps) {
  const { t } = useApp();
  const sections: SettingsSection[] = ["general", "models", "usage", "data", "brands", "templates"];
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
          {props.section === "models" && <Models />}
          {props.section === "usage" && <Usage />}
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
  const { client, t, showError, toast } = useApp();
  const [ws, setWs] = useState<Workspace | null>(null);
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [name, setName] = useState("");
  useEffect(() => {
    client.call("workspace.get", {}).then((w) => {
      setWs(w);
      setName(w.displayName);
    }, showError);
    client.call("app.info", {}).then(setInfo, showError);
  }, [client, showError]);
  const saveName = async () => {
    if (!name.trim() || name === ws?.displayName) return;
    try {
      setWs(await client.call("workspace.update", { displayName: name.trim() }));
      toast(t("settings.nameSaved"));
    } catch (e) {
      showError(e);
    }
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
      {info && <p className="small muted">Inkstone {info.version} · schema {info.schemaVersion}</p>}
    </div>
  );
}

function useStreamRunner() {
  const { t, lang } = useApp();
  const [progress, setProgress] = useState<{ label: string; p: ProgressEvent | null } | null>(null);
  const describe = (p: ProgressEvent | null) => {
    if (!p) return t("progress.starting");
    const id = `progress.${p.phase}` as MessageId;
    const what = has(lang, id) ? t(id) : p.phase;
    return `${what} ${p.done}/${p.total}`;
  };
  return { progress, setProgress, describe };
}

function Data({ onDataChanged }: { onDataChanged: () => void }) {
  const { client, t, showError, toast, lang } = useApp();
  const [exportPath, setExportPath] = useState("");
  const [importPath, setImportPath] = useState("");
  const [mdPath, setMdPath] = useState("");
  const [backups, setBackups] = useState<BackupInfo[] | null>(null);
  const [folder, setFolder] = useState("");
  const [confirm, setConfirm] = useState<BackupInfo | null>(null);
  const { progress, setProgress, describe } = useStreamRunner();

  const loadBackups = () =>
    client.call("backup.list", {}).then(
      (r) => {
        setBackups(r.backups);
        setFolder(r.folder);
      },
      (e) => {
        setBackups([]);
        showError(e);
      },
    );
  useEffect(() => {
    void loadBackups();
  }, []);

  const run = async (label: string, fn: (onP: (p: ProgressEvent) => void) => Promise<string>) => {
    setProgress({ label, p: null });
    try {
      const done = await fn((p) => setProgress({ label, p }));
      toast(done);
    } catch (e) {
      showError(e);
    } finally {
      setProgress(null);
    }
  };

  return (
    <div className="form">
      <div className="field">
        <span className="small muted">{t("data.export")}</span>
        <div className="row">
          <input data-testid="export-path" placeholder={t("data.exportPlaceholder")} value={exportPath} onChange={(e) => setExportPath(e.target.value)} />
          <button
            type="button"
            data-testid="export-run"
            disabled={!exportPath.trim() || progress !== null}
            onClick={() =>
              void run(t("data.exporting"), async (onP) => {
                const r = await client.stream("export.run", { path: exportPath.trim() }, onP);
                return t("data.exported", { path: r.path });
              })
            }
          >
            {t("data.exportNow")}
          </button>
        </div>
      </div>
      <div className="field">
        <span className="small muted">{t("data.import")}</span>
        <div className="row">
          <input data-testid="import-path" placeholder={t("data.importPlaceholder")} value={importPath} onChange={(e) => setImportPath(e.target.value)} />
          <button
            type="button"
            data-testid="import-run"
            disabled={!importPath.trim() || progress !== null}
            onClick={() =>
              void run(t("data.importing"), async (onP) => {
                const r = await client.stream("import.run", { path: importPath.trim() }, onP);
                onDataChanged();
                return t("data.imported", { n: r.counts.projects });
              })
            }
          >
            {t("data.importNow")}
          </button>
        </div>
      </div>
      <div className="field">
        <span className="small muted">{t("data.importMd")}</span>
        <div className="row">
          <input data-testid="import-md-path" placeholder={t("data.importMdPlaceholder")} value={mdPath} onChange={(e) => setMdPath(e.target.value)} />
          <button
            type="button"
            data-testid="import-md-run"
            disabled={!mdPath.trim() || progress !== null}
            onClick={() =>
              void run(t("data.importing"), async (onP) => {
                const r = await client.stream("import.markdown", { path: mdPath.trim() }, onP);
                onDataChanged();
                return t("data.imported", { n: r.projects.length });
              })
            }
          >
            {t("data.importNow")}
          </button>
        </div>
      </div>
      {progress && (
        <div className="progress" role="status" data-testid="progress">
          <span className="spinner" aria-hidden="true" /> {progress.label} {describe(progress.p)}
          {progress.p && progress.p.total > 0 && <progress max={progress.p.total} value={progress.p.done} />}
        </div>
      )}
      <div className="field">
        <div className="row between">
          <span className="small muted">{t("data.backups")}</span>
          <button
            type="button"
            data-testid="backup-create"
            disabled={progress !== null}
            onClick={() =>
              void run(t("data.backingUp"), async (onP) => {
                const b = await client.stream("backup.create", {}, onP);
                await loadBackups();
                return t("data.backedUp", { name: b.name });
              })
            }
          >
            {t("data.backupNow")}
          </button>
        </div>
        {folder && <code className="small">{folder}</code>}
        {backups?.length === 0 && <p className="small muted">{t("data.noBackups")}</p>}
        <ul className="plain-list" data-testid="backup-list">
          {backups?.map((b) => (
            <li key={b.name} className="row between">
              <span>
                {formatFullTime(lang, b.manifest.exportedAt)}{" "}
                <span className="small muted">{t("data.backupCounts", { p: b.manifest.counts.projects, v: b.manifest.counts.versions })}</span>
              </span>
              <button type="button" className="link" onClick={() => setConfirm(b)}>
                {t("data.restore")}
              </button>
            </li>
          ))}
        </ul>
      </div>
      {confirm && (
        <div className="confirm" role="alertdialog" aria-label={t("data.restoreTitle")}>
          <p>{t("data.restoreBody", { time: formatFullTime(lang, confirm.manifest.exportedAt) })}</p>
          <div className="row end">
            <button type="button" onClick={() => setConfirm(null)}>
              {t("common.cancel")}
            </button>
            <button
              type="button"
              className="danger"
              onClick={() => {
                const b = confirm;
                setConfirm(null);
                void run(t("data.restoring"), async (onP) => {
                  const r = await client.stream("backup.restore", { name: b.name }, onP);
                  await loadBackups();
                  onDataChanged();
                  return t("data.restored", { name: r.safetyBackup.name });
                });
              }}
            >
              {t("data.restoreConfirm")}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

const splitList = (s: string) =>
  s
    .split(/[,，\n]/)
    .map((x) => x.trim())
    .filter(Boolean);

function Brands({ brands, onChanged }: { brands: BrandProfile[]; onChanged: () => void }) {
  const { client, t, showError, toast } = useApp();
  const [editing, setEditing] = useState<BrandProfile | "new" | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [voice, setVoice] = useState("");
  const [audience, setAudience] = useState("");
  const [banned, setBanned] = useState("");
  const [cta, setCta] = useState("");
  const start = (b: BrandProfile | "new") => {
    setEditing(b);
    const x = b === "new" ? null : b;
    setName(x?.name ?? "");
    setVoice(x?.voice ?? "");
    setAudience(x?.targetAudience ?? "");
    setBanned(x?.bannedWords.join(", ") ?? "");
    setCta(x?.cta ?? "");
  };
  const save = async () => {
    const profile = { name: name.trim(), voice, targetAudience: audience, bannedWords: splitList(banned), cta };
    try {
      if (editing === "new") await client.call("brandProfile.create", profile);
      else if (editing)
        await client.call("brandProfile.update", {
          id: editing.id,
          profile: { ...profile, linkStrategy: editing.linkStrategy, defaultTags: editing.defaultTags, industry: editing.industry },
        });
      setEditing(null);
      onChanged();
      toast(t("common.saved"));
    } catch (e) {
      showError(e);
    }
  };
  const remove = async (b: BrandProfile) => {
    setDeleting(null);
    try {
      await client.call("brandProfile.delete", { id: b.id });
      onChanged();
    } catch (e) {
      showError(e);
    }
  };
  if (editing) {
    return (
      <div className="form" data-testid="brand-form">
        <label className="field">
          <span className="small muted">{t("library.name")}</span>
          <input data-testid="brand-name" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="field">
          <span className="small muted">{t("brand.voice")}</span>
          <input value={voice} onChange={(e) => setVoice(e.target.value)} />
        </label>
        <label className="field">
          <span className="small muted">{t("brand.audience")}</span>
          <input value={audience} onChange={(e) => setAudience(e.target.value)} />
        </label>
        <label className="field">
          <span className="small muted">{t("brand.banned")}</span>
          <input value={banned} onChange={(e) => setBanned(e.target.value)} />
        </label>
        <label className="field">
          <span className="small muted">CTA</span>
          <input value={cta} onChange={(e) => setCta(e.target.value)} />
        </label>
        <div className="row end">
          <button type="button" onClick={() => setEditing(null)}>
            {t("common.cancel")}
          </button>
          <button type="button" className="primary" data-testid="brand-save" disabled={!name.trim()} onClick={() => void save()}>
            {t("common.save")}
          </button>
        </div>
      </div>
    );
  }
  return (
    <div className="form">
      <p className="small muted">{t("brand.help")}</p>
      <ul className="plain-list" data-testid="brand-list">
        {brands.map((b) => (
          <li key={b.id} className="row between">
            <span>
              <strong>{b.name}</strong> <span className="small muted">{b.voice}</span>
            </span>
            <span>
              <button type="button" className="link" onClick={() => start(b)}>
                {t("common.edit")}
              </button>
              <DeleteButton name={b.name} asking={deleting === b.id} onAsk={() => setDeleting(b.id)} onCancel={() => setDeleting(null)} onConfirm={() => void remove(b)} />
            </span>
          </li>
        ))}
      </ul>
      {brands.length === 0 && <p className="muted small">{t("brand.empty")}</p>}
      <div>
        <button type="button" data-testid="brand-new" onClick={() => start("new")}>
          + {t("brand.new")}
        </button>
      </div>
    </div>
  );
}

function Templates({ templates, onChanged, onNew }: { templates: ContentTemplate[]; onChanged: () => void; onNew: (id: string) => void }) {
  const { client, t, showError, toast } = useApp();
  const [editing, setEditing] = useState<ContentTemplate | "new" | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [titleTpl, setTitleTpl] = useState("");
  const [source, setSource] = useState("");
  const start = (x: ContentTemplate | "new") => {
    setEditing(x);
    const v = x === "new" ? null : x;
    setName(v?.name ?? "");
    setTitleTpl(v?.titleTemplate ?? "");
    setSource(v?.sourceTemplate ?? "");
  };
  const save = async () => {
    const template = { name: name.trim(), titleTemplate: titleTpl, sourceTemplate: source };
    try {
      if (editing === "new") await client.call("template.create", template);
      else if (editing)
        await client.call("template.update", {
          id: editing.id,
          template: { ...template, defaultPlatforms: editing.defaultPlatforms, tags: editing.tags },
        });
      setEditing(null);
      onChanged();
      toast(t("common.saved"));
    } catch (e) {
      showError(e);
    }
  };
  const remove = async (x: ContentTemplate) => {
    setDeleting(null);
    try {
      await client.call("template.delete", { id: x.id });
      onChanged();
    } catch (e) {
      showError(e);
    }
  };
  if (editing) {
    return (
      <div className="form" data-testid="template-form">
        <label className="field">
          <span className="small muted">{t("library.name")}</span>
          <input data-testid="template-name" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="field">
          <span className="small muted">{t("template.titleTemplate")}</span>
          <input data-testid="template-title" value={titleTpl} onChange={(e) => setTitleTpl(e.target.value)} />
        </label>
        <label className="field">
          <span className="small muted">{t("template.source")}</span>
          <textarea data-testid="template-source" rows={6} value={source} onChange={(e) => setSource(e.target.value)} />
        </label>
        <div className="row end">
          <button type="button" onClick={() => setEditing(null)}>
            {t("common.cancel")}
          </button>
          <button type="button" className="primary" data-testid="template-save" disabled={!name.trim()} onClick={() => void save()}>
            {t("common.save")}
          </button>
        </div>
      </div>
    );
  }
  return (
    <div className="form">
      <p className="small muted">{t("template.help")}</p>
      <ul className="plain-list" data-testid="template-list">
        {templates.map((x) => (
          <li key={x.id} className="row between">
            <span>
              <strong>{x.name}</strong> <span className="small muted">{x.titleTemplate}</span>
            </span>
            <span>
              <button type="button" className="link" onClick={() => onNew(x.id)}>
                {t("template.use")}
              </button>
              <button type="button" className="link" onClick={() => start(x)}>
                {t("common.edit")}
              </button>
              <DeleteButton name={x.name} asking={deleting === x.id} onAsk={() => setDeleting(x.id)} onCancel={() => setDeleting(null)} onConfirm={() => void remove(x)} />
            </span>
          </li>
        ))}
      </ul>
      {templates.length === 0 && <p className="muted small">{t("template.empty")}</p>}
      <div>
        <button type="button" data-testid="template-new" onClick={() => start("new")}>
          + {t("template.new")}
        </button>
      </div>
    </div>
  );
}
