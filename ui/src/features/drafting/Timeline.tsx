// The session's timeline: messages, a compact tool step per call (expandable to its
// input and result), decisions, mode changes and turn ends, then the message streaming
// in and the messages queued behind the running turn. Rows are memoised on their
// (immutable) items and the list is virtualised; the streaming message subscribes to
// the stream on its own, so while an answer streams only it re-renders.
import { memo, useEffect, useMemo, useState, useSyncExternalStore } from "react";
import type { ProposalView } from "../../shared/api/generated";
import { VirtualFeed } from "../../shared/ui/VirtualFeed";
import { useApp } from "../../shared/context";
import type { T } from "../../shared/context";
import { describeHint, has, type Lang, type MessageId, translate } from "../../shared/i18n";
import { BoundaryLine, BudgetStop } from "./LongSession";
import { ToolArgs } from "./ToolInput";
import { Markdown, StreamingMarkdown } from "./Markdown";
import { isRunning, type SessionStore } from "./store";
import type { Item, StepState } from "./timeline";

const PREVIEW_CHARS = 4000;

/** The tool's name in the person's language, or as the model knows it. */
export function toolLabel(t: T, lang: "en" | "zh", name: string): string {
  const id = `ai.tool.${name}`;
  return has(lang, id) ? t(id as MessageId) : name;
}

/** JSON pretty-printed when it is JSON, cut to a preview. */
export function preview(text: string): string {
  let out = text;
  try {
    out = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON: show it as it is.
  }
  return out.length > PREVIEW_CHARS ? `${out.slice(0, PREVIEW_CHARS)}…` : out;
}

/** A one-line summary of a call's arguments: its first short string field. */
/** The keys whose text says what a step does, first to last (a platform id is worded). */
const SUMMARY_KEYS = ["summary", "label", "question", "query", "title", "permission", "text", "body"];

function argSummary(t: T, lang: Lang, args: string): string {
  const cut = (value: string) => (value.length > 60 ? `${value.slice(0, 60)}…` : value);
  try {
    const v = (JSON.parse(args) ?? {}) as Record<string, unknown>;
    for (const key of SUMMARY_KEYS) {
      const value = v[key];
      if (typeof value === "string" && value.trim()) return cut(value);
    }
    // An id the core defines is said in the person's language, never as the id.
    if (typeof v.platform === "string" && has(lang, `platform.${v.platform}`)) return t(`platform.${v.platform}` as MessageId);
    for (const [key, value] of Object.entries(v)) {
      if (key !== "platform" && typeof value === "string" && value.trim()) return cut(value);
    }
  } catch {
    // Arguments the model sent broken are shown in full when expanded.
  }
  return "";
}

const STATE_ICON: Record<StepState, string> = {
  queued: "○",
  running: "◔",
  waiting: "◆",
  done: "✓",
  failed: "✕",
  cancelled: "⊘",
  denied: "⊖",
  blocked: "⊘",
};

/** A decision's note: the core's worded reason (`ai.approval.note.<id>`), else the
 * person's own words. */
function decisionNote(lang: Lang, noteId: string | null, note: string): string {
  const id = noteId ? `ai.approval.note.${noteId}` : "";
  return id && has(lang, id) ? translate(lang, id as MessageId) : note;
}

export function StateIcon({ state }: { state: StepState }) {
  const { t } = useApp();
  return (
    <span className={`step-icon step-${state}`} role="img" aria-label={t(`ai.step.${state}` as MessageId)} title={t(`ai.step.${state}` as MessageId)}>
      {STATE_ICON[state]}
    </span>
  );
}

function ProposalChip({ store, id, onReview }: { store: SessionStore; id: string; onReview: (id: string) => void }) {
  const { t } = useApp();
  const view = useSyncExternalStore(store.subscribe, () => store.getSnapshot().proposals.find((p) => p.id === id));
  return (
    <button type="button" className="proposal-chip" data-testid="proposal-chip" data-proposal={id} onClick={() => onReview(id)}>
      <span className="proposal-chip-title">{view?.summary ?? t("ai.proposal.loading")}</span>
      {view && <ProposalBadge view={view} />}
    </button>
  );
}

