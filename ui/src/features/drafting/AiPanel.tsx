// The AI panel of the right-hand side: the project's drafting sessions. A view of the
// session's timeline as the engine folds it (see ./store.ts): the timeline, what the turn
// waits for, the proposals it made, the context meter, and the composer. With no model
// set up it offers to set one up instead. Its other mode, Ask (./Ask.tsx), answers
// questions from the person's own writing with citations.
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { Mode } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { AskView } from "./Ask";
import type { SourceTarget } from "./citations";
import { useApp } from "../../shared/context";
import { Composer, type ComposerHandle } from "./Composer";
import { ArchivedProjectNotice, ModelSetupOffer } from "./PanelNotices";
import type { Selection } from "./scope";
import { SessionBar } from "./SessionBar";
import type { WorkingCopy } from "./SessionExtras";
import type { Drafting } from "./store";
import { SessionView, titleOf } from "./SessionView";

export interface AiPanelProps {
  drafting: Drafting;
  /** The text selected in the editor now ("" for none). */
  selectionText: string;
  getSelection: () => Selection | null;
  /** Opens a proposal for review where the text lives (the centre). */
  onReview: (proposalId: string) => void;
  /** Opens Settings → AI models. */
  onSetUpModel: () => void;
  /** The editor's working copy (checkpoint restores and staged changes replace it). */
  workingCopy: WorkingCopy;
  /** Opens a cited source (any project) at its place. */
  onOpenSource?: (target: SourceTarget) => void;
  /** The project is archived: its sessions are read-only until it is restored (the
   * engine refuses sending, approving and answering with `session.project_archived`). */
  projectArchived?: boolean;
  /** Restores the archived project. */
  onRestoreProject?: () => void;
}

export type AiMode = "sessions" | "ask";

export function AiPanel({ drafting, selectionText, getSelection, onReview, onSetUpModel, workingCopy, onOpenSource, projectArchived = false, onRestoreProject }: AiPanelProps) {
  const { t } = useApp();
  const [aiMode, setAiMode] = useState<AiMode>("sessions");
  const snap = useSyncExternalStore(drafting.subscribe, drafting.getSnapshot);
  const composer = useRef<ComposerHandle>(null);
  // The mode chosen before the first task; the session starts in it.
  const [firstMode, setFirstMode] = useState<Mode>("default");
  // The selection already sent (or whose chip was removed): no chip for it again, also
  // across the composer of a session the first task created.
  const [scopeDismissed, setScopeDismissed] = useState<string | null>(null);

  useEffect(() => {
    if (snap.sessions === null) void drafting.load();
    else if (snap.profiles?.length === 0) void drafting.reloadProfiles();
    // Once per showing of the panel: a profile made in Settings meanwhile shows up.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [drafting]);
  // A profile added, changed or removed in Settings while the panel shows.
  useEffect(() => drafting.followProfiles(), [drafting]);

  if ((snap.profiles === null || snap.sessions === null) && snap.error) {
    return (
      <div className="panel-body ai-panel" data-testid="ai-panel">
        <div className="pad-x">
          <ErrorBanner
            error={snap.error}
            retry={() => {
              drafting.clearError();
              void drafting.load();
            }}
          />
        </div>
      </div>
    );
  }
  if (snap.profiles === null || snap.sessions === null) {
    return (
      <div className="panel-body ai-panel" aria-busy="true" data-testid="ai-panel">
        <p className="muted pad">{t("ai.loading")}</p>
      </div>
    );
  }
  if (snap.profiles.length === 0) {
    return (
      <div className="panel-body ai-panel" data-testid="ai-panel">
        <ModelSetupOffer onSetUp={onSetUpModel} onRecheck={() => void drafting.reloadProfiles()} />
      </div>
    );
  }

  const store = snap.active;
  const modeSwitch = (
    <div className="ai-mode" role="group" aria-label={t("ai.mode.label")}>
      {(["sessions", "ask"] as const).map((m) => (
        <button key={m} type="button" className="small-btn" data-testid={`ai-mode-${m}`} aria-pressed={aiMode === m} onClick={() => setAiMode(m)}>
          {m === "sessions" ? t("ai.mode.sessions") : t("ai.mode.ask")}
        </button>
      ))}
    </div>
  );
  if (aiMode === "ask") {
    return (
      <div className="panel-body ai-panel" data-testid="ai-panel">
        {modeSwitch}
        <AskView projectId={drafting.projectId} onOpenSource={(target) => onOpenSource?.(target)} />
      </div>
    );
  }
  return (
    <div className="panel-body ai-panel" data-testid="ai-panel">
      {snap.error && (
        <div className="pad-x">
          <ErrorBanner error={snap.error} onDismiss={() => drafting.clearError()} />
        </div>
      )}
      {store ? (
        <SessionView
          key={store.id}
          drafting={drafting}
          store={store}
          selectionText={selectionText}
          getSelection={getSelection}
          scopeDismissed={scopeDismissed}
          onScopeDismiss={setScopeDismissed}
          onReview={onReview}
          onOpenModels={onSetUpModel}
          workingCopy={workingCopy}
          modeSwitch={modeSwitch}
          projectArchived={projectArchived}
          onRestoreProject={onRestoreProject}
        />
      ) : (
        <>
          <SessionBar drafting={drafting} running={false} onStop={() => undefined} lead={modeSwitch} />
          <div className="feed" data-testid="timeline">
            <div className="empty small">
              <p className="empty-title">{t("ai.start.title")}</p>
              <p className="muted">{t("ai.start.body")}</p>
            </div>
          </div>
          {projectArchived ? (
            <ArchivedProjectNotice onRestore={onRestoreProject} />
          ) : (
            <Composer
              ref={composer}
              selectionText={selectionText}
              getSelection={getSelection}
              dismissed={scopeDismissed}
              onDismiss={setScopeDismissed}
              mode={firstMode}
              running={false}
              onMode={setFirstMode}
              onSend={async (task, selection) => {
                const created = await drafting.create(titleOf(task), firstMode);
                if (!created) return false;
                // The engine checks the selection against the saved source: save first.
                if (selection) await workingCopy.flush().catch(() => undefined);
                void created.submit(task.trim(), undefined, selection);
                return true;
              }}
            />
          )}
        </>
      )}
    </div>
  );
}
