//! Memory: what a workspace or a project keeps across sessions ("this brand avoids
//! clickbait", "this account writes in a professional tone").
//!
//! - Items are the person's (added in Settings or the panel: confirmed at once) or the
//!   model's (`propose_memory`: proposed, and model-visible only once the person
//!   confirms). Editable and deletable; kept in the `memory` tree under
//!   `scope_id 0x00 memory_id`.
//! - Habits are derived from accepted work, never stored: platforms whose drafts the
//!   person accepted at least twice, the typical length of accepted versions, and the
//!   reasons the person gave when rejecting proposals. Each names where it came from
//!   (proposal or version ids); removing one stores a dismissal.
//! - [`for_context`]: the confirmed items of the workspace and the project, then the
//!   habits, within [`CONTEXT_BUDGET_TOKENS`]; what does not fit is counted, not cut.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::llm::estimate_tokens;
use crate::model::{Platform, Timestamp, VersionOrigin};
use crate::proposals::{ProposalStatus, Target};
use crate::store::{keys, Batch, Kind, Record, Store};

/// The longest memory item, in characters.
pub const MAX_MEMORY_CHARS: usize = 500;
/// The tokens memory may take in the pinned context of a model call.
pub const CONTEXT_BUDGET_TOKENS: u64 = 800;
/// Accepted drafts for a platform before it counts as preferred.
const PREFERRED_PLATFORM_ACCEPTS: usize = 2;
/// Accepted AI versions before their length counts as typical.
const TYPICAL_LENGTH_VERSIONS: usize = 2;
/// The most rejection reasons shown as habits (the newest).
const MAX_REJECTED_STYLES: usize = 5;

/// Where a memory item applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum MemoryScope {
    /// Every project of the workspace.
    Workspace,
    /// One project.
    #[serde(rename_all = "camelCase")]
    Project { project_id: String },
}

/// Whether the model sees an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryStatus {
    /// Proposed by the model; waits for the person.
    Proposed,
    /// The person's, or confirmed by them: in every later model call's context.
    Confirmed,
}

/// Who wrote an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl Record for MemoryItem {
    const KIND: Kind = Kind::Memory;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.scope_id, &self.id)
    }
}

/// A habit the person removed; it stays removed while the same evidence holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HabitDismissal {
    pub habit_id: String,
    pub dismissed_at: Timestamp,
}

/// Dismissals live in the meta tree under this prefix (the memory tree holds items
/// only, so it scans as one record type).
pub const META_DISMISSED_HABITS: &[u8] = b"habit_dismissed/";

impl Record for HabitDismissal {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        let mut key = META_DISMISSED_HABITS.to_vec();
        key.extend_from_slice(self.habit_id.as_bytes());
        key
    }
}

/// What a habit is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HabitKind {
    PreferredPlatform,
    TypicalLength,
    RejectedStyle,
}

/// A habit learned from accepted work, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// The items of a scope, oldest first.
pub fn list(store: &Store, scope_id: &str) -> Result<Vec<MemoryItem>, ApiError> {
    Ok(store.scan::<MemoryItem>(&keys::project_prefix(scope_id))?)
}

/// An item by id (a scan of the small memory tree). Errors: NOT_FOUND.
pub fn find(store: &Store, memory_id: &str) -> Result<MemoryItem, ApiError> {
    store
        .scan::<MemoryItem>(b"")
        .map_err(ApiError::from)
        .and_then(|items| items.into_iter().find(|m| m.id == memory_id).ok_or_else(|| ApiError::not_found("memory item", memory_id)))
}

/// Checks a text for an item. Errors: VALIDATION (empty, too long).
pub fn check_text(text: &str) -> Result<String, ApiError> {
    crate::error::required_text("text", text, MAX_MEMORY_CHARS)
}

/// Stages a new item.
pub fn stage_add(batch: &mut Batch, item: &MemoryItem) -> Result<(), ApiError> {
    batch.put(item)?;
    Ok(())
}

fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    hex::encode(&digest[..6])
}

/// The habits learnt from the workspace's accepted work, without the dismissed ones.
pub fn habits(store: &Store) -> Result<Vec<Habit>, ApiError> {
    let dismissed: Vec<String> = store.scan::<HabitDismissal>(META_DISMISSED_HABITS)?.into_iter().map(|d| d.habit_id).collect();
    let proposals = store.scan::<crate::proposals::Proposal>(b"")?;
    let accepted: Vec<&crate::proposals::Proposal> = proposals.iter().filter(|p| matches!(p.status, ProposalStatus::Accepted | ProposalStatus::PartiallyAccepted)).collect();
    let mut out = Vec::new();
    for platform in Platform::ALL {
        let sources: Vec<String> = accepted.iter().filter(|p| p.target == Target::Draft { platform }).map(|p| p.id.clone()).collect();
        if sources.len() >= PREFERRED_PLATFORM_ACCEPTS {
            out.push(Habit {
                id: format!("platform:{}", platform.as_str()),
                kind: HabitKind::PreferredPlatform,
                text: format!("The person often accepts drafts for {} ({} accepted).", platform.as_str(), sources.len()),
                sources,
            });
        }
    }
    let versions = store.scan::<crate::model::Version>(b"")?;
    let mut ai: Vec<(usize, String)> = versions.iter().filter(|v| matches!(v.origin, VersionOrigin::AiProposal { .. })).map(|v| (v.source.chars().count(), v.id.clone())).collect();
    if ai.len() >= TYPICAL_LENGTH_VERSIONS {
        ai.sort();
        let median = ai[ai.len() / 2].0;
        out.push(Habit {
            id: "length:source".to_owned(),
            kind: HabitKind::TypicalLength,
            text: format!("Accepted AI versions are typically about {median} characters long ({} versions).", ai.len()),
            sources: ai.into_iter().map(|(_, id)| id).collect(),
        });
    }
    let mut constraints = store.scan::<crate::proposals::apply::Constraint>(b"")?;
    constraints.sort_by_key(|c| std::cmp::Reverse(c.created_at));
    let mut seen: Vec<String> = Vec::new();
    for constraint in constraints {
        let text = constraint.text.trim().to_owned();
        if text.is_empty() || seen.contains(&text) {
            continue;
        }
        seen.push(text.clone());
        if seen.len() > MAX_REJECTED_STYLES {
            break;
        }
        out.push(Habit {
            id: format!("rejected:{}", short_hash(&text)),
            kind: HabitKind::RejectedStyle,
            text: format!("The person rejected work because: {text}"),
            sources: vec![constraint.proposal_id.clone()],
        });
    }
    out.retain(|h| !dismissed.contains(&h.id));
    Ok(out)
}

/// Memory as the model reads it: the confirmed items of the project, then of the
/// workspace (newest first), then the habits, as long as they fit `budget` tokens.
/// Returns the lines and how many were left out.
pub fn for_context(store: &Store, workspace_id: &str, project_id: &str, budget: u64) -> Result<(Vec<String>, usize), ApiError> {
    let mut candidates: Vec<String> = Vec::new();
    for (scope_id, label) in [(project_id, "project"), (workspace_id, "workspace")] {
        let mut items: Vec<MemoryItem> = list(store, scope_id)?.into_iter().filter(|m| m.status == MemoryStatus::Confirmed).collect();
        items.reverse();
        candidates.extend(items.into_iter().map(|m| format!("[{label}] {}", m.text)));
    }
    candidates.extend(habits(store)?.into_iter().map(|h| format!("[habit] {}", h.text)));
    let mut used = 0;
    let mut lines = Vec::new();
    let mut left_out = 0;
    for line in candidates {
        let tokens = estimate_tokens(&line) + 2;
        if used + tokens > budget {
            left_out += 1;
            continue;
        }
        used += tokens;
        lines.push(line);
    }
    Ok((lines, left_out))
}