export function ProposalBadge({ view }: { view: ProposalView }) {
  const { t } = useApp();
  if (view.status === "proposed" && view.stale) {
    return (
      <span className="badge badge-warn" data-testid="proposal-stale">
        {t("ai.proposal.stale")}
      </span>
    );
  }
  return (
    <span className={`badge badge-${view.status}`} data-testid="proposal-status" data-status={view.status}>
      {t(`ai.proposal.status.${view.status}` as MessageId)}
    </span>
  );
}

function ToolStep({ item, store, onReview }: { item: Extract<Item, { kind: "tool" }>; store: SessionStore; onReview: (id: string) => void }) {
  const { t, lang } = useApp();
  const [open, setOpen] = useState(false);
  const summary = argSummary(t, lang, item.args);
  return (
    <div className={`step step-${item.state}`} data-testid="tool-step" data-tool={item.name} data-state={item.state}>
      <button type="button" className="step-line" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <StateIcon state={item.state} />
        <span className="step-name">{toolLabel(t, lang, item.name)}</span>
        {summary && <span className="step-arg muted">{summary}</span>}
        <span className="step-state muted small">{t(`ai.step.${item.state}` as MessageId)}</span>
      </button>
      {open && (
        <div className="step-detail" data-testid="tool-detail">
          <p className="small muted">{t("ai.step.input")}</p>
          <ToolArgs tool={item.name} args={item.args} />
          {item.result !== undefined && (
            <>
              <p className="small muted">
                {t("ai.step.result")}
                {item.status && item.status !== "success" ? ` · ${t(`ai.status.${item.status}` as MessageId)}` : ""}
              </p>
              <pre>{preview(item.result)}</pre>
            </>
          )}
        </div>
      )}
      {item.proposalIds.map((id) => (
        <ProposalChip key={id} store={store} id={id} onReview={onReview} />
      ))}
    </div>
  );
}

