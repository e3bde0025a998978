//! Versioned, layered prompts. The files in `profiles/prompts/` (embedded at build
//! time) are named `<name>@v<N>.md`; a name's prefix before the first `.` says its
//! layer (`core-identity`, `domain-persona`, `guardrails`, `output-contract`, `entry`,
//! `mode`, `apply-policy`). A file in `<data dir>/prompts/` with the same
//! `<name>@v<N>.md` whose first line is `<!-- override = M -->` replaces the built-in and
//! is known as `<name>@v<N>+local.M`, like profile overrides, so whatever was made with
//! it says so.
//!
//! [`PromptSet::compose`] puts the layers in one fixed order: core identity, domain
//! persona, global guardrails, output contract, entry strategy (whole article or one
//! draft), mode strategy (drafting, plan, or optimize with its goal and intensity),
//! the context digest (the caller's: the project, the source, the constraints) and the
//! apply policy. Every model call records the id of every layer it used. Pure but for
//! [`PromptSet::load`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::Platform;

const BUILTIN: &[(&str, &str)] = &[
    ("core-identity@v1.md", include_str!("../../../profiles/prompts/core-identity@v1.md")),
    ("domain-persona@v1.md", include_str!("../../../profiles/prompts/domain-persona@v1.md")),
    ("guardrails@v1.md", include_str!("../../../profiles/prompts/guardrails@v1.md")),
    ("output-contract.drafting@v1.md", include_str!("../../../profiles/prompts/output-contract.drafting@v1.md")),
    ("output-contract.optimize@v1.md", include_str!("../../../profiles/prompts/output-contract.optimize@v1.md")),
    ("entry.article@v1.md", include_str!("../../../profiles/prompts/entry.article@v1.md")),
    ("entry.draft@v1.md", include_str!("../../../profiles/prompts/entry.draft@v1.md")),
    ("mode.drafting@v1.md", include_str!("../../../profiles/prompts/mode.drafting@v1.md")),
    ("mode.plan@v1.md", include_str!("../../../profiles/prompts/mode.plan@v1.md")),
    ("mode.optimize@v1.md", include_str!("../../../profiles/prompts/mode.optimize@v1.md")),
    ("apply-policy.drafting@v1.md", include_str!("../../../profiles/prompts/apply-policy.drafting@v1.md")),
    ("apply-policy.optimize@v1.md", include_str!("../../../profiles/prompts/apply-policy.optimize@v1.md")),
];

/// The layers, in the order they are composed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    CoreIdentity,
    DomainPersona,
    Guardrails,
    OutputContract,
    EntryStrategy,
    ModeStrategy,
    ContextDigest,
    ApplyPolicy,
}

impl Layer {
    pub const ORDER: [Layer; 8] =
        [Layer::CoreIdentity, Layer::DomainPersona, Layer::Guardrails, Layer::OutputContract, Layer::EntryStrategy, Layer::ModeStrategy, Layer::ContextDigest, Layer::ApplyPolicy];

    fn of_name(name: &str) -> Option<Layer> {
        Some(match name.split('.').next()? {
            "core-identity" => Layer::CoreIdentity,
            "domain-persona" => Layer::DomainPersona,
            "guardrails" => Layer::Guardrails,
            "output-contract" => Layer::OutputContract,
            "entry" => Layer::EntryStrategy,
            "mode" => Layer::ModeStrategy,
            "apply-policy" => Layer::ApplyPolicy,
            _ => return None,
        })
    }
}

/// What an optimization run aims at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    #[default]
    Recommendation,
    Views,
    Ctr,
    Completion,
    Engagement,
    Conversion,
}

impl Goal {
    pub fn as_str(self) -> &'static str {
        match self {
            Goal::Recommendation => "recommendation",
            Goal::Views => "views",
            Goal::Ctr => "ctr",
            Goal::Completion => "completion",
            Goal::Engagement => "engagement",
            Goal::Conversion => "conversion",
        }
    }
    /// What the goal means for the edits (never a promise of the outcome).
    pub fn explained(self) -> &'static str {
        match self {
            Goal::Recommendation => "Follow the platform's written rules for what its feeds surface: a clear topic, a fitting title, tags and structure.",
            Goal::Views => "Make the topic and the value clear from the title and the first lines.",
            Goal::Ctr => "Make the title and the opening specific and honest about what the reader gets; no clickbait.",
            Goal::Completion => "Make the text easy to read to the end: a strong opening, short paragraphs, headings, a clear order.",
            Goal::Engagement => "Invite replies: a question or a prompt to share experience near the end.",
            Goal::Conversion => "Make the call to action clear and honest where it belongs.",
        }
    }
}

