//! X: one post when the text fits, otherwise a numbered thread split at sentence
//! boundaries, never inside a URL, hashtag or word; every post, numbering included,
//! within the profile's weighted limit.

use super::measure::{x_url_ranges, x_weighted_length};
use super::text::{is_cjk, join, sentences};
use super::{to_u32, CompileInput, Draft, DraftContent, Finding, Parsed, Post};
use crate::profiles::{DraftProfile, LimitField, Severity};

fn post_limit(profile: &DraftProfile) -> usize {
    profile.limits_for(LimitField::Post).map(|l| l.max as usize).min().unwrap_or(280)
}

fn numbering(profile: &DraftProfile, n: usize, total: usize) -> String {
    profile.setting_str("numbering").unwrap_or(" {n}/{total}").replace("{n}", &n.to_string()).replace("{total}", &total.to_string())
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
fn pack_exact(units: &[String], budget: usize, separator_paragraph: &[bool], findings: &mut Vec<Finding>) -> Vec<String> {
    let mut posts: Vec<String> = Vec::new();
    let mut current = String::new();
    for (idx, unit) in units.iter().enumerate() {
        let new_paragraph = separator_paragraph.get(idx).copied().unwrap_or(false);
        let candidate = if current.is_empty() {
            unit.clone()
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
            current = unit.clone();
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

/// Fast greedy packing: each unit is weighed once and candidates are weighed by
/// addition, which is exact unless something joins across a unit boundary; the caller
/// verifies every post exactly and falls back to [`pack_exact`] when one is over.
fn pack_fast(units: &[String], weights: &[usize], budget: usize, starts_paragraph: &[bool], findings: &mut Vec<Finding>) -> Vec<String> {
    let mut posts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut current_weight = 0usize;
    for (idx, unit) in units.iter().enumerate() {
        let weight = weights[idx];
        let sep = separator(current.chars().last(), unit.chars().next(), starts_paragraph.get(idx).copied().unwrap_or(false));
        // Separators are ASCII ("", " ", "\n\n"): one unit of weight per byte.
        if current_weight + sep.len() + weight <= budget {
            current.push_str(sep);
            current.push_str(unit);
            current_weight += sep.len() + weight;
            continue;
        }
        if !current.is_empty() {
            posts.push(std::mem::take(&mut current));
            current_weight = 0;
        }
        if weight <= budget {
            current.push_str(unit);
            current_weight = weight;
            continue;
        }
        // A sentence longer than a post: the exact packer handles its tokens.
        for piece in pack_exact(std::slice::from_ref(unit), budget, &[false], findings) {
            if !current.is_empty() {
                posts.push(std::mem::take(&mut current));
            }
            current_weight = x_weighted_length(&piece);
            current = piece;
        }
    }
    if !current.is_empty() {
        posts.push(current);
    }
    posts
}

pub fn compile<'a>(profile: &DraftProfile, input: CompileInput<'_>, parsed: &Parsed<'a>) -> (Draft, Vec<Finding>) {
    let plain = &parsed.plain;
    let limit = post_limit(profile);
    let mut units = Vec::new();
    let mut starts_paragraph = Vec::new();
    for block in &plain.blocks {
        for (idx, sentence) in sentences(block).into_iter().enumerate() {
            units.push(sentence);
            starts_paragraph.push(idx == 0);
        }
    }
    let mut findings = Vec::new();
    let weights: Vec<usize> = units.iter().map(|u| x_weighted_length(u)).collect();
    // Separators only add weight, so one post is possible only when the units fit.
    let single = if weights.iter().sum::<usize>() <= limit { pack_fast(&units, &weights, limit, &starts_paragraph, &mut Vec::new()) } else { Vec::new() };
    let single_weight = if single.len() == 1 { single.first().map(|t| x_weighted_length(t)) } else { None };
    let texts: Vec<(String, usize)> = if let Some(weight) = single_weight.filter(|w| *w <= limit) {
        single.into_iter().map(|t| (t, weight)).collect()
    } else if units.is_empty() {
        Vec::new()
    } else {
        // Reserve room for the numbering; start from the digits the post count will
        // likely need, and repack when it gains one more.
        let total_weight: usize = weights.iter().sum();
        let estimate = total_weight.div_ceil(limit.saturating_sub(12).max(1));
        let mut digits = estimate.max(1).to_string().len() as u32;
        loop {
            let reserve = x_weighted_length(&numbering(profile, 10usize.pow(digits) - 1, 10usize.pow(digits) - 1));
            let budget = limit.saturating_sub(reserve).max(1);
            let mut attempt_findings = Vec::new();
            let mut posts = pack_fast(&units, &weights, budget, &starts_paragraph, &mut attempt_findings);
            let mut post_weights: Vec<usize> = posts.iter().map(|p| x_weighted_length(p)).collect();
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
