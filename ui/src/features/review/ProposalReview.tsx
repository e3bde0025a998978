// Reviewing one proposal where the text lives: over the editor, in CodeMirror's merge
// view. Per hunk: Enter accepts the focused hunk, Backspace rejects it (with an
// optional reason, which becomes a constraint the model keeps to). Accepted hunks are
// applied together, in one version, once every hunk is decided (or on "apply now");
// the whole proposal can be accepted or rejected at once. Candidates are choices. A
// stale proposal says so and offers rebase, regenerate, or comparing both texts.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import type { Accepted, Finding, PlatformDraft, ProposalView } from "../../shared/api/generated";
import { useCalls } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { draftRevision, readProposal } from "./data";
import { useApp } from "../../shared/context";
import { describeFinding, type MessageId } from "../../shared/i18n";
import { hunkBars, useBarLabels } from "./bars";
import { type HunkAction, type HunkBarState, type HunkDecision, lineStarts, MergeDiff } from "./MergeDiff";
import { DraftProposalPreview } from "./DraftProposalPreview";
import { targetLabel } from "../drafting";
import type { SessionStore, SourceTarget } from "../drafting";
import { WhyThisChange } from "./WhyThisChange";
import { ProposalBadge } from "../drafting";

export interface ProposalReviewProps {
  proposalId: string;
  store: SessionStore | null;
  /** Saves the editor's pending text, so the accept is checked against what is on screen. */
  flush: () => Promise<void>;
  /** The project's working-copy revision now (after `flush`). */
  revision: () => number;
  /** The editor's text now (for comparing a stale proposal with it). */
  currentText: () => string;
  onAccepted: (accepted: Accepted) => void;
  /** Asks the session for a new proposal on the current text. */
  onRegenerate: (view: ProposalView) => void;
  onClose: () => void;
  /** Opens a source of "Why this change?" (a search hit's document at its span). */
  onOpenSource?: (target: SourceTarget) => void;
  /** Opens Settings → Memory. */
  onOpenMemory?: () => void;
}

type Mode = "inline" | "split";

/** The hunk each new finding falls in (by its span in the proposed text); the rest. */
export function findingsByHunk(view: ProposalView): { byHunk: Map<string, Finding[]>; other: Finding[] } {
  const byHunk = new Map<string, Finding[]>();
  const other: Finding[] = [];
  const proposed = view.payload.type === "text" ? view.payload.proposedText : "";
  const starts = lineStarts(proposed);
  const at = (line: number) => (line < starts.length ? starts[line] : proposed.length);
  for (const f of view.newFindings) {
    const hunk = f.span ? view.hunks.find((h) => f.span!.from >= at(h.newStart) && f.span!.from < Math.max(at(h.newStart + h.newLen), at(h.newStart) + 1)) : undefined;
    if (hunk) byHunk.set(hunk.id, [...(byHunk.get(hunk.id) ?? []), f]);
    else other.push(f);
  }
  return { byHunk, other };
}

function initialDecisions(view: ProposalView): Record<string, HunkDecision> {
  const out: Record<string, HunkDecision> = {};
  for (const h of view.hunks) {
    if (view.rejectedHunks.includes(h.id)) out[h.id] = "rejected";
    else if (view.acceptedHunks.includes(h.id)) out[h.id] = "accepted";
    else out[h.id] = "pending";
  }
  return out;
}

/** Keyed by `proposalId` in its parent: another proposal is another review. */
function payload_is_text(view: ProposalView): boolean {
  return view.payload.type === "text";
}

