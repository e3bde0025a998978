// What else a session holds, when the backend offers it: the constraints the model
// keeps to (rejection reasons; the person can remove one), the checkpoints to go back
// to, and changes the assistant staged but did not apply.
import { useState, useSyncExternalStore } from "react";
import type { Checkpoint, Project } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { formatFullTime, formatTime, type MessageId } from "../../shared/i18n";
import { checkpointName } from "./checkpoint";
import { RestorePreview } from "./RestorePreview";
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


/** A chip's count while its list loads: blank, as wide as a digit (U+2007 FIGURE SPACE),
 * so the chip keeps its width when the count arrives. */
const LOADING_COUNT = "\u2007";





export function SessionExtras({ store, workingCopy }: { store: SessionStore; workingCopy: WorkingCopy }) {
  const { t, lang, now } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const [open, setOpen] = useState<Open>(null);
  const [restoring, setRestoring] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [restored, setRestored] = useState<string | null>(null);
  const { constraints, checkpoints, staging } = snap;
  // What the backend offers has its chip from the first frame (disabled, its count
  // blank until the list arrives), so the panel's header does not grow once it has loaded.
  const hasConstraints = constraints !== null || store.offers("constraint.list");
  const hasCheckpoints = checkpoints !== null || store.offers("checkpoint.list");
  if (!hasConstraints && !hasCheckpoints && staging === null) return null;
  const toggle = (which: Open) => setOpen((o) => (o === which ? null : which));
  // The harness names its own checkpoints by the turn they were kept around; a person's
  // or the assistant's label stays.
  const nameOf = (c: Checkpoint) => checkpointName(t, lang, c, snap.timeline.items);

  const restore = async (c: Checkpoint) => {
    setRestoring(null);
    setBusy(true);
    await workingCopy.flush().catch(() => undefined);
    const r = await store.restoreCheckpoint(c.id);
    setBusy(false);
    if (r) {
      const message = t("ai.checkpoint.restoredNamed", { name: nameOf(c), n: r.version.number });
      setRestored(message);
      workingCopy.replace(r.project, message);
    }
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
        {hasConstraints && (
          <button
            type="button"
            className="small-btn"
            aria-expanded={open === "constraints"}
            aria-busy={constraints === null}
            disabled={constraints === null}
            data-testid="constraints-toggle"
            onClick={() => toggle("constraints")}
          >
            {t("ai.constraints.title", { n: constraints?.length ?? LOADING_COUNT })}
          </button>
        )}
        {hasCheckpoints && (
          <button
            type="button"
            className="small-btn"
            aria-expanded={open === "checkpoints"}
            aria-busy={checkpoints === null}
            disabled={checkpoints === null}
            data-testid="checkpoints-toggle"
            onClick={() => toggle("checkpoints")}
          >
            {t("ai.checkpoint.title", { n: checkpoints?.length ?? LOADING_COUNT })}
          </button>
        )}
      </div>
      {restored && (
        <p className="small extras-note" role="status" data-testid="checkpoint-restored">
          {restored}
        </p>
      )}
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
            <li key={c.id} className="extras-item extras-item-col" data-testid="checkpoint" data-checkpoint={c.id}>
              <div className="extras-item-row">
                <span className="grow">
                  <span data-testid="checkpoint-name">{nameOf(c)}</span>
                  <span className="small muted">
                    {` · ${c.reason === "manual" || c.reason === "assistant" ? `${t(`ai.checkpoint.reason.${c.reason}` as MessageId)} · ` : ""}${c.head > 0 ? t("project.head", { n: c.head }) : t("project.head.none")} · `}
                    <time title={formatFullTime(lang, c.createdAt)}>{formatTime(lang, c.createdAt, now())}</time>
                  </span>
                </span>
                {restoring === c.id ? (
                  <>
                    <button type="button" className="small-btn primary" autoFocus data-testid="checkpoint-restore-confirm" disabled={busy} onClick={() => void restore(c)}>
                      {t("ai.checkpoint.restore")}
                    </button>
                    <button type="button" className="small-btn" onClick={() => setRestoring(null)}>
                      {t("common.cancel")}
                    </button>
                  </>
                ) : (
                  <button
                    type="button"
                    className="small-btn"
                    data-testid="checkpoint-restore"
                    disabled={busy}
                    onClick={() => {
                      setRestored(null);
                      setRestoring(c.id);
                    }}
                  >
                    {t("ai.checkpoint.restore")}…
                  </button>
                )}
              </div>
              {restoring === c.id && <RestorePreview checkpoint={c} name={nameOf(c)} proposals={snap.proposals} flush={workingCopy.flush} />}
            </li>
          ))}
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
