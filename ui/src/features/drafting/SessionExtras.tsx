// What else a session holds, when the backend offers it: the constraints the model
// keeps to (rejection reasons; the person can remove one), the checkpoints to go back
// to, and changes the assistant staged but did not apply.
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import { readFresh } from "../../shared/api/query";
import type { Checkpoint, DiffLine, Hunk, Project, ProposalView, TextDiffResult, VersionSummary } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { type T, useApp } from "../../shared/context";
import { formatFullTime, formatTime, has, type MessageId } from "../../shared/i18n";
import { DiffView } from "../../shared/ui/DiffView";
import type { SessionStore } from "./store";
import type { Item } from "./timeline";

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

/** A diff read the other way round: from the new side to the old (the checkpoint). */
export function reverseDiff(diff: TextDiffResult): TextDiffResult {
  const flip = (l: DiffLine): DiffLine => ({ ...l, kind: l.kind === "insert" ? "delete" : l.kind === "delete" ? "insert" : l.kind, oldLine: l.newLine, newLine: l.oldLine });
  const hunks = diff.hunks.map((h): Hunk => {
    // Within each run of changed lines the deletions come first, as a diff shows them.
    const lines: DiffLine[] = [];
    let run: DiffLine[] = [];
    const close = () => {
      lines.push(...run.filter((l) => l.kind === "delete"), ...run.filter((l) => l.kind === "insert"));
      run = [];
    };
    for (const l of h.lines.map(flip)) {
      if (l.kind === "equal") {
        close();
        lines.push(l);
      } else run.push(l);
    }
    close();
    return { oldStart: h.newStart, oldLen: h.newLen, newStart: h.oldStart, newLen: h.oldLen, lines };
  });
  return { hunks, nInsertions: diff.nDeletions, nDeletions: diff.nInsertions, identical: diff.identical };
}

/** A line diff of two texts (the checkpoint kept unsaved text, which no version holds). */
export function lineDiff(before: string, after: string, context = 2): TextDiffResult {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length * b.length > 4_000_000) {
    const lines: DiffLine[] = [
      ...a.map((text, i): DiffLine => ({ kind: "delete", oldLine: i + 1, newLine: null, segments: [{ text, emphasized: false }] })),
      ...b.map((text, i): DiffLine => ({ kind: "insert", oldLine: null, newLine: i + 1, segments: [{ text, emphasized: false }] })),
    ];
    return { hunks: [{ oldStart: 1, oldLen: a.length, newStart: 1, newLen: b.length, lines }], nInsertions: b.length, nDeletions: a.length, identical: false };
  }
  // Longest common subsequence, from the end.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const all: DiffLine[] = [];
  let i = 0;
  let j = 0;
  const seg = (text: string) => [{ text, emphasized: false }];
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      all.push({ kind: "equal", oldLine: i + 1, newLine: j + 1, segments: seg(a[i]) });
      i++;
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
      all.push({ kind: "delete", oldLine: i + 1, newLine: null, segments: seg(a[i]) });
      i++;
    } else {
      all.push({ kind: "insert", oldLine: null, newLine: j + 1, segments: seg(b[j]) });
      j++;
    }
  }
  const hunks: Hunk[] = [];
  let k = 0;
  let prevStop = 0;
  while (k < all.length) {
    if (all[k].kind === "equal") {
      k++;
      continue;
    }
    const start = Math.max(prevStop, k - context);
    let end = k;
    while (end < all.length) {
      if (all[end].kind !== "equal") {
        end++;
        continue;
      }
      let e = end;
      while (e < all.length && all[e].kind === "equal") e++;
      if (e < all.length && e - end <= context * 2) end = e;
      else break;
    }
    const stop = Math.min(all.length, end + context);
    const lines = all.slice(start, stop);
    const firstOld = lines.find((l) => l.oldLine !== null)?.oldLine ?? 1;
    const firstNew = lines.find((l) => l.newLine !== null)?.newLine ?? 1;
    hunks.push({
      oldStart: firstOld,
      oldLen: lines.filter((l) => l.kind !== "insert").length,
      newStart: firstNew,
      newLen: lines.filter((l) => l.kind !== "delete").length,
      lines,
    });
    k = stop;
    prevStop = stop;
  }
  const nInsertions = all.filter((l) => l.kind === "insert").length;
  const nDeletions = all.filter((l) => l.kind === "delete").length;
  return { hunks, nInsertions, nDeletions, identical: nInsertions + nDeletions === 0 };
}

