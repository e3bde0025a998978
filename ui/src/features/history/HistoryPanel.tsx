import { memo, useEffect, useRef, useState } from "react";
import { toClientError } from "../../shared/api/client";
import { useMethod } from "../../shared/api/query";
import type { VersionSummary } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { VirtualList } from "../../shared/ui/VirtualList";
import { type T, useApp } from "../../shared/context";
import { formatFullTime, formatTime, has, type MessageId } from "../../shared/i18n";
import { WhyThisChange } from "../review";
import type { SourceTarget } from "../drafting";
import { AiActivity } from "../activity";

export interface HistoryPanelProps {
  projectId: string;
  /** Reloads when the head changes. */
  head: number;
  onView: (n: number) => void;
  onDiff: (from: number, to: number | null) => void;
  onRestore: (n: number) => void;
  /** Opens a source of "Why this change?" (a search hit's document at its span). */
  onOpenSource?: (target: SourceTarget) => void;
  /** Opens Settings → Memory. */
  onOpenMemory?: () => void;
}

export const HistoryPanel = memo(function HistoryPanel({ projectId, head, onView, onDiff, onRestore, onOpenSource, onOpenMemory }: HistoryPanelProps) {
  const { t, lang, now, mod } = useApp();
  /** The AI proposal whose sources are shown ("Why this change?"), by the version that accepted it. */
  const [why, setWhy] = useState<{ proposalId: string; number: number } | null>(null);
  // Read on each showing; a save of a version through this window refreshes it by itself
  // (methods.ts), and a head that moved otherwise (sync, another window) reads it again.
  const list = useMethod("version.list", { projectId }, { refetchOnMount: "always" });
  const versions = list.data?.versions ?? null;
  const error = list.error ? toClientError(list.error) : null;
  const load = list.refetch;
  const shownHead = useRef(head);
  useEffect(() => {
    if (shownHead.current === head) return;
    shownHead.current = head;
    void load();
  }, [head, load]);

  const origin = (v: VersionSummary): string => {
    switch (v.origin.type) {
      case "restore":
        return t("history.origin.restore", { n: v.origin.from });
      case "autosnapshot":
        return t("history.origin.autosnapshot");
      case "aiProposal":
        return t("history.origin.aiProposal", { model: v.origin.model });
      case "checkpoint":
        return t("history.origin.checkpoint");
      // A teammate's version: whose it is and its number on the server.
      case "pulled":
        if (v.origin.remoteOrigin === "syncResolution") return t("history.origin.pulledResolution", { author: v.author, n: v.origin.serverNumber });
        return t("history.origin.pulled", { author: v.author, n: v.origin.serverNumber });
      case "syncResolution":
        return t("history.origin.syncResolution");
      case "manual":
        return t("history.origin.manual");
    }
  };

  const message = (v: VersionSummary) => versionMessage(t, v) ?? <span className="muted">{t("history.nomessage")}</span>;

  const [activity, setActivity] = useState(false);
  const nowMs = now();
  // The project's AI activity takes the panel's place until "Back to versions".
  if (activity) {
    return (
      <section className="panel-body history" data-testid="history-panel">
        <div className="row between pad">
          <strong>{t("aiActivity.title")}</strong>
          <button type="button" className="link" data-testid="history-versions" onClick={() => setActivity(false)}>
            {t("aiActivity.back")}
          </button>
        </div>
        <AiActivity projectId={projectId} />
      </section>
    );
  }
  return (
    <section className="panel-body history" data-testid="history-panel">
      <div className="row end pad">
        <button type="button" className="link" data-testid="history-ai-activity" onClick={() => setActivity(true)}>
          {t("aiActivity.open")}
        </button>
      </div>
      {error && <ErrorBanner error={error} retry={() => void load()} />}
      {versions === null && !error && <p className="muted pad">{t("history.loading")}</p>}
      {why && (
        <div className="pad-x why-history" data-testid="history-why" data-number={why.number}>
          <div className="row">
            <strong className="grow">{t("project.head", { n: why.number })}</strong>
            <button type="button" className="link" data-testid="history-why-close" onClick={() => setWhy(null)}>
              {t("common.close")}
            </button>
          </div>
          <WhyThisChange key={why.proposalId} proposalId={why.proposalId} onOpenSource={onOpenSource} onOpenMemory={onOpenMemory} initiallyOpen />
        </div>
      )}
      {versions && versions.length === 0 && (
        <div className="empty" data-testid="history-empty">
          <p className="empty-title">{t("history.empty.title")}</p>
          <p className="muted">{t("history.empty.body", { mod })}</p>
        </div>
      )}
      {versions && versions.length > 0 && (
        <VirtualList
          items={versions}
          rowHeight={88}
          label={t("history.title")}
          testId="version-list"
          getKey={(v) => v.id}
          renderRow={(v) => (
            <div className="version" data-testid="version-item" data-number={v.number}>
              <div className="version-line">
                <strong className="version-no">{t("project.head", { n: v.number })}</strong>
                <span className={`badge badge-${v.origin.type}`} title={origin(v)}>
                  {origin(v)}
                </span>
                <time className="small muted" dateTime={v.createdAt} title={formatFullTime(lang, v.createdAt)}>
                  {formatTime(lang, v.createdAt, nowMs)}
                </time>
              </div>
              <div className="version-msg small" title={versionMessage(t, v) ?? ""}>
                {message(v)}
                <span className="muted"> · {v.author}</span>
              </div>
              <div className="version-actions">
                <button type="button" className="link" onClick={() => onView(v.number)}>
                  {t("history.view")}
                </button>
                <button type="button" className="link" data-testid="version-diff" onClick={() => onDiff(v.number, null)}>
                  {t("history.compare")}
                </button>
                <button type="button" className="link" data-testid="version-restore" onClick={() => onRestore(v.number)}>
                  {t("history.restore")}
                </button>
                {v.origin.type === "aiProposal" && (
                  <button
                    type="button"
                    className="link"
                    data-testid="version-why"
                    onClick={() => v.origin.type === "aiProposal" && setWhy({ proposalId: v.origin.proposalId, number: v.number })}
                  >
                    {t("review.why.title")}
                  </button>
                )}
              </div>
            </div>
          )}
        />
      )}
    </section>
  );
});

