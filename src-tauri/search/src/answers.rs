//! The answer caches of `search.ask`: by the question's text, and by its meaning
//! when an embedding model is configured.

use std::time::Instant;

use super::query::SEMANTIC_PAUSE;
use super::*;

/// A cached answer found by the meaning of its question.
pub(super) struct AnswerByMeaning {
    /// Everything of the cache key but the question (scope, route, profile, index).
    pub(super) context: String,
    /// The question's unit vector.
    pub(super) vector: Vec<f32>,
    pub(super) at: crate::model::Timestamp,
    pub(super) answer: ask::Answer,
}
impl SearchIndex {
    /// A cached answer for `key` given at most [`ANSWER_TTL_SECONDS`] before `now`.
    pub fn cached_answer(&self, key: &str, now: crate::model::Timestamp) -> Option<ask::Answer> {
        let mut answers = self.shared.answers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        answers.retain(|_, (at, _)| (now - *at).num_seconds() < ANSWER_TTL_SECONDS);
        answers.get(key).map(|(_, answer)| answer.clone())
    }

    pub fn cache_answer(&self, key: String, now: crate::model::Timestamp, answer: ask::Answer) {
        let mut answers = self.shared.answers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if answers.len() >= 256 {
            answers.clear();
        }
        answers.insert(key, (now, answer));
    }

    /// The unit vector of a question, for the answer cache: `None` without an
    /// embedding model, or while (or when) the embedding server fails. The same
    /// question's retrieval reuses it (query vectors are kept in memory).
    pub fn question_vector(&self, question: &str) -> Option<Vec<f32>> {
        let profile = semantic::profile(&self.shared.store).ok().flatten()?;
        let model = profile.embedding_model.clone()?;
        let paused = self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some_and(|until| Instant::now() < until);
        if paused {
            return None;
        }
        match self.query_vector(&profile.id, &model, question) {
            Ok(vector) => Some(vector),
            Err(_) => {
                // The search that follows would wait for the same failing server again.
                *self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now() + SEMANTIC_PAUSE);
                None
            }
        }
    }

    /// A cached answer, given at most [`ANSWER_TTL_SECONDS`] before `now` in the same
    /// `context`, to a question whose meaning is at least [`SAME_QUESTION`] similar to
    /// `vector`.
    pub fn cached_answer_by_meaning(&self, context: &str, vector: &[f32], now: crate::model::Timestamp) -> Option<ask::Answer> {
        let mut answers = self.shared.answers_by_meaning.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        answers.retain(|a| (now - a.at).num_seconds() < ANSWER_TTL_SECONDS);
        answers
            .iter()
            .filter(|a| a.context == context)
            .map(|a| (semantic::cosine(&a.vector, vector), a))
            .filter(|(similarity, _)| *similarity >= SAME_QUESTION)
            .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
            .map(|(_, a)| a.answer.clone())
    }

    pub fn cache_answer_by_meaning(&self, context: String, vector: Vec<f32>, now: crate::model::Timestamp, answer: ask::Answer) {
        let mut answers = self.shared.answers_by_meaning.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if answers.len() >= 256 {
            answers.clear();
        }
        answers.push(AnswerByMeaning { context, vector, at: now, answer });
    }
}
