//! The application facade: every operation the desktop shell, the CLI and `serve` can
//! call, behind one dispatcher, [`Engine::call`], and one error type, [`ApiError`].
//!
//! Methods are named `resource.verb`. Parameters are camelCase JSON; unknown fields are
//! refused, so a typo is a VALIDATION error naming the field rather than a silent
//! no-op. Every write happens under one write lock (the store is single-process, so
//! this makes check-then-write sequences, such as the CONFLICT check of
//! `project.update`, atomic) and as one store transaction.

mod activity;
mod allow_rules;
mod comments;
mod data;
mod drafts;
pub mod dto;
mod help;
mod library;
mod llm;
mod media;
mod memory;
mod optimize;
mod performance;
mod pipeline;
mod projects;
mod proposals;
mod proposals_session;
mod search;
mod session;
mod sync;
mod timeline;
pub mod typescript;
mod update;
mod usage;
mod versions;
mod workspace;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::error::{bounded_text, required_text};
pub use crate::error::{ApiError, ErrorCode, Hint};
pub use activity::*;
pub use allow_rules::*;
pub use comments::*;
pub use data::*;
pub use drafts::*;
pub use help::ProblemReport;
pub use library::*;
pub use llm::*;
pub use media::*;
pub use memory::*;
pub use optimize::*;
pub use performance::*;
pub use pipeline::*;
pub use projects::*;
pub use proposals::*;
pub use proposals_session::*;
pub use search::*;
pub use session::*;
pub use sync::*;
pub use timeline::{page as timeline_page, SessionTimelineParams, SessionTimelineResult, SessionWatchEnd, SessionWatchParams, SessionWatchResult};
pub use update::*;
pub use usage::*;
pub use versions::*;
pub use workspace::*;

pub use crate::engine::Engine;

/// Progress of a long call, sent on streams (`api_stream`, SSE, NDJSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProgressEvent {
    /// What is happening, as a stable id (`export.projects`, `import.versions`, ...).
    pub phase: String,
    pub done: u64,
    pub total: u64,
}

/// A message on a stream: progress while the call runs. The call's result or error
/// ends the stream and is delivered by the transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", content = "data", rename_all = "camelCase")]
pub enum StreamEvent {
    Progress(ProgressEvent),
    /// A harness event of a session (live deltas carry sequence 0).
    Harness(Box<dto::Event>),
    /// What that event changed in the session's timeline (sent after it).
    Timeline(Box<dto::TimelinePatch>),
    /// The sync status, as `sync.status` answers it (`sync.watch` sends it on change).
    SyncStatus(Box<SyncStatus>),
}

impl Engine {
    /// Calls `method` with JSON `params` (`null` counts as `{}`).
    pub fn call(&self, method: &str, params: Value) -> Result<Value, ApiError> {
        self.call_stream(method, params, &mut |_| {})
    }

    /// Like [`Engine::call`], sending progress of long calls to `on_event`.
    pub fn call_stream(&self, method: &str, params: Value, on_event: &mut dyn FnMut(StreamEvent)) -> Result<Value, ApiError> {
        self.call_stream_while(method, params, &mut |event| {
            on_event(event);
            true
        })
    }

    /// Like [`Engine::call_stream`], where `on_event` answers whether anyone still
    /// listens: a subscription (`sync.watch`) ends when it answers `false`. A transport
    /// that can tell (a closed event stream, a closed window) calls this.
    pub fn call_stream_while(&self, method: &str, params: Value, on_event: &mut dyn FnMut(StreamEvent) -> bool) -> Result<Value, ApiError> {
        let result = check_ids(method, &params).and_then(|()| dispatch(self, method, params, on_event));
        if let Err(error) = &result {
            match error.code {
                ErrorCode::Internal | ErrorCode::Io | ErrorCode::StoreCorrupt => {
                    tracing::error!(method, code = ?error.code, message = %error.message, "call failed")
                }
                _ => tracing::debug!(method, code = ?error.code, "call refused"),
            }
        }
        result
    }
}

