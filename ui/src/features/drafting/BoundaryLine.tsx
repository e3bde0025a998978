// A long session's marks in the timeline: a compact boundary (one line, expandable to
// the summary in the person's language) and the hard stop of a spent budget.
import { useState, useSyncExternalStore } from "react";
import type { CompactionSummary } from "../../shared/api/generated";
import { useMethod, usePutRead, useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import type { SessionStore } from "./store";
import type { Item } from "./timeline";

/** The summary's heading line, written for the model (the toggle above says it). */
const SUMMARY_HEADING = /^# Earlier conversation[^\n]*\n/;

/** A compaction summary in the person's language, part by part, in normal type. */
function SummaryParts({ summary }: { summary: CompactionSummary }) {
  const { t } = useApp();
  const list = (label: MessageId, items: string[]) =>
    items.length > 0 && (
      <>
        <dt>{t(label)}</dt>
        <dd>
          <ul>
            {items.map((x, i) => (
              <li key={i}>{x}</li>
            ))}
          </ul>
        </dd>
      </>
    );
  const line = (label: MessageId, text: string) =>
    text.trim() && (
      <>
        <dt>{t(label)}</dt>
        <dd>{text.trim()}</dd>
      </>
    );
  return (
    <dl className="boundary-parts">
      {line("ai.summary.summary", summary.summary)}
      {line("ai.summary.intent", summary.user_intent)}
      {list(
        "ai.summary.accepted",
        summary.accepted_changes.map((c) => (c.version ? t("ai.summary.acceptedVersion", { id: c.proposal_id, n: c.version }) : c.proposal_id)),
      )}
      {list(
        "ai.summary.rejected",
        summary.rejected_directions.map((r) => t("ai.summary.rejectedReason", { direction: r.direction, reason: r.reason })),
      )}
      {list("ai.summary.open", summary.open_tasks)}
      {list("ai.summary.artifacts", summary.active_artifacts)}
      {list("ai.summary.sources", summary.source_refs)}
      {line("ai.summary.next", summary.next_step_hint)}
    </dl>
  );
}

/** A compact boundary in the timeline: one line, expandable to the summary. */
export function BoundaryLine({ item }: { item: Extract<Item, { kind: "boundary" }> }) {
  const { t } = useApp();
  const [open, setOpen] = useState(false);
  const truncated = item.mode === "truncated";
  return (
    <div className={`line ${truncated ? "line-warn" : "muted"}`} data-testid="compact-boundary" data-mode={item.mode}>
      <button type="button" className="link-btn" aria-expanded={open} data-testid="compact-boundary-toggle" onClick={() => setOpen((o) => !o)}>
        {truncated ? t("ai.long.boundaryTruncated", { n: item.compacted }) : t("ai.long.boundary", { n: item.compacted })}
      </button>
      <span className="small muted">{` · ${t("ai.long.tokens", { before: item.tokensBefore, after: item.tokensAfter })}`}</span>
      {open && (
        <div className="small boundary-summary" data-testid="compact-boundary-summary">
          {!truncated && item.summary ? <SummaryParts summary={item.summary} /> : truncated ? `${item.note}\n\n${item.summaryText}` : item.summaryText.replace(SUMMARY_HEADING, "")}
        </div>
      )}
    </div>
  );
}

/** A spent budget: what stopped, and raising the session's or the project's budget here. */
export function BudgetStop({ store }: { store: SessionStore }) {
  const { t } = useApp();
  const [tokens, setTokens] = useState("");
  const projectId = useSyncExternalStore(store.subscribe, store.getSnapshot).session.projectId;
  // Both budgets are shown together, once both are read; raising one answers with it.
  const sessionRead = useMethod("session.budget", { sessionId: store.id });
  const projectRead = useMethod("project.budget", { projectId });
  const { write, pending: busy } = useWrites();
  const put = usePutRead();
  const session = sessionRead.data;
  const project = projectRead.data;
  if (!session || !project) return null;
  const which = project.exceeded ? project : session;
  const raise = async () => {
    const n = Number.parseInt(tokens, 10);
    if (!(n > 0)) return;
    const budget = { tokenBudget: n, ...(which.costBudget ? { costBudget: which.costBudget } : {}) };
    if (project.exceeded) {
      const now = await write("project.setBudget", { projectId, budget });
      if (!now) return;
      await put("project.budget", { projectId }, now);
    } else {
      const now = await write("session.setBudget", { sessionId: store.id, budget });
      if (!now) return;
      await put("session.budget", { sessionId: store.id }, now);
    }
    void store.load();
  };
  return (
    <div className="budget-stop" data-testid="budget-stop">
      <p className="small">
        {t(project.exceeded ? "ai.budget.project" : "ai.budget.session", {
          spent: which.spent.tokens,
          budget: which.tokenBudget ?? 0,
          cost: which.spent.cost.toFixed(4),
        })}
      </p>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void raise();
        }}
      >
        <label className="small">
          {t("ai.budget.newTokens")}
          <input data-testid="budget-tokens" inputMode="numeric" value={tokens} onChange={(e) => setTokens(e.target.value.replace(/\D/g, ""))} />
        </label>
        <button type="submit" className="small-btn primary" disabled={busy || !tokens} data-testid="budget-raise">
          {t("ai.budget.raise")}
        </button>
      </form>
    </div>
  );
}
