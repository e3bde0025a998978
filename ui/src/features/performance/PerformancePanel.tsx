// A project's Performance panel: its publications by platform with their latest
// metrics (absent is "—", never 0) and how each grew with age, adding and editing
// publications, removing one (kept, with its metrics, until the removal is confirmed),
// and importing a platform's own export.
import { memo, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { Platform, Publication, PublicationDetails, PublicationView } from "../../shared/api/generated";
import { useMethod, useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { formatMetric, localTime, PLATFORMS, reportedKeys } from "./format";
import { ImportDialog } from "./ImportDialog";
import { metricName, PublicationMetrics } from "./Metrics";
import { PublicationForm } from "./PublicationForm";
import { ReportDialog } from "./Report";
import { useCsvExport } from "./useCsvExport";

export interface PerformancePanelProps {
  projectId: string;
  /** The project's latest version: the default version of a new publication. */
  head: number;
  /** The project's title: the default title of a new publication. */
  title: string;
  /** The project's platforms, first in the add form. */
  platforms: Platform[];
}

type Editing = { kind: "add" } | { kind: "edit"; publication: Publication } | null;

export const PerformancePanel = memo(function PerformancePanel({ projectId, head, title, platforms }: PerformancePanelProps) {
  const { t } = useApp();
  const list = useMethod("publication.list", { projectId, includeRemoved: true });
  const loadError = list.error ? toClientError(list.error) : null;
  const all = list.data?.publications ?? [];
  const live = all.filter((v) => !v.publication.removedAt);
  const removed = all.filter((v) => v.publication.removedAt);
  const [editing, setEditing] = useState<Editing>(null);
  const [importing, setImporting] = useState(false);
  const [reporting, setReporting] = useState(false);
  const [purging, setPurging] = useState<Publication | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const { write, pending } = useWrites();
  const { exportCsv, exporting } = useCsvExport();
  // The form's save fails to the app's one error banner (the data layer's default); the
  // form stays open with what was typed.
  const { write: formWrite, pending: formPending } = useWrites();

  const submit = async (platform: Platform, details: PublicationDetails) => {
    const r =
      editing?.kind === "edit"
        ? await formWrite("publication.edit", { publicationId: editing.publication.id, details })
        : await formWrite("publication.add", { projectId, platform, details });
    if (r) {
      setEditing(null);
      setOpen(r.id);
    }
  };

  const byPlatform = PLATFORMS.map((p) => ({ platform: p, items: live.filter((v) => v.publication.platform === p) })).filter((g) => g.items.length > 0);
  const firstPlatform = platforms[0] ?? "wechat";

  return (
    <section className="panel-body perf" data-testid="perf-panel">
      <div className="perf-head pad-x">
        <p className="small muted">{t("perf.panel.help")}</p>
        <div className="perf-actions">
          <button
            type="button"
            className="small-btn"
            data-testid="perf-export"
            disabled={exporting || live.length === 0}
            onClick={() => void exportCsv({ dashboard: { projectId } }, "publications")}
          >
            {exporting ? t("perf.export.busy") : t("perf.export.button")}
          </button>
          <button type="button" className="small-btn" data-testid="perf-report-open" onClick={() => setReporting(true)}>
            {t("perf.report.button")}
          </button>
          <button type="button" className="small-btn" data-testid="perf-import-open-dialog" onClick={() => setImporting(true)}>
            {t("perf.import.button")}
          </button>
          <button type="button" className="small-btn primary" data-testid="perf-add" onClick={() => setEditing({ kind: "add" })}>
            {t("perf.add")}
          </button>
        </div>
      </div>
      {loadError && <ErrorBanner error={loadError} retry={() => void list.refetch()} />}
      {list.isPending && !loadError && (
        <p className="small muted pad" role="status">
          <span className="spinner" aria-hidden="true" /> {t("perf.loading")}
        </p>
      )}
      {list.data && live.length === 0 && (
        <div className="pad" data-testid="perf-empty">
          <p className="muted">{t("perf.empty")}</p>
          <p className="small muted">{t("perf.emptyHelp")}</p>
        </div>
      )}
      {byPlatform.map((g) => (
        <div key={g.platform} className="perf-group" data-testid="perf-group" data-platform={g.platform}>
          <h3 className="perf-group-title small">{t(`platform.${g.platform}` as MessageId)}</h3>
          <ul className="perf-list">
            {g.items.map((v) => (
              <PublicationItem
                key={v.publication.id}
                view={v}
                open={open === v.publication.id}
                onToggle={() => setOpen(open === v.publication.id ? null : v.publication.id)}
                onEdit={() => setEditing({ kind: "edit", publication: v.publication })}
                onRemove={() => void write("publication.remove", { publicationId: v.publication.id })}
                busy={pending}
              />
            ))}
          </ul>
        </div>
      ))}
      {removed.length > 0 && (
        <div className="perf-group perf-removed" data-testid="perf-removed">
          <h3 className="perf-group-title small">{t("perf.removed.title")}</h3>
          <p className="small muted">{t("perf.removed.help")}</p>
          <ul className="perf-list">
            {removed.map((v) => (
              <li key={v.publication.id} className="perf-item" data-testid="perf-removed-item">
                <div className="row between">
                  <span className="perf-title">{v.publication.title}</span>
                  <span className="row">
                    <button type="button" className="link" data-testid="perf-restore" disabled={pending} onClick={() => void write("publication.restore", { publicationId: v.publication.id })}>
                      {t("perf.restore")}
                    </button>
                    <button type="button" className="link danger-link" data-testid="perf-purge" disabled={pending} onClick={() => setPurging(v.publication)}>
                      {t("perf.purge")}
                    </button>
                  </span>
                </div>
                <span className="small muted">
                  {t(`platform.${v.publication.platform}` as MessageId)} · {t("perf.snapshotCount", { n: v.snapshotCount })}
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
      {editing && (
        <PublicationForm
          title={editing.kind === "edit" ? t("perf.form.editTitle") : t("perf.form.addTitle")}
          testId="perf-form"
          platform={editing.kind === "edit" ? editing.publication.platform : firstPlatform}
          platformFixed={editing.kind === "edit"}
          editing={editing.kind === "edit" ? editing.publication : undefined}
          defaultVersion={head}
          defaultTitle={title}
          busy={formPending}
          onSubmit={(p, d) => void submit(p, d)}
          onCancel={() => setEditing(null)}
        />
      )}
      {importing && <ImportDialog publications={all} onClose={() => setImporting(false)} />}
      {reporting && <ReportDialog projectId={projectId} platform={byPlatform[0]?.platform ?? firstPlatform} onClose={() => setReporting(false)} />}
      {purging && (
        <Dialog title={t("perf.purge.title")} onClose={() => setPurging(null)} testId="perf-purge-confirm">
          <p className="small">{t("perf.purge.body", { title: purging.title })}</p>
          <div className="draft-actions">
            <span className="spacer" />
            <button type="button" data-autofocus onClick={() => setPurging(null)}>
              {t("perf.cancel")}
            </button>
            <button
              type="button"
              className="danger"
              data-testid="perf-purge-yes"
              disabled={pending}
              onClick={() => void write("publication.purge", { publicationId: purging.id, confirm: true }).then(() => setPurging(null))}
            >
              {t("perf.purge")}
            </button>
          </div>
        </Dialog>
      )}
    </section>
  );
});

function PublicationItem({
  view,
  open,
  onToggle,
  onEdit,
  onRemove,
  busy,
}: {
  view: PublicationView;
  open: boolean;
  onToggle: () => void;
  onEdit: () => void;
  onRemove: () => void;
  busy: boolean;
}) {
  const { t, lang } = useApp();
  const p = view.publication;
  const latest = view.latest;
  const keys = latest ? reportedKeys(p.platform, [latest]).slice(0, 4) : [];
  return (
    <li className="perf-item" data-testid="perf-item" data-id={p.id}>
      <div className="row between">
        <button type="button" className="link perf-title" aria-expanded={open} data-testid="perf-toggle" onClick={onToggle}>
          {p.title}
        </button>
        <span className="row">
          <button type="button" className="link" data-testid="perf-edit" onClick={onEdit}>
            {t("perf.edit")}
          </button>
          <button type="button" className="link" data-testid="perf-remove" disabled={busy} onClick={onRemove}>
            {t("perf.remove")}
          </button>
        </span>
      </div>
      <div className="small muted">
        {t("perf.item.meta", { v: p.versionNumber, time: localTime(p.publishedAt, p.timeZone), zone: p.timeZone })}
        {p.aiChanges.length > 0 && (
          <span className="badge" data-testid="perf-ai-changes" title={t("perf.aiChanges.help")}>
            {t("perf.aiChanges", { n: p.aiChanges.length })}
          </span>
        )}
        {p.url && (
          <>
            {" · "}
            <a href={p.url} target="_blank" rel="noreferrer">
              {t("perf.open")}
            </a>
          </>
        )}
        {p.createdBy && (
          <>
            {" · "}
            <span data-testid="perf-added-by">{t("perf.addedBy", { name: p.createdBy })}</span>
          </>
        )}
      </div>
      <div className="small perf-latest" data-testid="perf-latest">
        {latest ? (
          keys.map((k) => (
            <span key={k} className="perf-stat" data-metric={k}>
              <span className="muted">{metricName(t, k)}</span> {formatMetric(lang, latest.metrics[k])}
            </span>
          ))
        ) : (
          !open && <span className="muted">{t("perf.noSnapshots")}</span>
        )}
      </div>
      {open && <PublicationMetrics publication={p} />}
    </li>
  );
}