export function ProposalReview({ proposalId, store, flush, revision, currentText, onAccepted, onRegenerate, onClose, onOpenSource, onOpenMemory }: ProposalReviewProps) {
  const { client, t, lang } = useApp();
  const { call } = useCalls();
  const [id, setId] = useState(proposalId);
  const [view, setView] = useState<ProposalView | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  const [mode, setMode] = useState<Mode>("inline");
  const [compare, setCompare] = useState(false);
  const [decisions, setDecisions] = useState<Record<string, HunkDecision>>({});
  const [rejecting, setRejecting] = useState<{ hunk: string | null } | null>(null);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  const [conflicts, setConflicts] = useState<number>(0);
  const [choices, setChoices] = useState<string[]>([]);
  const [confirmFinal, setConfirmFinal] = useState(false);
  // The saved draft a draft proposal targets (its status decides whether accepting
  // needs the person's confirmation; its content frames the preview).
  const [draft, setDraft] = useState<PlatformDraft | null>(null);
  const draftStatus = draft?.status ?? null;
  // A ready or published draft changes only with the person's explicit confirmation.
  const needsConfirm = draftStatus === "ready" || draftStatus === "published";
  const root = useRef<HTMLElement>(null);

  const show = useCallback((v: ProposalView) => {
    setView(v);
    setDecisions(initialDecisions(v));
  }, []);

  // The proposal as it stands, and for a draft target the draft's status (a ready or
  // published draft needs the person's confirmation).
  const fetchView = useCallback(() => readProposal(client, id), [client, id]);

  const load = useCallback(async () => {
    try {
      const r = await fetchView();
      show(r.view);
      setDraft(r.draft);
    } catch (e) {
      setError(toClientError(e));
    }
  }, [fetchView, show]);

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const r = await fetchView();
        if (!live) return;
        show(r.view);
        setDraft(r.draft);
      } catch (e) {
        if (live) setError(toClientError(e));
      }
    })();
    return () => {
      live = false;
    };
  }, [fetchView, show]);

  // Focus the first undecided hunk when a proposal opens (Enter/Backspace act on it).
  // The bars are CodeMirror widgets, drawn a moment after the proposal renders: try a
  // few frames before falling back to the Close button.
  const focusNext = useCallback((after?: string) => {
    let tries = 0;
    const attempt = () => {
      const bars = [...(root.current?.querySelectorAll<HTMLElement>("[data-testid=hunk]") ?? [])];
      const from = after ? bars.findIndex((b) => b.dataset.hunk === after) : -1;
      const next = [...bars.slice(from + 1), ...bars.slice(0, Math.max(0, from + 1))].find((b) => b.dataset.decision === "pending");
      if (next) return next.focus();
      if (++tries < 20) return void setTimeout(attempt, 25);
      root.current?.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    };
    setTimeout(attempt, 0);
  }, []);
  const opened = useRef<string | null>(null);
  useEffect(() => {
    if (view && opened.current !== view.id) {
      opened.current = view.id;
      focusNext();
    }
  }, [view, focusNext]);

  const open = view?.status === "proposed";
  const stale = !!view?.stale && open;

  const expectedBase = useCallback(async (v: ProposalView): Promise<number> => {
    await flush();
    return (await draftRevision(client, v)) ?? revision();
  }, [client, flush, revision]);

  const run = useCallback(
    async (label: string, action: () => Promise<void>) => {
      setBusy(label);
      setError(null);
      try {
        await action();
      } catch (e) {
        const err = toClientError(e);
        setError(err);
        // A conflict means the base moved: show the proposal as it stands now.
        if (err.code === "CONFLICT") await load();
      } finally {
        setBusy(null);
      }
    },
    [load],
  );

  const accept = useCallback(
    (v: ProposalView, hunks?: string[]) =>
      run(t("ai.review.applying"), async () => {
        const base = await expectedBase(v);
        const params = {
          proposalId: v.id,
          expectedBase: base,
          ...(hunks ? { hunks } : {}),
          ...(choices.length ? { choices } : {}),
          ...(confirmFinal ? { confirmFinal: true } : {}),
        };
        const r = await call("proposal.accept", params);
        show({ ...r.proposal, stale: false, basedOnStaged: false });
        store?.putProposal(r.proposal);
        onAccepted(r);
      }),
    [run, t, expectedBase, choices, confirmFinal, call, show, store, onAccepted],
  );

  const reject = useCallback(
    (v: ProposalView, hunk: string | null, why: string) =>
      run(t("ai.review.rejecting"), async () => {
        const params = { proposalId: v.id, ...(hunk ? { hunks: [hunk] } : {}), ...(why.trim() ? { reason: why.trim() } : {}) };
        const r = await call("proposal.reject", params);
        const next = { ...r.proposal, stale: v.stale, basedOnStaged: v.basedOnStaged };
        setView(next);
        store?.putProposal(r.proposal);
        setDecisions((d) => {
          const nd: Record<string, HunkDecision> = { ...d };
          for (const h of r.proposal.rejectedHunks) nd[h] = "rejected";
          // Every hunk decided and some accepted: apply them now, together.
          const pending = Object.values(nd).includes("pending");
          const accepted = Object.keys(nd).filter((k) => nd[k] === "accepted");
          if (!pending && accepted.length > 0 && r.proposal.status === "proposed") void accept(next, accepted);
          return nd;
        });
        if (hunk) focusNext(hunk);
      }),
    [run, t, call, store, accept, focusNext],
  );

  const onAct = useCallback(
    (hunk: string, action: HunkAction) => {
      if (!view || !open || busy) return;
      // A stale proposal is accepted by no hunk (as by no "Accept all"): rebase it first.
      if (stale && action === "accept") return;
      if (action === "reject") {
        setReason("");
        setRejecting({ hunk });
        return;
      }
      const next = { ...decisions, [hunk]: action === "accept" ? ("accepted" as const) : ("pending" as const) };
      setDecisions(next);
      if (action === "accept") {
        const pending = Object.values(next).includes("pending");
        if (!pending) void accept(view, Object.keys(next).filter((k) => next[k] === "accepted"));
        else focusNext(hunk);
      }
    },
    [view, open, busy, stale, decisions, accept, focusNext],
  );

  const { byHunk, other } = useMemo(() => (view ? findingsByHunk(view) : { byHunk: new Map<string, Finding[]>(), other: [] }), [view]);
  const bars = useMemo<HunkBarState[]>(
    () =>
      hunkBars(view?.hunks ?? [], decisions, {
        undecided: "pending",
        final: (h) => !open || view?.rejectedHunks.includes(h.id) === true,
        acceptBlocked: stale ? t("ai.review.staleAccept") : null,
        findings: (h) => (byHunk.get(h.id) ?? []).map((f) => ({ severity: f.severity, ...describeFinding(lang, f) })),
      }),
    [view, decisions, open, stale, byHunk, lang, t],
  );
  const labels = useBarLabels();

  const acceptedLocal = Object.keys(decisions).filter((k) => decisions[k] === "accepted" && !view?.acceptedHunks.includes(k));
  const pendingCount = Object.values(decisions).filter((d) => d === "pending").length;

  // Stage the proposal (the hunks accepted so far, or all) into the session's working
  // copy: nothing official changes until the staged set is applied as one version.
  const canStage =
    !!view && payload_is_text(view) && view.target.type === "source" && !!view.origin.sessionId && view.status === "proposed" && !stale && !!store?.offers("session.stage");
  const stage = () =>
    run(t("ai.review.staging"), async () => {
      if (!view || !view.origin.sessionId) return;
      const hunks = acceptedLocal.length > 0 ? acceptedLocal : undefined;
      await call("session.stage", { sessionId: view.origin.sessionId, proposalId: view.id, hunks });
      await store?.refreshExtras();
      onClose();
    });

  const rebase = () =>
    run(t("ai.review.rebasing"), async () => {
      if (!view) return;
      await flush();
      const r = await call("proposal.rebase", { proposalId: view.id });
      store?.putProposal(r.previous);
      store?.putProposal(r.proposal);
      setConflicts(r.conflicts.length);
      setCompare(false);
      setId(r.proposal.id);
      show({ ...r.proposal, stale: false, basedOnStaged: false });
    });

  const payload = view?.payload;
  const kindLabel = view ? t(`ai.kind.${view.kind}` as MessageId) : "";

  return (
    <section
      ref={root}
      className="overlay review"
      data-testid="proposal-review"
      data-proposal={view?.id ?? id}
      data-status={view?.status}
      data-stale={stale ? "true" : "false"}
      aria-label={t("ai.review.title")}
    >
      <header className="overlay-bar">
        <h2 className="overlay-title">
          {view ? view.summary : t("ai.loading")}
          {view && <span className="muted small">{` · ${kindLabel} · ${targetLabel(t, view)}`}</span>}
        </h2>
        {view && <ProposalBadge view={view} />}
        {payload?.type === "text" && (
          <div className="seg" role="group" aria-label={t("diff.mode")}>
            <button type="button" aria-pressed={mode === "inline"} data-testid="review-inline" onClick={() => setMode("inline")}>
              {t("diff.inline")}
            </button>
            <button type="button" aria-pressed={mode === "split"} data-testid="review-split" onClick={() => setMode("split")}>
              {t("diff.split")}
            </button>
          </div>
        )}
        <button type="button" data-testid="review-close" data-autofocus onClick={onClose}>
          {t("common.close")} <kbd>Esc</kbd>
        </button>
      </header>
      {error && (
        <div className="pad-x">
          <ErrorBanner error={error} onDismiss={() => setError(null)} />
        </div>
      )}
      {stale && (
        <div className="stale-banner" role="alert" data-testid="stale-banner">
          <p>{t("ai.review.stale")}</p>
          <div className="row">
            {payload?.type === "text" && (
              <button type="button" className="primary" data-testid="review-rebase" disabled={!!busy} onClick={() => void rebase()}>
                {t("ai.review.rebase")}
              </button>
            )}
            <button type="button" data-testid="review-regenerate" disabled={!!busy || !store} onClick={() => view && onRegenerate(view)}>
              {t("ai.review.regenerate")}
            </button>
            {payload?.type === "text" && (
              <button type="button" aria-pressed={compare} data-testid="review-compare" onClick={() => setCompare((c) => !c)}>
                {t("ai.review.compare")}
              </button>
            )}
          </div>
        </div>
      )}
      {view?.status === "superseded" && (
        <div className="notice small row" role="status" data-testid="superseded-note" data-reason={view.supersededReason ?? "replaced"}>
          <span className="grow">{t(`ai.proposal.superseded.${view.supersededReason ?? "replaced"}` as MessageId)}</span>
          {view.supersededBy && (
            <button type="button" data-testid="open-successor" onClick={() => view.supersededBy && setId(view.supersededBy)}>
              {t("ai.proposal.openSuccessor")}
            </button>
          )}
        </div>
      )}
      {view?.carries && view.carries.length > 0 && (
        <p className="small muted pad-x" data-testid="carries">
          {t("ai.proposal.carries", { summary: view.carries.map((c) => c.summary).join("；") })}
        </p>
      )}
      {view && (
        <div className="pad-x">
          <WhyThisChange key={view.id} proposalId={view.id} onOpenSource={onOpenSource} onOpenMemory={onOpenMemory} />
        </div>
      )}
      {conflicts > 0 && (
        <p className="notice small" role="status" data-testid="rebase-conflicts">
          {t("ai.review.rebaseConflicts", { n: conflicts })}
        </p>
      )}
      {view && view.newFindings.length > 0 && other.length > 0 && (
        <ul className="findings small" data-testid="review-findings">
          {other.map((f, i) => {
            const text = describeFinding(lang, f);
            return (
              <li key={i} className={`sev-${f.severity}`} data-testid="review-finding">
                {text.message}
                {text.suggestion && <span className="muted">{` — ${text.suggestion}`}</span>}
              </li>
            );
          })}
        </ul>
      )}
      <div className="overlay-body review-body">
        {view && payload?.type === "text" && (
          <>
            {compare && <p className="small muted pad-x">{t("ai.review.compareHelp")}</p>}
            <MergeDiff
              a={payload.baseText}
              b={compare ? currentText() : payload.proposedText}
              hunks={compare ? null : view.hunks}
              mode={compare ? "split" : mode}
              bars={compare ? [] : bars}
              labels={labels}
              onAct={onAct}
              ariaLabel={t("ai.review.title")}
            />
            {view.kind === "draft_patch" && draft && !compare && <DraftProposalPreview draft={draft} proposedText={payload.proposedText} />}
          </>
        )}
        {view && payload?.type === "candidates" && (
          <fieldset className="candidates" data-testid="candidates">
            <legend>{view.kind === "title_candidates" ? t("ai.review.pickTitle") : t("ai.review.pickTags")}</legend>
            {payload.candidates.map((c) => (
              <label key={c.text} className="candidate">
                <input
                  type={view.kind === "title_candidates" ? "radio" : "checkbox"}
                  name="candidate"
                  disabled={!open}
                  checked={choices.includes(c.text) || view.applied?.choices?.includes(c.text) === true}
                  onChange={(e) =>
                    setChoices((list) =>
                      view.kind === "title_candidates" ? [c.text] : e.target.checked ? [...list, c.text] : list.filter((x) => x !== c.text),
                    )
                  }
                />
                <span>
                  {c.text}
                  {c.rationale && <span className="small muted">{` — ${c.rationale}`}</span>}
                </span>
              </label>
            ))}
          </fieldset>
        )}
        {view && payload?.type === "outline" && <pre className="review-text">{payload.outline}</pre>}
        {view && payload?.type === "commentReply" && <p className="review-text">{payload.body}</p>}
        {view && payload?.type === "checklist" && (
          <ul className="review-text">
            {payload.items.map((item) => (
              <li key={item.id}>
                {item.blocking ? "⚠ " : ""}
                {item.text}
              </li>
            ))}
          </ul>
        )}
        {view && payload?.type === "metadata" && <pre className="review-text">{JSON.stringify(payload.change, null, 2)}</pre>}
      </div>
      {view && open && (
        <footer className="overlay-bar review-actions">
          {rejecting ? (
            <form
              className="row grow"
              data-testid="reject-form"
              onSubmit={(e) => {
                e.preventDefault();
                const target = rejecting.hunk;
                setRejecting(null);
                void reject(view, target, reason);
              }}
            >
              <span className="small">{rejecting.hunk ? t("ai.review.rejectHunk", { index: (view.hunks.findIndex((h) => h.id === rejecting.hunk) ?? 0) + 1 }) : t("ai.review.rejectAll")}</span>
              <input
                className="grow"
                data-testid="reject-reason"
                aria-label={t("ai.review.reason")}
                title={t("ai.review.reason")}
                placeholder={t("ai.review.reasonShort")}
                value={reason}
                autoFocus
                maxLength={2000}
                onChange={(e) => setReason(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === "Escape") {
                    e.preventDefault();
                    e.stopPropagation();
                    const hunk = rejecting.hunk;
                    setRejecting(null);
                    if (hunk) focusNext();
                  }
                }}
              />
              <button type="submit" className="primary" data-testid="reject-confirm">
                {t("ai.review.reject")}
              </button>
              <button type="button" onClick={() => setRejecting(null)}>
                {t("common.cancel")}
              </button>
            </form>
          ) : (
            <>
              {busy ? (
                <span className="busy small" role="status">
                  <span className="spinner" aria-hidden="true" /> {busy}
                </span>
              ) : (
                view.hunks.length > 0 && <span className="small muted">{t("ai.review.progress", { done: view.hunks.length - pendingCount, total: view.hunks.length })}</span>
              )}
              <span className="spacer" />
              {needsConfirm && (
                <label className="small">
                  <input type="checkbox" data-testid="review-confirm-final" checked={confirmFinal} onChange={(e) => setConfirmFinal(e.target.checked)} /> {t("ai.review.confirmFinal", { status: draftStatus })}
                </label>
              )}
              {acceptedLocal.length > 0 && pendingCount > 0 && (
                <button type="button" data-testid="review-apply" disabled={!!busy || stale} onClick={() => void accept(view, acceptedLocal)}>
                  {t("ai.review.applyNow", { n: acceptedLocal.length })}
                </button>
              )}
              {canStage && (
                <button type="button" data-testid="review-stage" disabled={!!busy} title={t("ai.review.stageHint")} onClick={() => void stage()}>
                  {t("ai.review.stage")}
                </button>
              )}
              <button type="button" data-testid="review-reject-all" disabled={!!busy} onClick={() => (setReason(""), setRejecting({ hunk: null }))}>
                {t("ai.review.rejectAll")}…
              </button>
              <button
                type="button"
                className="primary"
                data-testid="review-accept-all"
                disabled={!!busy || stale || (payload?.type === "candidates" && choices.length === 0) || (needsConfirm && !confirmFinal)}
                onClick={() => void accept(view)}
              >
                {payload?.type === "candidates" ? t("ai.review.acceptChoice") : t("ai.review.acceptAll")}
              </button>
            </>
          )}
        </footer>
      )}
    </section>
  );
}
