//! "Always allow" rules: a person's standing approval of one tool, within a scope (the
//! session it was made in, its project, or every project of the workspace) and for the
//! inputs an argument pattern matches.
//!
//! A rule is made only from a permission prompt the person answered, only for a tool
//! that offers it ([`ToolDefinition::offers_always_allow`]: never `apply_proposal`,
//! a metadata change, a plan, a permission request, nor anything destructive or of
//! high risk), and it only turns the *tool's own* ask into an allow: a deny, plan mode
//! and a workspace rule that asks still win (`permission::decide`). [`matches`] is the
//! one matcher: the engine's decision and the prompt's "would have matched" preview
//! both call it, so the preview is exactly what the rule allows (a property test holds
//! the two together).
//!
//! A pattern holds only what the prompt showed: pinned ids (`proposalId`) and `*`
//! globs, never a text field's content, so a rule carries no draft text or secret.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tools::ToolDefinition;
use crate::model::Timestamp;
use crate::store::{Kind, Record};

/// How far a rule reaches, from the narrowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AllowScope {
    /// The drafting session (or run) the rule was made in.
    Session,
    /// The project the rule was made in.
    Project,
    /// Every project of the workspace.
    Workspace,
}

impl AllowScope {
    pub const ALL: [AllowScope; 3] = [AllowScope::Session, AllowScope::Project, AllowScope::Workspace];

    pub fn as_str(self) -> &'static str {
        match self {
            AllowScope::Session => "session",
            AllowScope::Project => "project",
            AllowScope::Workspace => "workspace",
        }
    }
}

/// A stored "always allow" rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowRule {
    /// `rul_…`.
    pub id: String,
    pub workspace_id: String,
    pub tool: String,
    pub scope: AllowScope,
    /// Input field → glob (`*` any run of characters, `\*` a star); empty: any input.
    pub pattern: BTreeMap<String, String>,
    /// Where it was made: the project and the session (or run) id.
    pub project_id: String,
    pub owner_id: String,
    /// The approval request it was made from.
    pub request_id: String,
    pub created_by: String,
    pub created_at: Timestamp,
    /// Calls it allowed, and when it last did; written with the call's decision event.
    #[serde(default)]
    pub allowed_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_allowed_at: Option<Timestamp>,
}

/// The meta-tree prefix of the rules: `allow_rule/<id>`.
pub const META_ALLOW_RULES: &[u8] = b"allow_rule/";

impl AllowRule {
    pub fn key_for(id: &str) -> Vec<u8> {
        let mut key = META_ALLOW_RULES.to_vec();
        key.extend_from_slice(id.as_bytes());
        key
    }
}

impl Record for AllowRule {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        Self::key_for(&self.id)
    }
}

/// What "always allow" would store for a prompt, carried by the prompt's event: the
/// tool and the pattern; the person picks the scope when answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowOffer {
    pub tool: String,
    pub pattern: BTreeMap<String, String>,
}

impl AllowOffer {
    /// The offer for a call of `tool` with this normalized input, when the tool offers one.
    pub fn for_call(tool: &ToolDefinition, input: &Value) -> Option<AllowOffer> {
        tool.offers_always_allow().then(|| AllowOffer { tool: tool.name.clone(), pattern: offered_pattern(input) })
    }
}

/// Where a call happened, for the matcher.
#[derive(Debug, Clone, Copy)]
pub struct CallPlace<'a> {
    pub workspace_id: &'a str,
    pub project_id: &'a str,
    /// The session or run id.
    pub owner_id: &'a str,
}

/// True when `rule` covers a call of `tool` with this normalized input at this place.
/// The engine's decision and the prompt's preview both use it.
pub fn matches(rule: &AllowRule, tool: &ToolDefinition, input: &Value, place: CallPlace<'_>) -> bool {
    if rule.tool != tool.name || !tool.offers_always_allow() || rule.workspace_id != place.workspace_id {
        return false;
    }
    let in_scope = match rule.scope {
        AllowScope::Session => rule.owner_id == place.owner_id && rule.project_id == place.project_id,
        AllowScope::Project => rule.project_id == place.project_id,
        AllowScope::Workspace => true,
    };
    in_scope && rule.pattern.iter().all(|(field, glob)| input.get(field).is_some_and(|value| glob_matches(glob, &field_text(value))))
}

/// A field's value as the pattern sees it: a string as itself, anything else as its
/// compact JSON.
fn field_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A tool call the log holds, placed where it ran; what the preview matches.
#[derive(Debug, Clone, PartialEq)]
pub struct PastCall {
    pub tool: String,
    /// The normalized input (as the engine decided it).
    pub input: Value,
    pub workspace_id: String,
    pub project_id: String,
    pub owner_id: String,
    pub at: Timestamp,
}

