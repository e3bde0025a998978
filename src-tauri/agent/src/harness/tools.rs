//! The tool registry: definitions (everything the turn loop and the permission engine
//! need to know about a tool), compiled input validators, and the handlers. The tools
//! themselves are in `crate::tools`; the engine registers them.

mod context;

pub use context::*;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::permission::PermissionPolicy;
use crate::llm::profile::ToolLoading;
use crate::llm::structured::{InvalidSchema, Validator};
use crate::llm::{Message, ToolSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Capability {
    Read,
    Propose,
    Validate,
    Write,
    Workflow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Concurrency {
    /// May run beside other parallel-safe calls.
    ParallelSafe,
    /// Runs alone, one at a time, in request order.
    Exclusive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InterruptBehavior {
    /// Stops at once on interrupt.
    Cancel,
    /// Finishes (or rolls back) what it began, and reports which.
    Block,
}

/// Which version of its target a tool's effect depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BaseVersionPolicy {
    /// The tool does not depend on a target version.
    None,
    /// The session project's working-copy revision; an approval is bound to it.
    ProjectRevision,
    /// The current revision of the target of the proposal the input names
    /// (`proposalId`): the draft's revision for a draft target, else the project's
    /// working-copy revision. The proposal id and the content hashes of the selected
    /// hunks (`hunks`, or every open hunk) are part of the input hash and the
    /// idempotency key, so an approval covers exactly that change on that revision.
    ProposalTarget,
}

/// Actions reserved for the person: the model calling one gets `tool_forbidden`, and
/// the registry refuses a tool of such a name.
pub const PERSON_ONLY_ACTIONS: &[&str] = &["accept_proposal", "reject_proposal", "proposal_accept", "proposal_reject", "proposal.accept", "proposal.reject", "rebase_proposal"];

/// Tools that ask every time: no "always allow" is offered or honoured for them.
pub const ALWAYS_ASK_TOOLS: &[&str] = &["apply_proposal", "update_project_metadata", "exit_plan_mode", "request_permission"];

/// Everything the harness knows about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    pub version: u32,
    /// For people (the UI, the CLI).
    pub description: String,
    /// For the model: sent as the tool's description.
    pub prompt: String,
    pub input_schema: Value,
    pub output_schema: Value,
    pub capability: Capability,
    pub risk: RiskLevel,
    pub permission: PermissionPolicy,
    pub read_only: bool,
    pub destructive: bool,
    pub concurrency: Concurrency,
    pub interrupt: InterruptBehavior,
    /// Input fields that identify one effect; with the tool name and target version
    /// they make the idempotency key. Empty: the whole normalized input.
    pub idempotency_key_fields: Vec<String>,
    pub base_version: BaseVersionPolicy,
    /// Most characters of the result the model sees inline: large for the source,
    /// small for lists and logs. The room left in the model's context and the log's
    /// line limit cap it further; a larger result is stored and the model gets a
    /// preview and a reference it can read on with `read_stored_result`.
    pub max_result_chars: usize,
    /// A compact description of the result, for summaries and the UI.
    pub result_summary: String,
}

impl ToolDefinition {
    /// True when the tool may change anything: declared a write, not read-only, or
    /// destructive. Such a tool must ask, is denied in plan mode, runs alone, runs at
    /// most once per idempotency key, and is the only kind whose handler can write.
    pub fn is_write(&self) -> bool {
        self.capability == Capability::Write || !self.read_only || self.destructive
    }

    /// True when a person may answer this tool's prompt with "always allow"
    /// ([`super::allow_rule`]): a tool that asks by itself. Never for the tools that must ask every time: applying a
    /// proposal (bound to the exact hunks), changing the project's settings, a plan, a
    /// permission request, and anything destructive or of high risk. The permission
    /// engine checks this too, so a stored rule for such a tool allows nothing.
    pub fn offers_always_allow(&self) -> bool {
        // Only a tool that asks by itself: a rule has nothing to allow for a tool its
        // policy allows, and never loosens one its policy denies.
        let asks_by_itself = match self.permission {
            PermissionPolicy::Ask => true,
            PermissionPolicy::Allow => self.is_write(),
            PermissionPolicy::Deny => false,
        };
        asks_by_itself
            && !(ALWAYS_ASK_TOOLS.contains(&self.name.as_str()) || self.destructive || self.risk == RiskLevel::High || self.base_version == BaseVersionPolicy::ProposalTarget)
    }

    /// Why the registry refuses this definition, if it does: a tool that may change
    /// anything must not be allowed without asking, and a write or destructive tool
    /// cannot also claim to be read-only.
    fn refusal(&self) -> Option<RefusedTool> {
        let tool = self.name.clone();
        if PERSON_ONLY_ACTIONS.contains(&self.name.as_str()) {
            return Some(RefusedTool::Reserved { tool });
        }
        if self.read_only && (self.capability == Capability::Write || self.destructive) {
            return Some(RefusedTool::Contradiction { tool, reason: "a write or destructive tool cannot be read-only".to_owned() });
        }
        if self.is_write() && self.permission == PermissionPolicy::Allow {
            return Some(RefusedTool::WriteMustAsk { tool });
        }
        None
    }
}

/// A tool's failure, told to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    pub message: String,
    /// True when the tool stopped because it was cancelled.
    pub interrupted: bool,
}

