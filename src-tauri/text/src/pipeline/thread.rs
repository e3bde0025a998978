//! X: one post when the text fits, otherwise a numbered thread split at sentence
//! boundaries, never inside a URL, hashtag or word; every post, numbering included,
//! within the profile's weighted limit.

use std::fmt::Write as _;

use super::measure::{x_plain_weight, x_url_ranges, x_weight_of_plain_chars, x_weighted_length};
use super::text::{is_cjk, join};
use super::{to_u32, CompileInput, Draft, DraftContent, Finding, Parsed, Post};
use crate::profiles::{DraftProfile, LimitField, Severity};

fn post_limit(profile: &DraftProfile) -> usize {
    profile.limits_for(LimitField::Post).map(|l| l.max as usize).min().unwrap_or(280)
}

fn numbering(profile: &DraftProfile, n: usize, total: usize) -> String {
    let template = profile.setting_str("numbering").unwrap_or(" {n}/{total}");
    // `{n}` then `{total}` replaced, in one pass: a number cannot make a `{total}`.
    let mut out = String::with_capacity(template.len() + 8);
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("{n}") {
            let _ = write!(out, "{n}");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("{total}") {
            let _ = write!(out, "{total}");
            rest = after;
        } else {
            out.push('{');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Splits a sentence too long for one post into tokens that must stay whole: URLs,
/// hashtags and Latin words; CJK characters are tokens of their own.
fn tokens(sentence: &str) -> Vec<String> {
    let urls = x_url_ranges(sentence);
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(std::mem::take(word));
        }
    };
    while i < sentence.len() {
        if let Some(&(_, end)) = urls.iter().find(|(start, _)| *start == i) {
            flush(&mut word, &mut out);
            out.push(sentence[i..end].to_owned());
            i = end;
            continue;
        }
        let Some(c) = sentence[i..].chars().next() else { break };
        if c.is_whitespace() {
            flush(&mut word, &mut out);
        } else if is_cjk(c) && !word.starts_with('#') {
            flush(&mut word, &mut out);
            out.push(c.to_string());
        } else {
            word.push(c);
        }
        i += c.len_utf8();
    }
    flush(&mut word, &mut out);
    out
}

/// Cuts a token longer than `budget` at character boundaries.
fn cut(token: &str, budget: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in token.chars() {
        let candidate = format!("{current}{c}");
        if !current.is_empty() && x_weighted_length(&candidate) > budget {
            pieces.push(std::mem::take(&mut current));
            current.push(c);
        } else {
            current = candidate;
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Greedy packing of `units` (sentences or tokens) into posts of at most `budget`,
/// measuring every candidate exactly. The fallback when the fast packing's estimate
/// was off (a URL or an emoji sequence joined across a unit boundary).
fn pack_exact(units: &[&str], budget: usize, separator_paragraph: &[bool], findings: &mut Vec<Finding>) -> Vec<String> {
    let mut posts: Vec<String> = Vec::new();
    let mut current = String::new();
    for (idx, unit) in units.iter().enumerate() {
        let new_paragraph = separator_paragraph.get(idx).copied().unwrap_or(false);
        let candidate = if current.is_empty() {
            (*unit).to_owned()
        } else if new_paragraph {
            format!("{current}\n\n{unit}")
        } else {
            join(&current, unit)
        };
        if x_weighted_length(&candidate) <= budget {
            current = candidate;
            continue;
        }
        if !current.is_empty() {
            posts.push(std::mem::take(&mut current));
        }
        if x_weighted_length(unit) <= budget {
            current = (*unit).to_owned();
            continue;
        }
        // A sentence longer than a post: pack its tokens.
        for token in tokens(unit) {
            let pieces = if x_weighted_length(&token) > budget {
                let word = token.chars().take(40).collect::<String>();
                findings.push(
                    Finding::new("x.word_cut", Severity::Warn, Some(inkstone_model::Platform::X), format!("“{word}” is longer than one post and was cut."))
                        .worded("x.word_cut", &[("word", &word)])
                        .suggest_worded("x.word_cut", "Shorten the word or link, or move it to its own post."),
                );
                cut(&token, budget)
            } else {
                vec![token]
            };
            for piece in pieces {
                let candidate = join(&current, &piece);
                if x_weighted_length(&candidate) <= budget {
                    current = candidate;
                } else {
                    if !current.is_empty() {
                        posts.push(std::mem::take(&mut current));
                    }
                    current = piece;
                }
            }
        }
    }
    if !current.is_empty() {
        posts.push(current);
    }
    posts
}

/// The separator `join` would put between text ending in `left` and text starting
/// with `right`, for a unit that does or does not start a paragraph.
fn separator(left: Option<char>, right: Option<char>, new_paragraph: bool) -> &'static str {
    match (left, right) {
        (None, _) => "",
        (Some(_), _) if new_paragraph => "\n\n",
        (Some(l), r) => {
            if is_cjk(l) || l.is_whitespace() || r.is_some_and(is_cjk) {
                ""
            } else {
                " "
            }
        }
    }
}

/// A unit's weight, and whether it is plain ([`x_plain_weight`]): surely NFC, without
/// anything that may start an emoji or a URL.
#[derive(Clone, Copy)]
struct Weight {
    weight: usize,
    plain: bool,
}

/// A post as [`pack_fast`] packed it: its text, its weight by addition, and whether that
/// sum is surely its weight.
struct Packed {
    text: String,
    weight: usize,
    exact: bool,
    /// Made of plain units only: when not `exact`, only a URL across a join (a `.`
    /// meeting a TLD) can make the sum wrong.
    plain: bool,
}

impl Packed {
    fn empty() -> Packed {
        Packed { text: String::new(), weight: 0, exact: true, plain: true }
    }

    /// The post's weight: the sum when it is surely exact, the sum with the URLs
    /// counted as X counts them when its characters are plain, else measured.
    fn measured(&self) -> usize {
        if self.exact {
            self.weight
        } else if self.plain {
            x_weight_of_plain_chars(&self.text, self.weight)
        } else {
            x_weighted_length(&self.text)
        }
    }
}

/// Fast greedy packing: each unit is weighed once and candidates are weighed by
/// addition, which is exact unless something joins across a unit boundary; the caller
/// verifies every post exactly and falls back to [`pack_exact`] when one is over.
///
/// A post of plain units only is plain too, and its sum exact, unless a `.` ends one
/// unit and the next follows with no separator (a CJK start, which may be a TLD's
/// first letter): separators are ASCII without `.`, so the joins create no emoji, no
/// combining sequence and no other place a URL may start. Such a post is `exact` and
/// needs no second measuring.
fn pack_fast(units: &[&str], weights: &[Weight], budget: usize, starts_paragraph: &[bool], findings: &mut Vec<Finding>) -> Vec<Packed> {
    let mut posts: Vec<Packed> = Vec::new();
    let mut current = Packed::empty();
    for (idx, unit) in units.iter().enumerate() {
        let Weight { weight, plain } = weights[idx];
        let sep = separator(current.text.chars().last(), unit.chars().next(), starts_paragraph.get(idx).copied().unwrap_or(false));
        // Separators are ASCII ("", " ", "\n\n"): one unit of weight per byte.
        if current.weight + sep.len() + weight <= budget {
            let joins_a_dot = sep.is_empty() && current.text.ends_with('.');
            current.exact &= plain && !joins_a_dot;
            current.plain &= plain;
            current.text.push_str(sep);
            current.text.push_str(unit);
            current.weight += sep.len() + weight;
            continue;
        }
        if !current.text.is_empty() {
            posts.push(std::mem::replace(&mut current, Packed::empty()));
        }
        if weight <= budget {
            current = Packed { text: (*unit).to_owned(), weight, exact: plain, plain };
            continue;
        }
        // A sentence longer than a post: the exact packer handles its tokens.
        for piece in pack_exact(std::slice::from_ref(unit), budget, &[false], findings) {
            if !current.text.is_empty() {
                posts.push(std::mem::replace(&mut current, Packed::empty()));
            }
            current = Packed { weight: x_weighted_length(&piece), text: piece, exact: false, plain: false };
        }
    }
    if !current.text.is_empty() {
        posts.push(current);
    }
    posts
}

pub fn compile<'a>(profile: &DraftProfile, input: CompileInput<'_>, parsed: &Parsed<'a>) -> (Draft, Vec<Finding>) {
    let plain = &parsed.plain;
    let limit = post_limit(profile);
    let mut units: Vec<&str> = Vec::new();
    let mut starts_paragraph = Vec::new();
    for block in parsed.sentences() {
        for (idx, sentence) in block.enumerate() {
            units.push(sentence);
            starts_paragraph.push(idx == 0);
        }
    }
    let mut findings = Vec::new();
    let weights: Vec<Weight> = units
        .iter()
        .map(|u| match x_plain_weight(u) {
            Some(weight) => Weight { weight, plain: true },
            None => Weight { weight: x_weighted_length(u), plain: false },
        })
        .collect();
    let total_weight: usize = weights.iter().map(|w| w.weight).sum();
    // Separators only add weight, so one post is possible only when the units fit.
    let single = if total_weight <= limit { pack_fast(&units, &weights, limit, &starts_paragraph, &mut Vec::new()) } else { Vec::new() };
    let single_weight = if single.len() == 1 { single.first().map(Packed::measured) } else { None };
    let texts: Vec<(String, usize)> = if let Some(weight) = single_weight.filter(|w| *w <= limit) {
        single.into_iter().map(|p| (p.text, weight)).collect()
    } else if units.is_empty() {
        Vec::new()
    } else {
        // Reserve room for the numbering; start from the digits the post count will
        // likely need, and repack when it gains one more.
        let estimate = total_weight.div_ceil(limit.saturating_sub(12).max(1));
        let mut digits = estimate.max(1).to_string().len() as u32;
        loop {
            let reserve = x_weighted_length(&numbering(profile, 10usize.pow(digits) - 1, 10usize.pow(digits) - 1));
            let budget = limit.saturating_sub(reserve).max(1);
            let mut attempt_findings = Vec::new();
            let packed = pack_fast(&units, &weights, budget, &starts_paragraph, &mut attempt_findings);
            let mut post_weights: Vec<usize> = packed.iter().map(Packed::measured).collect();
            let mut posts: Vec<String> = packed.into_iter().map(|p| p.text).collect();
            if post_weights.iter().any(|w| *w > budget) {
                attempt_findings.clear();
                posts = pack_exact(&units, budget, &starts_paragraph, &mut attempt_findings);
                post_weights = posts.iter().map(|p| x_weighted_length(p)).collect();
            }
            if posts.len() < 10usize.pow(digits) || digits >= 4 {
                findings.extend(attempt_findings);
                let total = posts.len();
                break posts
                    .into_iter()
                    .zip(post_weights)
                    .enumerate()
                    .map(|(idx, (text, weight))| {
                        let number = numbering(profile, idx + 1, total);
                        // A numbering that starts with a space cannot join the text's
                        // last URL, emoji or combining sequence, so weights add up.
                        let weight = if number.starts_with(' ') { weight + x_weighted_length(&number) } else { x_weighted_length(&format!("{text}{number}")) };
                        (format!("{text}{number}"), weight)
                    })
                    .collect();
            }
            digits += 1;
        }
    };
    let posts: Vec<Post> = texts.into_iter().map(|(text, weight)| Post { weighted_length: to_u32(weight), text }).collect();
    for (idx, post) in posts.iter().enumerate() {
        if post.weighted_length as usize > limit {
            let (number, length, bound) = ((idx + 1).to_string(), post.weighted_length.to_string(), limit.to_string());
            findings.push(
                Finding::new("limit.post", Severity::Block, Some(profile.platform), format!("The post {number} is {length} weighted characters; the limit is {bound}."))
                    .worded("limit.over", &[("field", "post"), ("post", &number), ("length", &length), ("bound", &bound), ("unit", "xWeighted")])
                    .at(&format!("post {number}")),
            );
        }
    }
    findings.extend(super::limit_findings(profile, LimitField::Posts, |_| posts.len(), "thread"));
    if plain.n_images > 0 {
        findings.push(
            Finding::new(
                "x.images",
                Severity::Info,
                Some(profile.platform),
                format!("{} image(s) are not part of the thread text; attach them to a post when publishing.", plain.n_images),
            )
            .worded("x.images", &[("n", &plain.n_images.to_string())])
            .suggest_worded("x.images", "Attach up to 4 images to the post they illustrate."),
        );
    }
    let draft = Draft::new(profile, input.title, DraftContent::Thread { posts }, plain.n_images, plain.n_links);
    (draft, findings)
}