/** A version's message in the person's language, or null when it has none. The core
 * writes a few messages itself: a version since `messageId` carries their id and values
 * (worded here, `history.msg.<id>`, never the English `message`); older ones are
 * recognised by their origin. A person's message and a proposal's summary are shown as
 * written. */
export function versionMessage(t: T, v: Pick<VersionSummary, "message" | "messageId" | "messageParams" | "origin">): string | null {
  const p = v.messageParams ?? {};
  const name = () => checkpointName(t, p.label ?? "", p.labelId, p);
  switch (v.messageId) {
    case "restored_version":
      return t("history.restoreMsg", { n: p.n ?? "" });
    case "autosnapshot_before_restore":
      return t("history.msg.autosnapshot_before_restore", { n: p.n ?? "" });
    case "restored_checkpoint":
      return t("history.checkpointMsg", { name: name() });
    case "restored_checkpoint_unnamed":
      return t("history.checkpointMsgUnnamed");
    case "autosnapshot_before_checkpoint":
      return t("history.msg.autosnapshot_before_checkpoint", { name: name() });
    case "autosnapshot_before_checkpoint_unnamed":
      return t("history.msg.autosnapshot_before_checkpoint_unnamed");
    case "applied_staged":
      return t("history.msg.applied_staged", { count: p.count ?? "", summaries: p.summaries ?? "" });
  }
  // Stored before `messageId`: the origin says what the core wrote.
  if (v.origin.type === "autosnapshot") return v.message?.includes("sync conflict") ? t("history.autosnapshotSyncMsg") : t("history.autosnapshotMsg");
  if (v.origin.type === "restore") return t("history.restoreMsg", { n: v.origin.from });
  if (v.origin.type === "syncResolution" && (!v.message || v.message === "Resolved a sync conflict")) return t("history.syncResolutionMsg");
  if (v.origin.type === "pulled" && v.origin.remoteOrigin === "syncResolution" && !v.message) return t("history.syncResolutionMsg");
  if (v.origin.type === "checkpoint") return checkpointMessage(t, v.message);
  return v.message || null;
}

/** A checkpoint's name: the harness's labels (`labelId`) worded, a person's label as written. */
function checkpointName(t: T, label: string, labelId: string | undefined, params: Record<string, string | undefined>): string {
  const key = `ai.checkpoint.label.${labelId ?? ""}`;
  if (labelId && has("en", key)) return t(key as MessageId, Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v ?? ""])));
  return label;
}

/** A checkpoint restore's version message, which the core writes in English
 * (`Restored checkpoint "<label>"`), in the person's language; the harness's own labels
 * ("Before a turn that made 2 proposals") are worded too. */
export function checkpointMessage(t: T, message: string | null): string {
  const label = /^Restored checkpoint "(.*)"$/s.exec(message ?? "")?.[1];
  if (label === undefined) return t("history.checkpointMsgUnnamed");
  const turn = /^(Before|After) a turn that made (\d+) proposals$/.exec(label);
  const name = turn ? t(turn[1] === "Before" ? "ai.checkpoint.label.turn_before" : "ai.checkpoint.label.turn_after", { proposals: turn[2] }) : label;
  return t("history.checkpointMsg", { name });
}