/// How much an optimization run may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Intensity {
    Conservative,
    #[default]
    Balanced,
    Aggressive,
}

impl Intensity {
    pub fn as_str(self) -> &'static str {
        match self {
            Intensity::Conservative => "conservative",
            Intensity::Balanced => "balanced",
            Intensity::Aggressive => "aggressive",
        }
    }
    pub fn explained(self) -> &'static str {
        match self {
            Intensity::Conservative => "Change as little as possible: the title, the opening, tags and the call to action; keep most sentences as they are.",
            Intensity::Balanced => "Rework the opening, the structure and the weak passages; keep the argument and most of the wording.",
            Intensity::Aggressive => "Restructure freely for the platform, keeping every fact and the writer's position.",
        }
    }
}

/// Which kind of work a model call does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// A drafting session in default mode.
    Drafting,
    /// A drafting session in plan mode.
    Plan,
    /// An optimization run.
    Optimize { goal: Goal, intensity: Intensity, constraints: Vec<String> },
}

/// What the work is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// The whole article: source, title and drafts.
    Article,
    /// One platform draft only.
    Draft(Platform),
}

/// One composed layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptLayer {
    pub layer: Layer,
    /// `guardrails@v1`, `mode.optimize@v1+local.2`; for the context digest the id the
    /// caller gives (the context snapshot).
    pub id: String,
    pub text: String,
}

/// The composed prompt, every layer but the context digest (which the caller builds
/// and places between [`Composed::head`] and [`Composed::tail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    pub layers: Vec<PromptLayer>,
}

impl Composed {
    /// The layers before the context digest, joined.
    pub fn head(&self) -> String {
        join(self.layers.iter().filter(|l| l.layer < Layer::ContextDigest))
    }
    /// The layers after the context digest, joined.
    pub fn tail(&self) -> String {
        join(self.layers.iter().filter(|l| l.layer > Layer::ContextDigest))
    }
    /// The id of every layer in order, the context digest named `context:<digest_id>`.
    pub fn ids(&self, digest_id: &str) -> Vec<String> {
        let mut out: Vec<String> = self.layers.iter().filter(|l| l.layer < Layer::ContextDigest).map(|l| l.id.clone()).collect();
        out.push(format!("context:{digest_id}"));
        out.extend(self.layers.iter().filter(|l| l.layer > Layer::ContextDigest).map(|l| l.id.clone()));
        out
    }
    /// The ids of the file layers (not the context digest), joined with `+`.
    pub fn version(&self) -> String {
        self.layers.iter().map(|l| l.id.as_str()).collect::<Vec<_>>().join(" ")
    }
    /// The whole system message around `digest`.
    pub fn system(&self, digest: &str) -> String {
        [self.head(), digest.trim_end().to_owned(), self.tail()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n\n")
    }
}

fn join<'a>(layers: impl Iterator<Item = &'a PromptLayer>) -> String {
    layers.map(|l| l.text.trim_end()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
}

/// One prompt file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PromptFile {
    id: String,
    layer: Layer,
    text: String,
}

/// A prompt file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("prompt file {file}: {message}")]
    Invalid { file: String, message: String },
    #[error("prompt file {file}: {source}")]
    Io { file: String, source: std::io::Error },
}

impl From<PromptError> for crate::error::ApiError {
    fn from(error: PromptError) -> Self {
        match error {
            PromptError::Invalid { .. } => crate::error::ApiError::new(crate::error::ErrorCode::Validation, error.to_string())
                .hint("fix_prompt", "Fix or remove the file in the data folder's prompts/ folder; the built-in prompts apply without it."),
            PromptError::Io { .. } => crate::error::ApiError::new(crate::error::ErrorCode::Io, error.to_string()),
        }
    }
}

/// The prompts in force: the newest version of each name, with user overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSet {
    /// By name (`mode.optimize`).
    files: BTreeMap<String, PromptFile>,
}

/// `mode.optimize@v1.md` → (`mode.optimize`, 1).
fn split_file_name(file: &str) -> Option<(&str, u32)> {
    let stem = file.strip_suffix(".md")?;
    let (name, version) = stem.rsplit_once("@v")?;
    Some((name, version.parse().ok()?))
}

