// The AI panel is a view of the session's event log. `fold` turns logged events into
// what the panel shows — the timeline, the prompt waiting for the person, the mode, the
// context estimate, the tokens — and nothing else feeds it, so a reload that replays
// the log from `session.events` rebuilds the same screen. Live-only events (the
// streamed pieces of an answer) are not folded: they belong to the one streaming
// message (see ./store.ts).

import type { HarnessEvent } from "../../shared/api/client";
import type { AllowOffer, ApprovalChange, CompactionMode, CompactionSummary, CompactionTrigger, Hint, LayerEstimate, Mode, ToolStatus, TurnEndReason } from "../../shared/api/generated";
import { parseTask, type Selection } from "./scope";

/** A tool step as the timeline shows it. */
/** `denied`: the person said no; `blocked`: plan mode or a permission rule did. */
export type StepState = "queued" | "running" | "waiting" | "done" | "failed" | "cancelled" | "denied" | "blocked";

export type Item =
  /** `retry`: the task of the failed turn just above, sent again by Retry (shown as such). */
  | { kind: "user"; key: string; text: string; selection: Selection | null; wasQueued: boolean; retry: boolean }
  /** `interrupted`: the answer did not finish; `cutOff`: because the model call failed
   * (the connection was lost), not because the person stopped it. */
  | { kind: "assistant"; key: string; text: string; interrupted: boolean; cutOff: boolean }
  | {
      kind: "tool";
      key: string;
      toolUseId: string;
      name: string;
      args: string;
      state: StepState;
      status?: ToolStatus;
      result?: string;
      /** Proposals the step made (from the envelope or its result). */
      proposalIds: string[];
    }
  /** `noteId`: a note the core words (e.g. the approval was superseded by a new message). */
  | { kind: "decision"; key: string; tool: string; approved: boolean; note: string; noteId: string | null; plan: boolean }
  | { kind: "answer"; key: string; question: string; answer: string }
  | { kind: "mode"; key: string; mode: Mode; by: string }
  | {
      kind: "end";
      key: string;
      reason: TurnEndReason;
      message: string;
      hints: Hint[];
      /** The answer above broke off when the connection to the model was lost. */
      cutOff: boolean;
      /** The task of a turn the model failed: sent again as it was by Retry. */
      retry: RetryTask | null;
      /** The provider refused the profile's API key, or the profile has none. */
      keyProblem: KeyProblem | null;
    }
  | { kind: "archived"; key: string }
  /** The person brought the archived session back. */
  | { kind: "unarchived"; key: string }
  /** The person restored a checkpoint: the project went back to it as version `version`. */
  | { kind: "rewound"; key: string; version: number }
  /** Earlier conversation was summarised (or truncated); expandable to the summary. */
  | {
      kind: "boundary";
      key: string;
      mode: CompactionMode;
      note: string;
      summaryText: string;
      /** The validated summary, by part (absent for a truncation). */
      summary: CompactionSummary | null;
      compacted: number;
      tokensBefore: number;
      tokensAfter: number;
    }
  /** A compaction attempt did not replace anything: it failed (the third in a row
   * truncates), the person stopped it, or the app stopped during it. */
  | { kind: "compactionFailed"; key: string; consecutive: number; message: string; outcome: CompactionFailure }
  /** The context passed the warning share of the window. */
  | { kind: "contextWarning"; key: string; percent: number; compactAt: number | null };

export type CompactionFailure = "failed" | "stopped" | "interrupted";

export type KeyProblem = "rejected" | "missing" | "gone";

/** What the hints of a turn end say about the API key (core's PROVIDER_AUTH hints). */
function keyProblemOf(hints: readonly Hint[]): KeyProblem | null {
  if (hints.some((h) => h.id === "check_api_key")) return "rejected";
  if (hints.some((h) => h.id === "set_api_key")) return "missing";
  // A key was saved, and the keychain no longer has it (`profile.key_gone`).
  if (hints.some((h) => h.id === "set_api_key_again")) return "gone";
  return null;
}

/** The core's message for a compaction the person stopped (`compaction::STOPPED`). */
const COMPACTION_STOPPED = "Stopped by the user";

/** A compaction under way (between `compaction_started` and its boundary or failure). */
export interface Compacting {
  trigger: CompactionTrigger;
  estimatedTokens: number;
  contextWindow: number;
}

/** A task as it was submitted (its text and typed selection), to send again. */
export interface RetryTask {
  text: string;
  selection: Selection | null;
}

