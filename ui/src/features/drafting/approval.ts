// What a permission prompt shows, outside React: where a proposal writes, the hunks it
// would apply as a diff, a change's size, and the page size of a long one.
import type { ApprovalChange, ProposalView, TextDiffResult } from "../../shared/api/generated";
import type { T } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";

export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Where a proposal writes, in words. */
export function targetLabel(t: T, view: Pick<ProposalView, "target">): string {
  const target = view.target;
  switch (target.type) {
    case "source":
      return t("ai.target.source");
    case "draft":
      return t("ai.target.draft", { platform: t(`platform.${target.platform}` as MessageId) });
    case "comment":
      return t("ai.target.comment");
    case "metadata":
      return t("ai.target.metadata");
    case "session":
      return t("ai.target.session");
  }
}

/** The hunks a proposal would apply (all open ones, or those named), as one diff. */
export function hunksDiff(view: ProposalView, ids?: readonly string[]): TextDiffResult {
  const hunks = view.hunks.filter((h) => (ids ? ids.includes(h.id) : !view.rejectedHunks.includes(h.id)));
  let nInsertions = 0;
  let nDeletions = 0;
  for (const h of hunks)
    for (const l of h.display.lines) {
      if (l.kind === "insert") nInsertions++;
      if (l.kind === "delete") nDeletions++;
    }
  return { hunks: hunks.map((h) => h.display), nInsertions, nDeletions, identical: hunks.length === 0 };
}

/** The diff of some hunks' displays. */
export function diffOf(hunks: TextDiffResult["hunks"]): TextDiffResult {
  let nInsertions = 0;
  let nDeletions = 0;
  for (const h of hunks)
    for (const l of h.lines) {
      if (l.kind === "insert") nInsertions++;
      if (l.kind === "delete") nDeletions++;
    }
  return { hunks, nInsertions, nDeletions, identical: hunks.length === 0 };
}

/** The hunks of an approval's exact change, when every hunk's display came with it. */
export function changeHunks(change: ApprovalChange): TextDiffResult["hunks"] | null {
  if (change.omittedHunks > 0 || change.hunks.some((h) => !h.display)) return null;
  return change.hunks.map((h) => h.display!);
}

/** How many hunks one page of a permission prompt shows. */
export const APPROVAL_PAGE_HUNKS = 20;

/** A size in the person's units: bytes, KB or MB (1,024). */
export function sizeLabel(t: T, bytes: number): string {
  if (bytes < 1024) return t("ai.approval.size.bytes", { n: bytes });
  if (bytes < 1024 * 1024) return t("ai.approval.size.kb", { n: Math.ceil(bytes / 1024) });
  return t("ai.approval.size.mb", { n: (bytes / (1024 * 1024)).toFixed(1) });
}
