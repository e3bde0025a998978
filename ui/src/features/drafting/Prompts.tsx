// What a turn waits for: a permission prompt (what changes and where, with the diff),
// a plan to approve or send back, or a question with its options.
import { useEffect, useState } from "react";
import { toClientError } from "../../shared/api/client";
import { useMethod } from "../../shared/api/query";
import type { AllowScope, ApprovalChange, ProposalView, TextDiffResult } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { DiffView } from "../../shared/ui/DiffView";
import { AlwaysAllow } from "./AlwaysAllow";
import { Markdown } from "./Markdown";
import { toolLabel } from "./stepText";
import { ToolInput } from "./ToolInput";
import type { PendingApproval, PendingQuestion } from "./timeline";

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Where a proposal writes, in words. */
export function targetLabel(t: ReturnType<typeof useApp>["t"], view: Pick<ProposalView, "target">): string {
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
function diffOf(hunks: TextDiffResult["hunks"]): TextDiffResult {
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
function changeHunks(change: ApprovalChange): TextDiffResult["hunks"] | null {
  if (change.omittedHunks > 0 || change.hunks.some((h) => !h.display)) return null;
  return change.hunks.map((h) => h.display!);
}

/** How many hunks one page of a permission prompt shows. */
export const APPROVAL_PAGE_HUNKS = 20;

/** A size in the person's units: bytes, KB or MB (1,024). */
function sizeLabel(t: ReturnType<typeof useApp>["t"], bytes: number): string {
  if (bytes < 1024) return t("ai.approval.size.bytes", { n: bytes });
  if (bytes < 1024 * 1024) return t("ai.approval.size.kb", { n: Math.ceil(bytes / 1024) });
  return t("ai.approval.size.mb", { n: (bytes / (1024 * 1024)).toFixed(1) });
}

/** What `apply_proposal` would write: the proposal, where, and every hunk it applies —
 * from the approval's own record of the change (its diffs, or its hunk ids with the
 * diffs read from the proposal), or from the proposal itself for an older log. Paged;
 * `onSeen(true)` once every page has been shown and the record lists every hunk. */
function ApplyProposalDetail({ pending, onSeen }: { pending: PendingApproval; onSeen: (seen: boolean) => void }) {
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
function whyAsked(t: ReturnType<typeof useApp>["t"], reason: string, reasonId: string | undefined): string | null {
  if (reasonId) return reasonId === "rule" ? t("ai.approval.why.rule") : t("ai.approval.why.policy");
  if (!reason) return null;
  return /workspace rule/.test(reason) ? t("ai.approval.why.rule") : t("ai.approval.why.policy");
}

export function ApprovalPrompt({
  pending,
  busy,
  onDecide,
  projectId,
  sessionId,
}: {
  pending: PendingApproval;
  busy: boolean;
  /** `always`: allow, and store the offered "always allow" rule in that scope. */
  onDecide: (approved: boolean, note: string, always?: AllowScope) => void;
  /** The project the session works on (to say where a write lands). */
  projectId?: string;
  /** The session asked in (to preview an "always allow" rule). */
  sessionId?: string;
}) {
  const { t, lang } = useApp();
  const why = pending.tool === "request_permission" ? null : whyAsked(t, pending.reason, pending.reasonId);
  const [denying, setDenying] = useState(false);
  const [note, setNote] = useState("");
  const applies = pending.tool === "apply_proposal" || pending.change !== undefined;
  // A change is allowed only once the person has been shown all of it.
  const [seenAll, setSeenAll] = useState(false);
  return (
    <section className="prompt" data-testid="approval" data-tool={pending.tool} aria-label={t("ai.approval.title")}>
      <p className="prompt-title">
        <span className="step-icon step-waiting" aria-hidden="true">
          ◆
        </span>{" "}
        {t("ai.approval.asks", { tool: toolLabel(t, lang, pending.tool) })}
      </p>
      {why && <p className="small muted" data-testid="approval-why">{why}</p>}
      {applies ? (
        <ApplyProposalDetail key={pending.requestId} pending={pending} onSeen={setSeenAll} />
      ) : (
        <>
          <ToolInput tool={pending.tool} input={pending.input ?? {}} projectId={projectId} asks />
          {pending.targetVersion !== undefined && (
            <p className="small muted" data-testid="approval-revision">
              {t("ai.approval.target", { n: pending.targetVersion })}
            </p>
          )}
        </>
      )}
      {/* Only where the engine offers a rule: never for a change, a plan, or a permission request. The
          buttons come last: they stay on screen at the prompt's foot while it scrolls. */}
      {!denying && pending.offer && sessionId && (
        <AlwaysAllow sessionId={sessionId} requestId={pending.requestId} offer={pending.offer} busy={busy} onAllowAlways={(scope) => onDecide(true, "", scope)} />
      )}
      {denying ? (
        <form
          className="prompt-actions"
          onSubmit={(e) => {
            e.preventDefault();
            onDecide(false, note);
          }}
        >
          <input
            data-testid="deny-reason"
            aria-label={t("ai.approval.reason")}
            placeholder={t("ai.approval.reason")}
            value={note}
            autoFocus
            onChange={(e) => setNote(e.target.value)}
          />
          <button type="submit" disabled={busy} data-testid="deny-confirm">
            {t("ai.approval.deny")}
          </button>
          <button type="button" onClick={() => setDenying(false)}>
            {t("common.cancel")}
          </button>
        </form>
      ) : (
        <div className="prompt-actions">
          <button type="button" className="primary" disabled={busy || (applies && !seenAll)} data-testid="allow-once" onClick={() => onDecide(true, "")}>
            {t("ai.approval.allowOnce")}
          </button>
          <button type="button" disabled={busy} data-testid="deny" onClick={() => setDenying(true)}>
            {t("ai.approval.deny")}…
          </button>
        </div>
      )}
    </section>
  );
}

export function PlanPrompt({ pending, busy, onDecide }: { pending: PendingApproval; busy: boolean; onDecide: (approved: boolean, note: string) => void }) {
  const { t } = useApp();
  const [returning, setReturning] = useState(false);
  const [comment, setComment] = useState("");
  const plan = asRecord(pending.input).plan;
  return (
    <section className="prompt prompt-plan" data-testid="plan-card" aria-label={t("ai.plan.title")}>
      <p className="prompt-title">{t("ai.plan.title")}</p>
      <div className="plan-body">
        <Markdown text={typeof plan === "string" ? plan : ""} />
      </div>
      {returning ? (
        <form
          className="prompt-actions col"
          onSubmit={(e) => {
            e.preventDefault();
            onDecide(false, comment);
          }}
        >
          <textarea
            data-testid="plan-comment"
            aria-label={t("ai.plan.comment")}
            placeholder={t("ai.plan.comment")}
            rows={2}
            value={comment}
            autoFocus
            onChange={(e) => setComment(e.target.value)}
          />
          <div className="row">
            <button type="submit" disabled={busy} data-testid="plan-return-confirm">
              {t("ai.plan.sendBack")}
            </button>
            <button type="button" onClick={() => setReturning(false)}>
              {t("common.cancel")}
            </button>
          </div>
        </form>
      ) : (
        <div className="prompt-actions">
          <button type="button" className="primary" disabled={busy} data-testid="plan-approve" onClick={() => onDecide(true, "")}>
            {t("ai.plan.approve")}
          </button>
          <button type="button" disabled={busy} data-testid="plan-return" onClick={() => setReturning(true)}>
            {t("ai.plan.sendBack")}…
          </button>
        </div>
      )}
    </section>
  );
}

export function QuestionPrompt({ pending, busy, onAnswer }: { pending: PendingQuestion; busy: boolean; onAnswer: (answer: string) => void }) {
  const { t } = useApp();
  const [text, setText] = useState("");
  return (
    <section className="prompt" data-testid="question" aria-label={t("ai.question.title")}>
      <p className="prompt-title">{pending.question}</p>
      {pending.options.length > 0 && (
        <div className="prompt-actions wrap" role="group" aria-label={t("ai.question.options")}>
          {pending.options.map((o) => (
            <button key={o} type="button" disabled={busy} data-testid="question-option" onClick={() => onAnswer(o)}>
              {o}
            </button>
          ))}
        </div>
      )}
      <form
        className="prompt-actions"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) onAnswer(text.trim());
        }}
      >
        <input
          data-testid="question-answer"
          aria-label={t("ai.question.own")}
          placeholder={t("ai.question.own")}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" disabled={busy || !text.trim()}>
          {t("ai.question.answer")}
        </button>
      </form>
    </section>
  );
}
