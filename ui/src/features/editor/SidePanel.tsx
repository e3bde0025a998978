// The project screen's right-hand panel: its tabs, and History, Comments, Drafts, the AI panel or Performance.
import { type ComponentProps, lazy, Suspense } from "react";
import type { Platform, Project } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { CommentsPanel } from "../comments";
import { AiPanel } from "../drafting";
import { loadDraftsPanel } from "../drafts";
import { HistoryPanel } from "../history";
import { PerformancePanel } from "../performance";
import { type PanelTab, TABS } from "./tabs";
import type { useComments } from "./useComments";

// The drafts panel and its previews load on first use.
const DraftsPanel = lazy(() => loadDraftsPanel().then((m) => ({ default: m.DraftsPanel })));

type AiProps = ComponentProps<typeof AiPanel>;

export interface SidePanelProps extends Pick<AiProps, "drafting" | "selectionText" | "getSelection" | "onReview" | "onSetUpModel" | "workingCopy" | "onOpenSource" | "onRestoreProject"> {
  projectId: string;
  project: Project;
  tab: PanelTab;
  onTab: (tab: PanelTab) => void;
  head: number;
  revision: number;
  /** Bumped after an optimization wrote drafts, so the Drafts tab reads them again. */
  draftsKey: number;
  onView: (n: number) => void;
  onDiff: (from: number, to: number | null) => void;
  onRestore: (n: number) => void;
  /** Opens Settings → Memory (from "Why this change?"). */
  onOpenMemory?: () => void;
  comments: ReturnType<typeof useComments>;
  onJump: (from: number, to: number, matched?: string | null) => void;
  onOptimize: (platform: Platform) => void;
}

export function SidePanel({
  projectId,
  project,
  tab,
  onTab,
  head,
  revision,
  draftsKey,
  onView,
  onDiff,
  onRestore,
  comments,
  selectionText,
  onJump,
  onOptimize,
  drafting,
  getSelection,
  onReview,
  onSetUpModel,
  workingCopy,
  onOpenSource,
  onOpenMemory,
  onRestoreProject,
}: SidePanelProps) {
  const { t, mod } = useApp();
  return (
    <aside className="panel" aria-label={t("panel.label")}>
      <div className="tabs" role="tablist">
        {TABS.map((k, i) => (
          <button key={k} type="button" role="tab" aria-selected={tab === k} data-testid={`tab-${k}`} title={`${mod}+${i + 1}`} onClick={() => onTab(k)}>
            {t(`tab.${k}` as MessageId)}
          </button>
        ))}
      </div>
      {tab === "history" && <HistoryPanel projectId={projectId} head={head} onView={onView} onDiff={onDiff} onRestore={onRestore} onOpenSource={onOpenSource} onOpenMemory={onOpenMemory} />}
      {tab === "performance" && <PerformancePanel projectId={projectId} head={head} title={project.title} platforms={project.platforms} />}
      {tab === "comments" && (
        <CommentsPanel
          comments={comments.comments}
          selectionText={selectionText}
          onAdd={comments.add}
          onResolve={comments.resolve}
          onDelete={comments.remove}
          onJump={comments.jump}
          lost={comments.lost}
        />
      )}
      {tab === "drafts" && (
        <Suspense fallback={<p className="panel-body muted pad">{t("preview.loading")}</p>}>
          <DraftsPanel
            key={draftsKey}
            projectId={projectId}
            revision={revision}
            platforms={project.platforms}
            onJump={onJump}
            onOptimize={onOptimize}
          />
        </Suspense>
      )}
      {tab === "ai" && (
        <AiPanel
          drafting={drafting}
          selectionText={selectionText}
          getSelection={getSelection}
          onReview={onReview}
          onSetUpModel={onSetUpModel}
          workingCopy={workingCopy}
          onOpenSource={onOpenSource}
          projectArchived={project.archived}
          onRestoreProject={onRestoreProject}
        />
      )}
    </aside>
  );
}