impl PromptSet {
    fn add(&mut self, file: &str, text: &str, is_override: bool) -> Result<(), PromptError> {
        let invalid = |message: &str| PromptError::Invalid { file: file.to_owned(), message: message.to_owned() };
        let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
        let (name, version) = split_file_name(base).ok_or_else(|| invalid("the name must be <name>@v<N>.md"))?;
        let layer = Layer::of_name(name)
            .ok_or_else(|| invalid("the name must start with a layer: core-identity, domain-persona, guardrails, output-contract, entry, mode, apply-policy"))?;
        let (id, text) = if is_override {
            let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
            let local = first
                .trim()
                .strip_prefix("<!--")
                .and_then(|s| s.strip_suffix("-->"))
                .and_then(|s| s.trim().strip_prefix("override"))
                .and_then(|s| s.trim().strip_prefix('='))
                .and_then(|s| s.trim().parse::<u32>().ok())
                .ok_or_else(|| invalid("a user prompt starts with a line `<!-- override = N -->` (its local version)"))?;
            let Some(builtin) = self.files.get(name) else { return Err(invalid("there is no built-in prompt of this name to override")) };
            if builtin.id.split('+').next() != Some(&format!("{name}@v{version}")) {
                return Err(invalid(&format!("the built-in prompt is {}; an override names the same version", builtin.id)));
            }
            (format!("{name}@v{version}+local.{local}"), rest.to_owned())
        } else {
            (format!("{name}@v{version}"), text.to_owned())
        };
        if text.trim().is_empty() {
            return Err(invalid("the prompt is empty"));
        }
        let newer = self.files.get(name).is_none_or(|f| is_override || split_file_name(&format!("{}.md", f.id)).is_none_or(|(_, v)| v <= version));
        if newer {
            self.files.insert(name.to_owned(), PromptFile { id, layer, text });
        }
        Ok(())
    }

