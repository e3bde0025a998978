// Settings → Data: export, import (an Inkstone export or a folder of Markdown) and
// backups, each showing the progress its stream sends.

import { useState } from "react";
import { useMethod } from "../../shared/api/query";
import type { BackupInfo, ImportMarkdownResult, ProgressEvent } from "../../shared/api/generated";
import { type Ctx, useApp } from "../../shared/context";
import { formatFullTime, has, type MessageId } from "../../shared/i18n";

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

/** What an import of Markdown did: the projects it made, and the files it skipped
 * because their project is already here (importing the same file again). */
export function importedMarkdown(t: Ctx["t"], r: ImportMarkdownResult): string {
  const made = t("data.imported", { n: r.projects.length });
  const first = r.skipped[0];
  let text = r.projects.length === 0 && first ? "" : made;
  if (first) {
    const skipped =
      r.skipped.length === 1 ? t("data.skippedOne", { title: first.existing.title }) : t("data.skippedMany", { n: r.skipped.length, title: first.existing.title });
    text = text ? `${text}. ${skipped}` : skipped;
  }
  if (r.skippedLinks.length > 0) text = `${text}; ${t("data.linksSkipped", { n: r.skippedLinks.length })}`;
  return text;
}

/** `replaced`: everything was replaced (a restore), so what is open may be gone; an
 * import only adds, and the open project stays open. */
export function Data({ onDataChanged }: { onDataChanged: (replaced: boolean) => void }) {
  const { client, t, showError, toast, lang } = useApp();
  const [exportPath, setExportPath] = useState("");
  const [importPath, setImportPath] = useState("");
  const [mdPath, setMdPath] = useState("");
  const [confirm, setConfirm] = useState<BackupInfo | null>(null);
  const { progress, setProgress, describe } = useStreamRunner();
  // A backup made or restored makes the list stale (methods.ts): the cache reads it again.
  const list = useMethod("backup.list", {}, { report: true });
  const backups = list.data?.backups ?? (list.error ? [] : null);
  const folder = list.data?.folder ?? "";

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
                onDataChanged(false);
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
                if (r.projects.length > 0) onDataChanged(false);
                return importedMarkdown(t, r);
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
                <span className="small muted">{t("data.backupCounts", { p: t("projects.count", { n: b.manifest.counts.projects }), v: t("data.versionCount", { n: b.manifest.counts.versions }) })}</span>
                {b.beforeRestore && (
                  <>
                    {" "}
                    <span className="small muted" data-testid="backup-before-restore">
                      {t("data.beforeRestore")}
                    </span>
                  </>
                )}
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
                  onDataChanged(true);
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
