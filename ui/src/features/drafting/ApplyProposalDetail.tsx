// What an `apply_proposal` permission prompt shows: the proposal, where it writes and
// every hunk it applies, paged.
import { useEffect, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { TextDiffResult } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { DiffView } from "../../shared/ui/DiffView";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { APPROVAL_PAGE_HUNKS, asRecord, changeHunks, diffOf, hunksDiff, sizeLabel, targetLabel } from "./approval";
import type { PendingApproval } from "./timeline";

/** What `apply_proposal` would write: the proposal, where, and every hunk it applies —
 * from the approval's own record of the change (its diffs, or its hunk ids with the
 * diffs read from the proposal), or from the proposal itself for an older log. Paged;
 * `onSeen(true)` once every page has been shown and the record lists every hunk. */
export function ApplyProposalDetail({ pending, onSeen }: { pending: PendingApproval; onSeen: (seen: boolean) => void }) {
  const { t } = useApp();
  const input = asRecord(pending.input);
  const change = pending.change;
  const proposalId = change?.proposalId ?? (typeof input.proposalId === "string" ? input.proposalId : null);
  const named = change ? change.hunks.map((h) => h.id) : Array.isArray(input.hunks) ? input.hunks.filter((h): h is string => typeof h === "string") : undefined;
  const inline = change ? changeHunks(change) : null;
  const [page, setPage] = useState(0);
  const [seen, setSeen] = useState<ReadonlySet<number>>(() => new Set([0]));
  const omitted = change?.omittedHunks ?? 0;
  // The proposal is read only when the record does not carry its hunks.
  const read = useMethod("proposal.get", { proposalId: proposalId ?? "" }, { enabled: !!proposalId && !inline && omitted === 0 });
  const view = read.data ?? null;
  const error = read.error ? toClientError(read.error) : null;
  let hunks: TextDiffResult["hunks"] | null = inline;
  // The record's hunks, by id, each the exact change it was bound to (same hash).
  let mismatch = false;
  if (!hunks && view) {
    if (change) {
      hunks = [];
      for (const h of change.hunks) {
        const found = view.hunks.find((v) => v.id === h.id);
        if (!found || found.contentHash !== h.contentHash) mismatch = true;
        else hunks.push(found.display);
      }
    } else hunks = hunksDiff(view, named && named.length ? named : undefined).hunks;
  }
  const total = hunks?.length ?? 0;
  const pages = Math.max(1, Math.ceil(total / APPROVAL_PAGE_HUNKS));
  const complete = hunks !== null && !mismatch && omitted === 0 && seen.size >= pages;
  useEffect(() => onSeen(complete), [onSeen, complete]);
  // An older record that left hunks out: what it applies cannot be shown whole.
  if (change && omitted > 0)
    return (
      <div className="prompt-detail" data-testid="approval-diff">
        <p className="small warning" role="alert" data-testid="approval-incomplete">
          {t("ai.approval.incomplete", { shown: change.hunks.length, n: change.hunks.length + omitted })}
        </p>
      </div>
    );
  if (error) return <ErrorBanner error={error} />;
  const summary = change?.summary ?? view?.summary;
  const target = change ?? view;
  if (!hunks || summary === undefined || !target) return <p className="small muted">{t("ai.loading")}</p>;
  const n = total + omitted;
  const from = page * APPROVAL_PAGE_HUNKS;
  const shown = diffOf(hunks.slice(from, from + APPROVAL_PAGE_HUNKS));
  const go = (to: number) => {
    setPage(to);
    setSeen((s) => new Set(s).add(to));
  };
  return (
    <div className="prompt-detail" data-testid="approval-diff">
      <p>{t("ai.approval.applyWhat", { summary, target: targetLabel(t, target), n })}</p>
      {change?.totalBytes !== undefined && (
        <p className="small muted" data-testid="approval-totals">
          {t("ai.approval.totals", { n, size: sizeLabel(t, change.totalBytes) })}
        </p>
      )}
      {mismatch && (
        <p className="small warning" role="alert" data-testid="approval-incomplete">
          {t("ai.approval.changed")}
        </p>
      )}
      {change?.detail && <p className="prompt-input">{change.detail}</p>}
      {/* Above the diff and sticky, so the next page is always at hand. */}
      {pages > 1 && (
        <div className="prompt-pager row" data-testid="approval-pager">
          <button type="button" disabled={page === 0} data-testid="approval-prev" onClick={() => go(page - 1)}>
            {t("ai.approval.prev")}
          </button>
          <span className="small" data-testid="approval-page">
            {t("ai.approval.page", { from: from + 1, to: Math.min(total, from + APPROVAL_PAGE_HUNKS), n: total })}
          </span>
          <button type="button" disabled={page >= pages - 1} data-testid="approval-next" onClick={() => go(page + 1)}>
            {t("ai.approval.next")}
          </button>
        </div>
      )}
      {total > 0 && <DiffView diff={shown} mode="inline" identicalLabel={t("ai.proposal.noChange")} />}
      {pages > 1 && seen.size < pages && (
        <p className="small muted" data-testid="approval-see-all">
          {t("ai.approval.seeAll", { n: total })}
        </p>
      )}
      {/* The approval is bound to the target's revision (not a version): the person is told the version the accept saves. */}
      {change?.createsVersion !== undefined && (
        <p className="small muted" data-testid="approval-creates-version">
          {t("ai.approval.createsVersion", { n: change.createsVersion })}
        </p>
      )}
    </div>
  );
}

/** Why the prompt asks, in the person's language (the engine's reason is for the log). */
/** Why the engine asks, in the person's language: by the core's `reasonId`; a log
 * written before it carries only the English reason, read as before. */
