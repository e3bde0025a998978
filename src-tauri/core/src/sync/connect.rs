//! Linking this data dir to a workspace server: the URL check, the token in the
//! keychain, the projects that were never on a server, and how a server's failure
//! reads in the API's terms.

use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::outbox::JobState;
use crate::store::{Batch, Durability, Record};

use super::status::retried;
use super::*;

/// The keychain account of the server token of local workspace `workspace_id`.
pub fn token_account(workspace_id: &str) -> String {
    format!("sync:{workspace_id}")
}

/// The connection, if this data dir is linked to a server.
pub fn connection(kernel: &Kernel) -> Result<Option<Connection>, ApiError> {
    Ok(kernel.store().get::<Connection>(META_CONNECTION)?)
}

/// The server token: the process's `INKSTONE_WORKSPACE_TOKEN` first (never stored),
/// then the keychain's. Errors: CONFLICT when the keychain lost the token;
/// KEYCHAIN_UNAVAILABLE (its hints name `INKSTONE_WORKSPACE_TOKEN`).
pub fn token(kernel: &Kernel) -> Result<ApiKey, ApiError> {
    if let Some(token) = &kernel.config().env_workspace_token {
        return Ok(token.clone());
    }
    let workspace = kernel.workspace()?;
    kernel.config().secrets.get(&token_account(&workspace.id)).map_err(crate::llm::keychain::workspace_token_error)?.ok_or_else(|| {
        ApiError::new(ErrorCode::Conflict, "The workspace server's token is not in the keychain.")
            .hint("reconnect", "Connect again with the invite token (Settings → Workspace).")
            .hint("use_env_token", "Or set INKSTONE_WORKSPACE_TOKEN for the process (it is never saved).")
    })
}

/// Checks and normalises a server URL: http or https, a host, no credentials, query
/// or fragment; no trailing slash. Errors: VALIDATION on `serverUrl`.
pub fn normalize_server_url(input: &str) -> Result<String, ApiError> {
    let url = input.trim().trim_end_matches('/');
    let bad = |why: &str| {
        ApiError::validation("serverUrl", format!("The server URL is not usable: {why}."))
            .hint("server_url_form", "Give it as https://host[:port], as the server's operator printed it.")
    };
    let Some((scheme, rest)) = url.split_once("://") else { return Err(bad("it needs http:// or https://")) };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(bad("the scheme must be http or https"));
    }
    if rest.is_empty() || rest.starts_with('/') || rest.starts_with(':') || rest.contains(['@', '?', '#', ' ']) || rest.chars().any(char::is_control) || url.len() > 500 {
        return Err(bad("it must be a host (and port), without credentials, query or spaces"));
    }
    Ok(format!("{scheme}://{rest}"))
}

/// What `connect` needs.
#[derive(Debug)]
pub struct Connect<'a> {
    pub server_url: &'a str,
    /// None: the process's `INKSTONE_WORKSPACE_TOKEN`.
    pub token: Option<&'a ApiKey>,
    /// The person confirmed sending the token unencrypted to another machine.
    pub allow_plain_http: bool,
    /// Also send the versions of every project that never reached a server
    /// ([`local_only`]), as if each had been saved after connecting.
    pub upload_existing: bool,
    /// The person's name on their versions, comments and activity (the workspace's
    /// display name). None keeps a name the person chose; a name never chosen (the
    /// first-run default) becomes the member's name on the server.
    pub display_name: Option<&'a str>,
}

/// The projects that have never been on a workspace server — no link to a server's
/// history and no delivery job — with their versions that would be sent (accepted ones:
/// no autosnapshot, nothing pulled), oldest first. Connecting with `upload_existing`
/// sends them; the status counts them.
pub fn local_only(kernel: &Kernel) -> Result<Vec<(String, Vec<crate::model::Version>)>, ApiError> {
    let store = kernel.store();
    let linked: std::collections::BTreeSet<String> = store.scan::<ProjectLink>(b"")?.into_iter().map(|l| l.project_id).collect();
    let queued: std::collections::BTreeSet<String> = jobs(kernel)?.into_iter().map(|j| j.project_id).collect();
    let mut out = Vec::new();
    // Summaries, not projects: the status asks on every poll, and only ids and heads
    // are needed here, not every project's text.
    for project in store.scan::<crate::model::ProjectSummary>(b"")? {
        if project.head == 0 || linked.contains(&project.id) || queued.contains(&project.id) {
            continue;
        }
        let versions: Vec<crate::model::Version> = crate::project::versions::list(store, &project.id)?.into_iter().filter(|v| crate::outbox::delivered(&v.origin)).collect();
        if !versions.is_empty() {
            out.push((project.id, versions));
        }
    }
    Ok(out)
}

