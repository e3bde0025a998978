// What a turn waits for: a permission prompt (what changes and where, with the diff),
// a plan to approve or send back, or a question with its options.
import { useEffect, useState } from "react";
import { type ClientError, toClientError } from "../api/client";
import type { ApprovalChange, ProposalView, TextDiffResult } from "../api/generated";
import { ErrorBanner } from "../components/ErrorBanner";
import { useApp } from "../context";
import type { MessageId } from "../i18n";
import { DiffView } from "../panels/DiffView";
import { Markdown } from "./Markdown";
import { toolLabel } from "./Timeline";
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

/** The diff of an approval's exact change, when every hunk's display came with it. */
function changeDiff(change: ApprovalChange): TextDiffResult | null {
  if (change.omittedHunks > 0 || change.hunks.some((h) => !h.display)) return null;
  const hunks = change.hunks.map((h) => h.display!);
  let nInsertions = 0;
  let nDeletions = 0;
  for (const h of hunks)
    for (const l of h.lines) {
      if (l.kind === "insert") nInsertions++;
      if (l.kind === "delete") nDeletions++;
    }
  return { hunks, nInsertions, nDeletions, identical: hunks.length === 0 };
}

/** What `apply_proposal` would write: the proposal, where, and the exact hunks — from the
 * approval's own record of the change, or (an older log, or a diff too large for the log
 * line) from the proposal itself. */
function ApplyProposalDetail({ pending }: { pending: PendingApproval }) {
  const { client, t } = useApp();
  const input = asRecord(pending.input);
  const change = pending.change;
  const proposalId = change?.proposalId ?? (typeof input.proposalId === "string" ? input.proposalId : null);
  const named = change ? change.hunks.map((h) => h.id) : Array.isArray(input.hunks) ? input.hunks.filter((h): h is string => typeof h === "string") : undefined;
  const inline = change ? changeDiff(change) : null;
  const [view, setView] = useState<ProposalView | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  useEffect(() => {
    if (!proposalId || inline) return;
    let live = true;
    client.call("proposal.get", { proposalId }).then(
      (v) => live && setView(v),
      (e) => live && setError(toClientError(e)),
    );
    return () => {
      live = false;
    };
  }, [client, proposalId, inline]);
  if (error) return <ErrorBanner error={error} />;
  const diff = inline ?? (view ? hunksDiff(view, named && named.length ? named : undefined) : null);
  const summary = change?.summary ?? view?.summary;
  const target = change ?? view;
  if (!diff || summary === undefined || !target) return <p className="small muted">{t("ai.loading")}</p>;
  return (
    <div className="prompt-detail" data-testid="approval-diff">
      <p>{t("ai.approval.applyWhat", { summary, target: targetLabel(t, target), n: diff.hunks.length })}</p>
      {change?.detail && <p className="prompt-input">{change.detail}</p>}
      {diff.hunks.length > 0 && <DiffView diff={diff} mode="inline" identicalLabel={t("ai.proposal.noChange")} />}
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
}: {
  pending: PendingApproval;
  busy: boolean;
  onDecide: (approved: boolean, note: string) => void;
  /** The project the session works on (to say where a write lands). */
  projectId?: string;
}) {
  const { t, lang } = useApp();
  const why = pending.tool === "request_permission" ? null : whyAsked(t, pending.reason, pending.reasonId);
  const [denying, setDenying] = useState(false);
  const [note, setNote] = useState("");
  return (
    <section className="prompt" data-testid="approval" data-tool={pending.tool} aria-label={t("ai.approval.title")}>
      <p className="prompt-title">
        <span className="step-icon step-waiting" aria-hidden="true">
          ◆
        </span>{" "}
        {t("ai.approval.asks", { tool: toolLabel(t, lang, pending.tool) })}
      </p>
      {why && <p className="small muted" data-testid="approval-why">{why}</p>}
      {pending.tool === "apply_proposal" || pending.change ? (
        <ApplyProposalDetail pending={pending} />
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
          <button type="button" className="primary" disabled={busy} data-testid="allow-once" onClick={() => onDecide(true, "")}>
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
