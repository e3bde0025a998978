// One row of the AI activity view: the decision, what it made, who, through what and
// with which model; opened, the change's hunks (or, for a teammate's, what travelled).
import { toClientError } from "../../shared/api/client";
import type { ActivityRow, TextDiffResult } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { formatFullTime, formatTime, type MessageId } from "../../shared/i18n";
import { DiffView } from "../../shared/ui/DiffView";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";

function decisionLabel(row: ActivityRow): MessageId {
  if (row.decision === "accepted") return row.partial ? "aiActivity.decision.partlyAccepted" : "aiActivity.decision.accepted";
  return row.partial ? "aiActivity.decision.partlyRejected" : "aiActivity.decision.rejected";
}

export function Row({ row, showProject }: { row: ActivityRow; showProject: boolean }) {
  const { t, lang, now } = useApp();
  const made =
    row.version != null
      ? t("aiActivity.version", { n: row.version })
      : row.draftRevision != null
        ? t("aiActivity.draftRevision", { n: row.draftRevision })
        : row.source.type === "synced"
          ? t("aiActivity.serverVersion", { n: row.source.serverNumber })
          : null;
  const model = [row.model.model, row.model.providerHost ? `@${row.model.providerHost}` : "", row.model.profileName ? ` (${row.model.profileName})` : ""].join("");
  const tokens = row.tokens
    ? t(row.tokens.scope === "run" ? "aiActivity.tokensRun" : "aiActivity.tokens", {
        input: row.tokens.inputTokens.toLocaleString(lang),
        output: row.tokens.outputTokens.toLocaleString(lang),
      })
    : null;
  return (
    <div className="ai-activity-summary">
      <div className="row between">
        <span>
          <span className={`badge badge-${row.decision}`} data-testid="row-decision">
            {t(decisionLabel(row))}
          </span>{" "}
          {showProject && <strong>{row.projectTitle ?? row.projectId}</strong>} {made && <span>{made}</span>} <span className="muted small">{t("aiActivity.hunks", { n: row.nHunks })}</span>
        </span>
        <time className="small muted" dateTime={row.at} title={formatFullTime(lang, row.at)}>
          {formatTime(lang, row.at, now())}
        </time>
      </div>
      <div className="small">
        <span data-testid="row-actor">{t("aiActivity.by", { person: row.actor })}</span> · {t(`aiActivity.through.${row.through.type}` as MessageId)} · <code data-testid="row-model">{model}</code>
        {tokens && <span className="muted"> · {tokens}</span>}
        {row.tokens?.cost != null && <span className="muted"> · {row.tokens.cost.toFixed(4)}</span>}
      </div>
      {row.reason && (
        <div className="small" data-testid="row-reason">
          {t("aiActivity.reason", { reason: row.reason })}
        </div>
      )}
    </div>
  );
}

/** The hunks of the change, from the stored proposal; for a teammate's change (its
 * detail came through the workspace server), what travelled: the prompt layers. */
export function RowDiff({ row }: { row: ActivityRow }) {
  if (row.source.type === "synced") return <SyncedDetail row={row} />;
  return <LocalDiff row={row} />;
}

function SyncedDetail({ row }: { row: ActivityRow }) {
  const { t } = useApp();
  return (
    <div className="ai-activity-diff" data-testid="ai-activity-synced" onClick={(e) => e.stopPropagation()}>
      {row.promptLayers.length > 0 && <p className="small muted">{t("aiActivity.prompts", { layers: row.promptLayers.join(", ") })}</p>}
      <p className="small muted">{t("aiActivity.syncedDetail", { proposal: row.proposalId, n: row.nHunksTotal ?? row.nHunks })}</p>
    </div>
  );
}

function LocalDiff({ row }: { row: ActivityRow }) {
  const { t } = useApp();
  const proposal = useMethod("proposal.get", { proposalId: row.proposalId });
  if (proposal.error) {
    const error = toClientError(proposal.error);
    return error.code === "NOT_FOUND" ? <p className="small muted">{t("aiActivity.diffGone")}</p> : <ErrorBanner error={error} retry={() => void proposal.refetch()} />;
  }
  if (!proposal.data) return <p className="small muted">{t("aiActivity.diffLoading")}</p>;
  const hunks = proposal.data.hunks.filter((h) => row.hunks.length === 0 || row.hunks.includes(h.id)).map((h) => h.display);
  const diff: TextDiffResult = { hunks, nInsertions: 0, nDeletions: 0, identical: hunks.length === 0 };
  return (
    <div className="ai-activity-diff" data-testid="ai-activity-diff" onClick={(e) => e.stopPropagation()}>
      {row.promptLayers.length > 0 && <p className="small muted">{t("aiActivity.prompts", { layers: row.promptLayers.join(", ") })}</p>}
      {row.contextSnapshotId && <p className="small muted">{t("aiActivity.context", { id: row.contextSnapshotId })}</p>}
      <DiffView diff={diff} mode="inline" identicalLabel={t("aiActivity.noDiff")} />
    </div>
  );
}