impl ToolFailure {
    pub fn new(message: impl Into<String>) -> Self {
        ToolFailure { message: message.into(), interrupted: false }
    }
}

impl From<crate::error::ApiError> for ToolFailure {
    fn from(error: crate::error::ApiError) -> Self {
        ToolFailure::new(format!("{:?}: {}", error.code, error.message))
    }
}

pub type ToolHandler = Arc<dyn Fn(&ToolContext<'_>, &Value) -> Result<Value, ToolFailure> + Send + Sync>;

/// A registered tool: its definition, compiled validator and handler.
#[derive(Clone)]
pub struct RegisteredTool {
    pub definition: ToolDefinition,
    validator: Arc<Validator>,
    pub handler: ToolHandler,
    /// What a request carries of it, made once: every model call sends the definitions.
    spec: ToolSpec,
}

impl RegisteredTool {
    /// Validates `input`; the error lists at most five problems, each with its JSON
    /// pointer.
    pub fn validate(&self, input: &Value) -> Result<(), Vec<(String, String)>> {
        self.validator.check(input).map_err(|violations| violations.0.into_iter().map(|v| (v.pointer, v.message)).collect())
    }
}

/// Why the registry refused a tool definition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefusedTool {
    /// The input schema is not a valid JSON schema.
    #[error("the input schema of `{tool}` is invalid: {source}")]
    InvalidSchema { tool: String, source: InvalidSchema },
    /// A tool that may change anything (a write, not read-only, or destructive) with an
    /// `allow` policy: it must ask (or be denied).
    #[error("`{tool}` may change content (a write, not read-only, or destructive), so its permission must be `ask` or `deny`, not `allow`")]
    WriteMustAsk { tool: String },
    /// The definition contradicts itself.
    #[error("`{tool}`: {reason}")]
    Contradiction { tool: String, reason: String },
    /// The name is an action reserved for the person.
    #[error("`{tool}` is an action reserved for the person; no tool may have this name")]
    Reserved { tool: String },
}

impl RefusedTool {
    /// The definition field the refusal is about (for a VALIDATION error).
    pub fn field(&self) -> &'static str {
        match self {
            RefusedTool::InvalidSchema { .. } => "inputSchema",
            RefusedTool::WriteMustAsk { .. } => "permission",
            RefusedTool::Contradiction { .. } => "readOnly",
            RefusedTool::Reserved { .. } => "name",
        }
    }
}

/// The tools of one engine, by name.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, RegisteredTool>,
    offers: Offers,
}

/// The tool definitions a request carries, with their estimated tokens.
#[derive(Debug)]
pub struct Offer {
    /// Shared with every request that carries them.
    pub specs: Arc<[ToolSpec]>,
    pub tokens: u64,
}

/// The offers worked out so far, by tool set and the tools loaded on demand: every
/// model call asks for one, and they change only when a tool is registered (which
/// empties this). A copy of the registry starts with none.
#[derive(Default)]
struct Offers(std::sync::Mutex<std::collections::HashMap<OfferKey, Arc<Offer>>>);

/// A tool set and the tools loaded on demand.
type OfferKey = (ToolSet, BTreeSet<String>);

impl Clone for Offers {
    fn clone(&self) -> Offers {
        Offers::default()
    }
}

/// Offers kept at most: one per tool set and combination of loaded tools met.
const MAX_OFFERS: usize = 64;

