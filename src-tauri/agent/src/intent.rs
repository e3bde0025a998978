//! Session intent: what the person is working on — brand, product, topic,
//! output type, platforms, length — updated from each of their messages by rules
//! (keyword tables, patterns, and jieba's segmentation for Chinese), never by a model
//! call, so the same message always gives the same intent. Pure.
//!
//! - A message that only adds material (a link, a pasted document) keeps the subject:
//!   [`update`] returns the intent unchanged.
//! - A field the message names replaces the old one; the others stay.
//! - [`clarification`]: ask only when needed. A request to generate (copy, a title set,
//!   a video script) without any subject (brand, product, topic, or a project with
//!   content) asks for the subject; a request for copy or a script asks for the
//!   platform (and length) only when neither the message, the intent so far nor the
//!   project's platforms say it. Strategy, analysis and critique requests never ask.

mod names;
mod patterns;
mod tables;

use serde::{Deserialize, Serialize};

pub use names::{brand, product, topic};
pub use patterns::{is_title_edit, length};
pub use tables::{classify, output_type, platforms};

use crate::model::Platform;

/// What the person wants made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputType {
    Copy,
    TitleSet,
    VideoScript,
    StrategyNotes,
    Analysis,
    Critique,
}

impl OutputType {
    /// True for the kinds that generate publishable text.
    pub fn generates(self) -> bool {
        matches!(self, OutputType::Copy | OutputType::TitleSet | OutputType::VideoScript)
    }

    fn label(self) -> &'static str {
        match self {
            OutputType::Copy => "copy",
            OutputType::TitleSet => "a set of titles",
            OutputType::VideoScript => "a video script",
            OutputType::StrategyNotes => "strategy notes",
            OutputType::Analysis => "an analysis",
            OutputType::Critique => "a critique",
        }
    }
}

/// The unit of a requested length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LengthUnit {
    Characters,
    Words,
    Seconds,
}

/// A requested length ("800 字", "300 words", "60 秒").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Length {
    pub value: u32,
    pub unit: LengthUnit,
}

/// What is missing before generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    Subject,
    Platform,
    Length,
}

/// The question to ask before generating, when something cannot be inferred.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Clarification {
    pub missing: Vec<Missing>,
    /// The question, in English (the panel shows its own text by `missing`).
    pub question: String,
}

/// The session's intent. Every field is optional: a session starts knowing nothing.
/// Unknown fields are refused (it is also the `session.setIntent` parameter).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionIntent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    #[serde(default)]
    pub platforms: Vec<Platform>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<Length>,
}

impl SessionIntent {
    /// True when nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == SessionIntent::default()
    }

    /// True when a subject is named (brand, product or topic).
    pub fn has_subject(&self) -> bool {
        self.brand.is_some() || self.product.is_some() || self.topic.is_some()
    }
}

/// What the project says that the rules may use.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProjectHints<'a> {
    /// The project's chosen platforms (empty: none chosen).
    pub platforms: &'a [Platform],
    /// The project's brand profile name, recognised when a message names it.
    pub brand_name: Option<&'a str>,
    /// True when the project has content (then "this article" is a subject).
    pub has_content: bool,
}

/// How a message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// It asks for something (or says something about the work).
    Task,
    /// It only adds material: a link, a pasted document.
    Material,
}

/// The intent after the person's `message`: unchanged for material; otherwise each
/// field the message names replaces the old one. A new request (an output type) with a
/// new subject replaces the topic even when only keywords name it.
pub fn update(current: &SessionIntent, message: &str, project: &ProjectHints<'_>) -> SessionIntent {
    if classify(message) == MessageKind::Material {
        return current.clone();
    }
    let mut next = current.clone();
    let kind = output_type(message);
    if let Some(kind) = kind {
        next.output_type = Some(kind);
    }
    let named = platforms(message);
    if !named.is_empty() {
        next.platforms = named;
    }
    if let Some(length) = length(message) {
        next.length = Some(length);
    }
    let brand = brand(message, project.brand_name);
    let product = product(message);
    if let Some(brand) = &brand {
        next.brand = Some(brand.clone());
    }
    if let Some(product) = &product {
        next.product = Some(product.clone());
    }
    // Keywords name a topic only for a request that names no brand or product (those
    // are the subject then), and never replace a subject the person named before
    // unless the message is a new request.
    let explicit = topic(message, false);
    let topic = match explicit {
        Some(topic) => Some(topic),
        None if kind.is_some() && brand.is_none() && product.is_none() && (current.topic.is_none() || kind != current.output_type) => topic(message, true),
        None => None,
    };
    if let Some(topic) = topic {
        next.topic = Some(topic);
    }
    next
}

/// The question to ask before generating, or `None` when nothing is missing or the
/// request does not generate (strategy, analysis, critique, or no request at all).
pub fn clarification(intent: &SessionIntent, project: &ProjectHints<'_>) -> Option<Clarification> {
    let kind = intent.output_type.filter(|k| k.generates())?;
    let mut missing = Vec::new();
    if !intent.has_subject() && !project.has_content {
        missing.push(Missing::Subject);
    }
    let platform_known = !intent.platforms.is_empty() || !project.platforms.is_empty();
    if matches!(kind, OutputType::Copy | OutputType::VideoScript) && !platform_known {
        missing.push(Missing::Platform);
        if intent.length.is_none() {
            missing.push(Missing::Length);
        }
    }
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<&str> = missing
        .iter()
        .map(|m| match m {
            Missing::Subject => "what it is about (the brand, product or topic)",
            Missing::Platform => "which platform it is for",
            Missing::Length => "how long it should be",
        })
        .collect();
    Some(Clarification { missing, question: format!("Before writing {}, ask the person {}.", kind.label(), parts.join(", and ")) })
}

/// The intent as the model reads it (in the pinned layer), or "" when nothing is known.
pub fn render(intent: &SessionIntent, clarify: Option<&Clarification>) -> String {
    if intent.is_empty() && clarify.is_none() {
        return String::new();
    }
    let mut out = String::from("# Session intent (kept from the person's messages; the person can edit it)\n");
    let fields =
        [("brand", intent.brand.clone()), ("product", intent.product.clone()), ("topic", intent.topic.clone()), ("output", intent.output_type.map(|k| k.label().to_owned()))];
    for (name, value) in fields {
        if let Some(value) = value {
            out.push_str(&format!("{name}: {value}\n"));
        }
    }
    if !intent.platforms.is_empty() {
        out.push_str(&format!("platforms: {}\n", intent.platforms.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")));
    }
    if let Some(length) = intent.length {
        let unit = match length.unit {
            LengthUnit::Characters => "characters",
            LengthUnit::Words => "words",
            LengthUnit::Seconds => "seconds",
        };
        out.push_str(&format!("length: {} {unit}\n", length.value));
    }
    if let Some(clarify) = clarify {
        out.push_str(&format!("Clarify first: {} Use ask_user_question, then wait for the answer.\n", clarify.question));
    }
    out
}

#[cfg(test)]
mod tests;
