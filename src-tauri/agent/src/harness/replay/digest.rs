//! What a model call needs of the model-visible messages besides the messages — their
//! hash and estimated tokens — kept as the conversation grows, so that a call in a long
//! session does not read the whole conversation again to work them out.

use sha2::{Digest, Sha256};

use crate::llm::{estimate_message_tokens, Message};

/// Feeds what serde writes straight into a hash, without a copy of the JSON.
pub(super) struct Hashing<'a>(pub(super) &'a mut Sha256);

impl std::io::Write for Hashing<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The hash and token estimate of the first `count` messages of a conversation, fed a
/// message at a time ([`MessagesDigest::catch_up`]). [`super::SessionState::apply`]
/// feeds it the messages each event appends and starts it over when an event drops
/// messages (a compaction, a scripted run's step). It is derived data: two states with
/// the same messages are equal whatever it holds.
#[derive(Clone, Default)]
pub struct MessagesDigest {
    count: usize,
    tokens: u64,
    /// SHA-256 fed `[` and the messages' JSON, comma-separated: what
    /// [`super::messages_hash`] hashes, without the closing `]`. `None` before the first
    /// [`MessagesDigest::catch_up`].
    hashing: Option<Sha256>,
}

impl MessagesDigest {
    /// Feeds the messages of `messages` past the ones already in. Starts over when
    /// `messages` is shorter than what is in (its caller also starts over when messages
    /// were dropped and others added since).
    pub(super) fn catch_up(&mut self, messages: &[Message]) {
        if messages.len() < self.count {
            *self = MessagesDigest::default();
        }
        let hashing = self.hashing.get_or_insert_with(|| {
            let mut hashing = Sha256::new();
            hashing.update(b"[");
            hashing
        });
        for (index, message) in messages.iter().enumerate().skip(self.count) {
            if index > 0 {
                hashing.update(b",");
            }
            // Serializing plain structs of strings cannot fail; were it to, the hash
            // would be of what was written, as in `messages_hash`.
            let _ = serde_json::to_writer(Hashing(hashing), message);
            self.tokens += estimate_message_tokens(message);
        }
        self.count = messages.len();
    }

    /// `(hash, estimated tokens)` of `messages` when it is what was fed in, else `None`.
    pub(super) fn of(&self, messages: &[Message]) -> Option<(String, u64)> {
        let mut hashing = self.hashing.clone().filter(|_| self.count == messages.len())?;
        hashing.update(b"]");
        Some((format!("sha256:{}", hex::encode(hashing.finalize())), self.tokens))
    }
}

impl PartialEq for MessagesDigest {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for MessagesDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessagesDigest").field("count", &self.count).field("tokens", &self.tokens).finish()
    }
}
