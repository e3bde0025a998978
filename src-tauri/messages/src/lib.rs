//! Inkstone's user-facing English, from the one message catalog per language that the
//! UI, the CLI and the core all read: `messages/<lang>/<feature>.json` at the repository
//! root, flat objects from a stable message id (`hint.set_api_key`, `finding.ad_law`) to
//! its text. The English catalog is compiled in (see `build.rs`), so a lookup is a
//! `match` and needs no file at run time; the UI imports the same files
//! (`ui/src/shared/i18n/`), and the catalog test in core's tidy suite checks that every
//! id the core or the UI names exists in both languages with the values it needs, and
//! that no entry is unused.
//!
//! The message syntax is the subset of ICU MessageFormat the UI formats the same way
//! (`ui/src/shared/i18n/format.ts`): `{name}` is a value, and
//! `{n, plural, =0 {…} one {…} other {…}}` picks a branch by the count `n` (English:
//! `one` for exactly 1), with `#` in a branch standing for the count. A value that is
//! not given stays as its `{name}`, so a wording never fails to render.

use std::collections::BTreeMap;

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

/// The English text of `id` with its values filled in; `None` when the catalog has no
/// such id.
pub fn english_with(id: &str, values: &BTreeMap<String, String>) -> Option<String> {
    english(id).map(|template| format(template, values))
}

/// `template` in the catalogs' syntax with its values filled and its plurals chosen by
/// the English plural rules.
pub fn format(template: &str, values: &BTreeMap<String, String>) -> String {
    format_by(template, values, Rules::English)
}

/// `template` with every count in its `other` form ("1 links"): the form English the
/// fit report (growth/fit.rs) still writes by itself takes, for its test to compare.
#[doc(hidden)]
pub fn format_other_form(template: &str, values: &BTreeMap<String, String>) -> String {
    format_by(template, values, Rules::OtherOnly)
}

#[derive(Clone, Copy)]
enum Rules {
    English,
    OtherOnly,
}

fn format_by(template: &str, values: &BTreeMap<String, String>, rules: Rules) -> String {
    format_without_plurals(template, values).unwrap_or_else(|| format_by_parts(template, values, rules))
}

/// [`format_by`] through the template's parts, plurals and all.
fn format_by_parts(template: &str, values: &BTreeMap<String, String>, rules: Rules) -> String {
    let (parts, end) = parse(template, 0, false);
    let mut out = String::new();
    render(&parts, values, "#", rules, &mut out);
    if end < template.len() {
        // A stray `}` is text; so is what follows it.
        out.push('}');
        out.push_str(&format_by_parts(&template[end + 1..], values, rules));
    }
    out
}

/// [`format_by`] of a template without a plural (most of them), in one pass without
/// building its parts: the same output, since outside a plural `#` is text, a stray `}`
/// is text and a `{` that starts no argument is text. `None` at the first plural (the
/// caller then takes the full path).
fn format_without_plurals(template: &str, values: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::with_capacity(template.len() + 32);
    let mut i = 0;
    while let Some(skip) = template[i..].find('{') {
        let at = i + skip;
        out.push_str(&template[i..at]);
        match argument(template, at + 1) {
            Some((_, true, _)) => return None,
            Some((name, false, next)) => {
                match values.get(&name) {
                    Some(value) => out.push_str(value),
                    None => {
                        out.push('{');
                        out.push_str(&name);
                        out.push('}');
                    }
                }
                i = next;
            }
            None => {
                out.push('{');
                i = at + 1;
            }
        }
    }
    out.push_str(&template[i..]);
    Some(out)
}

