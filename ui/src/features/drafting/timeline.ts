// The AI panel draws the session's timeline as the engine folds it (`session.timeline`,
// and `TimelinePatch`es on the stream of a turn this window drives); nothing here folds
// the log. These are the names the panel's components use for the engine's types.

import type {
  ApprovalPrompt,
  ContextEstimate as EngineContextEstimate,
  QuestionPrompt,
  StepState as EngineStepState,
  TimelineItem,
  TimelineState,
} from "../../shared/api/generated";

export type Item = TimelineItem;
export type StepState = EngineStepState;
export type PendingApproval = ApprovalPrompt;
export type PendingQuestion = QuestionPrompt;
export type ContextEstimate = EngineContextEstimate;

/** What the panel holds of a session's timeline: the latest items (`earlier` more are
 * before them, read as the person scrolls up) and the state after the last event. */
export interface TimelineView extends TimelineState {
  items: Item[];
  earlier: number;
}

export const emptyTimeline: TimelineView = {
  items: [],
  earlier: 0,
  lastSequence: 0,
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
  streamingKey: null,
};

/** The leading sequence of an item's key (the event that made it). */
export function madeAt(key: string): number {
  return Number.parseInt(key, 10);
}
