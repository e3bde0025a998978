// What the hunk bars of a merge view show, the same in the AI panel's review and in the
// optimize dialog: each hunk's position, decision and findings, and the bar's words.
import { useMemo } from "react";
import type { ProposalHunk } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { BarLabels, HunkBarState, HunkDecision } from "./MergeDiff";

/** The bars of `hunks`: a hunk not decided yet shows `undecided`. */
export function hunkBars(
  hunks: readonly ProposalHunk[],
  decisions: Readonly<Record<string, HunkDecision>>,
  options: { undecided: HunkDecision; final?: (hunk: ProposalHunk) => boolean; acceptBlocked?: string | null; findings?: (hunk: ProposalHunk) => HunkBarState["findings"] },
): HunkBarState[] {
  return hunks.map((h, i, all) => ({
    id: h.id,
    index: i + 1,
    total: all.length,
    decision: decisions[h.id] ?? options.undecided,
    final: options.final?.(h) ?? false,
    ...(options.acceptBlocked !== undefined ? { acceptBlocked: options.acceptBlocked } : {}),
    findings: options.findings?.(h) ?? [],
  }));
}

/** The bars' words in the person's language. */
export function useBarLabels(): BarLabels {
  const { t } = useApp();
  return useMemo<BarLabels>(
    () => ({
      title: (index, total) => t("ai.review.hunk", { index, total }),
      accept: t("ai.review.accept"),
      reject: t("ai.review.reject"),
      undo: t("ai.review.undo"),
      accepted: t("ai.review.accepted"),
      rejected: t("ai.review.rejectedOne"),
    }),
    [t],
  );
}
