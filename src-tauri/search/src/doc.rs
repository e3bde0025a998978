//! The documents of the index: one per working copy, version and comment, built
//! from the store's records, with the ids that name them.

use crate::model::{Anchor, Comment, Platform, Project, Version};

use super::{text, DocKind};

/// A document of the index, built from a record.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDoc {
    pub doc_id: String,
    pub project_id: String,
    pub kind: DocKind,
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    pub anchor: Option<Anchor>,
    pub platforms: Vec<Platform>,
    pub title: String,
    pub tags: Vec<String>,
    pub category: Option<String>,
    pub summary: String,
    /// The text spans point into: the Markdown source, or the comment's body.
    pub body: String,
    /// `sha256:` of title and body: equal contents are one hit within a project.
    pub text_hash: String,
}

impl IndexDoc {
    fn of_source(doc_id: String, project_id: &str, kind: DocKind, version: Option<u32>, title: &str, source: &str) -> IndexDoc {
        let front = text::front_matter(source);
        IndexDoc {
            doc_id,
            project_id: project_id.to_owned(),
            kind,
            version,
            comment_id: None,
            anchor: None,
            platforms: Vec::new(),
            title: title.to_owned(),
            tags: front.tags,
            category: front.category,
            summary: text::summary(&source[front.body_start..]),
            body: source.to_owned(),
            text_hash: text_hash(title, source),
        }
    }

    /// A project's working copy.
    pub fn working(project: &Project) -> IndexDoc {
        let mut doc = IndexDoc::of_source(working_id(&project.id), &project.id, DocKind::Working, None, &project.title, &project.source);
        doc.platforms = project.platforms.clone();
        doc
    }

    pub fn version(version: &Version) -> IndexDoc {
        IndexDoc::of_source(version_id(&version.project_id, version.number), &version.project_id, DocKind::Version, Some(version.number), &version.title, &version.source)
    }

    pub fn comment(comment: &Comment) -> IndexDoc {
        IndexDoc {
            doc_id: comment_id(&comment.project_id, &comment.id),
            project_id: comment.project_id.clone(),
            kind: DocKind::Comment,
            version: None,
            comment_id: Some(comment.id.clone()),
            anchor: comment.anchor,
            platforms: Vec::new(),
            title: String::new(),
            tags: Vec::new(),
            category: None,
            summary: String::new(),
            body: comment.body.clone(),
            text_hash: text_hash("", &comment.body),
        }
    }
}

pub(super) fn text_hash(title: &str, body: &str) -> String {
    crate::store::sha256_ref(format!("{title}\0{body}").as_bytes())
}

pub(super) fn working_id(project_id: &str) -> String {
    format!("w/{project_id}")
}

pub(super) fn version_id(project_id: &str, number: u32) -> String {
    format!("v/{project_id}/{number}")
}

pub(super) fn comment_id(project_id: &str, comment_id: &str) -> String {
    format!("c/{project_id}/{comment_id}")
}
