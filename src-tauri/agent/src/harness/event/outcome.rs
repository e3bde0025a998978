//! How the steps of a session end: a tool call's status (what the model reads and the
//! UI words) and the reason a turn ended (what the person is told and whether a
//! command-line `send` failed).

use serde::{Deserialize, Serialize};

/// How a tool call ended, as the model and the UI see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Success,
    UnknownTool,
    SchemaViolation,
    PermissionDenied,
    Timeout,
    Interrupted,
    ToolError,
    /// Stopped by the loop detector (same tool, same input, three times in a turn).
    LoopDetected,
    /// Never answered: the user moved on, or the process restarted.
    Cancelled,
    /// The model asked for an action reserved for the person (accepting or rejecting a
    /// proposal): it is not a tool, and never will be one for the model.
    ToolForbidden,
    /// Not run: the session is in plan mode (read and propose only). Logs written
    /// before this status say `permission_denied`.
    Blocked,
    /// Not run: the person denied the approval. Logs written before this status say
    /// `permission_denied` (which now means a rule denied it).
    Denied,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model finished its answer.
    Completed,
    /// Waiting for the user to approve or deny a tool call.
    BlockedOnApproval,
    /// Waiting for the user to answer a question.
    BlockedOnQuestion,
    Interrupted,
    /// The model-turn limit per user message tripped.
    MaxModelTurns,
    /// The session's token or cost budget is spent.
    BudgetExceeded,
    /// Three consecutive failures of the same kind.
    CircuitBreaker,
    /// The same tool with the same input three times in one turn.
    LoopDetected,
    /// Three proposals of one turn rewrote the same passage with small differences:
    /// the person is asked how to go on.
    ChurnDetected,
    ContextTooLong,
    /// The fixed part of every request (system prompt and tool definitions) with the
    /// reply's reserve does not fit the model's window: no compaction was tried.
    FixedContextTooLong,
    /// The pins take more than their share of the model's window: nothing was sent;
    /// the person unpins something (or chooses a larger window).
    PinsTooLong,
    /// The model call failed (provider error after retries).
    ModelError,
    /// The process stopped in the middle of the turn.
    Restarted,
    /// A bug or a storage failure.
    EngineFault,
}

impl TurnEndReason {
    /// True when the turn ended on an error rather than with an answer, a question or
    /// a request for approval (or the person stopping it): a command-line `send` that
    /// ends so has failed.
    pub fn failed(self) -> bool {
        match self {
            TurnEndReason::Completed | TurnEndReason::BlockedOnApproval | TurnEndReason::BlockedOnQuestion | TurnEndReason::Interrupted | TurnEndReason::ChurnDetected => false,
            TurnEndReason::MaxModelTurns
            | TurnEndReason::BudgetExceeded
            | TurnEndReason::CircuitBreaker
            | TurnEndReason::LoopDetected
            | TurnEndReason::ContextTooLong
            | TurnEndReason::FixedContextTooLong
            | TurnEndReason::PinsTooLong
            | TurnEndReason::ModelError
            | TurnEndReason::Restarted
            | TurnEndReason::EngineFault => true,
        }
    }

    /// The reason in a few English words.
    pub fn describe(self) -> &'static str {
        match self {
            TurnEndReason::Completed => "completed",
            TurnEndReason::BlockedOnApproval => "waiting for an approval",
            TurnEndReason::BlockedOnQuestion => "waiting for an answer",
            TurnEndReason::Interrupted => "interrupted",
            TurnEndReason::MaxModelTurns => "the model-turn limit for one message was reached",
            TurnEndReason::BudgetExceeded => "the session's budget is spent",
            TurnEndReason::CircuitBreaker => "the same failure happened three times in a row",
            TurnEndReason::LoopDetected => "the model repeated the same tool call",
            TurnEndReason::ChurnDetected => "the proposals kept rewriting the same passage",
            TurnEndReason::ContextTooLong => "the conversation no longer fits the model's context window",
            TurnEndReason::FixedContextTooLong => "the instructions and tools alone do not fit the model's context window",
            TurnEndReason::PinsTooLong => "the pinned items take more than their share of the model's context window",
            TurnEndReason::ModelError => "the model call failed",
            TurnEndReason::Restarted => "the process stopped in the middle of the turn",
            TurnEndReason::EngineFault => "an internal failure",
        }
    }
}