/** A chip's count while its list loads: blank, as wide as a digit (U+2007 FIGURE SPACE),
 * so the chip keeps its width when the count arrives. */
const LOADING_COUNT = "\u2007";

/** The first words of a task, for a checkpoint's name. */
function firstWords(text: string, max = 16): string {
  const one = text.replace(/\s+/g, " ").trim();
  return [...one].length > max ? `${[...one].slice(0, max).join("")}…` : one;
}

/** A checkpoint's name: a person's or the assistant's label; for the harness's own, the
 * turn it was kept around (its number and first words), else the core's wording id
 * (`labelId`, with its values) in the person's language — never its English `label`. */
export function checkpointName(t: T, lang: "en" | "zh", c: Checkpoint, items: readonly Item[]): string {
  if (c.reason === "manual" || c.reason === "assistant") return c.label;
  const worded = c.labelId && has(lang, `ai.checkpoint.label.${c.labelId}`) ? t(`ai.checkpoint.label.${c.labelId}` as MessageId, Object.fromEntries(Object.entries(c.labelParams ?? {}).map(([k, v]) => [k, v ?? ""]))) : null;
  const users = items.filter((i): i is Extract<Item, { kind: "user" }> => i.kind === "user");
  const seqOf = (i: Item) => Number(i.key);
  // Before a turn: kept at its `turn_started`, the message follows at once. After: the
  // last message of the turn came before it.
  let at = c.reason === "before_turn" ? users.findIndex((u) => seqOf(u) === c.sequence + 1) : -1;
  if (at < 0) at = users.reduce((found, u, idx) => (seqOf(u) <= c.sequence ? idx : found), -1);
  // Stored before `labelId` existed: the English label in English, else the reason.
  if (at < 0) return worded ?? (lang === "en" ? c.label : t(`ai.checkpoint.reason.${c.reason}` as MessageId));
  const vars = { n: at + 1, words: firstWords(users[at].text) };
  return c.reason === "before_turn" ? t("ai.checkpoint.turnBefore", vars) : t("ai.checkpoint.turnAfter", vars);
}

/** What a version took in, in words (for "this takes back"). */
function versionWhat(t: T, v: VersionSummary, proposals: readonly ProposalView[]): string {
  const o = v.origin;
  switch (o.type) {
    case "aiProposal": {
      const summary = proposals.find((p) => p.id === o.proposalId)?.summary;
      return summary ? t("ai.checkpoint.origin.aiProposal", { summary }) : v.message || t("ai.checkpoint.origin.aiProposalUnnamed");
    }
    case "manual":
      return v.message ? `${t("ai.checkpoint.origin.manual")} · ${v.message}` : t("ai.checkpoint.origin.manual");
    case "autosnapshot":
      return t("ai.checkpoint.origin.autosnapshot");
    case "restore":
      return t("ai.checkpoint.origin.restore", { n: o.from });
    case "checkpoint":
      return t("ai.checkpoint.origin.checkpoint");
    case "pulled":
      return t("ai.checkpoint.origin.pulled");
    case "syncResolution":
      return t("ai.checkpoint.origin.syncResolution");
  }
}

interface RestorePlan {
  diff: TextDiffResult;
  title: { from: string; to: string } | null;
  /** Versions after the checkpoint's, newest last. */
  undone: VersionSummary[];
  /** The version that will keep unsaved edits, when there are any. */
  unsavedAs: number | null;
  savesVersion: number;
}

