//! Douyin image-text and Xiaohongshu notes: a title, a short body and topic tags.

use super::measure::chars;
use super::text::{join, join_needs_space};
use super::{limit_findings, CompileInput, Draft, DraftContent, Finding, Parsed};
use crate::profiles::{DraftProfile, LimitField, Severity};

fn clean_tag(tag: &str) -> String {
    tag.trim().trim_start_matches('#').chars().filter(|c| !c.is_whitespace() && *c != '#').collect()
}

fn tags(input: &CompileInput<'_>, max: usize) -> (Vec<String>, usize) {
    let mut out: Vec<String> = Vec::new();
    for tag in input.tags.iter().map(|t| clean_tag(t)).filter(|t| !t.is_empty()) {
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    let n_all = out.len();
    out.truncate(max);
    (out, n_all)
}

fn tag_findings(profile: &DraftProfile, n_all: usize, kept: usize) -> Vec<Finding> {
    let mut findings = limit_findings(profile, LimitField::Tags, |_| n_all, "number of topics");
    if n_all > kept {
        let (n, kept) = ((n_all - kept).to_string(), kept.to_string());
        findings.push(
            Finding::new("tags.dropped", Severity::Info, Some(profile.platform), format!("{n} topic(s) beyond the first {kept} were left out."))
                .worded("tags.dropped", &[("n", &n), ("kept", &kept)])
                .at("tags"),
        );
    }
    findings
}

/// Douyin: the caption is the opening of the text, cut at a sentence boundary within the
/// profile's caption length (saying so when it cuts), then the topics inline as `#话题`.
pub fn compile_douyin<'a>(profile: &DraftProfile, input: CompileInput<'_>, parsed: &Parsed<'a>) -> (Draft, Vec<Finding>) {
    let plain = &parsed.plain;
    let caption_chars = profile.setting_u32("caption_chars").unwrap_or(300) as usize;
    let max_tags = profile.limits_for(LimitField::Tags).map(|l| l.max as usize).max().unwrap_or(10);
    let mut findings = Vec::new();
    let mut caption = String::new();
    'blocks: for block in parsed.sentences() {
        for sentence in block {
            let candidate = if caption.is_empty() { sentence.to_owned() } else { join(&caption, sentence) };
            if chars(&candidate) > caption_chars {
                findings.push(
                    Finding::new(
                        "douyin.caption_shortened",
                        Severity::Info,
                        Some(profile.platform),
                        format!("The caption keeps the first {} characters of the text, ending at a sentence.", chars(&caption)),
                    )
                    .worded("douyin.caption_shortened", &[("n", &chars(&caption).to_string())])
                    .at("body")
                    .suggest_worded("douyin.caption_shortened", "Put the key message in the opening; the images carry the rest."),
                );
                break 'blocks;
            }
            caption = candidate;
        }
        caption.push('\n');
    }
    let caption = caption.trim().to_owned();
    let (topics, n_all) = tags(&input, max_tags);
    let body = if topics.is_empty() { caption } else { format!("{caption}\n\n{}", topics.iter().map(|t| format!("#{t}")).collect::<Vec<_>>().join(" ")) };
    findings.extend(limit_findings(profile, LimitField::Title, |unit| super::length_in(unit, input.title), "title"));
    findings.extend(limit_findings(profile, LimitField::Body, |unit| super::length_in(unit, &body), "caption"));
    findings.extend(tag_findings(profile, n_all, topics.len()));
    let draft = Draft::new(profile, input.title, DraftContent::Card { body, tags: topics }, plain.n_images, plain.n_links);
    (draft, findings)
}

/// Xiaohongshu: short, scannable paragraphs (long ones split at sentences), the whole
/// text kept (an over-long body is a finding, never silently cut), topics apart.
pub fn compile_xiaohongshu<'a>(profile: &DraftProfile, input: CompileInput<'_>, parsed: &Parsed<'a>) -> (Draft, Vec<Finding>) {
    let plain = &parsed.plain;
    let paragraph_chars = profile.setting_u32("paragraph_chars").unwrap_or(80) as usize;
    let max_tags = profile.limits_for(LimitField::Tags).map(|l| l.max as usize).max().unwrap_or(10);
    let mut paragraphs: Vec<String> = Vec::new();
    // Room for a paragraph of the usual length (CJK takes three bytes a character), so
    // it is not grown sentence by sentence.
    let room = 3 * paragraph_chars + 64;
    for block in parsed.sentences() {
        let mut current = String::with_capacity(room);
        let mut current_chars = 0;
        for sentence in block {
            // What `join(&current, sentence)` puts between (at most a space): count the
            // two sides once and append in place, not the whole paragraph again at
            // every sentence.
            let space = join_needs_space(&current, sentence);
            let sentence_chars = chars(sentence);
            let candidate_chars = current_chars + sentence_chars + usize::from(space);
            if !current.is_empty() && candidate_chars > paragraph_chars {
                paragraphs.push(std::mem::replace(&mut current, String::with_capacity(room)));
                current.push_str(sentence);
                current_chars = sentence_chars;
            } else {
                if space {
                    current.push(' ');
                }
                current.push_str(sentence);
                current_chars = candidate_chars;
            }
        }
        if !current.is_empty() {
            paragraphs.push(current);
        }
    }
    let body = paragraphs.join("\n\n");
    let (topics, n_all) = tags(&input, max_tags);
    let mut findings = limit_findings(profile, LimitField::Title, |unit| super::length_in(unit, input.title), "title");
    findings.extend(limit_findings(profile, LimitField::Body, |unit| super::length_in(unit, &body), "body"));
    findings.extend(tag_findings(profile, n_all, topics.len()));
    if plain.n_links > 0 {
        findings.push(
            Finding::new(
                "xiaohongshu.links",
                Severity::Warn,
                Some(profile.platform),
                format!("{} link(s) in the text: Xiaohongshu does not make them clickable and may treat them as traffic diversion (引流).", plain.n_links),
            )
            .worded("xiaohongshu.links", &[("n", &plain.n_links.to_string())])
            .suggest_worded("xiaohongshu.links", "Remove the links or describe where to find the resource."),
        );
    }
    let draft = Draft::new(profile, input.title, DraftContent::Card { body, tags: topics }, plain.n_images, plain.n_links);
    (draft, findings)
}
