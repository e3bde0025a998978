//! The wire form of a session's permission mode and of the part of the source a
//! person's message is scoped to (see [`super`]). The context snapshots themselves never
//! reach the wire.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The permission mode of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS, Default)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Reads and proposals run; writes ask.
    #[default]
    Default,
    /// Read and propose only: every write is denied by the permission engine.
    Plan,
}

/// The part of the source a person's message is scoped to: a UTF-16 range of the
/// project's working copy (what CodeMirror counts, like every span in Inkstone) and
/// the text that was there when the message was sent. As a parameter it is checked
/// against the source by [`crate::context::Selection::check`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Selection {
    pub from: u32,
    pub to: u32,
    pub text: String,
}

impl From<crate::context::Mode> for Mode {
    fn from(record: crate::context::Mode) -> Self {
        use crate::context::Mode as M;
        match record {
            M::Default => Self::Default,
            M::Plan => Self::Plan,
        }
    }
}

impl From<Mode> for crate::context::Mode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Default => Self::Default,
            Mode::Plan => Self::Plan,
        }
    }
}

impl From<&crate::context::Selection> for Selection {
    fn from(record: &crate::context::Selection) -> Self {
        Selection { from: record.from, to: record.to, text: record.text.clone() }
    }
}

impl From<Selection> for crate::context::Selection {
    fn from(selection: Selection) -> Self {
        Self { from: selection.from, to: selection.to, text: selection.text }
    }
}