export interface PendingApproval {
  requestId: string;
  toolUseId: string;
  tool: string;
  /** The normalized input the tool would run with. */
  input: unknown;
  /** Why it asks, in English (logs written before `reasonId`). */
  reason: string;
  /** Why it asks: `rule`, `policy` or `write` (the core's id, worded here). */
  reasonId?: string;
  targetVersion?: number;
  /** For a call that applies a proposal: exactly what would change (the approval is bound to it). */
  change?: ApprovalChange;
  /** What "always allow" would store (tool and pattern); absent for tools that always ask. */
  offer?: AllowOffer;
}

export interface PendingQuestion {
  questionId: string;
  toolUseId: string;
  question: string;
  options: string[];
}

export interface ContextEstimate {
  estimatedTokens: number;
  layers: LayerEstimate[];
}

export interface TimelineState {
  lastSequence: number;
  items: Item[];
  mode: Mode;
  /** A turn started and has not ended. */
  turnOpen: boolean;
  pendingApproval: PendingApproval | null;
  pendingQuestion: PendingQuestion | null;
  /** Messages sent while a turn ran, not delivered yet. */
  queued: string[];
  context: ContextEstimate | null;
  inputTokens: number;
  outputTokens: number;
  archived: boolean;
  /** Every proposal id a step of this session made, oldest first. */
  proposalIds: string[];
  /** The last compaction truncated (summarising failed): the panel shows a banner. */
  truncated: boolean;
  /** The sequence of the last event that changed the intent, pins or compaction (views that read them refetch). */
  longSessionSeq: number;
  /** The last task the person sent, as submitted (what Retry sends again). */
  lastTask: RetryTask | null;
  /** A compaction is running (summarising the earlier conversation). */
  compacting: Compacting | null;
  /** Failed summaries in a row (a stopped or interrupted one does not count). */
  compactionFailures: number;
}

export const emptyTimeline: TimelineState = {
  lastSequence: 0,
  items: [],
  mode: "default",
  turnOpen: false,
  pendingApproval: null,
  pendingQuestion: null,
  queued: [],
  context: null,
  inputTokens: 0,
  outputTokens: 0,
  archived: false,
  proposalIds: [],
  truncated: false,
  longSessionSeq: 0,
  lastTask: null,
  compacting: null,
  compactionFailures: 0,
};

/** The `finishReason` of an answer a failed model call cut off (core's `CUT_OFF_BY_ERROR`). */
export const CUT_OFF_BY_ERROR = "error";

/** Turn ends whose task can be sent again as it was. */
const RETRYABLE_ENDS: TurnEndReason[] = ["model_error"];

/** Turn ends the panel says nothing about: a finished answer, or a prompt it shows. */
const QUIET_ENDS: TurnEndReason[] = ["completed", "blocked_on_approval", "blocked_on_question"];

/** A refusal is not a failure: the person's is `denied`, plan mode's or a rule's is
 * `blocked`. Every other status (a schema error, a timeout, a tool error, ...) failed. */
export function stepState(status: ToolStatus): StepState {
  if (status === "success") return "done";
  if (status === "interrupted" || status === "cancelled") return "cancelled";
  if (status === "denied") return "denied";
  if (status === "blocked" || status === "permission_denied" || status === "tool_forbidden") return "blocked";
  return "failed";
}

/** Proposal ids a tool result names: `proposalId`, `proposal.id`, `proposals[].id`, `proposalIds`. */
export function proposalIdsIn(content: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return [];
  }
  if (typeof value !== "object" || value === null) return [];
  const v = value as Record<string, unknown>;
  const out: string[] = [];
  const add = (id: unknown) => {
    if (typeof id === "string" && id.startsWith("prp_") && !out.includes(id)) out.push(id);
  };
  add(v.proposalId);
  if (typeof v.proposal === "object" && v.proposal !== null) add((v.proposal as Record<string, unknown>).id);
  if (Array.isArray(v.proposals)) for (const p of v.proposals) add(typeof p === "object" && p !== null ? (p as Record<string, unknown>).id : p);
  if (Array.isArray(v.proposalIds)) for (const id of v.proposalIds) add(id);
  return out;
}

function updateTool(items: Item[], toolUseId: string | undefined, change: (step: Extract<Item, { kind: "tool" }>) => Item): Item[] {
  if (!toolUseId) return items;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.kind === "tool" && item.toolUseId === toolUseId) {
      const next = items.slice();
      next[i] = change(item);
      return next;
    }
  }
  return items;
}

