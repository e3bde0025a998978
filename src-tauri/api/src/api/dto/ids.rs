//! The wire form of the small values in `inkstone-model` that many records hold: the
//! publishing platform, a source range, a draft's content and what a proposal rests on
//! (see [`super`]). The platform and the range also come in as parameters, so they
//! convert both ways.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::model;

/// A publishing target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Wechat,
    Zhihu,
    X,
    Douyin,
    Xiaohongshu,
}

/// A range in a project's source, in UTF-16 code units (what editors in a web view
/// count), `from <= to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Anchor {
    pub from: u32,
    pub to: u32,
}

/// What a saved or compiled platform draft holds, by the platform's kind of content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DraftContent {
    /// WeChat: inline-styled HTML and the digest shown in share cards.
    Html { html: String, digest: String },
    /// Zhihu: Markdown in the subset its importer accepts.
    Markdown { markdown: String },
    /// X: one post, or a numbered thread.
    Thread { posts: Vec<Post> },
    /// Douyin and Xiaohongshu: a caption or note body, and topic tags.
    Card { body: String, tags: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Post {
    pub text: String,
    pub weighted_length: u32,
}

/// Something the model had read (in the turn that proposed a change, or in an earlier
/// turn still in its context, summarised or not) before it proposed the change:
/// the answer to "Why this change?". Each names where it can be opened again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ProvenanceSource {
    /// A tool's result: event `sequence` of the log of `owner_id` (a session or a run)
    /// holds what the model was sent; a large result is in the result store under
    /// `result_ref`.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool: String,
        tool_use_id: String,
        owner_id: String,
        sequence: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        result_ref: Option<String>,
    },
    /// A search hit a search tool returned: the document (`project_id`, the version or
    /// comment), the span, and the snippet the model read.
    #[serde(rename_all = "camelCase")]
    SearchHit {
        tool: String,
        tool_use_id: String,
        /// As the tool gave it (`prj_…@v3:10-20`).
        reference: String,
        project_id: String,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        version: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        comment_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        span: Option<Anchor>,
        snippet: String,
    },
    /// A confirmed memory item in the call's context.
    #[serde(rename_all = "camelCase")]
    Memory { memory_id: String, text: String },
    /// A text pinned in the session (by the person, or an instruction of theirs
    /// carried out of compacted conversation).
    #[serde(rename_all = "camelCase")]
    Pin { pin_id: String, text: String },
    /// The part of the source the person's message was scoped to.
    Selection { span: Anchor, text: String },
    /// A link the person pasted into a message.
    Link { url: String },
    /// The summary of a platform's strongest and weakest posts the model read: in its
    /// call's context, or as the result of the `read_performance` tool call
    /// `tool_use_id`. `snapshot_ids` are the metric snapshots it rests on (evidence).
    #[serde(rename_all = "camelCase")]
    PerformanceSummary {
        platform: Platform,
        snapshot_ids: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        tool_use_id: Option<String>,
    },
}

impl From<model::Platform> for Platform {
    fn from(record: model::Platform) -> Self {
        use model::Platform as P;
        match record {
            P::Wechat => Self::Wechat,
            P::Zhihu => Self::Zhihu,
            P::X => Self::X,
            P::Douyin => Self::Douyin,
            P::Xiaohongshu => Self::Xiaohongshu,
        }
    }
}

impl From<&model::Platform> for Platform {
    fn from(record: &model::Platform) -> Self {
        Platform::from(*record)
    }
}

impl From<Platform> for model::Platform {
    fn from(wire: Platform) -> Self {
        match wire {
            Platform::Wechat => Self::Wechat,
            Platform::Zhihu => Self::Zhihu,
            Platform::X => Self::X,
            Platform::Douyin => Self::Douyin,
            Platform::Xiaohongshu => Self::Xiaohongshu,
        }
    }
}

impl From<model::Anchor> for Anchor {
    fn from(record: model::Anchor) -> Self {
        Anchor { from: record.from, to: record.to }
    }
}

impl From<&model::Anchor> for Anchor {
    fn from(record: &model::Anchor) -> Self {
        Anchor::from(*record)
    }
}

impl From<Anchor> for model::Anchor {
    fn from(wire: Anchor) -> Self {
        model::Anchor { from: wire.from, to: wire.to }
    }
}

impl From<&model::DraftContent> for DraftContent {
    fn from(record: &model::DraftContent) -> Self {
        use model::DraftContent as C;
        match record {
            C::Html { html, digest } => Self::Html { html: html.clone(), digest: digest.clone() },
            C::Markdown { markdown } => Self::Markdown { markdown: markdown.clone() },
            C::Thread { posts } => Self::Thread { posts: posts.iter().map(Into::into).collect() },
            C::Card { body, tags } => Self::Card { body: body.clone(), tags: tags.clone() },
        }
    }
}

impl From<model::DraftContent> for DraftContent {
    fn from(record: model::DraftContent) -> Self {
        DraftContent::from(&record)
    }
}

impl From<&model::Post> for Post {
    fn from(record: &model::Post) -> Self {
        Post { text: record.text.clone(), weighted_length: record.weighted_length }
    }
}

impl From<&model::ProvenanceSource> for ProvenanceSource {
    fn from(record: &model::ProvenanceSource) -> Self {
        use model::ProvenanceSource as S;
        match record {
            S::ToolResult { tool, tool_use_id, owner_id, sequence, result_ref } => {
                Self::ToolResult { tool: tool.clone(), tool_use_id: tool_use_id.clone(), owner_id: owner_id.clone(), sequence: *sequence, result_ref: result_ref.clone() }
            }
            S::SearchHit { tool, tool_use_id, reference, project_id, title, version, comment_id, span, snippet } => Self::SearchHit {
                tool: tool.clone(),
                tool_use_id: tool_use_id.clone(),
                reference: reference.clone(),
                project_id: project_id.clone(),
                title: title.clone(),
                version: *version,
                comment_id: comment_id.clone(),
                span: span.map(Into::into),
                snippet: snippet.clone(),
            },
            S::Memory { memory_id, text } => Self::Memory { memory_id: memory_id.clone(), text: text.clone() },
            S::Pin { pin_id, text } => Self::Pin { pin_id: pin_id.clone(), text: text.clone() },
            S::Selection { span, text } => Self::Selection { span: (*span).into(), text: text.clone() },
            S::Link { url } => Self::Link { url: url.clone() },
            S::PerformanceSummary { platform, snapshot_ids, tool_use_id } => {
                Self::PerformanceSummary { platform: (*platform).into(), snapshot_ids: snapshot_ids.clone(), tool_use_id: tool_use_id.clone() }
            }
        }
    }
}

impl From<model::ProvenanceSource> for ProvenanceSource {
    fn from(record: model::ProvenanceSource) -> Self {
        ProvenanceSource::from(&record)
    }
}

impl From<DraftContent> for model::DraftContent {
    fn from(wire: DraftContent) -> Self {
        match wire {
            DraftContent::Html { html, digest } => Self::Html { html, digest },
            DraftContent::Markdown { markdown } => Self::Markdown { markdown },
            DraftContent::Thread { posts } => Self::Thread { posts: posts.into_iter().map(Into::into).collect() },
            DraftContent::Card { body, tags } => Self::Card { body, tags },
        }
    }
}

impl From<Post> for model::Post {
    fn from(wire: Post) -> Self {
        model::Post { text: wire.text, weighted_length: wire.weighted_length }
    }
}
