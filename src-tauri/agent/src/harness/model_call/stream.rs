//! The streamed model call: the request sent through the metered kernel on its own
//! thread, its deltas shown live as they arrive, and the text checkpointed into the log
//! so a killed process keeps what streamed.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::ApiError;
use crate::harness::event::EventBody;
use crate::harness::Meta;
use crate::llm::{ChatEvent, ChatRequest, ModelCall};
use crate::store::{Batch, Durability};

/// Whether a call's streamed text is checkpointed into the log as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checkpoints {
    /// A drafting turn's: `assistant_streamed` events, so a killed process keeps what
    /// streamed (the turn's resume shows it).
    IntoLog,
    /// A scripted step's: its resume asks again for a reply that did not finish, so a
    /// half-streamed one is worth nothing to keep.
    None,
}

/// What one streamed model call gave: the reply (or why there is none), the text that
/// arrived before it ended, and how long it took.
pub(crate) struct Streamed {
    pub result: Result<crate::llm::ChatResponse, ApiError>,
    pub partial: String,
    pub elapsed: Duration,
}

/// The one way the harness calls a model: `request` through the metered
/// `Kernel::model_chat` (quotas first, one usage record whatever the outcome), on its
/// own thread so the stream's deltas reach `emit` live (under `turn_id`), cancelled by
/// `live`'s cancel. The caller appends the reply, or what arrived, as its log needs.
/// Errors: only the store's, from a checkpoint (the model's error is in `result`).
pub(crate) fn stream_reply(
    engine: crate::harness::Harness<'_>,
    live: &crate::harness::Live,
    turn_id: &str,
    call: ModelCall<'_>,
    request: &ChatRequest,
    checkpoints: Checkpoints,
    emit: &mut dyn FnMut(&crate::harness::Event),
) -> Result<Streamed, ApiError> {
    let cancel = live.cancel.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let started = Instant::now();
    let mut partial = String::new();
    let mut checkpoint_error: Option<ApiError> = None;
    let result = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<ChatEvent>();
        let cancel = &cancel;
        let handle = scope.spawn(move || {
            engine.model_chat(
                call,
                request,
                &mut move |event| {
                    let _ = tx.send(event);
                },
                cancel,
            )
        });
        // The streamed text is checkpointed into the log as it arrives (bounded:
        // at most every STREAM_CHECKPOINT_MILLIS, or when STREAM_CHECKPOINT_CHARS
        // are waiting), so a killed process keeps what streamed. Durably: the
        // group commit (a second by default) would double what a kill can lose,
        // and one disk sync per half second of streaming costs little.
        let mut checkpoint = StreamCheckpoint::default();
        let mut last_saved = Instant::now();
        let interval = Duration::from_millis(STREAM_CHECKPOINT_MILLIS);
        loop {
            match rx.recv_timeout(interval.saturating_sub(last_saved.elapsed()).max(Duration::from_millis(1))) {
                Ok(ChatEvent::TextDelta(text)) => {
                    partial.push_str(&text);
                    if checkpoints == Checkpoints::IntoLog {
                        checkpoint.push(&text);
                    }
                    emit(&engine.live_event(live, turn_id, EventBody::AssistantDelta { text }));
                }
                Ok(ChatEvent::ReasoningDelta(text)) => emit(&engine.live_event(live, turn_id, EventBody::ReasoningDelta { text })),
                Ok(ChatEvent::ToolCallStarted { .. }) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let interval_passed = last_saved.elapsed() >= interval;
            if checkpoint.due(interval_passed) {
                for text in checkpoint.take() {
                    let meta = Meta { turn_id: Some(turn_id.to_owned()), ..Meta::default() };
                    if let Err(error) = engine.append_event(live, meta, EventBody::AssistantStreamed { text }, Batch::new(), Durability::Durable) {
                        checkpoint_error.get_or_insert(error);
                    }
                }
            }
            if interval_passed {
                last_saved = Instant::now();
            }
        }
        handle.join().unwrap_or_else(|_| Err(ApiError::internal("the model call stopped unexpectedly")))
    });
    if let Some(error) = checkpoint_error {
        // The store failed under the stream: an engine fault, as for any append.
        return Err(error);
    }
    Ok(Streamed { result, partial, elapsed: started.elapsed() })
}

/// The longest a streamed answer waits before what arrived is checkpointed into the
/// log (`assistant_streamed`, synced to disk): what a kill -9 can lose of a stream.
pub const STREAM_CHECKPOINT_MILLIS: u64 = 500;
/// The most characters a checkpoint holds; more waiting are written at once, in
/// pieces of this size (so no log line outgrows its limit).
pub const STREAM_CHECKPOINT_CHARS: usize = 2_000;

/// The streamed text not yet checkpointed.
#[derive(Default)]
struct StreamCheckpoint {
    unsaved: String,
    chars: usize,
}

impl StreamCheckpoint {
    fn push(&mut self, text: &str) {
        self.unsaved.push_str(text);
        self.chars += text.chars().count();
    }

    /// Something waits, and the interval passed or enough waits.
    fn due(&self, interval_passed: bool) -> bool {
        self.chars > 0 && (interval_passed || self.chars >= STREAM_CHECKPOINT_CHARS)
    }

    /// The waiting text in pieces of at most `STREAM_CHECKPOINT_CHARS` characters.
    fn take(&mut self) -> Vec<String> {
        self.chars = 0;
        let text = std::mem::take(&mut self.unsaved);
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(STREAM_CHECKPOINT_CHARS).map(|piece| piece.iter().collect()).collect()
    }
}
