// Harness events and records for the drafting tests, built the way the engine sends them.
import type { HarnessEvent } from "../api/client";
import type { LlmProfile, Proposal, ProposalHunk, ProposalView, Session, SessionView, ToolStatus, TurnEndReason } from "../api/generated";

type Body = Pick<HarnessEvent, "kind" | "payload">;

let seq = 0;
export function resetSeq() {
  seq = 0;
}

/** A logged event with the next sequence number (or a live one with `live`). */
export function ev(body: Body, envelope: Partial<Omit<HarnessEvent, "kind" | "payload">> = {}, live = false): HarnessEvent {
  const sequence = live ? 0 : ++seq;
  return {
    eventId: `evt_${sequence}`,
    sequence,
    sessionId: "ses_1",
    turnId: "turn_1",
    createdAt: "2026-11-22T11:59:00Z",
    modelVisible: false,
    ...envelope,
    ...body,
  } as HarnessEvent;
}

export const created = (): Body => ({ kind: "session_created", payload: { projectId: "prj_1", profile: "llm_1", mode: "default" } });
export const user = (text: string, wasQueued = false): Body => ({ kind: "user_message", payload: { text, wasQueued } });
export const turnStarted = (): Body => ({ kind: "turn_started", payload: {} as Record<symbol, never> });
export const assistant = (text: string, toolCalls: { id: string; name: string; arguments: string }[] = [], interrupted = false): Body => ({
  kind: "assistant_message",
  payload: { text, toolCalls, finishReason: toolCalls.length ? "tool_calls" : "stop", interrupted, inputTokens: 100, outputTokens: 20 },
});
export const delta = (text: string): Body => ({ kind: "assistant_delta", payload: { text } });
export const toolResult = (tool: string, content: string, status: ToolStatus = "success"): Body => ({
  kind: "tool_result",
  payload: { tool, status, content, reusedExecution: false },
});
export const turnEnded = (reason: TurnEndReason, hints: { id: string; message: string }[] = []): Body => ({
  kind: "turn_ended",
  payload: { reason, message: `turn ${reason}`, hints },
});
export const approvalRequested = (requestId: string, tool: string, input: unknown): Body => ({
  kind: "approval_requested",
  payload: { requestId, tool, input, inputHash: "sha256:x", idempotencyKey: "k", reason: "writes need approval" },
});

export function session(over: Partial<Session> = {}): Session {
  return {
    id: "ses_1",
    projectId: "prj_1",
    title: "改写开头",
    profileId: "llm_1",
    limits: { maxModelTurns: 20, toolTimeoutMs: 30000, breakerThreshold: 3, loopThreshold: 3, maxOutputTokens: 2048, tokenBudget: 100000 },
    archived: false,
    createdAt: "2026-11-22T11:00:00Z",
    updatedAt: "2026-11-22T11:00:00Z",
    ...over,
  };
}

export function sessionView(over: Partial<SessionView> = {}): SessionView {
  return {
    session: session(),
    status: "idle",
    mode: "default",
    lastSequence: 0,
    queued: [],
    messagesHash: "sha256:0",
    messageCount: 0,
    inputTokens: 0,
    outputTokens: 0,
    ...over,
  };
}

export function profile(over: Partial<LlmProfile> = {}): LlmProfile {
  return {
    id: "llm_1",
    name: "Fake",
    provider: "openai-compatible",
    baseUrl: "http://127.0.0.1:9/v1",
    model: "fake-model",
    timeoutS: 60,
    contextWindow: 8000,
    contextWindowOrigin: "person",
    keyRequired: false,
    supportsJsonSchema: false,
    schemaForm: "responseFormat",
    toolLoading: "all",
    isDefault: true,
    health: "ok",
    createdAt: "2026-11-20T00:00:00Z",
    updatedAt: "2026-11-20T00:00:00Z",
    ...over,
  };
}

const BASE = "第一段。\n\n第二段。\n\n第三段。\n";
const PROPOSED = "第一段，改了。\n\n第二段。\n\n第三段，也改了。\n";

export function hunk(id: string, oldStart: number, oldText: string, newText: string): ProposalHunk {
  return {
    id,
    contentHash: `sha256:${id}`,
    oldStart,
    oldLen: 1,
    newStart: oldStart,
    newLen: 1,
    oldText,
    newText,
    display: {
      oldStart: oldStart + 1,
      oldLen: 1,
      newStart: oldStart + 1,
      newLen: 1,
      lines: [
        { kind: "delete", oldLine: oldStart + 1, newLine: null, segments: [{ text: oldText.trimEnd(), emphasized: false }] },
        { kind: "insert", oldLine: null, newLine: oldStart + 1, segments: [{ text: newText.trimEnd(), emphasized: true }] },
      ],
    },
  };
}

export function proposal(over: Partial<Proposal> = {}): Proposal {
  return {
    id: "prp_1",
    projectId: "prj_1",
    kind: "source_patch",
    target: { type: "source" },
    base: { head: 1, revision: 3, textHash: "sha256:base" },
    summary: "改两段",
    hunks: [hunk("h1", 0, "第一段。\n", "第一段，改了。\n"), hunk("h2", 4, "第三段。\n", "第三段，也改了。\n")],
    payload: { type: "text", baseText: BASE, proposedText: PROPOSED },
    findings: [],
    newFindings: [],
    origin: { sessionId: "ses_1", model: "fake-model", profileId: "llm_1", promptVersion: "1", promptLayers: [] },
    status: "proposed",
    acceptedHunks: [],
    rejectedHunks: [],
    createdAt: "2026-11-22T11:30:00Z",
    updatedAt: "2026-11-22T11:30:00Z",
    ...over,
  };
}

export function view(over: Partial<ProposalView> = {}): ProposalView {
  return { ...proposal(), stale: false, basedOnStaged: false, ...over };
}

export const compactionStarted = (trigger: "manual" | "auto" | "reactive" = "auto"): Body => ({
  kind: "compaction_started",
  payload: { trigger, estimatedTokens: 26000, contextWindow: 32768 },
});
export const compactionFailed = (consecutive: number, message = "The model's summary broke the schema."): Body => ({
  kind: "compaction_failed",
  payload: { trigger: "auto", consecutive, message, inputTokens: 0, outputTokens: 0 },
});
export const compactBoundary = (): Body => ({
  kind: "compact_boundary",
  payload: {
    trigger: "manual",
    mode: "summarized",
    summary: {
      summary: "我们把三个步骤改短了，结尾加了行动号召。",
      user_intent: "一篇适合公众号的写作计划",
      accepted_changes: [{ proposal_id: "prp_1", version: 2 }],
      rejected_directions: [{ direction: "用“最佳”这类词", reason: "绝对化用语" }],
      open_tasks: ["改标题"],
      active_artifacts: [],
      source_refs: [],
      next_step_hint: "给标题三个候选",
    },
    summaryText: "# Earlier conversation (summarised; the full log is kept)\n我们把三个步骤改短了。\n",
    keptMessages: 2,
    compactedMessages: 12,
    pinnedInstructions: [],
    tokensBefore: 26000,
    tokensAfter: 3000,
    note: "Earlier conversation summarised",
    inputTokens: 2000,
    outputTokens: 200,
  },
});
export const contextWarning = (percent: number, compactAtPercent?: number): Body => ({
  kind: "context_warning",
  payload: { estimatedTokens: 23000, contextWindow: 32768, percent, ...(compactAtPercent !== undefined ? { compactAtPercent } : {}) },
});