/** Reads what a restore would change: the text now (after a save of pending typing)
 * against the checkpoint's, and the versions made since. */
async function planRestore(client: ReturnType<typeof useApp>["client"], c: Checkpoint, flush: () => Promise<void>): Promise<RestorePlan> {
  await flush().catch(() => undefined);
  const projectId = c.projectId;
  const [project, list] = await Promise.all([readFresh(client, "project.get", { projectId }), readFresh(client, "version.list", { projectId })]);
  let unsaved: boolean;
  if (project.head > 0) {
    const d = await readFresh(client, "version.diff", { projectId, from: project.head });
    unsaved = !d.diff.identical || d.titleChanged;
  } else unsaved = project.source !== "" || project.title !== "";
  let diff: TextDiffResult;
  let title: RestorePlan["title"] = null;
  if (c.workingSource === undefined && c.head > 0) {
    // The checkpoint's text is its head version's: the engine's word-level diff, turned round.
    const d = await readFresh(client, "version.diff", { projectId, from: c.head });
    diff = reverseDiff(d.diff);
    if (d.titleChanged) title = { from: d.newTitle, to: d.oldTitle };
  } else {
    const to = { title: c.workingTitle ?? project.title, source: c.workingSource ?? "" };
    diff = lineDiff(project.source, to.source);
    if (to.title !== project.title) title = { from: project.title, to: to.title };
  }
  const undone = list.versions.filter((v) => v.number > c.head).sort((a, b) => a.number - b.number);
  const unsavedAs = unsaved ? project.head + 1 : null;
  return { diff, title, undone, unsavedAs, savesVersion: project.head + (unsaved ? 2 : 1) };
}

function RestorePreview({ checkpoint, name, proposals, flush }: { checkpoint: Checkpoint; name: string; proposals: readonly ProposalView[]; flush: () => Promise<void> }) {
  const { client, t } = useApp();
  const [plan, setPlan] = useState<RestorePlan | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  // Read once per opening: a new `flush` or list refresh does not compare again.
  const latest = useRef({ checkpoint, flush });
  useEffect(() => {
    latest.current = { checkpoint, flush };
  });
  const id = checkpoint.id;
  useEffect(() => {
    let live = true;
    planRestore(client, latest.current.checkpoint, latest.current.flush).then(
      (p) => live && setPlan(p),
      (e) => live && setError(toClientError(e)),
    );
    return () => {
      live = false;
    };
  }, [client, id]);
  if (error) return <ErrorBanner error={error} />;
  if (!plan)
    return (
      <p className="small muted" role="status">
        {t("ai.checkpoint.loading")}
      </p>
    );
  return (
    <div className="restore-preview" data-testid="restore-preview">
      <p className="small">{t("ai.checkpoint.restoreWhat", { name })}</p>
      {plan.title && <p className="small" data-testid="restore-title">{t("ai.checkpoint.titleChange", plan.title)}</p>}
      <div className="restore-diff" data-testid="restore-diff">
        <DiffView diff={plan.diff} mode="inline" identicalLabel={t("ai.checkpoint.sameText")} />
      </div>
      {(plan.undone.length > 0 || plan.unsavedAs !== null) && (
        <div data-testid="restore-undoes">
          <p className="small">{t("ai.checkpoint.undoes")}</p>
          <ul className="small restore-undo-list">
            {plan.undone.map((v) => (
              <li key={v.id}>{t("ai.checkpoint.undoVersion", { n: v.number, what: versionWhat(t, v, proposals) })}</li>
            ))}
            {plan.unsavedAs !== null && <li>{t("ai.checkpoint.undoUnsaved", { n: plan.unsavedAs })}</li>}
          </ul>
        </div>
      )}
      {checkpoint.drafts.length > 0 && <p className="small muted">{t("ai.checkpoint.drafts")}</p>}
      <p className="small muted" data-testid="restore-saves">
        {t("ai.checkpoint.savesVersion", { n: plan.savesVersion })}
      </p>
    </div>
  );
}

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
