// Sync state in the sidebar's footer (synced, n pending, offline, paused, conflict),
// with a popover listing the delivery jobs and open conflicts; a conflict opens the
// resolution view. Polls `sync.status` while the window is open.

import { useCallback, useEffect, useState } from "react";
import type { SyncConflict, SyncStatus } from "../api/generated";
import { useApp } from "../context";
import { describeSyncProblem, type MessageId } from "../i18n";
import { ConflictView } from "./ConflictView";

const POLL_MS = 5000;

export function SyncIndicator({ onOpenSettings }: { onOpenSettings: () => void }) {
  const { client, t, lang } = useApp();
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const [open, setOpen] = useState(false);
  const [conflicts, setConflicts] = useState<SyncConflict[]>([]);
  const [resolving, setResolving] = useState<SyncConflict | null>(null);

  // The status is a hint, not an action: a failed poll tries again later.
  const fetchStatus = useCallback(
    () =>
      client.call("sync.status", {}).then(async (s) => ({ status: s, conflicts: s.conflicts > 0 ? (await client.call("sync.conflicts", {})).conflicts : [] })),
    [client],
  );
  const apply = useCallback((r: { status: SyncStatus; conflicts: SyncConflict[] }) => {
    setStatus(r.status);
    setConflicts(r.conflicts);
  }, []);
  const load = useCallback(() => void fetchStatus().then(apply, () => undefined), [fetchStatus, apply]);

  useEffect(() => {
    fetchStatus().then(apply, () => undefined);
    const timer = window.setInterval(() => fetchStatus().then(apply, () => undefined), POLL_MS);
    return () => window.clearInterval(timer);
  }, [fetchStatus, apply]);

  const state = status?.state ?? "notConnected";
  const problem = status?.lastError ? describeSyncProblem(lang, status.lastErrorCode, status.lastError) : null;
  const label =
    state === "pending"
      ? t("sync.state.pending", { n: status?.pending ?? 0 })
      : state === "conflict"
        ? t("sync.state.conflict", { n: status?.conflicts ?? 0 })
        : t(`sync.state.${state}` as MessageId);

  return (
    <span className="sync-indicator">
      <button
        type="button"
        className="link small"
        data-testid="sync-status"
        data-state={state}
        aria-expanded={open}
        aria-haspopup="dialog"
        onClick={() => (state === "notConnected" ? onOpenSettings() : setOpen((o) => !o))}
      >
        <span className={`dot sync-${state}`} aria-hidden="true" /> {label}
      </button>
      {open && status && (
        <div
          className="popover sync-popover"
          role="dialog"
          aria-label={t("sync.jobs")}
          data-testid="sync-popover"
          onKeyDown={(e) => {
            if (e.key === "Escape") setOpen(false);
          }}
        >
          <p className="small">
            {status.workspaceName} · {status.memberName} · {status.serverUrl}
          </p>
          {problem && (
            <p className="small warning" data-testid="sync-problem" data-code={status.lastErrorCode}>
              {problem.title}
              {problem.detail && <span className="muted"> ({problem.detail})</span>}
            </p>
          )}
          {conflicts.length > 0 && (
            <ul className="sync-conflicts">
              {conflicts.map((c) => (
                <li key={c.id}>
                  <button type="button" data-testid="sync-open-conflict" onClick={() => setResolving(c)}>
                    {t("sync.conflictOn", { title: c.mine.title || c.theirs.title })}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <ul className="sync-jobs" data-testid="sync-jobs">
            {status.jobs.length === 0 && <li className="muted small">{t("sync.noJobs")}</li>}
            {status.jobs.map((j) => (
              <li key={j.id} className="small" data-state={j.state.state}>
                v{j.versionNumber}
                {j.serverNumber !== undefined ? ` → ${t("sync.serverVersion", { n: j.serverNumber })}` : ""} · {t(`sync.job.${j.state.state}` as MessageId)}
                {j.attempts > 1 ? ` · ${t("sync.attempts", { n: j.attempts })}` : ""}
              </li>
            ))}
          </ul>
          <div className="row">
            <button
              type="button"
              data-testid="sync-toggle-pause"
              onClick={async () => {
                setStatus(await client.call(status.paused ? "sync.resume" : "sync.pause", {}));
              }}
            >
              {status.paused ? t("sync.resume") : t("sync.pause")}
            </button>
            <button type="button" onClick={() => setOpen(false)}>
              {t("common.close")}
            </button>
          </div>
        </div>
      )}
      {resolving && (
        <ConflictView
          conflict={resolving}
          onClose={() => setResolving(null)}
          onResolved={() => {
            setResolving(null);
            load();
          }}
        />
      )}
    </span>
  );
}
