//! Notices a model that writes the same thing over and over (pure). Local models at a
//! low temperature fall into loops: one sentence forty times, for minutes, until the
//! output limit. The client feeds every streamed piece here and stops the stream when
//! it trips.
//!
//! Three signs, any enough (sentences: at least [`MIN_SENTENCE_CHARS`] characters,
//! ended by a sentence mark or a line break; shorter ones are not counted):
//! - one sentence written [`REPEATS`] times in a row;
//! - the last `2 × REPEATS` sentences are only one or two sentences over and over (a
//!   loop of a pair);
//! - text without sentence marks whose tail is one piece of at least
//!   [`MIN_SENTENCE_CHARS`] characters repeated [`REPEATS`] times in a row.
//!
//! A refrain between other sentences ("Keep going." after every paragraph) is
//! writing, not a loop, however often it comes.

use std::collections::VecDeque;

/// How many times in a row one sentence may appear before the answer is stopped.
pub const REPEATS: u32 = 8;
/// Shorter sentences ("是的。", "- [ ]") repeat legitimately.
pub const MIN_SENTENCE_CHARS: usize = 16;
/// The longest piece the tail check looks for.
const MAX_PERIOD_CHARS: usize = 400;

/// What was repeated, and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeated {
    /// The sentence, shortened to 80 characters.
    pub excerpt: String,
    pub times: u32,
}

#[derive(Debug, Default)]
pub struct RepetitionGuard {
    current: String,
    /// The last `2 × REPEATS` sentences, newest last.
    recent: VecDeque<String>,
    /// Characters since the last sentence mark, for the tail check.
    run: Vec<char>,
    checked_at: usize,
}

fn ends_sentence(c: char) -> bool {
    matches!(c, '\n' | '。' | '！' | '？' | '!' | '?' | '.' | '；' | ';' | '…')
}

fn excerpt(text: &str) -> String {
    let mut short: String = text.chars().take(80).collect();
    if text.chars().count() > 80 {
        short.push('…');
    }
    short
}

impl RepetitionGuard {
    pub fn new() -> Self {
        RepetitionGuard::default()
    }

    /// Takes the next piece of the reply; `Some` once it repeats itself.
    pub fn push(&mut self, piece: &str) -> Option<Repeated> {
        for c in piece.chars() {
            self.current.push(c);
            if ends_sentence(c) {
                let sentence: String = self.current.split_whitespace().collect::<Vec<_>>().join(" ");
                self.current.clear();
                self.run.clear();
                self.checked_at = 0;
                if sentence.chars().count() >= MIN_SENTENCE_CHARS {
                    if let Some(hit) = self.note_sentence(sentence) {
                        return Some(hit);
                    }
                }
            } else {
                self.run.push(c);
            }
        }
        // Text without sentence marks: look at the tail every 64 characters.
        if self.run.len() >= self.checked_at + 64 && self.run.len() >= MIN_SENTENCE_CHARS * REPEATS as usize {
            self.checked_at = self.run.len();
            if let Some(period) = self.periodic_tail() {
                let unit: String = self.run[self.run.len() - period..].iter().collect();
                return Some(Repeated { excerpt: excerpt(unit.trim()), times: REPEATS });
            }
        }
        None
    }

    /// Records a finished sentence; `Some` when the recent ones are a loop.
    fn note_sentence(&mut self, sentence: String) -> Option<Repeated> {
        let window = 2 * REPEATS as usize;
        if self.recent.len() == window {
            self.recent.pop_front();
        }
        self.recent.push_back(sentence);
        let newest = self.recent.back()?;
        let in_a_row = self.recent.iter().rev().take_while(|s| *s == newest).count();
        if in_a_row >= REPEATS as usize {
            return Some(Repeated { excerpt: excerpt(newest), times: REPEATS });
        }
        if self.recent.len() == window {
            let mut distinct: Vec<&String> = Vec::new();
            for s in &self.recent {
                if !distinct.contains(&s) {
                    distinct.push(s);
                    if distinct.len() > 2 {
                        return None;
                    }
                }
            }
            let times = self.recent.iter().filter(|s| *s == newest).count() as u32;
            return Some(Repeated { excerpt: excerpt(newest), times });
        }
        None
    }

    /// The length of a piece the run's tail repeats [`REPEATS`] times in a row: the
    /// shortest such piece, and only when it is a phrase (a run of one character, a
    /// divider of dashes, is not a loop of sentences).
    fn periodic_tail(&self) -> Option<usize> {
        let run = &self.run;
        let longest = MAX_PERIOD_CHARS.min(run.len() / REPEATS as usize);
        (1..=longest)
            .find(|&period| {
                let span = period * REPEATS as usize;
                let tail = &run[run.len() - span..];
                tail.iter().enumerate().skip(period).all(|(i, c)| *c == tail[i - period])
            })
            .filter(|period| *period >= MIN_SENTENCE_CHARS)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn feed(text: &str, piece: usize) -> Option<Repeated> {
        let mut guard = RepetitionGuard::new();
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(piece).find_map(|c| guard.push(&c.iter().collect::<String>()))
    }

    #[test]
    fn a_sentence_written_again_and_again_trips() {
        let text = "这是第一句话。".to_owned() + &"春天来了，花园里的花都开了，真是美丽的景色。".repeat(40);
        let hit = feed(&text, 3).unwrap();
        assert_eq!(hit.times, REPEATS);
        assert!(hit.excerpt.starts_with("春天来了"), "{hit:?}");
        let english = "The quick brown fox jumps over the lazy dog. ".repeat(10);
        assert!(feed(&english, 5).is_some());
    }

    #[test]
    fn a_pair_of_sentences_in_a_loop_trips() {
        let text = "开头。".to_owned() + &"春天来了，花园里的花都开了，真是美丽的景色。我们一起去城南的公园里散步吧，你说好吗？".repeat(20);
        assert!(feed(&text, 4).is_some());
    }

    #[test]
    fn a_refrain_between_other_sentences_does_not() {
        // The browser e2e's long stream: a sentence after every numbered paragraph.
        let text: String = (1..=100).map(|i| format!("第{i}段：春天适合写作，每天写一点。Keep going, write daily. \n\n")).collect();
        assert_eq!(feed(&text, 4), None);
    }

    #[test]
    fn a_loop_without_sentence_marks_trips() {
        let text = "intro ".to_owned() + &"word salad with no full stop ".repeat(30);
        assert!(feed(&text, 7).is_some());
    }

    #[test]
    fn ordinary_text_does_not() {
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!("第{i}段：这里写的是不同的内容，编号{i}。\n"));
        }
        text.push_str(&"是的。".repeat(50));
        text.push_str(&"| --- | --- |\n".repeat(12));
        // One character many times (a divider, a long word in a test) is no loop.
        text.push_str(&"长".repeat(400));
        text.push_str(&"-".repeat(300));
        assert_eq!(feed(&text, 4), None);
    }
}