export const ItemView = memo(function ItemView({
  item,
  store,
  onReview,
  onRetry,
  onCompact,
  onOpenModels,
}: {
  item: Item;
  store: SessionStore;
  onReview: (id: string) => void;
  /** Sends a failed turn's task again (given to the latest end that has one, when nothing runs). */
  onRetry?: () => void;
  /** Compacts the session (given to the latest end whose hints suggest it, when nothing runs). */
  onCompact?: () => void;
  /** Opens Settings → AI models (for an end about the API key). */
  onOpenModels?: () => void;
}) {
  const { t, lang } = useApp();
  switch (item.kind) {
    case "user":
      if (item.retry) {
        // Retry sent the same task again: one line, not a second copy of the message.
        return (
          <p className="line muted msg-retry" data-testid="msg-retry" title={item.text}>
            {t("ai.retried")}
          </p>
        );
      }
      return (
        <div className="msg msg-user" data-testid="msg-user">
          {item.selection && (
            <blockquote className="msg-scope" data-testid="msg-scope" title={item.selection.text}>
              {item.selection.text}
            </blockquote>
          )}
          <p className="msg-text">{item.text}</p>
        </div>
      );
    case "assistant":
      return (
        <div className="msg msg-assistant" data-testid="msg-assistant">
          <Markdown text={item.text} />
          {item.interrupted && (
            <p className="small muted" data-testid={item.cutOff ? "msg-cut-off" : "msg-stopped"}>
              {item.cutOff ? t("ai.cutOff") : t("ai.stopped")}
            </p>
          )}
        </div>
      );
    case "tool":
      return <ToolStep item={item} store={store} onReview={onReview} />;
    case "decision": {
      const label = item.plan
        ? item.approved
          ? t("ai.decision.planApproved")
          : t("ai.decision.planReturned")
        : item.approved
          ? t("ai.decision.allowed", { tool: toolLabel(t, lang, item.tool) })
          : t("ai.decision.denied", { tool: toolLabel(t, lang, item.tool) });
      return (
        <p className={`line ${item.approved ? "" : "line-warn"}`} data-testid="decision">
          {label}
          {(item.noteId || item.note) && <span className="muted">{` — ${decisionNote(lang, item.noteId, item.note)}`}</span>}
        </p>
      );
    }
    case "answer":
      return (
        <p className="line" data-testid="answer">
          {item.question && <span className="muted">{`${item.question} → `}</span>}
          {item.answer}
        </p>
      );
    case "mode":
      return (
        <p className="line muted" data-testid="mode-line">
          {item.mode === "plan" ? t("ai.mode.planOn") : t("ai.mode.planOff")}
        </p>
      );
    case "end":
      return (
        <div className={`line ${item.reason === "interrupted" ? "" : "line-warn"}`} data-testid="turn-end" data-reason={item.reason}>
          <p>
            {item.cutOff
              ? t("ai.end.connectionLost")
              : item.keyProblem === "rejected"
                ? t("ai.end.keyRejected")
                : item.keyProblem === "missing"
                  ? t("ai.end.keyMissing")
                  : item.keyProblem === "gone"
                    ? t("ai.end.keyGone")
                    : t(`ai.end.${item.reason}` as MessageId)}
          </p>
          {item.hints.map((h) => (
            <p key={h.id} className="small muted">
              {describeHint(lang, h)}
            </p>
          ))}
          {item.reason === "budget_exceeded" && <BudgetStop store={store} />}
          {(onRetry || onCompact || (item.keyProblem && onOpenModels)) && (
            <div className="row">
              {item.keyProblem && onOpenModels && (
                <button type="button" data-testid="turn-open-models" onClick={onOpenModels}>
                  {t("ai.end.openModels")}
                </button>
              )}
              {onCompact && (
                <button type="button" data-testid="turn-compact" onClick={onCompact}>
                  {t("ai.compact.now")}
                </button>
              )}
              {onRetry && (
                <button type="button" data-testid="turn-retry" onClick={onRetry}>
                  {t("error.retry")}
                </button>
              )}
            </div>
          )}
        </div>
      );
    case "boundary":
      return <BoundaryLine item={item} />;
    case "compactionFailed":
      return (
        <p className={`line small ${item.outcome === "failed" ? "line-warn" : "muted"}`} data-testid="compaction-failed" data-outcome={item.outcome}>
          {item.outcome === "stopped" ? t("ai.long.stopped") : item.outcome === "interrupted" ? t("ai.long.interrupted") : t("ai.long.failed", { n: item.consecutive })}
        </p>
      );
    case "contextWarning":
      return (
        <p className="line line-warn small" data-testid="context-warning">
          {item.compactAt !== null ? t("ai.context.warning", { pct: item.percent, at: item.compactAt }) : t("ai.context.warningManual", { pct: item.percent })}
        </p>
      );
    case "archived":
      return <p className="line muted">{t("ai.session.archivedLine")}</p>;
    case "unarchived":
      return (
        <p className="line muted" data-testid="unarchived-line">
          {t("ai.session.unarchivedLine")}
        </p>
      );
    case "rewound":
      return (
        <p className="line muted" data-testid="rewound-line">
          {t("ai.checkpoint.rewound", { n: item.version })}
        </p>
      );
  }
});

/** Seconds since `running` last became true, counting every second while it stays so
 * (a local model can take minutes: the person sees that it is still going). */
function useElapsedSeconds(running: boolean): number {
  const { now } = useApp();
  const [started, setStarted] = useState<number | null>(null);
  const [tick, setTick] = useState(0);
  if (running && started === null) setStarted(now());
  if (!running && started !== null) setStarted(null);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, [running]);
  void tick;
  return started === null ? 0 : Math.max(0, Math.floor((now() - started) / 1000));
}

function Elapsed({ seconds }: { seconds: number }) {
  const { t } = useApp();
  return (
    <span className="small muted elapsed" data-testid="turn-elapsed">
      {" "}
      {t("ai.elapsed", { s: seconds })}
    </span>
  );
}