/// Parameters that name a record, with the prefix of its kind. Each one given (not
/// null, not empty: an empty `brandProfileId` clears it) must be an id of that kind
/// ([`crate::model::ids`]) before the method runs.
const ID_PARAMS: &[(&str, &str)] = &[
    ("projectId", "prj"),
    ("sessionId", "ses"),
    ("commentId", "cmt"),
    ("proposalId", "prp"),
    ("proposalIds", "prp"),
    ("runId", "run"),
    ("checkpointId", "chk"),
    ("conflictId", "cnf"),
    ("constraintId", "cns"),
    ("memoryId", "mem"),
    ("brandProfileId", "brd"),
    ("templateId", "tpl"),
    ("jobId", "job"),
    ("accountId", "acc"),
    ("publicationId", "pub"),
];

/// The kind of record `id` names in the methods whose parameter is a plain `id`.
fn plain_id_prefix(method: &str) -> Option<&'static str> {
    match method.split('.').next()? {
        "media" => Some("med"),
        "brandProfile" => Some("brd"),
        "template" => Some("tpl"),
        _ => None,
    }
}

/// Refuses a parameter that names a record by something that is not an id of its
/// kind: a VALIDATION error naming the field, before anything runs.
fn check_ids(method: &str, params: &Value) -> Result<(), ApiError> {
    let Some(object) = params.as_object() else { return Ok(()) };
    let prefix_of =
        |field: &str| ID_PARAMS.iter().find(|(name, _)| *name == field).map(|(_, prefix)| *prefix).or_else(|| (field == "id").then(|| plain_id_prefix(method)).flatten());
    for (field, value) in object {
        let Some(prefix) = prefix_of(field) else { continue };
        let ids: Vec<&str> = match value {
            Value::String(id) => vec![id.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        for id in ids.into_iter().filter(|id| !id.is_empty()) {
            if let Err(error) = crate::model::ids::check(id, Some(prefix)) {
                let shown: String = id.chars().take(100).collect();
                return Err(ApiError::validation(field, format!("`{field}`: {error}.")).problem("ids.not_an_id", &[("id", &shown)]));
            }
        }
    }
    Ok(())
}

fn parse_params<P: DeserializeOwned>(params: Value) -> Result<P, ApiError> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params };
    refuse_control_characters(&params, &mut String::new())?;
    serde_path_to_error::deserialize(params).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        // serde reports a missing field at the parent's path; name the field itself.
        let field = match inner.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()) {
            Some(missing) if path == "." => missing.to_owned(),
            Some(missing) => format!("{path}.{missing}"),
            None if path == "." => String::new(),
            None => path,
        };
        let message = if field.is_empty() { format!("Invalid parameters: {inner}") } else { format!("Invalid parameter `{field}`: {inner}") };
        ApiError::validation(&field, message).action("check_params", &[])
    })
}