/// Links this data dir to a workspace server: checks the token with the server, keeps
/// it in the keychain (sled gets its fingerprint) and marks the workspace linked, so
/// every later version has a delivery job.
///
/// A reconnect to the same workspace (a new token after the old one was refused)
/// sends the failed jobs again.
///
/// Errors: VALIDATION (the URL; a plain http:// URL to another machine without
/// `allow_plain_http`; the token's form; `sync.not_a_server` when something other
/// than a workspace server answers); OFFLINE when the server cannot be reached or
/// answer (`sync.unreachable`, `sync.server_unavailable`); PERMISSION_DENIED when it
/// refuses the token (`sync.token_refused`); CONFLICT when already linked to another
/// workspace; KEYCHAIN_UNAVAILABLE.
pub fn connect(kernel: &Kernel, runtime: &Runtime, request: Connect<'_>) -> Result<Connection, ApiError> {
    let server_url = normalize_server_url(request.server_url)?;
    let env_token = kernel.config().env_workspace_token.as_ref();
    let Some(given) = request.token.or(env_token) else {
        return Err(ApiError::validation("token", "Connecting needs the invite token.")
            .hint("use_env_token", "Give the invite token, or set INKSTONE_WORKSPACE_TOKEN for the process (it is never saved)."));
    };
    let raw = given.expose().trim();
    let display_name = request.display_name.map(|name| crate::error::required_text("displayName", name, 100)).transpose()?;
    if raw.is_empty() || raw.chars().count() > 4096 || raw.chars().any(char::is_control) {
        return Err(ApiError::validation("token", "The invite token must be 1–4096 characters without line breaks."));
    }
    if crate::llm::profile::key_would_travel_in_clear(&server_url) && !request.allow_plain_http {
        return Err(ApiError::validation("serverUrl", "Not connected: this plain http:// URL would send your token unencrypted to another machine.")
            .hint("plain_http", "Use https:// for a server on another machine.")
            .hint("allow_plain_http", "To connect anyway (a trusted local network), confirm with allowPlainHttp."));
    }
    let token = ApiKey::new(raw);
    let transport = runtime.transport(kernel)?;
    let info = transport.workspace(&server_url, &token).map_err(server_failed)?;
    // The workspace's policy comes with the connection (a server that has one).
    let has_policy = super::policy::keeps_policy(&info.features);
    let fetched_policy = if has_policy { transport.policy(&server_url, &token).ok() } else { None };
    let _guard = kernel.write_lock();
    let mut workspace = kernel.workspace()?;
    let previous = members::previous(kernel)?;
    let mut existing = connection(kernel)?;
    let mut batch = Batch::new();
    if existing.is_none() {
        // Connected before and disconnected: the same workspace continues where it
        // stopped; another one starts afresh, but never with versions still owed to
        // the first.
        if let Some(previous) = previous {
            if previous.connection.remote_workspace_id == info.id {
                existing = Some(previous.connection);
            } else {
                let owed = jobs(kernel)?.iter().filter(|j| owed(&j.state)).count();
                if owed > 0 {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        format!(
                            "{owed} versions of this data folder have not reached the workspace \"{}\" yet; a token of another workspace cannot take them.",
                            previous.connection.remote_workspace_name
                        ),
                    )
                    .hint_with(
                        "reconnect_previous",
                        format!("Connect to {} again and resume sync to deliver them first.", previous.connection.server_url),
                        &[("url", &previous.connection.server_url)],
                    )
                    .hint("other_data_dir", "Use another data folder for another team workspace."));
                }
                for link in kernel.store().scan::<ProjectLink>(b"")? {
                    batch.delete::<ProjectLink>(link.key());
                }
            }
            batch.delete::<members::PreviousConnection>(members::META_PREVIOUS.to_vec());
        }
    }
    if let Some(existing) = &existing {
        if existing.remote_workspace_id != info.id {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("This data folder is linked to the workspace \"{}\"; a token of another workspace cannot replace it.", existing.remote_workspace_name),
            )
            .hint("other_data_dir", "Use another data folder for another team workspace."));
        }
    }
    // The process's own token stays in the process; any other goes to the keychain.
    if env_token.is_none_or(|env| env.expose().trim() != token.expose()) {
        kernel.config().secrets.set(&token_account(&workspace.id), &token).map_err(crate::llm::keychain::workspace_token_error)?;
    }
    let connection = Connection {
        server_url: server_url.clone(),
        remote_workspace_id: info.id,
        remote_workspace_name: info.name,
        member_id: info.me.id,
        member_name: info.me.name,
        role: info.me.role.as_str().to_owned(),
        token_fingerprint: token.fingerprint(),
        cursor: existing.as_ref().map_or(0, |c| c.cursor),
        connected_at: kernel.now(),
        server_takes_origin: info.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_VERSION_ORIGIN),
        server_keeps_performance: info.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_PERFORMANCE_DATA),
        server_takes_ai: info.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_AI_ACTIVITY),
        server_keeps_account_days: info.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_ACCOUNT_SNAPSHOTS),
    };
    // A reconnect (often with a new token, after the old one was refused) sends what
    // failed again: the same pushes, under the same keys.
    let policy = kernel.config().sync.retry;
    for job in jobs(kernel)? {
        if job.workspace_id == workspace.id && job.state == JobState::Failed {
            batch.put(&retried(&job, kernel, &policy)?)?;
        }
    }
    workspace.server_url = Some(server_url);
    // Who the person is to colleagues: the name they give, else (when they never
    // chose one) the name the workspace knows them by.
    match display_name {
        Some(name) => workspace.display_name = name,
        None if workspace.display_name == kernel.config().default_display_name => workspace.display_name.clone_from(&connection.member_name),
        None => {}
    }
    if request.upload_existing {
        for (_, versions) in local_only(kernel)? {
            for version in &versions {
                crate::outbox::stage_delivery(&mut batch, &workspace, version, kernel.new_id("job"))?;
            }
        }
    }
    super::policy::stage(&mut batch, has_policy, fetched_policy.map(|record| super::policy::cached(record, &connection, kernel.now())))?;
    batch.put(&workspace)?.put(&connection)?;
    batch.delete::<LastFailure>(META_LAST_FAILURE.to_vec());
    kernel.store().apply(batch, Durability::Durable)?;
    // The last cycle's failure was the old connection's; the server just answered.
    // A cycle still running on the old connection does not undo this (the ticket).
    runtime.set_health(|health| *health = Health { cycled: true, last_contact_at: Some(kernel.now()), ..Health::default() });
    runtime.wake();
    Ok(connection)
}