/** Ends every step still queued, running or waiting (the turn is over). */
function settleSteps(items: Item[]): Item[] {
  let next: Item[] | null = null;
  items.forEach((item, i) => {
    if (item.kind === "tool" && (item.state === "queued" || item.state === "running")) {
      next ??= items.slice();
      next[i] = { ...item, state: "cancelled" };
    }
  });
  return next ?? items;
}

/** Applies one logged event. Live-only events (sequence 0) leave the state as it is. */
export function fold(state: TimelineState, event: HarnessEvent): TimelineState {
  if (event.sequence === 0) return state;
  const s: TimelineState = { ...state, lastSequence: Math.max(state.lastSequence, event.sequence) };
  const key = String(event.sequence);
  const push = (item: Item) => {
    s.items = [...s.items, item];
  };
  switch (event.kind) {
    case "session_created":
      s.mode = event.payload.mode;
      break;
    case "user_message": {
      // The typed selection; a message from before it existed carries a tagged block.
      const typed = event.payload.selection;
      const { task, selection } = typed ? { task: event.payload.text, selection: typed } : parseTask(event.payload.text);
      // The same task right after the failed turn that offered Retry: that retry.
      const prev = s.items.at(-1);
      const retry =
        prev?.kind === "end" && prev.retry !== null && prev.retry.text === event.payload.text && JSON.stringify(prev.retry.selection ?? null) === JSON.stringify(typed ?? null);
      push({ kind: "user", key, text: task, selection, wasQueued: event.payload.wasQueued, retry });
      // As submitted: an older message keeps its tagged block in the text.
      s.lastTask = { text: event.payload.text, selection: typed ?? null };
      const at = s.queued.indexOf(event.payload.text);
      if (at >= 0) s.queued = [...s.queued.slice(0, at), ...s.queued.slice(at + 1)];
      break;
    }
    case "message_queued":
      s.queued = [...s.queued, event.payload.text];
      break;
    case "turn_started":
      s.turnOpen = true;
      break;
    case "context_assembled":
      s.context = { estimatedTokens: event.payload.estimatedTokens, layers: event.payload.layers };
      break;
    case "model_call_started":
    case "assistant_delta":
    case "reasoning_delta":
      break;
    case "assistant_message": {
      const p = event.payload;
      s.inputTokens += p.inputTokens;
      s.outputTokens += p.outputTokens;
      const cutOff = p.interrupted && p.finishReason === CUT_OFF_BY_ERROR;
      if (p.text.trim() || p.interrupted) push({ kind: "assistant", key, text: p.text, interrupted: p.interrupted, cutOff });
      for (const call of p.toolCalls) {
        push({ kind: "tool", key: `${key}:${call.id}`, toolUseId: call.id, name: call.name, args: call.arguments, state: "queued", proposalIds: [] });
      }
      break;
    }
    case "tool_decision": {
      const decision = event.payload.decision;
      s.items = updateTool(s.items, event.toolUseId, (step) => ({
        ...step,
        state: decision === "allow" ? "running" : decision === "ask" ? "waiting" : step.state,
      }));
      break;
    }
    case "tool_result": {
      const p = event.payload;
      const ids = [...(event.proposalId ? [event.proposalId] : []), ...proposalIdsIn(p.content)].filter((id, i, all) => all.indexOf(id) === i);
      s.items = updateTool(s.items, event.toolUseId, (step) => ({ ...step, state: stepState(p.status), status: p.status, result: p.content, proposalIds: ids }));
      for (const id of ids) if (!s.proposalIds.includes(id)) s.proposalIds = [...s.proposalIds, id];
      if (s.pendingApproval?.toolUseId === event.toolUseId) s.pendingApproval = null;
      if (s.pendingQuestion?.toolUseId === event.toolUseId) s.pendingQuestion = null;
      break;
    }
    case "approval_requested": {
      const p = event.payload;
      s.pendingApproval = {
        requestId: p.requestId,
        toolUseId: event.toolUseId ?? "",
        tool: p.tool,
        input: p.input,
        reason: p.reason,
        ...(p.reasonId !== undefined ? { reasonId: p.reasonId } : {}),
        ...(p.targetVersion !== undefined ? { targetVersion: p.targetVersion } : {}),
        ...(p.change ? { change: p.change } : {}),
        ...(p.offer ? { offer: p.offer } : {}),
      };
      s.items = updateTool(s.items, event.toolUseId, (step) => ({ ...step, state: "waiting" }));
      break;
    }
    case "approval_resolved": {
      const p = event.payload;
      const pending = s.pendingApproval;
      const tool = pending?.requestId === p.requestId ? pending.tool : "";
      if (pending?.requestId === p.requestId) s.pendingApproval = null;
      push({ kind: "decision", key, tool, approved: p.approved, note: p.note, noteId: p.noteId ?? null, plan: tool === "exit_plan_mode" });
      s.items = updateTool(s.items, event.toolUseId, (step) => ({ ...step, state: p.approved ? "running" : step.state }));
      break;
    }
    case "question_asked": {
      const p = event.payload;
      s.pendingQuestion = { questionId: p.questionId, toolUseId: event.toolUseId ?? "", question: p.question, options: p.options };
      s.items = updateTool(s.items, event.toolUseId, (step) => ({ ...step, state: "waiting" }));
      break;
    }
    case "question_answered": {
      const p = event.payload;
      const question = s.pendingQuestion?.questionId === p.questionId ? s.pendingQuestion.question : "";
      if (s.pendingQuestion?.questionId === p.questionId) s.pendingQuestion = null;
      push({ kind: "answer", key, question, answer: p.answer });
      break;
    }
    case "mode_changed":
      s.mode = event.payload.mode;
      push({ kind: "mode", key, mode: event.payload.mode, by: event.payload.by });
      break;
    case "turn_ended": {
      const p = event.payload;
      s.turnOpen = false;
      s.compacting = null;
      // A turn blocked on the person keeps its waiting step; any other end settles the rest.
      if (p.reason !== "blocked_on_approval" && p.reason !== "blocked_on_question") s.items = settleSteps(s.items);
      // An answer cut short already says it stopped; the end line would repeat it.
      const last = s.items.at(-1);
      const saidStopped = p.reason === "interrupted" && last?.kind === "assistant" && last.interrupted;
      // The core says when it was the connection (not an error the provider sent).
      const cutOff = p.reason === "model_error" && last?.kind === "assistant" && last.cutOff && p.hints.some((h) => h.id === "connection_lost");
      const retry = RETRYABLE_ENDS.includes(p.reason) ? s.lastTask : null;
      const keyProblem = p.reason === "model_error" ? keyProblemOf(p.hints) : null;
      if (!QUIET_ENDS.includes(p.reason) && !saidStopped) push({ kind: "end", key, reason: p.reason, message: p.message, hints: p.hints, cutOff, retry, keyProblem });
      // The pin list reads its budget again, so it shows what to unpin.
      if (p.reason === "pins_too_long") s.longSessionSeq = event.sequence;
      break;
    }
    case "session_archived":
      s.archived = true;
      push({ kind: "archived", key });
      break;
    case "session_unarchived":
      s.archived = false;
      push({ kind: "unarchived", key });
      break;
    case "rewound":
      push({ kind: "rewound", key, version: event.payload.version });
      break;
    case "compact_boundary": {
      const p = event.payload;
      push({ kind: "boundary", key, mode: p.mode, note: p.note, summaryText: p.summaryText, summary: p.summary ?? null, compacted: p.compactedMessages, tokensBefore: p.tokensBefore, tokensAfter: p.tokensAfter });
      s.truncated = p.mode === "truncated";
      s.longSessionSeq = event.sequence;
      s.compacting = null;
      s.compactionFailures = 0;
      break;
    }
    case "compaction_started": {
      const p = event.payload;
      s.compacting = { trigger: p.trigger, estimatedTokens: p.estimatedTokens, contextWindow: p.contextWindow };
      break;
    }
    case "compaction_failed": {
      const p = event.payload;
      // A stop (by the person, or of the app) does not count as a failure: the count stays.
      const outcome: CompactionFailure = p.message.startsWith(COMPACTION_STOPPED) ? "stopped" : p.consecutive > s.compactionFailures ? "failed" : "interrupted";
      push({ kind: "compactionFailed", key, consecutive: p.consecutive, message: p.message, outcome });
      s.compacting = null;
      s.compactionFailures = p.consecutive;
      break;
    }
    case "context_warning":
      push({ kind: "contextWarning", key, percent: event.payload.percent, compactAt: event.payload.compactAtPercent ?? null });
      break;
    case "intent_updated":
    case "pin_added":
    case "pin_removed":
    case "compaction_setting_changed":
      s.longSessionSeq = event.sequence;
      break;
    default:
      // A kind this UI does not know yet (a newer backend): nothing to show.
      break;
  }
  return s;
}

export function foldAll(events: readonly HarnessEvent[], from: TimelineState = emptyTimeline): TimelineState {
  let s = from;
  for (const e of events) s = fold(s, e);
  return s;
}
