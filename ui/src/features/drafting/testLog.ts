// For the drafting tests only: a backend for the FakeTransport that keeps a session's
// log and answers `session.timeline` and the turn streams' patches from it, so a test
// describes a session by its events, as the engine logs them. The engine's fold
// (`src-tauri/agent/src/harness/timeline.rs`, with its Rust tests, the former tests of
// this fold) is what the app draws. This copy is held to it: `__golden__/timeline.json`
// holds logs with the core's pages and live patches for them (written and checked by
// src-tauri/api/tests/it/timeline_golden.rs), and testLog.golden.test.ts checks that
// this file answers each exactly so. One leniency the core does not have: a test's log
// may leave out a model call's start, and its deltas then stream into the next sequence.

import type { HarnessEvent, StreamEvent } from "../../shared/api/client";
import { abortError, apiError, type FakeTransport } from "../../shared/api/fake";
import type { Hint, SessionTimelineResult, TimelinePatch, ToolStatus, TurnEndReason } from "../../shared/api/generated";
import { parseTask } from "./scope";
import type { Item, StepState, TimelineView } from "./timeline";
import { emptyTimeline } from "./timeline";

type TimelineState = Omit<TimelineView, "earlier">;
type CompactionFailure = "failed" | "stopped" | "interrupted";
type KeyProblem = "rejected" | "missing" | "gone";

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

/** The item `key`, to change, if the timeline holds it. */
function updateKeyed(items: Item[], key: string, change: (item: Item) => Item): Item[] | null {
  let at = items.length - 1;
  while (at >= 0 && items[at].key !== key) at--;
  if (at < 0) return null;
  const next = items.slice();
  next[at] = change(items[at]);
  return next;
}

function updateTool(items: Item[], toolUseId: string | undefined, sequence: number, change: (step: Extract<Item, { kind: "tool" }>) => Item): Item[] {
  if (!toolUseId) return items;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.kind === "tool" && item.toolUseId === toolUseId) {
      const changed = change(item);
      if (JSON.stringify(changed) === JSON.stringify(item)) return items;
      const next = items.slice();
      next[i] = { ...changed, changedAt: sequence };
      return next;
    }
  }
  return items;
}

/** Ends every step still queued, running or waiting (the turn is over). */
function settleSteps(items: Item[], sequence: number): Item[] {
  let next: Item[] | null = null;
  items.forEach((item, i) => {
    if (item.kind === "tool" && (item.state === "queued" || item.state === "running")) {
      next ??= items.slice();
      next[i] = { ...item, state: "cancelled", changedAt: sequence };
    }
  });
  return next ?? items;
}

