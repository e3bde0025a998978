//! The wire types between an Inkstone client (core's `sync` module) and
//! `inkstone-server`. Serde only: no IO, no framework. JSON, camelCase.
//!
//! A client pushes a project's accepted versions with the base it last saw (the
//! server's head for that project); the server numbers them after its head. A stale
//! base is `409` with the versions the client has not seen. Each push carries a dedupe
//! key (`Idempotency-Key`): the same key with the same payload returns the original
//! result; with another payload it is `422`; while the first is still in flight, `409`.

use serde::{Deserialize, Serialize};

mod activity;
mod perf;
mod policy;

pub use activity::*;
pub use perf::*;
pub use policy::*;

/// The header that carries a push's dedupe key.
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
/// The most versions one push may carry.
pub const MAX_VERSIONS_PER_PUSH: usize = 100;
/// The largest request body, in bytes.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// The most bytes of versions a server puts in one answer (a page of changes, the
/// newer versions of a 409): it stops before the version that would pass this, and
/// sends a single version larger than this alone. Servers before it paged by count
/// only.
pub const MAX_PAGE_BYTES: usize = 4 * 1024 * 1024;
/// The longest answer a client reads; it stops reading there. One version fits: a
/// push body is at most [`MAX_BODY_BYTES`], and a version as the server answers it
/// adds its numbers and names (well under [`ANSWER_ENVELOPE_BYTES`]).
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// Room for what an answer holds around its versions.
pub const ANSWER_ENVELOPE_BYTES: usize = 64 * 1024;
const _: () = assert!(MAX_BODY_BYTES + ANSWER_ENVELOPE_BYTES <= MAX_ANSWER_BYTES && MAX_PAGE_BYTES + ANSWER_ENVELOPE_BYTES <= MAX_ANSWER_BYTES);

/// A server that lists this in `features` ([`WorkspaceInfo`], [`ChangesResponse`])
/// keeps a version's [`PushVersion::origin`] and returns it on pull. A client sends an
/// origin only to such a server: an older one refuses fields it does not know.
pub const FEATURE_VERSION_ORIGIN: &str = "versionOrigin";

/// How the client made a version, as [`PushVersion::origin`] says it: only the kind,
/// never ids, model or profile names (nothing secret or private travels in it).
pub mod origin {
    pub const MANUAL: &str = "manual";
    pub const RESTORE: &str = "restore";
    pub const AI_PROPOSAL: &str = "aiProposal";
    pub const CHECKPOINT: &str = "checkpoint";
    pub const SYNC_RESOLUTION: &str = "syncResolution";

    /// True for an origin of the wire's form: 1–32 ASCII letters (a later client may
    /// send a kind this build does not know; it is kept as it is).
    pub fn well_formed(origin: &str) -> bool {
        (1..=32).contains(&origin.len()) && origin.bytes().all(|b| b.is_ascii_alphabetic())
    }
}

/// The error code of a push refused for text the protocol does not carry: a C0 control
/// character other than tab, line feed and carriage return (U+0000 among them, which
/// PostgreSQL cannot store in text). Both storages refuse it with `400`, so a client
/// marks the version as needing attention instead of retrying it.
pub const CODE_CONTROL_CHARACTER: &str = "CONTROL_CHARACTER";
/// The error code of a push that reuses a version id (`clientId`) the workspace holds
/// already: `422`, never a silent skip (a client recognises its own versions by id).
pub const CODE_VERSION_ID_TAKEN: &str = "VERSION_ID_TAKEN";

/// The first character of `text` that the protocol refuses (a C0 control other than
/// tab, LF and CR), with its index in characters; None when there is none. The app's
/// API and the server apply the same rule.
pub fn control_character(text: &str) -> Option<(usize, char)> {
    text.chars().enumerate().find(|(_, c)| (*c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
}

/// A member's role in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Owner => "owner",
        }
    }
}

/// One version as a client pushes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushVersion {
    /// The client's id of the version (kept, so a client recognises its own versions).
    pub client_id: String,
    pub title: String,
    pub source: String,
    pub author: String,
    #[serde(default)]
    pub message: Option<String>,
    /// `sha256:` + hex of the title, a NUL and the source (as the app computes it).
    pub content_hash: String,
    /// RFC 3339.
    pub created_at: String,
    /// How the version was made (see [`origin`]), sent only to a server that lists
    /// [`FEATURE_VERSION_ORIGIN`]; absent from older clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The AI origin detail of an accepted AI change, sent only to a server that lists
    /// [`FEATURE_AI_ACTIVITY`] while the workspace shares AI activity; absent otherwise
    /// (and from older clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai: Option<AiOrigin>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushRequest {
    /// The server's head of this project that the client last saw (0: none).
    pub base: u32,
    pub versions: Vec<PushVersion>,
}

