// Sync state in the sidebar's footer (synced, n pending, offline, paused, conflict),
// with a popover: the open conflicts (each opens the resolution view), the jobs still
// under way and the last few finished, each with its project's title, "sync now" and
// pause/resume. The state comes from the window's one sync store (./status.ts), which
// Settings → Workspace and the open project read as well.

import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useMethod } from "../../shared/api/query";
import type { DeliveryJob, SyncConflictView } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { describeSyncProblem, type MessageId } from "../../shared/i18n";
import { useSyncActions } from "./actions";
import { syncLabel, syncProblem } from "./status";

// The resolution view (and the line merge under it) loads when a conflict is opened,
// keeping it out of the window's first bundle.
const ConflictView = lazy(() => import("./ConflictView").then((m) => ({ default: m.ConflictView })));

/** Finished jobs shown under the ones still under way. */
const FINISHED_SHOWN = 3;

const FINISHED = new Set<DeliveryJob["state"]["state"]>(["acked", "finalized", "superseded"]);

export function SyncIndicator({ onOpenSettings }: { onOpenSettings: () => void }) {
  const { t, lang, toast } = useApp();
  // A failed sync, pause or retry shows in the popover that started it (it is the
  // popover's status report, read beside the state it describes).
  const { act, busy, error, clear, togglePause: toggle, snap, store } = useSyncActions<"sync" | "pause" | "retry">();
  const { status, conflicts } = snap;
  const [open, setOpen] = useState(false);
  const [resolving, setResolving] = useState<SyncConflictView | null>(null);
  const root = useRef<HTMLSpanElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);

  // Job lines name their project: the titles are read when the popover opens and
  // whenever sync may have brought projects.
  const projects = useMethod("project.list", { includeArchived: true }, { enabled: open });
  const refetchProjects = projects.refetch;
  const shownEpoch = useRef(snap.epoch);
  useEffect(() => {
    if (!open || shownEpoch.current === snap.epoch) return;
    shownEpoch.current = snap.epoch;
    void refetchProjects();
  }, [open, snap.epoch, refetchProjects]);
  const titles = useMemo(() => new Map((projects.data?.projects ?? []).map((p) => [p.id, p.title])), [projects.data]);

  const close = useCallback((refocus: boolean) => {
    setOpen(false);
    clear();
    if (refocus) trigger.current?.focus();
  }, [clear]);

  // Esc (wherever the focus is) and a click outside close the popover.
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.isComposing) return;
      e.preventDefault();
      close(true);
    };
    const onDown = (e: MouseEvent) => {
      if (root.current && !root.current.contains(e.target as Node)) close(false);
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("mousedown", onDown);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("mousedown", onDown);
    };
  }, [open, close]);

  const state = status?.state ?? "notConnected";
  const problem = syncProblem(lang, status);
  const label = syncLabel(t, status);

  const togglePause = () => toggle("pause");

  // Pull first (as the background cycle does), then push what waits.
  const syncNow = () =>
    act("sync", async () => {
      const done = await store.syncNow();
      void store.changed();
      if (done.offline) toast(t("sync.now.offline"));
      else if (done.pulled + done.pushed === 0) toast(t("sync.now.upToDate"));
      else toast(t("sync.now.done", { pulled: done.pulled, pushed: done.pushed }));
    });

  // A failed version goes again (with the failed ones of its project before it), or all of them.
  const retry = (jobId?: string) =>
    act("retry", async () => {
      await store.retry(jobId);
      toast(t("sync.retried"));
    });

  const jobs = status?.jobs ?? [];
  const heldBy = status?.heldBy ?? {};
  const versionOf = (jobId: string) => jobs.find((j) => j.id === jobId)?.versionNumber;
  const unfinished = jobs.filter((j) => !FINISHED.has(j.state.state));
  const finished = jobs.filter((j) => FINISHED.has(j.state.state)).slice(0, FINISHED_SHOWN);
  const jobLine = (j: DeliveryJob) => (
    <li key={j.id} className="sync-job small" data-state={j.state.state} data-testid="sync-job">
      <span className="sync-job-title">{titles.get(j.projectId) ?? "…"}</span>
      <span className="muted">
        {" · "}
        {t("project.head", { n: j.versionNumber })}
        {j.serverNumber !== undefined ? ` → ${t("sync.serverVersion", { n: j.serverNumber })}` : ""} · {t(`sync.job.${j.state.state}` as MessageId)}
        {j.attempts > 1 ? ` · ${t("sync.attempts", { n: j.attempts })}` : ""}
      </span>
      {heldBy[j.id] && versionOf(heldBy[j.id]) !== undefined && (
        <span className="muted" data-testid="sync-job-held">
          {" · "}
          {t("sync.job.heldBy", { n: versionOf(heldBy[j.id]) ?? 0 })}
        </span>
      )}
      {j.state.state === "failed" && (
        <span className="sync-job-reason">
          {j.lastError && (
            <span data-testid="sync-job-reason" data-code={j.lastErrorCode}>
              {t("sync.job.reason", { reason: describeSyncProblem(lang, j.lastErrorCode, j.lastError).title })}
            </span>
          )}
          <button type="button" className="link small" data-testid="sync-retry" disabled={busy !== null} onClick={() => void retry(j.id)}>
            {t("sync.retry")}
          </button>
        </span>
      )}
    </li>
  );

  return (
    <span className="sync-indicator" ref={root}>
      <button
        ref={trigger}
        type="button"
        className="link small"
        data-testid="sync-status"
        data-state={state}
        aria-expanded={open}
        aria-haspopup="dialog"
        onClick={() => (state === "notConnected" ? onOpenSettings() : open ? close(false) : setOpen(true))}
      >
        <span className={`dot sync-${state}`} aria-hidden="true" /> {label}
      </button>
      {open && status && (
        <div className="popover sync-popover" role="dialog" aria-labelledby="sync-popover-title" data-testid="sync-popover">
          <h3 className="sync-popover-title" id="sync-popover-title">
            {t("sync.heading")} · {label}
          </h3>
          <p className="small muted sync-where">
            {status.workspaceName} · {status.memberName} · {status.serverUrl}
          </p>
          {problem && (
            <p className="small warning" data-testid="sync-problem" data-code={problem.code}>
              {problem.title}
              {problem.detail && <span className="muted sync-problem-detail">{problem.detail}</span>}
            </p>
          )}
          {conflicts.length > 0 && (
            <ul className="sync-conflicts">
              {conflicts.map((c) => (
                <li key={c.id}>
                  <button
                    type="button"
                    data-testid="sync-open-conflict"
                    onClick={() => {
                      setOpen(false);
                      setResolving(c);
                    }}
                  >
                    {t("sync.conflictOn", { title: c.mine.title || c.theirs.title })}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <ul className="sync-jobs" data-testid="sync-jobs" aria-label={t("sync.jobs")}>
            {unfinished.length === 0 && <li className="muted small">{t("sync.noJobs")}</li>}
            {unfinished.map(jobLine)}
          </ul>
          {status.perfUnavailable ? (
            <p className="muted small" data-testid="sync-perf">
              {t("sync.perf.unavailable")}
            </p>
          ) : status.perfPending > 0 ? (
            <p className="muted small" data-testid="sync-perf">
              {t("sync.perf.pending", { n: status.perfPending })}
            </p>
          ) : null}
          {status.perfAccountDaysLocal > 0 && (
            <p className="muted small" data-testid="sync-perf-days">
              {t("sync.perf.daysLocal", { n: status.perfAccountDaysLocal })}
            </p>
          )}
          {status.perfConflicts > 0 && (
            <p className="small" role="status" data-testid="sync-perf-conflicts">
              {t("sync.perf.conflicts", { n: status.perfConflicts })}
            </p>
          )}
          {finished.length > 0 && (
            <>
              <h4 className="small muted sync-subheading">{t("sync.recent")}</h4>
              <ul className="sync-jobs" data-testid="sync-jobs-done">
                {finished.map(jobLine)}
              </ul>
            </>
          )}
          {error && <ErrorBanner error={error} onDismiss={clear} />}
          <div className="row sync-actions">
            <button
              type="button"
              className="primary"
              data-testid="sync-now"
              disabled={busy !== null || status.paused}
              title={status.paused ? t("sync.now.paused") : undefined}
              onClick={() => void syncNow()}
            >
              {busy === "sync" ? t("sync.now.busy") : t("sync.now")}
            </button>
            {unfinished.filter((j) => j.state.state === "failed").length > 1 && (
              <button type="button" data-testid="sync-retry-all" disabled={busy !== null} onClick={() => void retry()}>
                {t("sync.retryAll")}
              </button>
            )}
            <button type="button" data-testid="sync-toggle-pause" disabled={busy !== null} onClick={() => void togglePause()}>
              {status.paused ? t("sync.resume") : t("sync.pause")}
            </button>
            <button type="button" onClick={() => close(true)}>
              {t("common.close")} <kbd>Esc</kbd>
            </button>
          </div>
        </div>
      )}
      {resolving && (
        <Suspense fallback={null}>
          <ConflictView
            conflict={resolving}
            onClose={() => setResolving(null)}
            onResolved={() => {
              setResolving(null);
              // The open project, its History and the list follow the resolution.
              void store.changed();
            }}
          />
        </Suspense>
      )}
    </span>
  );
}
