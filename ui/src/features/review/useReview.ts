// The review's state and flows (loading, accepting, rejecting, staging, rebasing and
// moving focus between hunk bars), as one hook the component renders.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import type { Accepted, Finding, PlatformDraft, ProposalView } from "../../shared/api/generated";
import { useCalls } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { describeFinding } from "../../shared/i18n";
import type { SessionStore } from "../drafting";
import { hunkBars, useBarLabels } from "./bars";
import { draftRevision, readProposal } from "./data";
import type { HunkAction, HunkBarState } from "./MergeDiff";
import { acceptedHunks, type Decisions, findingsByHunk, initialDecisions, pendingCount as countPending, readyToApply, withRejected } from "./review";

export interface ReviewInputs {
  proposalId: string;
  store: SessionStore | null;
  flush: () => Promise<void>;
  revision: () => number;
  onAccepted: (accepted: Accepted) => void;
  onClose: () => void;
}

const payloadIsText = (view: ProposalView) => view.payload.type === "text";

export function useReview({ proposalId, store, flush, revision, onAccepted, onClose }: ReviewInputs) {
  const { client, t, lang } = useApp();
  const { call } = useCalls();
  const [id, setId] = useState(proposalId);
  const [view, setView] = useState<ProposalView | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  const [compare, setCompare] = useState(false);
  const [decisions, setDecisions] = useState<Decisions>({});
  const [rejecting, setRejecting] = useState<{ hunk: string | null } | null>(null);
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
          const nd = withRejected(d, r.proposal.rejectedHunks);
          // Every hunk decided and some accepted: apply them now, together.
          const ready = readyToApply(nd);
          if (ready && r.proposal.status === "proposed") void accept(next, ready);
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
        setRejecting({ hunk });
        return;
      }
      const next: Decisions = { ...decisions, [hunk]: action === "accept" ? "accepted" : "pending" };
      setDecisions(next);
      if (action === "accept") {
        if (countPending(next) === 0) void accept(view, acceptedHunks(next));
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

  const acceptedLocal = acceptedHunks(decisions).filter((k) => !view?.acceptedHunks.includes(k));
  const pendingCount = countPending(decisions);

  // Stage the proposal (the hunks accepted so far, or all) into the session's working
  // copy: nothing official changes until the staged set is applied as one version.
  const canStage =
    !!view && payloadIsText(view) && view.target.type === "source" && !!view.origin.sessionId && view.status === "proposed" && !stale && !!store?.offers("session.stage");
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


  return {
    id, setId, view, error, setError, compare, setCompare, rejecting, setRejecting, busy, conflicts, choices, setChoices, confirmFinal, setConfirmFinal,
    draft, draftStatus, needsConfirm, root, focusNext, open, stale, accept, reject, onAct, other, bars, labels, acceptedLocal, pendingCount, canStage, stage, rebase,
  };
}