function StreamingMessage({
  store,
  running,
  following,
  reconnecting,
  compacting,
}: {
  store: SessionStore;
  running: boolean;
  following: boolean;
  reconnecting: boolean;
  compacting: boolean;
}) {
  const { t } = useApp();
  const streaming = useSyncExternalStore(store.subscribeStream, store.getStreaming);
  const elapsed = useElapsedSeconds(running);
  if (compacting && !reconnecting) {
    // Summarising can take a while with a local model: say what runs, and offer Stop here.
    return (
      <div className="line muted working compacting" role="status" data-testid="compacting">
        <span className="spinner" aria-hidden="true" /> {t("ai.compacting")}
        <Elapsed seconds={elapsed} />
        <button type="button" className="small-btn" data-testid="compacting-stop" onClick={() => void store.interrupt()}>
          {t("ai.stop")}
        </button>
      </div>
    );
  }
  if (streaming && (streaming.text || streaming.reasoning)) {
    return (
      <div className="msg msg-assistant msg-live" data-testid="live-message" aria-live="off">
        {streaming.reasoning && !streaming.text && <p className="small muted">{t("ai.thinking")}</p>}
        <StreamingMarkdown text={streaming.text} />
        {running && (
          <p className="small muted">
            <Elapsed seconds={elapsed} />
          </p>
        )}
      </div>
    );
  }
  if (!running) return null;
  if (reconnecting) {
    return (
      <p className="line muted working" role="status" data-testid="reconnecting">
        <span className="spinner" aria-hidden="true" /> {t("ai.reconnecting")}
      </p>
    );
  }
  return (
    <p className="line muted working" role="status" data-testid="working">
      <span className="spinner" aria-hidden="true" /> {following ? t("ai.workingElsewhere") : t("ai.working")}
      <Elapsed seconds={elapsed} />
    </p>
  );
}

export function Timeline({ store, onReview, onOpenModels }: { store: SessionStore; onReview: (id: string) => void; onOpenModels?: () => void }) {
  const { t } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const running = isRunning(snap);
  // An answer that was only tool calls keeps its (empty) item: it draws nothing.
  const items = useMemo(() => snap.timeline.items.filter((i) => i.kind !== "assistant" || i.text.trim() !== "" || i.interrupted), [snap.timeline.items]);
  // Retry belongs to the latest turn only, and only while nothing runs.
  const last = items.at(-1);
  const retry = last?.kind === "end" && last.retry && !running && !snap.timeline.archived ? last.retry : null;
  const onRetry = retry ? () => void store.submit(retry.text, undefined, retry.selection) : undefined;
  // A conversation too long for the model: compacting it is the way on.
  const compactable = last?.kind === "end" && last.hints.some((h) => h.id === "compact") && !running && !snap.timeline.archived && store.offers("session.compact");
  const onCompact = compactable ? () => void store.compact() : undefined;
  const footer = (
    <>
      <StreamingMessage store={store} running={running} following={snap.following && snap.driving === 0} reconnecting={snap.reconnecting} compacting={snap.timeline.compacting !== null} />
      {snap.timeline.queued.map((q, i) => (
        <div key={`${i}:${q}`} className="msg msg-user msg-queued" data-testid="msg-queued">
          <span className="badge">{t("ai.queued")}</span>
          <p className="msg-text">{q}</p>
        </div>
      ))}
    </>
  );
  const earlier = snap.timeline.earlier;
  const header =
    earlier > 0 ? (
      <div className="feed-earlier">
        <button type="button" className="small-btn" data-testid="timeline-earlier" onClick={() => void store.loadEarlier()}>
          {t("ai.feed.earlier", { n: earlier })}
        </button>
      </div>
    ) : null;
  if (snap.loaded && items.length === 0 && earlier === 0 && !running && snap.timeline.queued.length === 0) {
    return (
      <div className="feed" data-testid="timeline">
        <div className="empty small">
          <p className="empty-title">{t("ai.empty.title")}</p>
          <p className="muted">{t("ai.empty.body")}</p>
        </div>
      </div>
    );
  }
  return (
    <VirtualFeed
      items={items}
      getKey={(item) => item.key}
      renderItem={(item) => (
        <ItemView item={item} store={store} onReview={onReview} onRetry={item === last ? onRetry : undefined} onCompact={item === last ? onCompact : undefined} onOpenModels={onOpenModels} />
      )}
      estimate={48}
      footer={footer}
      header={header}
      onNearTop={earlier > 0 ? () => void store.loadEarlier() : undefined}
      label={t("ai.timeline")}
      testId="timeline"
      revealKey={snap.reveal}
      jumpLabels={{ latest: t("ai.feed.latest"), unseen: t("ai.feed.unseen") }}
    />
  );
}
