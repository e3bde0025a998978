//! The wire form of what an optimization run aims at and how much it may change (see
//! [`super`]). The prompt layers themselves never reach the wire.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What an optimization run aims at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS, Default)]
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

/// How much an optimization run may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS, Default)]
#[serde(rename_all = "snake_case")]
pub enum Intensity {
    Conservative,
    #[default]
    Balanced,
    Aggressive,
}

impl From<crate::prompts::Goal> for Goal {
    fn from(record: crate::prompts::Goal) -> Self {
        use crate::prompts::Goal as G;
        match record {
            G::Recommendation => Self::Recommendation,
            G::Views => Self::Views,
            G::Ctr => Self::Ctr,
            G::Completion => Self::Completion,
            G::Engagement => Self::Engagement,
            G::Conversion => Self::Conversion,
        }
    }
}

impl From<Goal> for crate::prompts::Goal {
    fn from(goal: Goal) -> Self {
        match goal {
            Goal::Recommendation => Self::Recommendation,
            Goal::Views => Self::Views,
            Goal::Ctr => Self::Ctr,
            Goal::Completion => Self::Completion,
            Goal::Engagement => Self::Engagement,
            Goal::Conversion => Self::Conversion,
        }
    }
}

impl From<crate::prompts::Intensity> for Intensity {
    fn from(record: crate::prompts::Intensity) -> Self {
        use crate::prompts::Intensity as I;
        match record {
            I::Conservative => Self::Conservative,
            I::Balanced => Self::Balanced,
            I::Aggressive => Self::Aggressive,
        }
    }
}

impl From<Intensity> for crate::prompts::Intensity {
    fn from(intensity: Intensity) -> Self {
        match intensity {
            Intensity::Conservative => Self::Conservative,
            Intensity::Balanced => Self::Balanced,
            Intensity::Aggressive => Self::Aggressive,
        }
    }
}
