// The AI panel of the right-hand side: the project's drafting sessions. A view of the
// session's timeline as the engine folds it (see ./store.ts): the timeline, what the turn
// waits for, the proposals it made, the context meter, and the composer. With no model
// set up it offers to set one up instead. Its other mode, Ask (./Ask.tsx), answers
// questions from the person's own writing with citations.
import { type ReactNode, useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { LocalServer, Mode } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { AskView, type SourceTarget } from "./Ask";
import { readFresh, useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { Composer, type ComposerHandle } from "./Composer";
import { CapStanding } from "./CapStanding";
import { ContextMeter } from "./ContextMeter";
import { ApprovalPrompt, PlanPrompt, QuestionPrompt } from "./Prompts";
import type { Selection } from "./scope";
import { SessionBar } from "./SessionBar";
import { LongSessionBar } from "./LongSession";
import { SessionExtras, type WorkingCopy } from "./SessionExtras";
import { type Drafting, isRunning, type SessionStore } from "./store";
import { Timeline } from "./Timeline";
import { ProposalBadge } from "./ToolStep";

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

/** A new session's title: the first line of its first task. */
function titleOf(task: string): string {
  const line = task.split("\n")[0]?.trim() ?? "";
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}

/** In place of the composer (and of an approval or question) while the project is
 * archived: why nothing can be sent, and the way out. */
function ArchivedProjectNotice({ onRestore }: { onRestore?: () => void }) {
  const { t } = useApp();
  return (
    <div className="composer archived-project" data-testid="ai-project-archived" role="status">
      <p className="small muted">{t("ai.projectArchived.body")}</p>
      {onRestore && (
        <button type="button" className="small-btn" data-testid="ai-restore-project" onClick={onRestore}>
          {t("ai.projectArchived.restore")}
        </button>
      )}
    </div>
  );
}

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

function SessionView({
  drafting,
  store,
  selectionText,
  getSelection,
  scopeDismissed,
  onScopeDismiss,
  onReview,
  onOpenModels,
  workingCopy,
  modeSwitch,
  projectArchived,
  onRestoreProject,
}: {
  drafting: Drafting;
  store: SessionStore;
  selectionText: string;
  getSelection: () => Selection | null;
  scopeDismissed: string | null;
  onScopeDismiss: (selectionText: string) => void;
  onReview: (id: string) => void;
  onOpenModels: () => void;
  workingCopy: WorkingCopy;
  /** Sessions | Ask, at the start of the session bar. */
  modeSwitch: ReactNode;
  projectArchived: boolean;
  onRestoreProject?: () => void;
}) {
  const { client, t } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const dsnap = useSyncExternalStore(drafting.subscribe, drafting.getSnapshot);
  const running = isRunning(snap);
  const profile = dsnap.profiles?.find((p) => p.id === snap.session.profileId) ?? null;
  const { pendingApproval, pendingQuestion, mode } = snap.timeline;
  const open = snap.proposals.filter((p) => p.status === "proposed");
  const busy = snap.driving > 0;
  const composer = useRef<ComposerHandle>(null);
  // A prompt that closes (Allow, Approve, an answer), a button disabled while its call
  // runs, or this view replacing the first composer leaves focus on nothing: it goes
  // back to the composer. Focus somewhere else (the editor) stays where it is.
  const promptKey = `${pendingApproval?.requestId ?? ""}:${pendingQuestion?.questionId ?? ""}`;
  useEffect(() => {
    const lost = () => !document.activeElement || document.activeElement === document.body;
    if (lost()) composer.current?.focus();
    // A button disabled under the pointer blurs a moment later.
    const id = window.setTimeout(() => {
      if (lost()) composer.current?.focus();
    }, 0);
    return () => window.clearTimeout(id);
  }, [promptKey, busy]);

  const onMode = (next: Mode) => void store.setMode(next);
  // A session made with "+ New" has the project's title (the engine's default): its
  // first task names it, so sessions can be told apart in the list.
  const nameAfter = async (task: string) => {
    const title = titleOf(task);
    const id = store.id;
    if (!title) return;
    const project = await readFresh(client, "project.get", { projectId: drafting.projectId }).catch(() => null);
    const current = drafting.getSnapshot().sessions?.find((s) => s.id === id)?.title;
    if (project && current === project.title && title !== current) await drafting.rename(id, title);
  };
  const onSend = async (task: string, selection: Selection | null) => {
    const first = snap.loaded && !snap.timeline.items.some((i) => i.kind === "user") && snap.timeline.queued.length === 0;
    if (first) void nameAfter(task);
    // The engine checks the selection against the saved source: save first.
    if (selection) await workingCopy.flush().catch(() => undefined);
    void store.submit(task.trim(), undefined, selection);
    return true;
  };

  return (
    <>
      <SessionBar drafting={drafting} running={running} onStop={() => void store.interrupt()} lead={modeSwitch} />
      {/* The meter and every chip (constraints, checkpoints, intent, pins, memory) share
          one wrapping block, so the conversation keeps its room. */}
      <div className="session-head" data-testid="session-head">
        <div className="session-meta">
          <ContextMeter
            context={snap.timeline.context}
            contextWindow={profile?.contextWindow ?? null}
            inputTokens={snap.timeline.inputTokens}
            outputTokens={snap.timeline.outputTokens}
            limits={snap.session.limits}
            cost={snap.cost}
            store={store}
            budget={snap.budget}
          />
          <CapStanding spent={snap.timeline.inputTokens + snap.timeline.outputTokens} />
          {mode === "plan" && (
            <span className="badge badge-plan" data-testid="plan-badge">
              {t("ai.mode.planBadge")}
            </span>
          )}
        </div>
        <SessionExtras store={store} workingCopy={workingCopy} />
        <LongSessionBar store={store} />
      </div>
      {snap.error && (
        <div className="pad-x">
          <ErrorBanner error={snap.error} onDismiss={() => store.clearError()} />
        </div>
      )}
      <Timeline store={store} onReview={onReview} onOpenModels={onOpenModels} />
      {!projectArchived &&
        pendingApproval &&
        (pendingApproval.tool === "exit_plan_mode" ? (
          <PlanPrompt key={pendingApproval.requestId} pending={pendingApproval} busy={busy} onDecide={(ok, note) => void store.resolveApproval(pendingApproval.requestId, ok, note)} />
        ) : (
          <ApprovalPrompt
            key={pendingApproval.requestId}
            pending={pendingApproval}
            busy={busy}
            projectId={drafting.projectId}
            sessionId={store.id}
            onDecide={async (ok, note, always) => {
              // What the tool writes builds on what is on screen: save pending typing first.
              if (ok) await workingCopy.flush().catch(() => undefined);
              void store.resolveApproval(pendingApproval.requestId, ok, note, always);
            }}
          />
        ))}
      {!projectArchived && pendingQuestion && (
        <QuestionPrompt key={pendingQuestion.questionId} pending={pendingQuestion} busy={busy} onAnswer={(a) => void store.answer(pendingQuestion.questionId, a)} />
      )}
      {open.length > 0 && (
        <div className="open-proposals" data-testid="open-proposals" aria-label={t("ai.proposals.open", { n: open.length })}>
          <p className="small muted">{t("ai.proposals.open", { n: open.length })}</p>
          {open.map((p) => (
            <button key={p.id} type="button" className="proposal-chip" data-testid="open-proposal" data-proposal={p.id} onClick={() => onReview(p.id)}>
              <span className="proposal-chip-title">{p.summary}</span>
              <ProposalBadge view={p} />
            </button>
          ))}
        </div>
      )}
      {projectArchived ? (
        <ArchivedProjectNotice onRestore={onRestoreProject} />
      ) : (
        <Composer
          ref={composer}
          selectionText={selectionText}
          getSelection={getSelection}
          dismissed={scopeDismissed}
          onDismiss={onScopeDismiss}
          mode={mode}
          running={running}
          disabled={snap.timeline.archived}
          onMode={onMode}
          onSend={onSend}
        />
      )}
    </>
  );
}

/** No model yet: set one up, and offer a model server found on this computer. */
function ModelSetupOffer({ onSetUp, onRecheck }: { onSetUp: () => void; onRecheck: () => void }) {
  const { t } = useApp();
  const detect = useMethod("llmProfile.detectLocal", {});
  const found: LocalServer[] | null = detect.isPending ? null : (detect.data?.found ?? []);
  return (
    <div className="empty" data-testid="ai-setup">
      <p className="empty-title">{t("ai.setup.title")}</p>
      <p className="muted">{t("ai.setup.body")}</p>
      {found === null && (
        <p className="small muted" role="status">
          <span className="spinner" aria-hidden="true" /> {t("ai.setup.detecting")}
        </p>
      )}
      {found?.map((s) => (
        <div key={s.preset.id} className="detected" data-testid="ai-setup-local">
          <p className="small">{t("localOffer.body", { name: s.preset.label, url: s.preset.baseUrl, n: s.models.length })}</p>
          <button type="button" className="primary" onClick={onSetUp}>
            {t("ai.setup.useLocal", { name: s.preset.label })}
          </button>
        </div>
      ))}
      <div className="row">
        <button type="button" className={found?.length ? "" : "primary"} data-testid="ai-setup-open" onClick={onSetUp}>
          {t("ai.setup.open")}
        </button>
        <button type="button" onClick={onRecheck}>
          {t("ai.setup.recheck")}
        </button>
      </div>
    </div>
  );
}
