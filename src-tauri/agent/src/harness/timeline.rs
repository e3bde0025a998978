//! A session's timeline: the drafting panel's view of its event log. [`fold`] turns
//! logged events into what the panel shows — messages, tool steps with their states,
//! decisions, answers, mode changes, turn ends worth a line, compaction boundaries and
//! failures, context warnings — and the state around them (the prompt waiting for the
//! person, the mode, the context estimate, the tokens, what is queued). Pure, and the
//! only fold of the log for the screen: the UI draws these items (`session.timeline`)
//! instead of folding the log a second time, so a reload rebuilds the same screen.
//! Live-only events (sequence 0: the streamed pieces of an answer) are not folded: they
//! belong to the one streaming message.
//!
//! Every item records the sequence of the last event that changed it (`changedAt`), so a
//! reader that holds the fold up to sequence `n` asks for the items changed since `n`
//! and replaces them by key ([`Timeline::changed_since`]). Items are only ever added
//! or changed, never removed.
//!
//! The parts: [`items`](TimelineItem) (what the timeline holds), `fold` (an event at a
//! time into it) and `live` (the patch each event makes for a reader of the stream).

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod fixtures;
mod fold;
mod items;
mod live;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

pub use fold::{fold, fold_all, proposal_ids_in};
pub use items::{
    step_state, ApprovalPrompt, Compacting, CompactionFailure, ContextEstimate, KeyProblem, QuestionPrompt, RetryTask, StepState, Timeline, TimelineItem, TimelineState,
};
pub use live::{LiveFeed, TextAppend, TimelinePatch};