    /// The built-in prompts (parsed once per process).
    pub fn builtin() -> &'static PromptSet {
        static SET: std::sync::OnceLock<PromptSet> = std::sync::OnceLock::new();
        SET.get_or_init(|| {
            let mut set = PromptSet { files: BTreeMap::new() };
            for (file, text) in BUILTIN {
                // The built-in files are checked by a unit test.
                let _ = set.add(file, text, false);
            }
            set
        })
    }

    /// Built-ins with the overrides in `override_dir` (`*.md`, if the folder exists).
    /// Without the folder, the built-in set itself (every model call loads the set).
    pub fn load(override_dir: &Path) -> Result<std::borrow::Cow<'static, PromptSet>, PromptError> {
        if !override_dir.is_dir() {
            return Ok(std::borrow::Cow::Borrowed(PromptSet::builtin()));
        }
        let mut set = PromptSet::builtin().clone();
        let mut files: Vec<_> = std::fs::read_dir(override_dir)
            .map_err(|source| PromptError::Io { file: override_dir.display().to_string(), source })?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|source| PromptError::Io { file: path.display().to_string(), source })?;
            set.add(&path.display().to_string(), &text, true)?;
        }
        Ok(std::borrow::Cow::Owned(set))
    }

    fn layer(&self, name: &str, vars: &[(&str, String)]) -> Option<PromptLayer> {
        let file = self.files.get(name)?;
        let mut text = file.text.clone();
        for (key, value) in vars {
            text = text.replace(&format!("{{{{{key}}}}}"), value);
        }
        Some(PromptLayer { layer: file.layer, id: file.id.clone(), text })
    }

    /// The layers for `mode` and `entry`, in the fixed order (the context digest is
    /// the caller's).
    pub fn compose(&self, mode: &Mode, entry: Entry) -> Composed {
        let purpose = match mode {
            Mode::Drafting | Mode::Plan => "drafting",
            Mode::Optimize { .. } => "optimize",
        };
        let mut vars: Vec<(&str, String)> = Vec::new();
        if let Entry::Draft(platform) = entry {
            vars.push(("platform", platform.as_str().to_owned()));
        }
        if let Mode::Optimize { goal, intensity, constraints } = mode {
            vars.push(("goal", goal.as_str().to_owned()));
            vars.push(("goal_explained", goal.explained().to_owned()));
            vars.push(("intensity", intensity.as_str().to_owned()));
            vars.push(("intensity_explained", intensity.explained().to_owned()));
            vars.push(("constraints", if constraints.is_empty() { "none".to_owned() } else { constraints.join("; ") }));
        }
        let names = [
            "core-identity".to_owned(),
            "domain-persona".to_owned(),
            "guardrails".to_owned(),
            format!("output-contract.{purpose}"),
            match entry {
                Entry::Article => "entry.article".to_owned(),
                Entry::Draft(_) => "entry.draft".to_owned(),
            },
            match mode {
                Mode::Drafting => "mode.drafting".to_owned(),
                Mode::Plan => "mode.plan".to_owned(),
                Mode::Optimize { .. } => "mode.optimize".to_owned(),
            },
            format!("apply-policy.{purpose}"),
        ];
        Composed { layers: names.iter().filter_map(|n| self.layer(n, &vars)).collect() }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn layers(c: &Composed) -> Vec<Layer> {
        c.layers.iter().map(|l| l.layer).collect()
    }

    #[test]
    fn every_builtin_file_parses_into_its_layer() {
        let mut set = PromptSet { files: BTreeMap::new() };
        for (file, text) in BUILTIN {
            set.add(file, text, false).unwrap();
        }
        assert_eq!(set.files.len(), BUILTIN.len());
        assert_eq!(&set, PromptSet::builtin());
    }

    #[test]
    fn drafting_layers_come_in_the_fixed_order() {
        let c = PromptSet::builtin().compose(&Mode::Drafting, Entry::Article);
        let without_digest: Vec<Layer> = Layer::ORDER.into_iter().filter(|l| *l != Layer::ContextDigest).collect();
        assert_eq!(layers(&c), without_digest);
        let ids = c.ids("ctx_1");
        assert_eq!(
            ids,
            [
                "core-identity@v1",
                "domain-persona@v1",
                "guardrails@v1",
                "output-contract.drafting@v1",
                "entry.article@v1",
                "mode.drafting@v1",
                "context:ctx_1",
                "apply-policy.drafting@v1"
            ]
        );
        let system = c.system("# Project\nDIGEST");
        let at = |needle: &str| system.find(needle).unwrap_or_else(|| panic!("{needle} in {system}"));
        assert!(at("Inkstone's assistant") < at("experienced editor"));
        assert!(at("experienced editor") < at("Never invent facts"));
        assert!(at("Never invent facts") < at("Read with the tools"));
        assert!(at("Read with the tools") < at("whole article"));
        assert!(at("whole article") < at("Mode: default"));
        assert!(at("Mode: default") < at("DIGEST"));
        assert!(at("DIGEST") < at("# Apply policy"));
    }

    #[test]
    fn plan_mode_swaps_only_the_mode_layer() {
        let drafting = PromptSet::builtin().compose(&Mode::Drafting, Entry::Article);
        let plan = PromptSet::builtin().compose(&Mode::Plan, Entry::Article);
        assert_eq!(layers(&drafting), layers(&plan));
        let differ: Vec<Layer> = drafting.layers.iter().zip(&plan.layers).filter(|(a, b)| a != b).map(|(a, _)| a.layer).collect();
        assert_eq!(differ, [Layer::ModeStrategy]);
        assert!(plan.head().contains("Mode: plan"));
    }

    #[test]
    fn optimize_mode_fills_goal_intensity_constraints_and_the_draft_entry() {
        let mode = Mode::Optimize { goal: Goal::Ctr, intensity: Intensity::Conservative, constraints: vec!["keep the title".into()] };
        let c = PromptSet::builtin().compose(&mode, Entry::Draft(Platform::X));
        let ids = c.ids("ctx_9");
        assert_eq!(ids[3], "output-contract.optimize@v1");
        assert_eq!(ids[4], "entry.draft@v1");
        assert_eq!(ids[5], "mode.optimize@v1");
        assert_eq!(ids[6], "context:ctx_9");
        assert_eq!(ids[7], "apply-policy.optimize@v1");
        let head = c.head();
        assert!(head.contains("Goal: ctr."), "{head}");
        assert!(head.contains("Intensity: conservative."));
        assert!(head.contains("Constraints: keep the title"));
        assert!(head.contains("one platform draft only (x)"));
        assert!(!head.contains("{{"), "every variable is filled: {head}");
        assert!(c.tail().contains("hunk by hunk"));
    }

    #[test]
    fn a_user_override_replaces_the_builtin_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("guardrails@v1.md"), "<!-- override = 3 -->\nHouse rules: no emoji.\n").unwrap();
        let set = PromptSet::load(dir.path()).unwrap();
        let c = set.compose(&Mode::Drafting, Entry::Article);
        let guard = c.layers.iter().find(|l| l.layer == Layer::Guardrails).unwrap();
        assert_eq!(guard.id, "guardrails@v1+local.3");
        assert_eq!(guard.text, "House rules: no emoji.\n");
        // Without the marker, or for an unknown name, the file is refused.
        std::fs::write(dir.path().join("guardrails@v1.md"), "House rules.\n").unwrap();
        assert!(PromptSet::load(dir.path()).unwrap_err().to_string().contains("override = N"));
        std::fs::remove_file(dir.path().join("guardrails@v1.md")).unwrap();
        std::fs::write(dir.path().join("tone@v1.md"), "<!-- override = 1 -->\nx\n").unwrap();
        assert!(PromptSet::load(dir.path()).is_err());
    }
}