/// A version as the server holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerVersion {
    pub project_id: String,
    /// 1, 2, 3, ... per project on the server, without gaps.
    pub number: u32,
    pub client_id: String,
    pub title: String,
    pub source: String,
    pub author: String,
    pub message: Option<String>,
    pub content_hash: String,
    pub created_at: String,
    /// The member who pushed it.
    pub pushed_by: String,
    /// The workspace's change cursor of this version.
    pub cursor: u64,
    /// How the pushing client made it (see [`origin`]); absent when it did not say
    /// (an older client or server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushResponse {
    pub project_id: String,
    /// The project's head after the push.
    pub head: u32,
    /// The numbers the server gave the pushed versions, in order.
    pub versions: Vec<PushedVersion>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushedVersion {
    pub client_id: String,
    pub number: u32,
    pub cursor: u64,
}

/// The body of a `409` for a stale base: what the client has not seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleBase {
    pub project_id: String,
    pub base: u32,
    pub head: u32,
    /// The server's versions after `base`, oldest first: at most one page of them
    /// ([`MAX_PAGE_BYTES`]; older servers sent all).
    pub newer: Vec<ServerVersion>,
    /// True when versions up to `head` were left out of `newer`: the client pulls them
    /// (`/v1/changes`) before it decides. Absent from older servers (they sent all).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangesResponse {
    /// Versions with a cursor above the one asked for, oldest first.
    pub versions: Vec<ServerVersion>,
    /// Ask again from here.
    pub cursor: u64,
    /// True when more changes wait beyond `cursor`.
    pub more: bool,
    /// What this server supports beyond the first protocol ([`FEATURE_VERSION_ORIGIN`]);
    /// empty from an older server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectHead {
    pub project_id: String,
    pub head: u32,
    /// The title of the head version.
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub id: String,
    pub name: String,
    pub role: Role,
}

/// A member as the membership list shows it: with their tokens' ids (never a token or
/// its hash), so an owner can revoke one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberEntry {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// Oldest first.
    #[serde(default)]
    pub tokens: Vec<TokenEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenEntry {
    pub token_id: String,
    pub revoked: bool,
    /// Unix milliseconds of the invite (none for a token issued before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
}

/// `GET /v1/members`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MembersResponse {
    pub members: Vec<MemberEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInfo {
    pub id: String,
    pub name: String,
    /// The member the token belongs to.
    pub me: Member,
    /// What this server supports beyond the first protocol ([`FEATURE_VERSION_ORIGIN`]);
    /// empty from an older server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InviteRequest {
    pub name: String,
    pub role: Role,
}

/// A new token: shown once; the server keeps only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedToken {
    pub token_id: String,
    pub member: Member,
    pub token: String,
}