/// The names of the values a template uses, plural counts included.
pub fn placeholders(template: &str) -> Vec<String> {
    fn walk(parts: &[Part], out: &mut Vec<String>) {
        for part in parts {
            match part {
                Part::Text(_) | Part::Hash => {}
                Part::Arg(name) => out.push(name.clone()),
                Part::Plural { count, branches } => {
                    out.push(count.clone());
                    branches.iter().for_each(|(_, branch)| walk(branch, out));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&parse(template, 0, false).0, &mut out);
    out.sort();
    out.dedup();
    out
}

enum Part {
    Text(String),
    Arg(String),
    Plural { count: String, branches: Vec<Branch> },
    Hash,
}

/// A plural's branch: its selector (`one`, `=0`, …) and its message.
type Branch = (String, Vec<Part>);

/// The name of an argument at `at` (just after its `{`, spaces allowed around it) and
/// what follows it: `}` or `, plural,`. Returns the name, whether it is a plural, and
/// the index after what follows.
fn argument(src: &str, at: usize) -> Option<(String, bool, usize)> {
    let rest = &src[at..];
    let trimmed = rest.trim_start();
    let name_len = trimmed.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(trimmed.len());
    if name_len == 0 {
        return None;
    }
    let name = &trimmed[..name_len];
    let after = trimmed[name_len..].trim_start();
    let consumed = |tail: &str| src.len() - tail.len();
    if let Some(tail) = after.strip_prefix('}') {
        return Some((name.to_owned(), false, consumed(tail)));
    }
    let tail = after.strip_prefix(',')?.trim_start().strip_prefix("plural")?.trim_start().strip_prefix(',')?;
    Some((name.to_owned(), true, consumed(tail)))
}

/// Parses from `at` up to an unmatched `}` or the end; returns the parts and where it
/// stopped.
fn parse(src: &str, at: usize, in_plural: bool) -> (Vec<Part>, usize) {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut i = at;
    while let Some(c) = src[i..].chars().next() {
        if c == '}' {
            break;
        }
        if c == '#' && in_plural {
            parts.extend((!text.is_empty()).then(|| Part::Text(std::mem::take(&mut text))));
            parts.push(Part::Hash);
            i += 1;
            continue;
        }
        if c == '{' {
            if let Some((name, is_plural, next)) = argument(src, i + 1) {
                if !is_plural {
                    parts.extend((!text.is_empty()).then(|| Part::Text(std::mem::take(&mut text))));
                    parts.push(Part::Arg(name));
                    i = next;
                    continue;
                }
                if let Some((branches, next)) = plural(src, next) {
                    parts.extend((!text.is_empty()).then(|| Part::Text(std::mem::take(&mut text))));
                    parts.push(Part::Plural { count: name, branches });
                    i = next;
                    continue;
                }
            }
        }
        text.push(c);
        i += c.len_utf8();
    }
    parts.extend((!text.is_empty()).then_some(Part::Text(text)));
    (parts, i)
}

const SELECTORS: [&str; 6] = ["zero", "one", "two", "few", "many", "other"];

/// The branches of a plural from just after its `plural,`, and the index after its `}`;
/// `None` when it is not one (its text is then shown as it is).
fn plural(src: &str, at: usize) -> Option<(Vec<Branch>, usize)> {
    let mut branches = Vec::new();
    let mut i = at;
    loop {
        let rest = src[i..].trim_start();
        i = src.len() - rest.len();
        if rest.starts_with('}') {
            return branches.iter().any(|(k, _)| k == "other").then_some((branches, i + 1));
        }
        let key_len = rest.find(|c: char| c.is_whitespace() || c == '{')?;
        let key = &rest[..key_len];
        let exact = key.strip_prefix('=').is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !exact && !SELECTORS.contains(&key) {
            return None;
        }
        let open = rest[key_len..].trim_start().strip_prefix('{')?;
        let (parts, end) = parse(src, src.len() - open.len(), true);
        if !src[end..].starts_with('}') {
            return None;
        }
        branches.push((key.to_owned(), parts));
        i = end + 1;
    }
}

fn render(parts: &[Part], values: &BTreeMap<String, String>, hash: &str, rules: Rules, out: &mut String) {
    for part in parts {
        match part {
            Part::Text(text) => out.push_str(text),
            Part::Hash => out.push_str(hash),
            Part::Arg(name) => match values.get(name) {
                Some(value) => out.push_str(value),
                None => {
                    out.push('{');
                    out.push_str(name);
                    out.push('}');
                }
            },
            Part::Plural { count, branches } => {
                let value = values.get(count);
                let n = value.filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit())).and_then(|v| v.parse::<u64>().ok());
                let branch = |key: &str| branches.iter().find(|(k, _)| k == key).map(|(_, parts)| parts);
                let form = |n: u64| match rules {
                    Rules::English if n == 1 => "one",
                    Rules::English | Rules::OtherOnly => "other",
                };
                let chosen = n
                    .filter(|_| matches!(rules, Rules::English))
                    .and_then(|n| branch(&format!("={n}")).or_else(|| branch(form(n))))
                    .or_else(|| branch("other"))
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let shown = value.cloned().unwrap_or_else(|| format!("{{{count}}}"));
                render(chosen, values, &shown, rules, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn fills_values_and_leaves_a_missing_one_as_its_place() {
        assert_eq!(format("Saved as version {n} of “{title}”", &values(&[("n", "12"), ("title", "春天")])), "Saved as version 12 of “春天”");
        assert_eq!(format("Hello {who}", &values(&[])), "Hello {who}");
    }

    /// The same cases as the UI's format.test.ts: the two formatters read the catalogs alike.
    #[test]
    fn chooses_a_plural_branch_an_exact_one_first_and_hash_is_the_count() {
        let m = "{n, plural, =0 {No changes} one {1 change in {file}} other {# changes in {file}}}";
        assert_eq!(format(m, &values(&[("n", "0"), ("file", "a")])), "No changes");
        assert_eq!(format(m, &values(&[("n", "1"), ("file", "a")])), "1 change in a");
        assert_eq!(format(m, &values(&[("n", "3"), ("file", "a")])), "3 changes in a");
        assert_eq!(format(m, &values(&[("n", "1,234"), ("file", "a")])), "1,234 changes in a");
        assert_eq!(format(m, &values(&[("file", "a")])), "{n} changes in a");
        assert_eq!(placeholders(m), vec!["file".to_owned(), "n".to_owned()]);
    }

    #[test]
    fn keeps_text_that_is_not_a_message_argument() {
        let plain = "Markdown works: # heading, {not an arg}, a } alone";
        assert_eq!(format(plain, &values(&[])), plain);
        assert_eq!(format("{n, plural, one {unclosed", &values(&[("n", "1")])), "{n, plural, one {unclosed");
        assert!(placeholders(plain).is_empty());
    }

    /// The one-pass path for templates without plurals says what the parts say, for
    /// every message of the catalog and for the odd cases (stray braces, `#`, a `{`
    /// that starts no argument, a plural that is not one).
    #[test]
    fn the_one_pass_path_formats_as_the_parts_do() {
        let odd = ["a } b {x} c", "{ x }#{y}", "{}{x", "{n, plural, one {unclosed", "x {n, plural, one {a} other {b}} {y}", "}}{{x}}"];
        let catalog = IDS.iter().filter_map(|(id, _)| english(id));
        for template in catalog.chain(odd) {
            let mut all = BTreeMap::new();
            for (i, name) in placeholders(template).into_iter().enumerate() {
                all.insert(name, i.to_string());
            }
            all.insert("x".to_owned(), "X".to_owned());
            for values in [BTreeMap::new(), all] {
                let parts = format_by_parts(template, &values, Rules::English);
                if let Some(fast) = format_without_plurals(template, &values) {
                    assert_eq!(fast, parts, "{template:?}");
                }
                assert_eq!(format(template, &values), parts, "{template:?}");
            }
        }
    }

    #[test]
    fn the_catalog_is_compiled_in() {
        assert_eq!(english("app.name"), Some("Inkstone"));
        assert_eq!(english("no.such.id"), None);
        assert!(IDS.len() > 1000 && IDS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(english_with("projects.count", &values(&[("n", "1")])).as_deref(), Some("1 project"));
        assert_eq!(english_with("projects.count", &values(&[("n", "4")])).as_deref(), Some("4 projects"));
    }
}
