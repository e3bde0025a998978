// One drafting session in the AI panel: its bar, the meter and chips, the timeline, what
// the turn waits for (an approval, a plan, a question), its open proposals and the composer.
import { type ReactNode, useEffect, useRef, useSyncExternalStore } from "react";
import type { Mode } from "../../shared/api/generated";
import { readFresh } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { CapStanding } from "./CapStanding";
import { Composer, type ComposerHandle } from "./Composer";
import { ContextMeter } from "./ContextMeter";
import { LongSessionBar } from "./LongSession";
import { ArchivedProjectNotice } from "./PanelNotices";
import { ApprovalPrompt, PlanPrompt, QuestionPrompt } from "./Prompts";
import type { Selection } from "./scope";
import { SessionBar } from "./SessionBar";
import { SessionExtras, type WorkingCopy } from "./SessionExtras";
import { type Drafting, isRunning, type SessionStore } from "./store";
import { Timeline } from "./Timeline";
import { ProposalBadge } from "./ToolStep";

/** A new session's title: the first line of its first task. */
export function titleOf(task: string): string {
  const line = task.split("\n")[0]?.trim() ?? "";
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}

export function SessionView({
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
