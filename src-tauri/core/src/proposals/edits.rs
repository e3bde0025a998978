//! Edits from the model, anchored by quoted text rather than line numbers.

use serde::{Deserialize, Serialize};

/// One edit of a text, anchored by quoted text: `find` must occur exactly once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    pub find: String,
    pub replace: String,
}

/// Why an anchored edit could not be placed; told to the model so it can retry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("edit {index}: `find` is empty; quote the text to replace")]
    Empty { index: usize },
    #[error("edit {index}: the quoted text was not found in the current text{near}")]
    Missing { index: usize, near: String },
    #[error("edit {index}: the quoted text occurs {count} times; quote more of the surrounding text so it occurs once")]
    Ambiguous { index: usize, count: usize },
    #[error("edits {first} and {second} overlap; merge them into one edit")]
    Overlap { first: usize, second: usize },
    #[error("edit {index} changes nothing (`find` equals `replace`)")]
    NoChange { index: usize },
}

/// `text` with every edit applied. Edits are numbered from 1 in errors; each `find`
/// must occur exactly once in `text` (the original, not the partly edited text) and
/// edits must not overlap.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Result<String, EditError> {
    let mut placed: Vec<(usize, usize, usize)> = Vec::with_capacity(edits.len());
    for (i, edit) in edits.iter().enumerate() {
        let index = i + 1;
        if edit.find.is_empty() {
            return Err(EditError::Empty { index });
        }
        if edit.find == edit.replace {
            return Err(EditError::NoChange { index });
        }
        let found: Vec<usize> = text.match_indices(edit.find.as_str()).map(|(at, _)| at).collect();
        match found.len() {
            0 => return Err(EditError::Missing { index, near: near_miss(text, &edit.find) }),
            1 => placed.push((found[0], found[0] + edit.find.len(), i)),
            count => return Err(EditError::Ambiguous { index, count }),
        }
    }
    placed.sort();
    for pair in placed.windows(2) {
        if pair[1].0 < pair[0].1 {
            let (a, b) = (pair[0].2.min(pair[1].2) + 1, pair[0].2.max(pair[1].2) + 1);
            return Err(EditError::Overlap { first: a, second: b });
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for (start, end, i) in placed {
        out.push_str(&text[cursor..start]);
        out.push_str(&edits[i].replace);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// A hint when the quote differs only in whitespace or punctuation width.
fn near_miss(text: &str, find: &str) -> String {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let target = squash(find);
    if !target.is_empty() && squash(text).contains(&target) {
        return " (it occurs with different spacing or line breaks: quote the text exactly as it is, for example from read_project_context)".to_owned();
    }
    String::new()
}