/// One rule for text at every entry point: no C0 control character but tab, line feed
/// and carriage return (U+0000 cannot be stored by the workspace server's PostgreSQL,
/// and none of them is writing). Checked on the parameters before they are parsed, so
/// every method refuses it alike, naming the field (`path` is the JSON path so far).
fn refuse_control_characters(value: &Value, path: &mut String) -> Result<(), ApiError> {
    let refuse = |path: &str, text: &str, c: char| {
        let codepoint = format!("U+{:04X}", c as u32);
        let field = if path.is_empty() { text.to_owned() } else { path.to_owned() };
        ApiError::validation(&field, format!("`{field}` holds the control character {codepoint}; text may hold tabs and line breaks but no other control characters."))
            .problem("text.control_character", &[("field", &field), ("codepoint", &codepoint)])
    };
    match value {
        Value::String(text) => match inkstone_sync_proto::control_character(text) {
            Some((_, c)) => Err(refuse(path, "params", c)),
            None => Ok(()),
        },
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                refuse_control_characters(item, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Object(fields) => {
            for (name, item) in fields {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
                if let Some((_, c)) = inkstone_sync_proto::control_character(name) {
                    return Err(refuse(path, "params", c));
                }
                refuse_control_characters(item, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// A handler's answer in the method table's wire type: the identity for a type that is
/// its own wire form, the wire twin's `From` copy for a record (see [`dto`]).
fn wire<Record, Wire: From<Record>>(record: Record) -> Wire {
    Wire::from(record)
}

fn to_json<R: Serialize>(result: R) -> Result<Value, ApiError> {
    serde_json::to_value(result).map_err(|e| ApiError::internal(format!("result does not serialize: {e}")))
}

fn unknown_method(method: &str) -> ApiError {
    let mut close: Vec<&str> = METHODS.iter().copied().filter(|m| m.split('.').next() == method.split('.').next()).collect();
    close.truncate(6);
    let mut error = ApiError::new(ErrorCode::NotFound, format!("There is no API method `{method}`.")).details(serde_json::json!({ "resource": "method", "id": method }));
    error = if close.is_empty() {
        error.action("list_methods", &[])
    } else {
        let methods = close.join(", ");
        error.hint_with("similar_methods", format!("Methods of this resource: {methods}."), &[("methods", &methods)])
    };
    error
}

/// Declares the method table once: dispatch, the method list and the TypeScript
/// method map all come from it. A streaming method also names the one `StreamEvent`
/// variant it sends and that variant's payload type (`sends Progress(ProgressEvent)`),
/// which codegen turns into the UI's method-to-event map, and any it sends beside it
/// (`also Timeline(...)`, codegen's `StreamingAlso`).
macro_rules! api_methods {
    (
        plain { $( $name:literal => $module:ident :: $handler:ident ( $params:ty ) -> $result:ty ; )* }
        streaming { $( $sname:literal => $smodule:ident :: $shandler:ident ( $sparams:ty ) -> $sresult:ty , sends $svariant:ident ( $sevent:ty ) $( also $xvariant:ident ( $xevent:ty ) )* ; )* }
        subscriptions { $( $wname:literal => $wmodule:ident :: $whandler:ident ( $wparams:ty ) -> $wresult:ty , sends $wvariant:ident ( $wevent:ty ) ; )* }
    ) => {
        /// Every API method, in declaration order.
        pub const METHODS: &[&str] = &[$($name,)* $($sname,)* $($wname,)*];
        /// Methods that send events on a stream (each declares which, see `sends`).
        pub const STREAMING_METHODS: &[&str] = &[$($sname,)* $($wname,)*];
        /// Streaming methods that run until nobody listens (or the engine closes): their
        /// handler hears whether each event still had a listener.
        pub const SUBSCRIPTIONS: &[&str] = &[$($wname,)*];

        // A declared payload must be exactly what its variant carries: this fails to
        // compile when `sends Variant(Type)` names another type.
        $( const _: fn($sevent) -> StreamEvent = StreamEvent::$svariant; $( const _: fn($xevent) -> StreamEvent = StreamEvent::$xvariant; )* )*
        $( const _: fn($wevent) -> StreamEvent = StreamEvent::$wvariant; )*

        fn dispatch(engine: &Engine, method: &str, params: Value, on_event: &mut dyn FnMut(StreamEvent) -> bool) -> Result<Value, ApiError> {
            match method {
                $( $name => { let params: $params = parse_params(params)?; to_json::<$result>(wire($module::$handler(engine, params)?)) } )*
                $( $sname => {
                    let params: $sparams = parse_params(params)?;
                    // The UI trusts the declaration to type its callbacks; every test run
                    // checks that the handler keeps to it.
                    let mut declared_only = |event: StreamEvent| {
                        debug_assert!(matches!(event, StreamEvent::$svariant(_) $( | StreamEvent::$xvariant(_) )*), "{} sent an event it does not declare", $sname);
                        on_event(event);
                    };
                    to_json::<$sresult>(wire($smodule::$shandler(engine, params, &mut declared_only)?))
                } )*
                $( $wname => {
                    let params: $wparams = parse_params(params)?;
                    let mut declared_only = |event: StreamEvent| {
                        debug_assert!(matches!(event, StreamEvent::$wvariant(_)), "{} sent an event it does not declare", $wname);
                        on_event(event)
                    };
                    to_json::<$wresult>(wire($wmodule::$whandler(engine, params, &mut declared_only)?))
                } )*
                _ => Err(unknown_method(method)),
            }
        }

        fn method_signatures(cfg: &ts_rs::Config) -> Vec<(&'static str, String, String)> {
            use ts_rs::TS;
            vec![
                $( ($name, <$params as TS>::name(cfg), <$result as TS>::name(cfg)), )*
                $( ($sname, <$sparams as TS>::name(cfg), <$sresult as TS>::name(cfg)), )*
                $( ($wname, <$wparams as TS>::name(cfg), <$wresult as TS>::name(cfg)), )*
            ]
        }

        /// Each streaming method with the `StreamEvent` variant it sends and the
        /// TypeScript name of that variant's payload.
        fn stream_event_signatures(cfg: &ts_rs::Config) -> Vec<(&'static str, &'static str, String)> {
            use ts_rs::TS;
            vec![ $( ($sname, stringify!($svariant), <$sevent as TS>::name(cfg)), )* $( ($wname, stringify!($wvariant), <$wevent as TS>::name(cfg)), )* ]
        }

        /// The `StreamEvent`s a streaming method sends beside its own, as above.
        fn stream_also_signatures(cfg: &ts_rs::Config) -> Vec<(&'static str, &'static str, String)> {
            use ts_rs::TS;
            vec![ $( $( ($sname, stringify!($xvariant), <$xevent as TS>::name(cfg)), )* )* ]
        }

        fn visit_method_types(visitor: &mut impl ts_rs::TypeVisitor) {
            $( visitor.visit::<$params>(); visitor.visit::<$result>(); )*
            $( visitor.visit::<$sparams>(); visitor.visit::<$sresult>(); visitor.visit::<$sevent>(); $( visitor.visit::<$xevent>(); )* )*
            $( visitor.visit::<$wparams>(); visitor.visit::<$wresult>(); visitor.visit::<$wevent>(); )*
        }
    };
}

api_methods! {
    plain {
        "app.info" => workspace::app_info(Empty) -> AppInfo;
        "app.report" => help::report(Empty) -> ProblemReport;
        "update.check" => update::check(Empty) -> UpdateCheck;
        "update.install" => update::install(UpdateInstallParams) -> UpdateInstalled;
        "workspace.get" => workspace::get(Empty) -> dto::Workspace;
        "workspace.update" => workspace::update(WorkspaceUpdateParams) -> dto::Workspace;
        "project.create" => projects::create(ProjectCreateParams) -> dto::Project;
        "project.get" => projects::get(ProjectRef) -> dto::Project;
        "project.list" => projects::list(ProjectListParams) -> ProjectListResult;
        "project.update" => projects::update(ProjectUpdateParams) -> dto::Project;
        "project.archive" => projects::archive(ProjectArchiveParams) -> dto::Project;
        "version.create" => versions::create(VersionCreateParams) -> dto::Version;
        "version.get" => versions::get(VersionRef) -> dto::Version;
        "version.list" => versions::list(ProjectRef) -> VersionListResult;
        "version.restore" => versions::restore(VersionRef) -> VersionRestoreResult;
        "version.diff" => versions::diff(VersionDiffParams) -> VersionDiffResult;
        "comment.add" => comments::add(CommentAddParams) -> dto::Comment;
        "comment.list" => comments::list(CommentListParams) -> CommentListResult;
        "comment.resolve" => comments::resolve(CommentResolveParams) -> dto::Comment;
        "comment.delete" => comments::delete(CommentRef) -> Deleted;
        "activity.list" => workspace::activities(ActivityListParams) -> ActivityListResult;
        "brandProfile.create" => library::create_brand_profile(BrandProfileInput) -> dto::BrandProfile;
        "brandProfile.get" => library::get_brand_profile(IdRef) -> dto::BrandProfile;
        "brandProfile.list" => library::list_brand_profiles(Empty) -> BrandProfileListResult;
        "brandProfile.update" => library::update_brand_profile(BrandProfileUpdateParams) -> dto::BrandProfile;
        "brandProfile.delete" => library::delete_brand_profile(IdRef) -> Deleted;
        "template.create" => library::create_template(TemplateInput) -> dto::ContentTemplate;
        "template.get" => library::get_template(IdRef) -> dto::ContentTemplate;
        "template.list" => library::list_templates(Empty) -> TemplateListResult;
        "template.update" => library::update_template(TemplateUpdateParams) -> dto::ContentTemplate;
        "template.delete" => library::delete_template(IdRef) -> Deleted;
        "media.add" => media::add(MediaAddParams) -> dto::MediaAsset;
        "media.addBytes" => media::add_bytes(MediaAddBytesParams) -> dto::MediaAsset;
        "media.get" => media::get(IdRef) -> dto::MediaAsset;
        "media.list" => media::list(MediaListParams) -> MediaListResult;
        "media.read" => media::read(IdRef) -> MediaReadResult;
        "backup.list" => data::list_backups(Empty) -> BackupListResult;
        "platformProfile.list" => pipeline::list_profiles(Empty) -> PlatformProfileListResult;
        "platformProfile.get" => pipeline::get_profile(IdRef) -> PlatformProfile;
        "pipeline.compile" => pipeline::compile(PipelineCompileParams) -> dto::PipelineCompileResult;
        "pipeline.measure" => pipeline::measure(PipelineMeasureParams) -> dto::Measurement;
        "pipeline.suggest" => pipeline::suggest(ProjectRef) -> SuggestResult;
        "pipeline.fit" => pipeline::fit(PipelineCompileParams) -> FitReportResult;
        "platformDraft.list" => drafts::list(ProjectRef) -> PlatformDraftListResult;
        "platformDraft.get" => drafts::get(PlatformDraftRef) -> dto::PlatformDraft;
        "platformDraft.save" => drafts::save(PlatformDraftSaveParams) -> PlatformDraftSaveResult;
        "platformDraft.edit" => drafts::edit(PlatformDraftEditParams) -> PlatformDraftEditResult;
        "platformDraft.setStatus" => drafts::set_status(PlatformDraftSetStatusParams) -> dto::PlatformDraft;
        "quality.check" => pipeline::check(QualityCheckParams) -> QualityCheckResult;
        "llmProfile.presets" => llm::list_presets(Empty) -> LlmPresetListResult;
        "llmProfile.list" => llm::list(Empty) -> LlmProfileListResult;
        "llmProfile.get" => llm::get(LlmProfileRef) -> dto::LlmProfile;
        "llmProfile.create" => llm::create(LlmProfileInput) -> LlmProfileSaved;
        "llmProfile.update" => llm::update(LlmProfileUpdateParams) -> LlmProfileSaved;
        "llmProfile.delete" => llm::delete(LlmProfileRef) -> Deleted;
        "llmProfile.setDefault" => llm::set_default(LlmProfileRef) -> dto::LlmProfile;
        "llmProfile.setKey" => llm::set_key(LlmProfileSetKeyParams) -> dto::LlmProfile;
        "llmProfile.test" => llm::test(LlmProfileRef) -> LlmTestResult;
        "llmProfile.models" => llm::models(LlmModelsParams) -> LlmModelsResult;
        "sync.connect" => sync::connect(SyncConnectParams) -> SyncStatus;
        "sync.status" => sync::status(Empty) -> SyncStatus;
        "sync.push" => sync::push(Empty) -> SyncRunResult;
        "sync.pull" => sync::pull(Empty) -> SyncRunResult;
        "sync.pause" => sync::pause(Empty) -> SyncStatus;
        "sync.resume" => sync::resume(Empty) -> SyncStatus;
        "sync.retry" => sync::retry(SyncRetryParams) -> SyncStatus;
        "sync.conflicts" => sync::conflicts(SyncConflictsParams) -> SyncConflictListResult;
        "sync.resolve" => sync::resolve(SyncResolveParams) -> SyncResolveResult;
        "sync.members" => sync::members(Empty) -> SyncMembersResult;
        "sync.invite" => sync::invite(SyncInviteParams) -> SyncInviteResult;
        "sync.revokeMember" => sync::revoke_member(SyncRevokeMemberParams) -> SyncMembersResult;
        "sync.disconnect" => sync::disconnect(Empty) -> SyncDisconnectResult;
        "sync.policy" => sync::policy(Empty) -> dto::PolicyStanding;
        "sync.setPolicy" => sync::set_policy(SyncSetPolicyParams) -> dto::PolicyStanding;
        "llmProfile.detectLocal" => llm::detect_local(Empty) -> LlmDetectLocalResult;
        "llmProfile.context" => llm::context(LlmProfileRef) -> dto::ProfileContext;
        "llmProfile.setCompaction" => llm::set_compaction(LlmProfileSetCompactionParams) -> dto::ProfileContext;
        "usage.report" => usage::report(UsageReportParams) -> dto::UsageReport;
        "usage.list" => usage::list(UsageListParams) -> UsageListResult;
        "usage.getQuotas" => usage::get_quotas(Empty) -> dto::Quotas;
        "usage.standing" => usage::standing(Empty) -> dto::CapStanding;
        "usage.setQuotas" => usage::set_quotas(QuotasSetParams) -> dto::Quotas;
        "session.create" => session::create(SessionCreateParams) -> SessionView;
        "session.list" => session::list(SessionListParams) -> SessionListResult;
        "session.get" => session::get(SessionGetParams) -> SessionView;
        "session.archive" => session::archive(SessionArchiveParams) -> SessionView;
        "session.rename" => session::rename(SessionRenameParams) -> SessionView;
        "session.interrupt" => session::interrupt(SessionRef) -> SessionInterruptResult;
        "session.setMode" => session::set_mode(SessionSetModeParams) -> SessionView;
        "session.events" => session::events(SessionEventsParams) -> SessionEventsResult;
        "session.timeline" => timeline::get(SessionTimelineParams) -> SessionTimelineResult;
        "session.pins" => session::pins(SessionRef) -> SessionPins;
        "session.pin" => session::pin(SessionPinParams) -> SessionPins;
        "session.unpin" => session::unpin(SessionUnpinParams) -> SessionPins;
        "session.context" => session::context(SessionRef) -> SessionContextView;
        "session.setCompaction" => session::set_compaction(SessionSetCompactionParams) -> SessionContextView;
        "session.intent" => memory::intent(SessionRef) -> SessionIntentView;
        "session.setIntent" => memory::set_intent(SessionSetIntentParams) -> SessionIntentView;
        "session.budget" => memory::session_budget(SessionRef) -> BudgetView;
        "session.setBudget" => memory::set_session_budget(SessionSetBudgetParams) -> BudgetView;
        "project.budget" => memory::project_budget(ProjectRef) -> BudgetView;
        "project.setBudget" => memory::set_project_budget(ProjectSetBudgetParams) -> BudgetView;
        "memory.list" => memory::list(MemoryListParams) -> MemoryListResult;
        "memory.add" => memory::add(MemoryAddParams) -> dto::MemoryItem;
        "memory.update" => memory::update(MemoryUpdateParams) -> dto::MemoryItem;
        "memory.confirm" => memory::confirm(MemoryRef) -> dto::MemoryItem;
        "memory.delete" => memory::delete(MemoryRef) -> Deleted;
        "memory.dismissHabit" => memory::dismiss_habit(HabitRef) -> Deleted;
        "session.stage" => proposals_session::stage(SessionStageParams) -> dto::StagingView;
        "session.staging" => proposals_session::get_staging(SessionRef) -> dto::StagingView;
        "session.discardStaging" => proposals_session::discard_staging(SessionRef) -> StagingDiscardResult;
        "session.applyStaging" => proposals_session::apply_staging(SessionApplyStagingParams) -> dto::StagingApplied;
        "checkpoint.create" => proposals_session::create_checkpoint(CheckpointCreateParams) -> dto::Checkpoint;
        "checkpoint.list" => proposals_session::list_checkpoints(SessionRef) -> CheckpointListResult;
        "checkpoint.restore" => proposals_session::restore_checkpoint(CheckpointRestoreParams) -> CheckpointRestoreResult;
        "constraint.list" => proposals_session::list_constraints(SessionRef) -> ConstraintListResult;
        "constraint.remove" => proposals_session::remove_constraint(ConstraintRemoveParams) -> Deleted;
        "search.query" => search::query(SearchQueryParams) -> dto::SearchResults;
        "search.reindex" => search::reindex(Empty) -> dto::IndexStatus;
        "search.status" => search::status(Empty) -> dto::IndexStatus;
        "search.ask" => search::ask(SearchAskParams) -> dto::Answer;
        "search.askCancel" => search::ask_cancel(SearchAskCancelParams) -> SearchAskCancelResult;
        "permissionRules.get" => session::get_rules(Empty) -> PermissionRules;
        "permissionRules.set" => session::set_rules(PermissionRules) -> PermissionRules;
        "allowRule.preview" => allow_rules::preview(AllowRulePreviewParams) -> AllowRulePreview;
        "allowRule.list" => allow_rules::list(Empty) -> AllowRuleListResult;
        "allowRule.narrow" => allow_rules::narrow(AllowRuleNarrowParams) -> AllowRuleView;
        "allowRule.remove" => allow_rules::remove(AllowRuleRef) -> Deleted;
        "proposal.list" => proposals::list(ProposalListParams) -> ProposalListResult;
        "proposal.get" => proposals::get(ProposalRef) -> dto::ProposalView;
        "proposal.accept" => proposals::accept(ProposalAcceptParams) -> dto::Accepted;
        "proposal.reject" => proposals::reject(ProposalRejectParams) -> dto::Rejected;
        "proposal.rebase" => proposals::rebase(ProposalRef) -> dto::Rebased;
        "proposal.audit" => proposals::audit(ProposalAuditParams) -> ProposalAuditResult;
        "proposal.why" => proposals::why(ProposalWhyParams) -> ProposalWhyResult;
        "aiActivity.list" => activity::list(AiActivityListParams) -> dto::ActivityPage;
        "aiActivity.export" => activity::export(AiActivityExportParams) -> AiActivityExportResult;
        "optimize.get" => optimize::get(OptimizeRunRef) -> dto::Run;
        "optimize.list" => optimize::list(OptimizeListParams) -> OptimizeListResult;
        "optimize.cancel" => optimize::cancel(OptimizeRunRef) -> OptimizeCancelResult;
        "optimize.apply" => optimize::apply(OptimizeApplyParams) -> OptimizeApplyResult;
        "optimize.events" => optimize::events(OptimizeRunRef) -> OptimizeEventsResult;
        "account.create" => performance::create_account(AccountCreateParams) -> dto::Account;
        "account.list" => performance::list_accounts(Empty) -> AccountListResult;
        "account.update" => performance::update_account(AccountUpdateParams) -> dto::Account;
        "account.delete" => performance::delete_account(AccountRef) -> Deleted;
        "publication.add" => performance::add_publication(PublicationAddParams) -> dto::Publication;
        "publication.get" => performance::get_publication(PublicationRef) -> PublicationView;
        "publication.list" => performance::list_publications(PublicationListParams) -> PublicationListResult;
        "publication.edit" => performance::edit_publication(PublicationEditParams) -> dto::Publication;
        "publication.remove" => performance::remove_publication(PublicationRef) -> dto::Publication;
        "publication.restore" => performance::restore_publication(PublicationRef) -> dto::Publication;
        "publication.purge" => performance::purge_publication(PublicationPurgeParams) -> PublicationPurgeResult;
        "perf.add" => performance::add_snapshot(PerfAddParams) -> dto::MetricSnapshot;
        "perf.list" => performance::list_snapshots(PublicationRef) -> PerfListResult;
        "perf.keys" => performance::metric_keys(Empty) -> PerfKeysResult;
        "perf.import" => performance::import(PerfImportParams) -> PerfImportResult;
        "perf.accountDays" => performance::account_days(AccountRef) -> PerfAccountDaysResult;
        "perf.report" => performance::report(PerfReportParams) -> dto::BeforeAfterReport;
        "perf.summary" => performance::summary(PerfSummaryParams) -> dto::PerformanceSummary;
        "perf.contextSetting" => performance::context_setting(Empty) -> dto::ContextState;
        "perf.setContextSetting" => performance::set_context_setting(PerfSetContextParams) -> dto::ContextState;
        "perf.dashboard" => performance::dashboard(PerfDashboardParams) -> dto::Dashboard;
        "perf.export" => performance::export(PerfExportParams) -> PerfExportResult;
    }
    streaming {
        "export.run" => data::export(ExportParams) -> ExportResult, sends Progress(ProgressEvent);
        "import.run" => data::import(ImportParams) -> ImportResult, sends Progress(ProgressEvent);
        "import.markdown" => data::import_markdown(ImportParams) -> ImportMarkdownResult, sends Progress(ProgressEvent);
        "backup.create" => data::create_backup(Empty) -> BackupInfo, sends Progress(ProgressEvent);
        "backup.auto" => data::auto_backup(BackupAutoParams) -> BackupAutoResult, sends Progress(ProgressEvent);
        "backup.restore" => data::restore_backup(BackupRestoreParams) -> BackupRestoreResult, sends Progress(ProgressEvent);
        "session.submit" => session::submit(SessionSubmitParams) -> SessionSubmitResult, sends Harness(Box<dto::Event>) also Timeline(Box<dto::TimelinePatch>);
        "session.resolveApproval" => session::resolve_approval(SessionResolveApprovalParams) -> SessionSubmitResult, sends Harness(Box<dto::Event>) also Timeline(Box<dto::TimelinePatch>);
        "session.answerQuestion" => session::answer_question(SessionAnswerParams) -> SessionSubmitResult, sends Harness(Box<dto::Event>) also Timeline(Box<dto::TimelinePatch>);
        "session.compact" => session::compact(SessionCompactParams) -> SessionCompactResult, sends Harness(Box<dto::Event>) also Timeline(Box<dto::TimelinePatch>);
        "optimize.start" => optimize::start(OptimizeStartParams) -> dto::Run, sends Harness(Box<dto::Event>);
        "optimize.resume" => optimize::resume(OptimizeRunRef) -> dto::Run, sends Harness(Box<dto::Event>);
    }
    subscriptions {
        "sync.watch" => sync::watch(Empty) -> SyncStatus, sends SyncStatus(Box<SyncStatus>);
        "session.watch" => timeline::watch(SessionWatchParams) -> SessionWatchResult, sends Timeline(Box<dto::TimelinePatch>);
    }
}

/// No parameters.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// A record named by its id.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IdRef {
    pub id: String,
}

/// The answer of a delete.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    pub id: String,
    pub deleted: bool,
}

/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest Markdown source, in characters (about 2 MB of Chinese text).
pub const MAX_SOURCE_CHARS: usize = 1_000_000;