/// The calls of a log (its assistant messages' tool calls), normalized as the engine
/// normalizes them. `project_of` places a log whose events predate the envelope's
/// project (its session's project); a call that cannot be placed is left out.
pub fn past_calls<'a>(events: impl IntoIterator<Item = &'a super::Event>, workspace_id: &str, project_of: impl Fn(&str) -> Option<String>) -> Vec<PastCall> {
    let mut out = Vec::new();
    for event in events {
        let super::EventBody::AssistantMessage { tool_calls, .. } = &event.body else { continue };
        let Some(owner_id) = event.session_id.as_deref().or(event.run_id.as_deref()) else { continue };
        let Some(project_id) = event.project_id.as_deref().map(str::to_owned).or_else(|| project_of(owner_id)) else { continue };
        let workspace = event.workspace_id.as_deref().unwrap_or(workspace_id);
        for call in tool_calls {
            let raw = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
            // Unparseable arguments never reached a decision: nothing could allow them.
            let Ok(input) = serde_json::from_str::<Value>(raw) else { continue };
            out.push(PastCall {
                tool: call.name.clone(),
                input: super::tools::normalize(&input),
                workspace_id: workspace.to_owned(),
                project_id: project_id.clone(),
                owner_id: owner_id.to_owned(),
                at: event.created_at,
            });
        }
    }
    out
}

/// The calls `rule` would have allowed, by the engine's own matcher.
pub fn would_have_matched<'a, 'd>(rule: &AllowRule, tool_of: impl Fn(&str) -> Option<&'d ToolDefinition>, calls: &'a [PastCall]) -> Vec<&'a PastCall> {
    calls
        .iter()
        .filter(|call| {
            tool_of(&call.tool)
                .is_some_and(|tool| matches(rule, tool, &call.input, CallPlace { workspace_id: &call.workspace_id, project_id: &call.project_id, owner_id: &call.owner_id }))
        })
        .collect()
}

/// The fields of an input a listing may show: the pinned ids, never text.
pub fn shown_fields(input: &Value) -> BTreeMap<String, String> {
    PINNED_FIELDS.iter().filter_map(|field| input.get(*field).map(|value| ((*field).to_owned(), field_text(value)))).collect()
}

/// Top-level input fields an offered rule pins to the call's value: the container a
/// call works in. Everything else (text, labels, notes) is left open, so a rule is
/// useful beyond the one call and holds no text of the draft.
const PINNED_FIELDS: &[&str] = &["proposalId", "platform"];

/// The pattern "always allow" would store for this call: the pinned fields present in
/// the input, exactly (glob-escaped).
pub fn offered_pattern(input: &Value) -> BTreeMap<String, String> {
    PINNED_FIELDS.iter().filter_map(|field| input.get(*field).map(|value| ((*field).to_owned(), escape(&field_text(value))))).collect()
}

/// `text` as a glob matching exactly itself.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '*' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Star,
    Char(char),
}

fn tokens(glob: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => out.push(Token::Star),
            '\\' => out.push(Token::Char(chars.next().unwrap_or('\\'))),
            other => out.push(Token::Char(other)),
        }
    }
    out
}

/// `*`-only globs (with `\` escapes): the classic linear backtracking match. Written
/// here rather than taken from a glob crate because those match paths (`/` and `**`
/// rules, character classes) and a rule's pattern is plain text with one wildcard.
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let pattern = tokens(glob);
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(Token::Char(c)) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            Some(Token::Star) => {
                star = Some((p, t));
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|tok| *tok == Token::Star)
}

/// True when glob `narrow` matches only texts `wide` matches — decided safely: the same
/// glob, or `wide` is all stars.
fn glob_within(narrow: &str, wide: &str) -> bool {
    narrow == wide || tokens(wide).iter().all(|t| *t == Token::Star)
}

/// True when `(scope, pattern)` covers no call that `rule` does not: a scope no wider
/// and every field of the old pattern kept within its old glob (fields may be added).
pub fn is_narrowing(rule: &AllowRule, scope: AllowScope, pattern: &BTreeMap<String, String>) -> bool {
    scope <= rule.scope && rule.pattern.iter().all(|(field, wide)| pattern.get(field).is_some_and(|narrow| glob_within(narrow, wide)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_stars_and_escapes() {
        for (glob, text, expected) in [
            ("*", "", true),
            ("*", "anything", true),
            ("prp_1", "prp_1", true),
            ("prp_1", "prp_12", false),
            ("prp_*", "prp_12", true),
            ("*_1", "prp_1", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("a\\*", "a*", true),
            ("a\\*", "ab", false),
            ("", "", true),
            ("", "x", false),
        ] {
            assert_eq!(glob_matches(glob, text), expected, "{glob} ~ {text}");
        }
        assert!(glob_matches(&escape("a*b\\c"), "a*b\\c"));
        assert!(!glob_matches(&escape("a*b"), "aXb"));
    }

    #[test]
    fn an_offer_pins_only_container_ids() {
        let input = serde_json::json!({"proposalId": "prp_1", "itemId": "item_2", "note": "secret-ish text"});
        assert_eq!(offered_pattern(&input), BTreeMap::from([("proposalId".to_owned(), "prp_1".to_owned())]));
        assert!(offered_pattern(&serde_json::json!({"label": "before"})).is_empty());
    }
}