/// Why the workspace server gave no usable answer (to `connect`, or to a membership
/// request), in the API's terms: each cause its own code and wording; what the server
/// or the parser said goes in `details`, never in the headline.
pub(crate) fn server_failed(failure: transport::Failure) -> ApiError {
    use transport::Failure;
    let details = |failure: &Failure| match failure {
        Failure::Network(detail) => serde_json::json!({"reason": detail}),
        Failure::Status { status, code, message, .. } => serde_json::json!({"status": status, "code": code, "reason": message}),
    };
    match &failure {
        Failure::Network(detail) => ApiError::new(ErrorCode::Offline, format!("The workspace server could not be reached ({detail})."))
            .problem("sync.unreachable", &[])
            .hint("check_server", "Check the URL and that the server is running, then try again.")
            .details(details(&failure)),
        Failure::Status { status: 401 | 403, .. } => ApiError::new(ErrorCode::PermissionDenied, "The workspace server refused this token.")
            .problem("sync.token_refused", &[])
            .hint("new_invite", "Ask a workspace owner for a new invite token.")
            .details(details(&failure)),
        // Busy or failing (also a proxy's error page in front of a server that is down).
        Failure::Status { status: 429 | 500..=599, .. } => ApiError::new(ErrorCode::Offline, "The workspace server cannot answer right now.")
            .problem("sync.server_unavailable", &[])
            .hint("server_retry_later", "Try again in a moment; if it keeps failing, tell the server's operator.")
            .details(details(&failure)),
        // Something answered, but not in the protocol: another web server on that
        // address, or (JSON of another shape) another service or version.
        Failure::Status { code, .. } if code == transport::NOT_THE_PROTOCOL || code == transport::BAD_ANSWER => {
            let mut error = ApiError::new(ErrorCode::Validation, "The address answers, but not as an Inkstone workspace server.")
                .problem("sync.not_a_server", &[])
                .hint("check_server_url", "Check the URL and the port: they should be the workspace server's, as its operator gave them.");
            if code == transport::BAD_ANSWER {
                error = error.hint("match_versions", "If it is the workspace server, update Inkstone and the server to matching versions.");
            }
            let mut details = details(&failure);
            details["field"] = "serverUrl".into();
            error.details(details)
        }
        Failure::Status { .. } => ApiError::new(ErrorCode::Conflict, "The workspace server refused the request; nothing was changed.")
            .problem("sync.server_refused", &[])
            .hint("match_versions", "If it is the workspace server, update Inkstone and the server to matching versions.")
            .details(details(&failure)),
    }
}