/** Applies one logged event. Live-only events (sequence 0) leave the state as it is. */
export function fold(state: TimelineState, event: HarnessEvent): TimelineState {
  if (event.sequence === 0) return state;
  const s: TimelineState = { ...state, lastSequence: Math.max(state.lastSequence, event.sequence) };
  const key = String(event.sequence);
  const changedAt = event.sequence;
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
      push({ kind: "user", key, changedAt, text: task, selection, wasQueued: event.payload.wasQueued, retry });
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
      s.streamingKey = key;
      break;
    case "assistant_delta":
    case "reasoning_delta":
      break;
    case "assistant_streamed": {
      // The text of the answer streaming now that reached the log: its one item.
      const streamingKey = s.streamingKey;
      if (streamingKey === null) break;
      const text = event.payload.text;
      s.items =
        updateKeyed(s.items, streamingKey, (item) => (item.kind === "assistant" ? { ...item, text: item.text + text, changedAt } : item)) ??
        [...s.items, { kind: "assistant", key: streamingKey, changedAt, text, streaming: true, interrupted: false, cutOff: false }];
      break;
    }
    case "assistant_message": {
      const p = event.payload;
      s.inputTokens += p.inputTokens;
      s.outputTokens += p.outputTokens;
      const cutOff = p.interrupted && p.finishReason === CUT_OFF_BY_ERROR;
      const answerKey = s.streamingKey ?? key;
      s.streamingKey = null;
      const answer: Item = { kind: "assistant", key: answerKey, changedAt, text: p.text, streaming: false, interrupted: p.interrupted, cutOff };
      // The streamed item becomes the answer (empty when the answer is only tool calls:
      // items are never removed, and an empty answer draws nothing).
      const replaced = updateKeyed(s.items, answerKey, () => answer);
      if (replaced) s.items = replaced;
      else if (p.text.trim() || p.interrupted) push(answer);
      for (const call of p.toolCalls) {
        push({ kind: "tool", key: `${answerKey}:${call.id}`, changedAt, toolUseId: call.id, name: call.name, args: call.arguments, state: "queued", proposalIds: [] });
      }
      break;
    }
    case "tool_decision": {
      const decision = event.payload.decision;
      s.items = updateTool(s.items, event.toolUseId, changedAt, (step) => ({
        ...step,
        state: decision === "allow" ? "running" : decision === "ask" ? "waiting" : step.state,
      }));
      break;
    }
    case "tool_result": {
      const p = event.payload;
      const ids = [...(event.proposalId ? [event.proposalId] : []), ...proposalIdsIn(p.content)].filter((id, i, all) => all.indexOf(id) === i);
      s.items = updateTool(s.items, event.toolUseId, changedAt, (step) => ({ ...step, state: stepState(p.status), status: p.status, result: p.content, proposalIds: ids }));
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
      s.items = updateTool(s.items, event.toolUseId, changedAt, (step) => ({ ...step, state: "waiting" }));
      break;
    }
    case "approval_resolved": {
      const p = event.payload;
      const pending = s.pendingApproval;
      const tool = pending?.requestId === p.requestId ? pending.tool : "";
      if (pending?.requestId === p.requestId) s.pendingApproval = null;
      push({ kind: "decision", key, changedAt, tool, approved: p.approved, note: p.note, noteId: p.noteId ?? null, plan: tool === "exit_plan_mode" });
      s.items = updateTool(s.items, event.toolUseId, changedAt, (step) => ({ ...step, state: p.approved ? "running" : step.state }));
      break;
    }
    case "question_asked": {
      const p = event.payload;
      s.pendingQuestion = { questionId: p.questionId, toolUseId: event.toolUseId ?? "", question: p.question, options: p.options };
      s.items = updateTool(s.items, event.toolUseId, changedAt, (step) => ({ ...step, state: "waiting" }));
      break;
    }
    case "question_answered": {
      const p = event.payload;
      const question = s.pendingQuestion?.questionId === p.questionId ? s.pendingQuestion.question : "";
      if (s.pendingQuestion?.questionId === p.questionId) s.pendingQuestion = null;
      push({ kind: "answer", key, changedAt, question, answer: p.answer });
      break;
    }
    case "mode_changed":
      s.mode = event.payload.mode;
      push({ kind: "mode", key, changedAt, mode: event.payload.mode, by: event.payload.by });
      break;
    case "turn_ended": {
      const p = event.payload;
      s.turnOpen = false;
      s.compacting = null;
      // An answer the log kept only in part (the process stopped mid-stream) streams no more.
      if (s.streamingKey !== null) {
        s.items = updateKeyed(s.items, s.streamingKey, (item) => (item.kind === "assistant" ? { ...item, streaming: false, interrupted: true, changedAt } : item)) ?? s.items;
      }
      s.streamingKey = null;
      // A turn blocked on the person keeps its waiting step; any other end settles the rest.
      if (p.reason !== "blocked_on_approval" && p.reason !== "blocked_on_question") s.items = settleSteps(s.items, changedAt);
      // An answer cut short already says it stopped; the end line would repeat it.
      const last = s.items.at(-1);
      const saidStopped = p.reason === "interrupted" && last?.kind === "assistant" && last.interrupted;
      // The core says when it was the connection (not an error the provider sent).
      const cutOff = p.reason === "model_error" && last?.kind === "assistant" && last.cutOff && p.hints.some((h) => h.id === "connection_lost");
      const retry = RETRYABLE_ENDS.includes(p.reason) ? s.lastTask : null;
      const keyProblem = p.reason === "model_error" ? keyProblemOf(p.hints) : null;
      if (!QUIET_ENDS.includes(p.reason) && !saidStopped) push({ kind: "end", key, changedAt, reason: p.reason, message: p.message, hints: p.hints, cutOff, retry, keyProblem });
      // The pin list reads its budget again, so it shows what to unpin.
      if (p.reason === "pins_too_long") s.longSessionSeq = event.sequence;
      break;
    }
    case "session_archived":
      s.archived = true;
      push({ kind: "archived", key, changedAt });
      break;
    case "session_unarchived":
      s.archived = false;
      push({ kind: "unarchived", key, changedAt });
      break;
    case "rewound":
      push({ kind: "rewound", key, changedAt, version: event.payload.version });
      break;
    case "compact_boundary": {
      const p = event.payload;
      push({ kind: "boundary", key, changedAt, mode: p.mode, note: p.note, summaryText: p.summaryText, summary: p.summary ?? null, compacted: p.compactedMessages, tokensBefore: p.tokensBefore, tokensAfter: p.tokensAfter });
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
      push({ kind: "compactionFailed", key, changedAt, consecutive: p.consecutive, message: p.message, outcome });
      s.compacting = null;
      s.compactionFailures = p.consecutive;
      break;
    }
    case "context_warning":
      push({ kind: "contextWarning", key, changedAt, percent: event.payload.percent, compactAt: event.payload.compactAtPercent ?? null });
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

const emptyState: TimelineState = (({ earlier: _earlier, ...state }) => state)(emptyTimeline);

export function foldAll(events: readonly HarnessEvent[], from: TimelineState = emptyState): TimelineState {
  let s = from;
  for (const e of events) s = fold(s, e);
  return s;
}

/** The most items one page holds (the core's `MAX_TIMELINE_PAGE`). */
const MAX_TIMELINE_PAGE = 1000;

/** A log's fold as `session.timeline` answers (`since`, `before`, `limit` as the engine
 * reads them, and refuses as it does). */
function timelineOf(log: readonly HarnessEvent[], params: { since?: number; before?: string; limit?: number }): SessionTimelineResult {
  const limit = params.limit ?? MAX_TIMELINE_PAGE;
  if (limit < 1 || limit > MAX_TIMELINE_PAGE) throw apiError("VALIDATION", `A page holds 1 to ${MAX_TIMELINE_PAGE} items.`);
  const { items, ...state } = foldAll([...log].sort((a, b) => a.sequence - b.sequence));
  const since = params.since ?? 0;
  const end = params.before === undefined ? items.length : items.findIndex((i) => i.key === params.before);
  if (end < 0) throw apiError("VALIDATION", "No item of this session's timeline has this key.");
  const matching = items.slice(0, end).filter((i) => i.changedAt > since);
  const first = Math.max(0, matching.length - limit);
  return { ...state, since, items: matching.slice(first), earlier: first };
}

/** What one live stream's reader holds beyond the log: the keys of the items it made
 * or grew from deltas (the engine's `LiveFeed`). */
type Feed = { appended: string[] };

/** What one event changes for a reader of patches (the engine's `LiveFeed`, for these tests). */
function patchOf(log: readonly HarnessEvent[], event: HarnessEvent, feed: Feed): TimelinePatch | null {
  const { items, ...state } = foldAll(log);
  if (event.sequence === 0) {
    if (event.kind !== "assistant_delta" && event.kind !== "reasoning_delta") return null;
    // A test's log may leave out the model call's start: the answer then takes the next sequence.
    const key = state.streamingKey ?? String(state.lastSequence + 1);
    const reasoning = event.kind === "reasoning_delta";
    if (!reasoning && !feed.appended.includes(key)) feed.appended.push(key);
    return { sequence: 0, items: [], removed: [], append: { key, text: event.payload.text, reasoning }, state: null };
  }
  // A checkpoint of text the reader already has from deltas is not sent back shorter.
  const checkpoint = event.kind === "assistant_streamed";
  const changed = items.filter((i) => i.changedAt === event.sequence && !(checkpoint && feed.appended.includes(i.key)));
  // Once no answer streams, an item the reader made from deltas that the log does not keep goes.
  const removed = state.streamingKey === null ? feed.appended.splice(0).filter((key) => !items.some((i) => i.key === key)) : [];
  return { sequence: event.sequence, items: changed, removed, append: null, state };
}

/** The engine's pause before a watch looks again at a turn whose end is logged but which
 * still holds the session (`TURN_RELEASE` in api/timeline.rs). */
const TURN_RELEASE_MS = 50;

/** Serves `log` (which the test may add to) as the engine would: `session.timeline`;
 * each event a turn-driving handler emits as the patch it makes, for a caller that asks
 * for patches (`timeline: true`), an emitted logged event joining the log; and
 * `session.watch`, which pushes what the log gains (a test's `log.push` included, as
 * the engine hears of every commit) until no turn runs: none is open in the log and
 * `session.get`, when handled, does not say running. */
export function serveLog(transport: FakeTransport, logs: HarnessEvent[] | ((sessionId: string) => HarnessEvent[])): FakeTransport {
  const logOf = (sessionId: string) => (typeof logs === "function" ? logs(sessionId) : logs);
  transport.on("session.timeline", (params) => timelineOf(logOf(params.sessionId), params));
  const stream = transport.stream.bind(transport);
  const watchers = new Set<() => void>();
  const hooked = new WeakSet<HarnessEvent[]>();
  const hear = (log: HarnessEvent[]) => {
    if (hooked.has(log)) return;
    hooked.add(log);
    const push = log.push.bind(log);
    log.push = (...events: HarnessEvent[]) => {
      const n = push(...events);
      for (const watcher of [...watchers]) watcher();
      return n;
    };
  };
  const running = async (sessionId: string) => {
    const get = transport.handlers["session.get"];
    if (!get) return false;
    const view = await get({ sessionId }, () => undefined);
    return view.status === "running";
  };
  const watch = (params: { sessionId: string; since?: number }, onEvent: (event: StreamEvent) => void, signal?: AbortSignal) =>
    new Promise<unknown>((resolve, reject) => {
      const log = logOf(params.sessionId);
      let sent = params.since ?? 0;
      let first = true;
      const stop = () => {
        watchers.delete(look);
        signal?.removeEventListener("abort", abort);
      };
      const abort = () => {
        stop();
        reject(abortError());
      };
      function look() {
        const { since: _since, items, earlier: _earlier, ...state } = timelineOf(log, { since: sent });
        if (first || state.lastSequence > sent) {
          onEvent({ type: "timeline", data: { sequence: state.lastSequence, items, removed: [], append: null, state } });
          sent = state.lastSequence;
        }
        first = false;
        if (state.turnOpen || state.compacting) return;
        void running(params.sessionId).then((claimed) => {
          if (!watchers.has(look)) return;
          if (!claimed) {
            stop();
            resolve({ lastSequence: sent, ended: "turnEnded" });
          } else setTimeout(() => watchers.has(look) && look(), TURN_RELEASE_MS);
        });
      }
      if (signal?.aborted) return reject(abortError());
      signal?.addEventListener("abort", abort, { once: true });
      hear(log);
      watchers.add(look);
      look();
    });
  transport.stream = (method, params, onEvent, options) => {
    const asked = params as { timeline?: boolean; sessionId?: string; since?: number };
    if (method === "session.watch" && !transport.handlers["session.watch"]) {
      transport.calls.push({ method: "session.watch", params });
      return watch({ sessionId: asked.sessionId ?? "", since: asked.since }, onEvent, options?.signal);
    }
    if (!asked.timeline) return stream(method, params, onEvent, options);
    const log = logOf(asked.sessionId ?? "");
    const feed: Feed = { appended: [] };
    return stream(
      method,
      params,
      (event: StreamEvent) => {
        if (event.type !== "harness") return onEvent(event);
        const e = event.data;
        if (e.sequence > 0 && !log.some((held) => held.sequence === e.sequence)) log.push(e);
        const patch = patchOf(
          log.filter((held) => held.sequence <= e.sequence || e.sequence === 0),
          e,
          feed,
        );
        if (patch) onEvent({ type: "timeline", data: patch });
      },
      options,
    );
  };
  return transport;
}
