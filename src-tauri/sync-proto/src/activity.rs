//! The AI origin detail of an accepted version and the team's AI activity rows that
//! `GET /v1/ai-activity` pages.

use serde::{Deserialize, Serialize};

use crate::control_character;

/// A server that lists this in `features` keeps each version's AI origin detail
/// ([`PushVersion::ai`](crate::PushVersion::ai)) apart from the version (it never goes out with a pull) and
/// answers `GET /v1/ai-activity` (owners: the workspace; editors: their own rows). An
/// app sends the detail only to such a server, and only while the workspace policy's
/// `shareActivity` is on; an older server refuses fields it does not know, and an
/// older app never sends one.
pub const FEATURE_AI_ACTIVITY: &str = "aiActivity";

/// Through what an AI change was accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AiThrough {
    /// A person accepted it in a drafting session's review.
    #[serde(rename_all = "camelCase")]
    DraftingSession { session_id: String },
    /// A person applied an optimize run's package.
    #[serde(rename_all = "camelCase")]
    OptimizeRun { run_id: String },
    /// The assistant applied it with `apply_proposal` after the person approved.
    #[serde(rename_all = "camelCase")]
    ApplyProposal {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approval_request_id: Option<String>,
    },
    /// Outside a session or run (through the API).
    Other,
}

/// How an accepted version came from AI, as it travels with the version when the
/// workspace shares AI activity: who accepted it, which model and provider host, which
/// prompt layers (their names and versions), which proposal and how many hunks, and
/// through what. Never a prompt, a transcript, a context, a key or a profile's URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiOrigin {
    /// The person who accepted (for `apply_proposal`, who approved), as their app names them.
    pub accepted_by: String,
    /// Unix milliseconds of the accept.
    pub accepted_at: u64,
    /// The model id.
    pub model: String,
    /// The provider's host (no scheme, port or path); absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_host: Option<String>,
    /// The prompt version of the call that proposed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
    /// Every prompt layer of that call (name and version), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_layers: Vec<String>,
    pub proposal_id: String,
    /// The hunks accepted.
    pub n_hunks: u32,
    /// The hunks the proposal had, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_hunks_total: Option<u32>,
    pub through: AiThrough,
}

/// The most prompt layers an [`AiOrigin`] names, and the longest text of any of its fields.
pub const MAX_AI_LAYERS: usize = 50;
pub const MAX_AI_TEXT: usize = 200;

impl AiOrigin {
    /// Why a server refuses the detail (the field and the words), or None.
    pub fn invalid(&self) -> Option<(&'static str, String)> {
        let through_ids: Vec<&String> = match &self.through {
            AiThrough::DraftingSession { session_id } => vec![session_id],
            AiThrough::OptimizeRun { run_id } => vec![run_id],
            AiThrough::ApplyProposal { session_id, approval_request_id } => session_id.iter().chain(approval_request_id).collect(),
            AiThrough::Other => Vec::new(),
        };
        let texts = [("acceptedBy", Some(&self.accepted_by)), ("model", Some(&self.model)), ("proposalId", Some(&self.proposal_id))];
        for (field, text) in texts.into_iter().chain([("providerHost", self.provider_host.as_ref()), ("promptVersion", self.prompt_version.as_ref())]) {
            let Some(text) = text else { continue };
            let required = matches!(field, "acceptedBy" | "model" | "proposalId");
            if (required && text.trim().is_empty()) || text.chars().count() > MAX_AI_TEXT || control_character(text).is_some() {
                return Some((field, format!("{field} is 1–{MAX_AI_TEXT} characters without control characters.")));
            }
        }
        if self.prompt_layers.len() > MAX_AI_LAYERS || self.prompt_layers.iter().chain(through_ids).any(|t| t.chars().count() > MAX_AI_TEXT || control_character(t).is_some()) {
            return Some(("promptLayers", format!("At most {MAX_AI_LAYERS} prompt layers and ids of at most {MAX_AI_TEXT} characters without control characters.")));
        }
        None
    }
}

/// One row of `GET /v1/ai-activity`: an accepted AI version as the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiActivityEntry {
    pub project_id: String,
    /// The project's head title on the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_title: Option<String>,
    /// The version's number on the server.
    pub number: u32,
    pub client_id: String,
    pub cursor: u64,
    /// The member who pushed it, as the server knows them.
    pub member_id: String,
    pub pushed_by: String,
    pub ai: AiOrigin,
}

