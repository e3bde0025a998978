//! The wire form of a drafting session's intent and the question to ask before
//! generating (see [`super`]). `SessionIntent` is also `session.setIntent`'s parameter.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Platform;

/// What the person wants made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OutputType {
    Copy,
    TitleSet,
    VideoScript,
    StrategyNotes,
    Analysis,
    Critique,
}

/// The unit of a requested length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum LengthUnit {
    Characters,
    Words,
    Seconds,
}

/// A requested length ("800 字", "300 words", "60 秒").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Length {
    pub value: u32,
    pub unit: LengthUnit,
}

/// What is missing before generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    Subject,
    Platform,
    Length,
}

/// The question to ask before generating, when something cannot be inferred.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Clarification {
    pub missing: Vec<Missing>,
    /// The question, in English (the panel shows its own text by `missing`).
    pub question: String,
}

/// The session's intent. Every field is optional: a session starts knowing nothing.
/// Unknown fields are refused (it is also the `session.setIntent` parameter).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionIntent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub brand: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub product: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub output_type: Option<OutputType>,
    #[serde(default)]
    pub platforms: Vec<Platform>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub length: Option<Length>,
}

impl From<&crate::intent::OutputType> for OutputType {
    fn from(record: &crate::intent::OutputType) -> Self {
        use crate::intent::OutputType as O;
        match record {
            O::Copy => Self::Copy,
            O::TitleSet => Self::TitleSet,
            O::VideoScript => Self::VideoScript,
            O::StrategyNotes => Self::StrategyNotes,
            O::Analysis => Self::Analysis,
            O::Critique => Self::Critique,
        }
    }
}

impl From<OutputType> for crate::intent::OutputType {
    fn from(output: OutputType) -> Self {
        match output {
            OutputType::Copy => Self::Copy,
            OutputType::TitleSet => Self::TitleSet,
            OutputType::VideoScript => Self::VideoScript,
            OutputType::StrategyNotes => Self::StrategyNotes,
            OutputType::Analysis => Self::Analysis,
            OutputType::Critique => Self::Critique,
        }
    }
}

impl From<&crate::intent::LengthUnit> for LengthUnit {
    fn from(record: &crate::intent::LengthUnit) -> Self {
        use crate::intent::LengthUnit as U;
        match record {
            U::Characters => Self::Characters,
            U::Words => Self::Words,
            U::Seconds => Self::Seconds,
        }
    }
}

impl From<LengthUnit> for crate::intent::LengthUnit {
    fn from(unit: LengthUnit) -> Self {
        match unit {
            LengthUnit::Characters => Self::Characters,
            LengthUnit::Words => Self::Words,
            LengthUnit::Seconds => Self::Seconds,
        }
    }
}

impl From<&crate::intent::Length> for Length {
    fn from(record: &crate::intent::Length) -> Self {
        Length { value: record.value, unit: (&record.unit).into() }
    }
}

impl From<Length> for crate::intent::Length {
    fn from(length: Length) -> Self {
        Self { value: length.value, unit: length.unit.into() }
    }
}

impl From<&crate::intent::Missing> for Missing {
    fn from(record: &crate::intent::Missing) -> Self {
        use crate::intent::Missing as M;
        match record {
            M::Subject => Self::Subject,
            M::Platform => Self::Platform,
            M::Length => Self::Length,
        }
    }
}

impl From<&crate::intent::Clarification> for Clarification {
    fn from(record: &crate::intent::Clarification) -> Self {
        Clarification { missing: record.missing.iter().map(Into::into).collect(), question: record.question.clone() }
    }
}

impl From<&crate::intent::SessionIntent> for SessionIntent {
    fn from(record: &crate::intent::SessionIntent) -> Self {
        SessionIntent {
            brand: record.brand.clone(),
            product: record.product.clone(),
            topic: record.topic.clone(),
            output_type: record.output_type.as_ref().map(Into::into),
            platforms: record.platforms.iter().map(Into::into).collect(),
            length: record.length.as_ref().map(Into::into),
        }
    }
}

impl From<SessionIntent> for crate::intent::SessionIntent {
    fn from(intent: SessionIntent) -> Self {
        Self {
            brand: intent.brand,
            product: intent.product,
            topic: intent.topic,
            output_type: intent.output_type.map(Into::into),
            platforms: intent.platforms.into_iter().map(Into::into).collect(),
            length: intent.length.map(Into::into),
        }
    }
}
