//! The values the events' payloads carry: how a tool call ended, why a turn ended,
//! who changed the intent and a context layer's estimate (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a tool call ended, as the model and the UI see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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

/// Who changed the session's intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum IntentSource {
    /// Read from the person's message.
    Message,
    /// Edited by the person in the panel.
    Person,
}

/// An estimate of one context layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LayerEstimate {
    pub layer: String,
    pub tokens: u64,
    /// True when the layer was shortened to fit.
    pub trimmed: bool,
}

impl From<&crate::harness::event::ToolStatus> for ToolStatus {
    fn from(record: &crate::harness::event::ToolStatus) -> Self {
        match record {
            crate::harness::event::ToolStatus::Success => Self::Success,
            crate::harness::event::ToolStatus::UnknownTool => Self::UnknownTool,
            crate::harness::event::ToolStatus::SchemaViolation => Self::SchemaViolation,
            crate::harness::event::ToolStatus::PermissionDenied => Self::PermissionDenied,
            crate::harness::event::ToolStatus::Timeout => Self::Timeout,
            crate::harness::event::ToolStatus::Interrupted => Self::Interrupted,
            crate::harness::event::ToolStatus::ToolError => Self::ToolError,
            crate::harness::event::ToolStatus::LoopDetected => Self::LoopDetected,
            crate::harness::event::ToolStatus::Cancelled => Self::Cancelled,
            crate::harness::event::ToolStatus::ToolForbidden => Self::ToolForbidden,
            crate::harness::event::ToolStatus::Blocked => Self::Blocked,
            crate::harness::event::ToolStatus::Denied => Self::Denied,
        }
    }
}

impl From<&crate::harness::event::TurnEndReason> for TurnEndReason {
    fn from(record: &crate::harness::event::TurnEndReason) -> Self {
        match record {
            crate::harness::event::TurnEndReason::Completed => Self::Completed,
            crate::harness::event::TurnEndReason::BlockedOnApproval => Self::BlockedOnApproval,
            crate::harness::event::TurnEndReason::BlockedOnQuestion => Self::BlockedOnQuestion,
            crate::harness::event::TurnEndReason::Interrupted => Self::Interrupted,
            crate::harness::event::TurnEndReason::MaxModelTurns => Self::MaxModelTurns,
            crate::harness::event::TurnEndReason::BudgetExceeded => Self::BudgetExceeded,
            crate::harness::event::TurnEndReason::CircuitBreaker => Self::CircuitBreaker,
            crate::harness::event::TurnEndReason::LoopDetected => Self::LoopDetected,
            crate::harness::event::TurnEndReason::ChurnDetected => Self::ChurnDetected,
            crate::harness::event::TurnEndReason::ContextTooLong => Self::ContextTooLong,
            crate::harness::event::TurnEndReason::FixedContextTooLong => Self::FixedContextTooLong,
            crate::harness::event::TurnEndReason::PinsTooLong => Self::PinsTooLong,
            crate::harness::event::TurnEndReason::ModelError => Self::ModelError,
            crate::harness::event::TurnEndReason::Restarted => Self::Restarted,
            crate::harness::event::TurnEndReason::EngineFault => Self::EngineFault,
        }
    }
}

impl From<&crate::harness::event::IntentSource> for IntentSource {
    fn from(record: &crate::harness::event::IntentSource) -> Self {
        match record {
            crate::harness::event::IntentSource::Message => Self::Message,
            crate::harness::event::IntentSource::Person => Self::Person,
        }
    }
}

impl From<&crate::harness::event::LayerEstimate> for LayerEstimate {
    fn from(record: &crate::harness::event::LayerEstimate) -> Self {
        LayerEstimate { layer: record.layer.clone(), tokens: record.tokens, trimmed: record.trimmed }
    }
}
