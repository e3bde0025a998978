//! The wire form of memory items and of the habits learnt from accepted work (see
//! [`super`]). A habit's dismissal is stored only; it never reaches the wire.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::model::Timestamp;

/// Where a memory item applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum MemoryScope {
    /// Every project of the workspace.
    Workspace,
    /// One project.
    #[serde(rename_all = "camelCase")]
    Project { project_id: String },
}

/// Whether the model sees an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MemoryStatus {
    /// Proposed by the model; waits for the person.
    Proposed,
    /// The person's, or confirmed by them: in every later model call's context.
    Confirmed,
}

/// Who wrote an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum MemoryOrigin {
    Person,
    /// `propose_memory` in a session.
    #[serde(rename_all = "camelCase")]
    Model {
        session_id: String,
        tool_use_id: String,
    },
}

/// One memory item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryItem {
    pub id: String,
    pub scope: MemoryScope,
    /// The workspace id, or the project id: the key prefix.
    pub scope_id: String,
    pub text: String,
    pub status: MemoryStatus,
    pub origin: MemoryOrigin,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// What a habit is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HabitKind {
    PreferredPlatform,
    TypicalLength,
    RejectedStyle,
}

/// A habit learned from accepted work, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Habit {
    /// Stable for the same evidence kind (`platform:wechat`, `length:source`,
    /// `rejected:<hash>`).
    pub id: String,
    pub kind: HabitKind,
    /// As the model reads it.
    pub text: String,
    /// The proposals or versions it was learnt from.
    pub sources: Vec<String>,
}

impl From<&crate::memory::MemoryScope> for MemoryScope {
    fn from(record: &crate::memory::MemoryScope) -> Self {
        use crate::memory::MemoryScope as S;
        match record {
            S::Workspace => Self::Workspace,
            S::Project { project_id } => Self::Project { project_id: project_id.clone() },
        }
    }
}

impl From<crate::memory::MemoryStatus> for MemoryStatus {
    fn from(record: crate::memory::MemoryStatus) -> Self {
        use crate::memory::MemoryStatus as S;
        match record {
            S::Proposed => Self::Proposed,
            S::Confirmed => Self::Confirmed,
        }
    }
}

impl From<&crate::memory::MemoryOrigin> for MemoryOrigin {
    fn from(record: &crate::memory::MemoryOrigin) -> Self {
        use crate::memory::MemoryOrigin as O;
        match record {
            O::Person => Self::Person,
            O::Model { session_id, tool_use_id } => Self::Model { session_id: session_id.clone(), tool_use_id: tool_use_id.clone() },
        }
    }
}

impl From<&crate::memory::MemoryItem> for MemoryItem {
    fn from(record: &crate::memory::MemoryItem) -> Self {
        MemoryItem {
            id: record.id.clone(),
            scope: (&record.scope).into(),
            scope_id: record.scope_id.clone(),
            text: record.text.clone(),
            status: record.status.into(),
            origin: (&record.origin).into(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::memory::MemoryItem> for MemoryItem {
    fn from(record: crate::memory::MemoryItem) -> Self {
        MemoryItem::from(&record)
    }
}

impl From<crate::memory::HabitKind> for HabitKind {
    fn from(record: crate::memory::HabitKind) -> Self {
        use crate::memory::HabitKind as K;
        match record {
            K::PreferredPlatform => Self::PreferredPlatform,
            K::TypicalLength => Self::TypicalLength,
            K::RejectedStyle => Self::RejectedStyle,
        }
    }
}

impl From<&crate::memory::Habit> for Habit {
    fn from(record: &crate::memory::Habit) -> Self {
        Habit { id: record.id.clone(), kind: record.kind.into(), text: record.text.clone(), sources: record.sources.clone() }
    }
}
