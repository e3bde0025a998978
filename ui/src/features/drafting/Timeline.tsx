// The session's timeline: messages, a compact tool step per call (expandable to its
// input and result), decisions, mode changes and turn ends, then the message streaming
// in and the messages queued behind the running turn. Rows are memoised on their
// (immutable) items and the list is virtualised; the streaming message subscribes to
// the stream on its own, so while an answer streams only it re-renders.
import { memo, useMemo, useSyncExternalStore } from "react";
import { VirtualFeed } from "../../shared/ui/VirtualFeed";
import { useApp } from "../../shared/context";
import { describeHint, type MessageId } from "../../shared/i18n";
import { BoundaryLine, BudgetStop } from "./BoundaryLine";
import { Markdown } from "./Markdown";
import { decisionNote, toolLabel } from "./stepText";
import { StreamingMessage } from "./StreamingMessage";
import { ToolStep } from "./ToolStep";
import { isRunning, type SessionStore } from "./store";
import type { Item } from "./timeline";

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