/// Every error body: a stable code, a message and hints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub hints: Vec<String>,
    /// For a stale base, what the client has not seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<StaleBase>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    //! Old and new builds talk to each other: the origin and the features are optional
    //! both ways. The `Old*` types are the shapes before them, as older builds parse.
    use super::*;
    use crate::activity::tests::ai_origin;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct OldPushVersion {
        client_id: String,
        title: String,
        source: String,
        author: String,
        #[serde(default)]
        message: Option<String>,
        content_hash: String,
        created_at: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct OldServerVersion {
        project_id: String,
        number: u32,
        client_id: String,
        title: String,
        source: String,
        author: String,
        message: Option<String>,
        content_hash: String,
        created_at: String,
        pushed_by: String,
        cursor: u64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct OldChanges {
        versions: Vec<OldServerVersion>,
        cursor: u64,
        more: bool,
    }

    fn old_push_json() -> serde_json::Value {
        json!({"clientId": "ver_1", "title": "题", "source": "文", "author": "amy", "message": null, "contentHash": format!("sha256:{}", "a".repeat(64)), "createdAt": "2026-11-23T00:00:00Z"})
    }

    fn server_json(origin: Option<&str>) -> serde_json::Value {
        let mut v = json!({"projectId": "prj_1", "number": 2, "clientId": "ver_1", "title": "题", "source": "文", "author": "amy", "message": null,
            "contentHash": format!("sha256:{}", "a".repeat(64)), "createdAt": "2026-11-23T00:00:00Z", "pushedBy": "amy", "cursor": 7});
        if let Some(origin) = origin {
            v["origin"] = json!(origin);
        }
        v
    }

    #[test]
    fn an_old_clients_push_reads_without_an_origin_and_a_new_one_without_an_origin_is_the_old_bytes() {
        let new: PushVersion = serde_json::from_value(old_push_json()).unwrap();
        assert_eq!(new.origin, None);
        // Without an origin a new client writes exactly what an old one did: an old
        // server (which refuses unknown fields) takes it.
        assert_eq!(serde_json::to_value(&new).unwrap(), old_push_json());
        let _: OldPushVersion = serde_json::from_value(serde_json::to_value(&new).unwrap()).unwrap();
        // With one, an old server would refuse it: hence FEATURE_VERSION_ORIGIN.
        let with = PushVersion { origin: Some(origin::SYNC_RESOLUTION.into()), ..new };
        let sent = serde_json::to_value(&with).unwrap();
        assert_eq!(sent["origin"], "syncResolution");
        assert!(serde_json::from_value::<OldPushVersion>(sent.clone()).is_err());
        assert_eq!(serde_json::from_value::<PushVersion>(sent).unwrap(), with);
    }

    #[test]
    fn pulled_versions_and_features_read_both_ways() {
        // An old server's version and answers: no origin, no features.
        let old: ServerVersion = serde_json::from_value(server_json(None)).unwrap();
        assert_eq!(old.origin, None);
        let changes: ChangesResponse = serde_json::from_value(json!({"versions": [server_json(None)], "cursor": 7, "more": false})).unwrap();
        assert!(changes.features.is_empty());
        let info: WorkspaceInfo = serde_json::from_value(json!({"id": "w", "name": "团队", "me": {"id": "m", "name": "amy", "role": "editor"}})).unwrap();
        assert!(info.features.is_empty());
        // A new server's: an old client reads them, ignoring what it does not know.
        let new = ChangesResponse {
            versions: vec![serde_json::from_value(server_json(Some("syncResolution"))).unwrap()],
            cursor: 7,
            more: false,
            features: vec![FEATURE_VERSION_ORIGIN.into()],
        };
        assert_eq!(new.versions[0].origin.as_deref(), Some("syncResolution"));
        let old_client: OldChanges = serde_json::from_value(serde_json::to_value(&new).unwrap()).unwrap();
        assert_eq!(old_client.versions[0].number, 2);
        // A version without an origin is written as before.
        assert_eq!(serde_json::to_value(&old).unwrap(), server_json(None));
    }

    #[test]
    fn the_ai_detail_travels_only_when_sent_and_an_old_server_refuses_it() {
        // Without the detail a new client's push is the old bytes (an old server takes it).
        let new: PushVersion = serde_json::from_value(old_push_json()).unwrap();
        assert_eq!(new.ai, None);
        assert_eq!(serde_json::to_value(&new).unwrap(), old_push_json());
        // With it, an old server (unknown fields refused) would refuse the push: hence
        // FEATURE_AI_ACTIVITY; a new one reads it back whole.
        let with = PushVersion { ai: Some(ai_origin()), ..new };
        let sent = serde_json::to_value(&with).unwrap();
        assert_eq!(sent["ai"]["through"], json!({"type": "draftingSession", "sessionId": "ses_1"}));
        assert!(serde_json::from_value::<OldPushVersion>(sent.clone()).is_err());
        assert_eq!(serde_json::from_value::<PushVersion>(sent.clone()).unwrap(), with);
        // Nothing but the listed fields: no prompt, transcript or key has a place in it.
        let fields: Vec<&String> = sent["ai"].as_object().unwrap().keys().collect();
        assert_eq!(
            fields,
            ["acceptedAt", "acceptedBy", "model", "nHunks", "nHunksTotal", "promptLayers", "promptVersion", "proposalId", "providerHost", "through"].iter().collect::<Vec<_>>()
        );
        // A later client's extra field is ignored rather than refused.
        let mut later = sent["ai"].clone();
        later["laterField"] = json!(1);
        assert_eq!(serde_json::from_value::<AiOrigin>(later).unwrap(), ai_origin());
    }

    #[test]
    fn control_characters_but_tab_and_line_breaks_are_refused() {
        assert_eq!(control_character("标题\t正文\r\n"), None);
        assert_eq!(control_character("ab\u{0}c"), Some((2, '\u{0}')));
        assert_eq!(control_character("文\u{1b}[0m"), Some((1, '\u{1b}')));
        assert_eq!(control_character("\u{7f}\u{85}"), None, "only C0 controls");
    }

    #[test]
    fn a_409_that_left_versions_out_says_so_and_old_and_new_builds_read_each_other() {
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct OldStaleBase {
            project_id: String,
            base: u32,
            head: u32,
            newer: Vec<OldServerVersion>,
        }
        let partial = StaleBase { project_id: "prj_1".into(), base: 1, head: 9, newer: vec![serde_json::from_value(server_json(None)).unwrap()], more: true };
        let sent = serde_json::to_value(&partial).unwrap();
        assert_eq!(sent["more"], true);
        // An older client reads it (and takes the page it got; its next pull brings the rest).
        let old: OldStaleBase = serde_json::from_value(sent).unwrap();
        assert_eq!((old.head, old.newer.len()), (9, 1));
        // An older server's 409 (all of them, no `more`) reads as complete.
        let from_old: StaleBase = serde_json::from_value(json!({"projectId": "prj_1", "base": 1, "head": 2, "newer": [server_json(None)]})).unwrap();
        assert!(!from_old.more);
        // A complete one is written as before.
        assert!(serde_json::to_value(StaleBase { more: false, ..partial }).unwrap().get("more").is_none());
    }

    #[test]
    fn an_origin_is_a_short_word() {
        for ok in [origin::MANUAL, origin::RESTORE, origin::AI_PROPOSAL, origin::CHECKPOINT, origin::SYNC_RESOLUTION, "laterKind"] {
            assert!(origin::well_formed(ok), "{ok}");
        }
        for bad in ["", "sk-secret-123", "has space", &"a".repeat(33), "名"] {
            assert!(!origin::well_formed(bad), "{bad}");
        }
    }
}