impl Registry {
    /// Adds (or replaces) a tool.
    ///
    /// Errors: [`RefusedTool`] when the schema is invalid, a tool that may change
    /// anything would not ask, or the definition contradicts itself; nothing changes.
    pub fn register(&mut self, definition: ToolDefinition, handler: ToolHandler) -> Result<(), RefusedTool> {
        if let Some(refusal) = definition.refusal() {
            return Err(refusal);
        }
        let validator = Validator::new(&definition.input_schema).map_err(|source| RefusedTool::InvalidSchema { tool: definition.name.clone(), source })?;
        let spec = ToolSpec { name: definition.name.clone(), description: definition.prompt.clone(), parameters: crate::llm::Schema::new(definition.input_schema.clone()) };
        self.tools.insert(definition.name.clone(), RegisteredTool { definition, validator: Arc::new(validator), handler, spec });
        self.offers = Offers::default();
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.tools.values().map(|t| &t.definition)
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// The tool definitions a request carries. [`ToolSet::All`]: every tool but
    /// `load_tools`. [`ToolSet::Core`] and [`ToolSet::Compact`]: that set's tools
    /// ([`CORE_TOOLS`], [`COMPACT_TOOLS`]), the tools the model loaded with `load_tools`
    /// in `messages` (so a compaction that summarises those calls away unloads them;
    /// the model loads them again), and `load_tools` itself, whose description lists
    /// what is left to load (with a first clause each for the core set, by name only
    /// for the compact one). Any registered tool may still be called: loading only
    /// sends its definition.
    pub fn offered(&self, set: ToolSet, messages: &[Message]) -> Vec<ToolSpec> {
        self.offer(set, messages).specs.to_vec()
    }

    /// [`Registry::offered`] with the definitions' estimated tokens, worked out once per
    /// tool set and tools loaded.
    pub fn offer(&self, set: ToolSet, messages: &[Message]) -> Arc<Offer> {
        let loaded = if set == ToolSet::All { BTreeSet::new() } else { loaded_tools(messages) };
        let key = (set, loaded);
        let mut offers = self.offers.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(offer) = offers.get(&key) {
            return Arc::clone(offer);
        }
        let specs = self.specs(set, &key.1);
        let offer = Arc::new(Offer { tokens: tool_tokens(&specs), specs: specs.into() });
        if offers.len() >= MAX_OFFERS {
            offers.clear();
        }
        offers.insert(key, Arc::clone(&offer));
        offer
    }

    fn specs(&self, set: ToolSet, loaded: &BTreeSet<String>) -> Vec<ToolSpec> {
        let offerable = || self.tools.values().filter(|t| t.definition.name != LOAD_TOOLS);
        let base: &[&str] = match set {
            ToolSet::All => return offerable().map(|t| t.spec.clone()).collect(),
            ToolSet::Core => CORE_TOOLS,
            ToolSet::Compact => COMPACT_TOOLS,
        };
        let (sent, rest): (Vec<&RegisteredTool>, Vec<&RegisteredTool>) =
            offerable().partition(|t| base.contains(&t.definition.name.as_str()) || loaded.contains(&t.definition.name));
        let mut tools: Vec<ToolSpec> = sent.into_iter().map(|t| t.spec.clone()).collect();
        if let (Some(load), false) = (self.get(LOAD_TOOLS), rest.is_empty()) {
            let mut load = load.spec.clone();
            if set == ToolSet::Compact {
                let names: Vec<&str> = rest.iter().map(|t| t.definition.name.as_str()).collect();
                load.description.push_str(&format!("\nTools you can load: {}.", names.join(", ")));
            } else {
                load.description.push_str("\nTools you can load:");
                for t in rest {
                    load.description.push_str(&format!("\n- {}: {}", t.definition.name, first_clause(&t.definition.description)));
                }
            }
            tools.push(load);
        }
        tools
    }

    /// The tool definitions of a request in a window of `window` tokens: the largest
    /// set the profile's loading allows (`All`: every tool; `OnDemand`: the core set)
    /// whose definitions take at most [`TOOL_SHARE_PERCENT`] of the window, else the
    /// compact set, whatever its size (it is capped by a test at
    /// [`COMPACT_TOOLS_MAX_TOKENS`]). So no window is refused for the tools a larger
    /// one would carry.
    pub fn offered_within(&self, loading: ToolLoading, window: u64, messages: &[Message]) -> (ToolSet, Vec<ToolSpec>) {
        let (set, offer) = self.offer_within(loading, window, messages);
        (set, offer.specs.to_vec())
    }

    /// [`Registry::offered_within`] with the definitions' estimated tokens.
    pub fn offer_within(&self, loading: ToolLoading, window: u64, messages: &[Message]) -> (ToolSet, Arc<Offer>) {
        let sets: &[ToolSet] = match loading {
            ToolLoading::All => &[ToolSet::All, ToolSet::Core],
            ToolLoading::OnDemand => &[ToolSet::Core],
        };
        for set in sets {
            let offer = self.offer(*set, messages);
            if offer.tokens * 100 <= window * TOOL_SHARE_PERCENT {
                return (*set, offer);
            }
        }
        (ToolSet::Compact, self.offer(ToolSet::Compact, messages))
    }
}

/// The estimated tokens of `tools`' definitions in a request.
pub fn tool_tokens(tools: &[ToolSpec]) -> u64 {
    crate::llm::estimate_tools_tokens(tools)
}

/// Which tool definitions a request carries (see [`Registry::offered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolSet {
    /// Every tool.
    All,
    /// The core drafting tools and `load_tools` listing the rest with a clause each.
    Core,
    /// Read a section, search, propose an edit, and `load_tools` listing the rest by
    /// name: for small windows.
    Compact,
}

