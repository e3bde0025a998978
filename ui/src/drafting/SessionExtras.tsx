// What else a session holds, when the backend offers it: the constraints the model
// keeps to (rejection reasons; the person can remove one), the checkpoints to go back
// to, and changes the assistant staged but did not apply.
import { useState, useSyncExternalStore } from "react";
import type { Checkpoint, Project } from "../api/generated";
import { useApp } from "../context";
import { formatFullTime, formatTime, type MessageId } from "../i18n";
import type { SessionStore } from "./store";

/** The editor's working copy, as the panel may need it. */
export interface WorkingCopy {
  /** Saves pending typing, so what is applied builds on what is on screen. */
  flush: () => Promise<void>;
  /** The working-copy revision after `flush`. */
  revision: () => number;
  /** The project changed underneath the editor (a restore, an apply): show it. */
  replace: (project: Project, message: string) => void;
}

type Open = "constraints" | "checkpoints" | null;

export function SessionExtras({ store, workingCopy }: { store: SessionStore; workingCopy: WorkingCopy }) {
  const { t, lang, now } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const [open, setOpen] = useState<Open>(null);
  const [restoring, setRestoring] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const { constraints, checkpoints, staging } = snap;
  if (constraints === null && checkpoints === null && staging === null) return null;
  const toggle = (which: Open) => setOpen((o) => (o === which ? null : which));
  // The harness names its own checkpoints in English; other languages show only their
  // reason. A person's or the assistant's label stays.
  const labelShown = (c: Checkpoint) => c.reason === "manual" || c.reason === "assistant" || lang === "en";

  const restore = async (id: string) => {
    setRestoring(null);
    setBusy(true);
    await workingCopy.flush().catch(() => undefined);
    const r = await store.restoreCheckpoint(id);
    setBusy(false);
    if (r) workingCopy.replace(r.project, t("ai.checkpoint.restored", { n: r.version.number }));
  };
  const applyStaging = async () => {
    setBusy(true);
    await workingCopy.flush().catch(() => undefined);
    const r = await store.applyStaging(workingCopy.revision());
    setBusy(false);
    if (r) workingCopy.replace(r.project, t("version.saved", { n: r.version.number }));
  };

  return (
    <div className="extras" data-testid="session-extras">
      <div className="extras-bar">
        {constraints !== null && (
          <button type="button" className="small-btn" aria-expanded={open === "constraints"} data-testid="constraints-toggle" onClick={() => toggle("constraints")}>
            {t("ai.constraints.title", { n: constraints.length })}
          </button>
        )}
        {checkpoints !== null && (
          <button type="button" className="small-btn" aria-expanded={open === "checkpoints"} data-testid="checkpoints-toggle" onClick={() => toggle("checkpoints")}>
            {t("ai.checkpoint.title", { n: checkpoints.length })}
          </button>
        )}
      </div>
      {staging?.staging && (
        <div className="staging-bar" role="status" data-testid="staging-bar">
          <span className="small">{t("ai.staging.bar", { n: staging.proposals.length })}</span>
          <span className="spacer" />
          <button type="button" className="small-btn primary" disabled={busy} data-testid="staging-apply" onClick={() => void applyStaging()}>
            {t("ai.staging.apply")}
          </button>
          <button type="button" className="small-btn" disabled={busy} data-testid="staging-discard" onClick={() => void store.discardStaging()}>
            {t("ai.staging.discard")}
          </button>
        </div>
      )}
      {open === "constraints" && constraints && (
        <ul className="extras-list" data-testid="constraints">
          {constraints.length === 0 && <li className="small muted">{t("ai.constraints.none")}</li>}
          {constraints.map((c) => (
            <li key={c.id} className="extras-item" data-testid="constraint">
              <span className="grow">{c.text}</span>
              <button type="button" className="icon-btn small-btn" aria-label={t("ai.constraints.remove")} title={t("ai.constraints.remove")} data-testid="constraint-remove" onClick={() => void store.removeConstraint(c.id)}>
                ×
              </button>
            </li>
          ))}
          <li className="small muted">{t("ai.constraints.help")}</li>
        </ul>
      )}
      {open === "checkpoints" && checkpoints && (
        <ul className="extras-list" data-testid="checkpoints">
          {checkpoints.length === 0 && <li className="small muted">{t("ai.checkpoint.none")}</li>}
          {[...checkpoints].reverse().map((c) => (
            <li key={c.id} className="extras-item" data-testid="checkpoint" data-checkpoint={c.id}>
              <span className="grow">
                {labelShown(c) ? c.label : null}
                <span className="small muted">
                  {`${labelShown(c) ? " · " : ""}${t(`ai.checkpoint.reason.${c.reason}` as MessageId)} · ${c.head > 0 ? t("project.head", { n: c.head }) : t("project.head.none")} · `}
                  <time title={formatFullTime(lang, c.createdAt)}>{formatTime(lang, c.createdAt, now())}</time>
                </span>
              </span>
              {restoring === c.id ? (
                <>
                  <button type="button" className="small-btn primary" autoFocus data-testid="checkpoint-restore-confirm" disabled={busy} onClick={() => void restore(c.id)}>
                    {t("ai.checkpoint.restore")}
                  </button>
                  <button type="button" className="small-btn" onClick={() => setRestoring(null)}>
                    {t("common.cancel")}
                  </button>
                </>
              ) : (
                <button type="button" className="small-btn" data-testid="checkpoint-restore" disabled={busy} onClick={() => setRestoring(c.id)}>
                  {t("ai.checkpoint.restore")}…
                </button>
              )}
            </li>
          ))}
          {restoring && <li className="small muted">{t("ai.checkpoint.restoreAsk")}</li>}
          <li>
            <button type="button" className="small-btn" data-testid="checkpoint-create" disabled={busy} onClick={() => void store.createCheckpoint(t("ai.checkpoint.manualLabel", { time: new Date(now()).toLocaleString(lang === "zh" ? "zh-CN" : "en") }))}>
              {t("ai.checkpoint.create")}
            </button>
          </li>
        </ul>
      )}
    </div>
  );
}
