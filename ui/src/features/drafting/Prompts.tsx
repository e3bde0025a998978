// What a turn waits for: a permission prompt (what changes and where, with the diff),
// a plan to approve or send back, or a question with its options.
import { useState } from "react";
import type { AllowScope } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { AlwaysAllow } from "./AlwaysAllow";
import { ApplyProposalDetail } from "./ApplyProposalDetail";
import { asRecord } from "./approval";
import { Markdown } from "./Markdown";
import { toolLabel } from "./stepText";
import { ToolInput } from "./ToolInput";
import type { PendingApproval, PendingQuestion } from "./timeline";

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