/// The most of a window the tool definitions may take before a smaller set is sent.
pub const TOOL_SHARE_PERCENT: u64 = 25;

/// The compact set's estimated tokens may not exceed this (a test says so): with a
/// 2,048-token window it leaves the rest for the prompt, the article and the reply.
pub const COMPACT_TOOLS_MAX_TOKENS: u64 = 600;

/// The first clause of a description, at most 70 characters: enough to choose a tool
/// to load, at a few tokens a tool.
fn first_clause(text: &str) -> String {
    let end = [". ", "; ", ": ", " (", "。", "；"].iter().filter_map(|stop| text.find(stop)).min().unwrap_or(text.len());
    let clause = text[..end].trim().trim_end_matches('.');
    match clause.char_indices().nth(70) {
        Some((cut, _)) => format!("{}…", &clause[..cut]),
        None => clause.to_owned(),
    }
}

/// The tool that sends other tools' definitions (see [`Registry::offered`]).
pub const LOAD_TOOLS: &str = "load_tools";

/// The tools a model gets in full when its profile loads tools on demand: reading the
/// project and stored results, proposing patches, checking a platform, searching the
/// project's history, questions and plan mode.
pub const CORE_TOOLS: &[&str] = &[
    "read_project_context",
    "read_section",
    "read_versions",
    "read_stored_result",
    "search_project_history",
    "propose_source_patch",
    "propose_draft_patch",
    "run_platform_check",
    "ask_user_question",
    "enter_plan_mode",
    "exit_plan_mode",
];

/// The tools a model gets in full in a small window: read a section of the article,
/// search the project's history, propose an edit.
pub const COMPACT_TOOLS: &[&str] = &["read_section", "search_project_history", "propose_source_patch"];

/// The names the assistant asked `load_tools` for in `messages`.
pub fn loaded_tools(messages: &[Message]) -> BTreeSet<String> {
    messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .filter(|c| c.name == LOAD_TOOLS)
        .filter_map(|c| serde_json::from_str::<Value>(&c.arguments).ok())
        .flat_map(|input| input["names"].as_array().cloned().unwrap_or_default())
        .filter_map(|name| name.as_str().map(|n| n.trim().to_owned()))
        .collect()
}

/// The input with object keys sorted (serde_json's map is ordered) and strings
/// trimmed of surrounding whitespace, so equal requests hash equally.
pub fn normalize(input: &Value) -> Value {
    match input {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), normalize(v))).collect::<std::collections::BTreeMap<_, _>>().into_iter().collect()),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::String(s) => Value::String(s.trim().to_owned()),
        other => other.clone(),
    }
}

/// `sha256:<hex>` of the normalized input's JSON.
pub fn input_hash(normalized: &Value) -> String {
    super::log::sha256_ref(normalized.to_string().as_bytes())
}

/// The idempotency key of a call: where it runs (workspace, project, owner), the tool,
/// the version of the target, and the key fields of the input (all of it when the tool
/// names none). The same call in another project, session or run is another key.
pub fn idempotency_key(definition: &ToolDefinition, normalized: &Value, target_version: Option<u64>, scope: &super::Scope) -> String {
    let fields: Value = if definition.idempotency_key_fields.is_empty() {
        normalized.clone()
    } else {
        Value::Object(definition.idempotency_key_fields.iter().map(|f| (f.clone(), normalized.get(f).cloned().unwrap_or(Value::Null))).collect())
    };
    let owner = match &scope.owner {
        super::Owner::Session(id) => json!({"session": id}),
        super::Owner::Run(id) => json!({"run": id}),
    };
    let material = json!({
        "workspace": scope.workspace_id, "project": scope.project_id, "owner": owner,
        "tool": definition.name, "toolVersion": definition.version, "target": target_version, "input": fields,
    });
    super::log::sha256_ref(material.to_string().as_bytes())
}

#[cfg(test)]
use crate::tools::builtins;
#[cfg(test)]
mod tests;
