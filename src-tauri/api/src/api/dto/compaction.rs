//! The wire form of compaction: what started it and how it replaced the conversation,
//! its summary, the session's pins and a profile's context settings (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The person asked (`session.compact`).
    Manual,
    /// The threshold, or a request that would not fit.
    Auto,
    /// The server answered CONTEXT_TOO_LONG.
    Reactive,
}

/// How the earlier conversation was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CompactionMode {
    /// By a validated summary.
    Summarized,
    /// By a truncation note (summarising failed three times, or the cooldown).
    Truncated,
}

/// Where a pin came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PinSource {
    /// `session.pin`.
    Person,
    /// An explicit instruction of the person, carried out of compacted conversation.
    Instruction,
}

/// A text in the pinned layer of every call, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    pub id: String,
    pub text: String,
    pub source: PinSource,
}

/// When a session compacts by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum CompactThreshold {
    /// At `percent` of the context window (40–95).
    Auto { percent: u8 },
    /// Only when the person asks (or when a request would not fit at all).
    Manual,
}

/// A profile's context settings: the calibration of the token estimate against the
/// usage its server reports, and its compaction threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProfileContext {
    pub profile_id: String,
    /// Reported input tokens ÷ estimated input tokens (1.0 until calibrated).
    pub ratio: f64,
    /// Calls the ratio was learnt from.
    pub samples: u32,
    /// `None`: the default (80%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub threshold: Option<CompactThreshold>,
    /// The server's tokenizer count the ratio was seeded from at profile test (`None`:
    /// learnt from usage alone, or not calibrated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seed: Option<CalibrationSeed>,
}

/// A calibration read from the server's own tokenizer: it counted a fixed sample
/// (the one of [`crate::llm::window::TOKENIZER_SAMPLES`] it undercounts most) as
/// `server_tokens` where the estimate
/// says `estimated_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationSeed {
    pub endpoint: super::TokenizerEndpoint,
    pub server_tokens: u64,
    pub estimated_tokens: u64,
    pub at: crate::model::Timestamp,
}

/// An accepted proposal and the version it made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AcceptedChange {
    pub proposal_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub version: Option<u64>,
}

/// A direction the person turned down, with their reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RejectedDirection {
    pub direction: String,
    #[serde(default)]
    pub reason: String,
}

/// The validated output of a summarising call (field names as the model writes them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CompactionSummary {
    pub summary: String,
    #[serde(default)]
    pub user_intent: String,
    #[serde(default)]
    pub accepted_changes: Vec<AcceptedChange>,
    #[serde(default)]
    pub rejected_directions: Vec<RejectedDirection>,
    #[serde(default)]
    pub open_tasks: Vec<String>,
    #[serde(default)]
    pub active_artifacts: Vec<String>,
    #[serde(default)]
    pub source_refs: Vec<String>,
    #[serde(default)]
    pub next_step_hint: String,
}

impl From<&crate::harness::compaction::CompactionTrigger> for CompactionTrigger {
    fn from(record: &crate::harness::compaction::CompactionTrigger) -> Self {
        match record {
            crate::harness::compaction::CompactionTrigger::Manual => Self::Manual,
            crate::harness::compaction::CompactionTrigger::Auto => Self::Auto,
            crate::harness::compaction::CompactionTrigger::Reactive => Self::Reactive,
        }
    }
}

impl From<&crate::harness::compaction::CompactionMode> for CompactionMode {
    fn from(record: &crate::harness::compaction::CompactionMode) -> Self {
        match record {
            crate::harness::compaction::CompactionMode::Summarized => Self::Summarized,
            crate::harness::compaction::CompactionMode::Truncated => Self::Truncated,
        }
    }
}

impl From<&crate::harness::compaction::PinSource> for PinSource {
    fn from(record: &crate::harness::compaction::PinSource) -> Self {
        match record {
            crate::harness::compaction::PinSource::Person => Self::Person,
            crate::harness::compaction::PinSource::Instruction => Self::Instruction,
        }
    }
}

impl From<&crate::harness::compaction::Pin> for Pin {
    fn from(record: &crate::harness::compaction::Pin) -> Self {
        Pin { id: record.id.clone(), text: record.text.clone(), source: (&record.source).into() }
    }
}

impl From<&crate::harness::compaction::CompactThreshold> for CompactThreshold {
    fn from(record: &crate::harness::compaction::CompactThreshold) -> Self {
        match record {
            crate::harness::compaction::CompactThreshold::Auto { percent } => Self::Auto { percent: *percent },
            crate::harness::compaction::CompactThreshold::Manual => Self::Manual,
        }
    }
}

impl From<&crate::harness::compaction::ProfileContext> for ProfileContext {
    fn from(record: &crate::harness::compaction::ProfileContext) -> Self {
        ProfileContext {
            profile_id: record.profile_id.clone(),
            ratio: record.ratio,
            samples: record.samples,
            threshold: record.threshold.as_ref().map(Into::into),
            seed: record.seed.as_ref().map(Into::into),
        }
    }
}

impl From<&crate::harness::compaction::CalibrationSeed> for CalibrationSeed {
    fn from(record: &crate::harness::compaction::CalibrationSeed) -> Self {
        CalibrationSeed { endpoint: record.endpoint.into(), server_tokens: record.server_tokens, estimated_tokens: record.estimated_tokens, at: record.at }
    }
}

impl From<&crate::harness::compaction::AcceptedChange> for AcceptedChange {
    fn from(record: &crate::harness::compaction::AcceptedChange) -> Self {
        AcceptedChange { proposal_id: record.proposal_id.clone(), version: record.version }
    }
}

impl From<&crate::harness::compaction::RejectedDirection> for RejectedDirection {
    fn from(record: &crate::harness::compaction::RejectedDirection) -> Self {
        RejectedDirection { direction: record.direction.clone(), reason: record.reason.clone() }
    }
}

impl From<&crate::harness::compaction::CompactionSummary> for CompactionSummary {
    fn from(record: &crate::harness::compaction::CompactionSummary) -> Self {
        CompactionSummary {
            summary: record.summary.clone(),
            user_intent: record.user_intent.clone(),
            accepted_changes: record.accepted_changes.iter().map(Into::into).collect(),
            rejected_directions: record.rejected_directions.iter().map(Into::into).collect(),
            open_tasks: record.open_tasks.clone(),
            active_artifacts: record.active_artifacts.clone(),
            source_refs: record.source_refs.clone(),
            next_step_hint: record.next_step_hint.clone(),
        }
    }
}

impl From<CompactThreshold> for crate::harness::compaction::CompactThreshold {
    fn from(threshold: CompactThreshold) -> Self {
        match threshold {
            CompactThreshold::Auto { percent } => Self::Auto { percent },
            CompactThreshold::Manual => Self::Manual,
        }
    }
}

impl From<crate::harness::compaction::ProfileContext> for ProfileContext {
    fn from(record: crate::harness::compaction::ProfileContext) -> Self {
        (&record).into()
    }
}
