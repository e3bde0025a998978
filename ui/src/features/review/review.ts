// The review's plain decisions, outside React: which hunk each finding falls in, the
// decision each hunk starts with, and when the decided hunks are applied together.
import type { Finding, ProposalView } from "../../shared/api/generated";
import { type HunkDecision, lineStarts } from "./MergeDiff";

export type Decisions = Record<string, HunkDecision>;

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

/** Each hunk's decision as the engine holds it (rejected before accepted; the rest pending). */
export function initialDecisions(view: ProposalView): Decisions {
  const out: Decisions = {};
  for (const h of view.hunks) {
    if (view.rejectedHunks.includes(h.id)) out[h.id] = "rejected";
    else if (view.acceptedHunks.includes(h.id)) out[h.id] = "accepted";
    else out[h.id] = "pending";
  }
  return out;
}

/** The hunks accepted in `decisions`. */
export const acceptedHunks = (decisions: Decisions): string[] => Object.keys(decisions).filter((k) => decisions[k] === "accepted");

/** How many hunks are still undecided. */
export const pendingCount = (decisions: Decisions): number => Object.values(decisions).filter((d) => d === "pending").length;

/** The hunks to apply now, together: once every hunk is decided and some are accepted; else null. */
export function readyToApply(decisions: Decisions): string[] | null {
  const accepted = acceptedHunks(decisions);
  return pendingCount(decisions) === 0 && accepted.length > 0 ? accepted : null;
}

/** `decisions` with the hunks the engine reports rejected marked so. */
export function withRejected(decisions: Decisions, rejected: string[]): Decisions {
  const next: Decisions = { ...decisions };
  for (const h of rejected) next[h] = "rejected";
  return next;
}