/// `GET /v1/ai-activity?project=&person=&model=&since=&until=&limit=`: newest first
/// (by the accept's time). `person` is a member's name; `since`/`until` Unix
/// milliseconds, `[since, until)`; `limit` 1–1000 (200 unless asked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiActivityResponse {
    pub entries: Vec<AiActivityEntry>,
    /// More rows matched than the limit let through.
    pub truncated: bool,
}

/// The filters of `GET /v1/ai-activity`, as both storages apply them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AiActivityQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Default and largest page of `GET /v1/ai-activity`.
pub const AI_ACTIVITY_DEFAULT_LIMIT: usize = 200;
pub const AI_ACTIVITY_MAX_LIMIT: usize = 1_000;

impl AiActivityQuery {
    /// Whether `entry` passes the filters (the member filter of an editor apart).
    pub fn matches(&self, entry: &AiActivityEntry) -> bool {
        self.project.as_ref().is_none_or(|p| &entry.project_id == p)
            && self.person.as_ref().is_none_or(|p| &entry.pushed_by == p)
            && self.model.as_ref().is_none_or(|m| &entry.ai.model == m)
            && self.since.is_none_or(|s| entry.ai.accepted_at >= s)
            && self.until.is_none_or(|u| entry.ai.accepted_at < u)
    }

    /// The page size asked for, within bounds.
    pub fn page(&self) -> usize {
        self.limit.unwrap_or(AI_ACTIVITY_DEFAULT_LIMIT).clamp(1, AI_ACTIVITY_MAX_LIMIT)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn ai_origin() -> AiOrigin {
        AiOrigin {
            accepted_by: "贝拉".into(),
            accepted_at: 1_795_000_000_000,
            model: "scripted-1".into(),
            provider_host: Some("127.0.0.1".into()),
            prompt_version: Some("drafting@3".into()),
            prompt_layers: vec!["system@3".into(), "brand@1".into()],
            proposal_id: "prp_1".into(),
            n_hunks: 2,
            n_hunks_total: Some(3),
            through: AiThrough::DraftingSession { session_id: "ses_1".into() },
        }
    }

    #[test]
    fn an_ai_detail_is_bounded_and_the_query_filters_it() {
        assert_eq!(ai_origin().invalid(), None);
        for (bad, field) in [
            (AiOrigin { model: " ".into(), ..ai_origin() }, "model"),
            (AiOrigin { accepted_by: "a\u{0}b".into(), ..ai_origin() }, "acceptedBy"),
            (AiOrigin { provider_host: Some("h".repeat(MAX_AI_TEXT + 1)), ..ai_origin() }, "providerHost"),
            (AiOrigin { prompt_layers: vec!["l".into(); MAX_AI_LAYERS + 1], ..ai_origin() }, "promptLayers"),
            (AiOrigin { through: AiThrough::OptimizeRun { run_id: "r\u{1b}".into() }, ..ai_origin() }, "promptLayers"),
        ] {
            assert_eq!(bad.invalid().map(|(f, _)| f), Some(field), "{bad:?}");
        }
        let entry = AiActivityEntry {
            project_id: "prj_1".into(),
            project_title: None,
            number: 1,
            client_id: "ver_1".into(),
            cursor: 1,
            member_id: "mem_b".into(),
            pushed_by: "贝拉".into(),
            ai: ai_origin(),
        };
        let at = entry.ai.accepted_at;
        assert!(AiActivityQuery::default().matches(&entry));
        assert!(AiActivityQuery {
            project: Some("prj_1".into()),
            person: Some("贝拉".into()),
            model: Some("scripted-1".into()),
            since: Some(at),
            until: Some(at + 1),
            limit: None
        }
        .matches(&entry));
        for miss in [
            AiActivityQuery { project: Some("prj_2".into()), ..Default::default() },
            AiActivityQuery { person: Some("amy".into()), ..Default::default() },
            AiActivityQuery { model: Some("other".into()), ..Default::default() },
            AiActivityQuery { since: Some(at + 1), ..Default::default() },
            AiActivityQuery { until: Some(at), ..Default::default() },
        ] {
            assert!(!miss.matches(&entry), "{miss:?}");
        }
        assert_eq!(
            (AiActivityQuery { limit: Some(0), ..Default::default() }.page(), AiActivityQuery { limit: Some(5000), ..Default::default() }.page()),
            (1, AI_ACTIVITY_MAX_LIMIT)
        );
    }
}
