//! The record id grammar, in one place.
//!
//! An id is `<prefix>_<body>`: the prefix is 2–8 lowercase ASCII letters naming the
//! kind (`prj`, `ver`, `med`, `ses`, ...), the body 1–64 ASCII letters, digits, `_`
//! or `-`. Ids made here are `<prefix>_<ULID>` (`prj_01JD…`, tests `prj_0000000001`);
//! a workspace server's are `<prefix>_<hex>`.
//!
//! The grammar has no `/`, `\`, `.`, `:`, no space, control or non-ASCII character, so
//! an id is always one plain file name (export and backup folders name projects,
//! media and sessions by id) and one plain key part (keys separate parts with 0x00).
//! Every id that comes from outside — an export being imported or restored, a version
//! pulled from a workspace server, a parameter of an API call — is checked with
//! [`check`] before anything is written, and paths are built only from checked ids.

/// Longest prefix, in characters.
pub const MAX_PREFIX_CHARS: usize = 8;
/// Longest body (after `<prefix>_`), in characters.
pub const MAX_BODY_CHARS: usize = 64;

/// Why an id does not follow the grammar; its `Display` is a sentence for a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("{id:?} is not an Inkstone id (`<prefix>_<letters, digits, _ or ->`, at most {max} characters)", max = MAX_PREFIX_CHARS + 1 + MAX_BODY_CHARS)]
    Malformed { id: String },
    #[error("{id:?} is not an id of this kind (it should start with `{expected}_`)")]
    WrongKind { id: String, expected: &'static str },
}

/// True when `id` follows the grammar (any prefix).
pub fn is_well_formed(id: &str) -> bool {
    let Some((prefix, body)) = id.split_once('_') else { return false };
    (2..=MAX_PREFIX_CHARS).contains(&prefix.len())
        && prefix.bytes().all(|b| b.is_ascii_lowercase())
        && (1..=MAX_BODY_CHARS).contains(&body.len())
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks that `id` follows the grammar and, when `prefix` is given, is of that kind.
/// The id shown in the error is cut to 100 characters.
pub fn check(id: &str, prefix: Option<&'static str>) -> Result<(), IdError> {
    let shown = || id.chars().take(100).collect::<String>();
    if !is_well_formed(id) {
        return Err(IdError::Malformed { id: shown() });
    }
    match prefix {
        Some(expected) if id.split_once('_').map(|(p, _)| p) != Some(expected) => Err(IdError::WrongKind { id: shown(), expected }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_made_here_and_by_a_server_follow_the_grammar() {
        for id in ["prj_01JD3Z5V6Q0W8X9Y7T2R4S1M0N", "ver_0000000001", "wsp_3f9a0c1d2e4b5a6c", "prj_bench_long", "pin_12_3", "med_a-b"] {
            assert!(is_well_formed(id), "{id}");
        }
    }

    #[test]
    fn paths_separators_and_odd_characters_are_refused() {
        let long = format!("prj_{}", "a".repeat(MAX_BODY_CHARS + 1));
        for id in [
            "",
            "prj",
            "prj_",
            "_abc",
            "PRJ_1",
            "p_1",
            "prjprojec_1",
            "prj_../x",
            "prj_a/b",
            "/etc/passwd",
            "prj_a\\b",
            "prj_a.b",
            "prj_a:b",
            "prj_a b",
            "prj_a\0",
            "prj_墨",
            "../prj_1",
            &long,
        ] {
            assert!(!is_well_formed(id), "{id:?}");
            assert!(check(id, None).is_err(), "{id:?}");
        }
    }

    #[test]
    fn the_kind_is_checked_when_asked() {
        assert_eq!(check("prj_1", Some("prj")), Ok(()));
        assert_eq!(check("ver_1", Some("prj")), Err(IdError::WrongKind { id: "ver_1".into(), expected: "prj" }));
        assert!(check("ver_1", None).is_ok());
    }
}
