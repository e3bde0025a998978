//! Time and ids: where every timestamp and record id in core comes from. A leaf, so
//! that every layer can take them as parameters. Nothing in core reads the clock or a
//! random source directly; tests pass [`FakeClock`] and [`SequentialIds`].

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use crate::Timestamp;

/// A source of the current time.
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// The operating system's clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        chrono::Utc::now()
    }
}

/// A clock that only moves when told to. Starts at 2026-01-01T00:00:00Z.
#[derive(Debug)]
pub struct FakeClock {
    millis: AtomicI64,
    step_millis: i64,
}

impl FakeClock {
    /// `step_millis` is added after every reading, so successive events get distinct,
    /// increasing times.
    pub fn new(step_millis: i64) -> Self {
        FakeClock { millis: AtomicI64::new(1_767_225_600_000), step_millis }
    }

    pub fn advance_millis(&self, millis: i64) {
        self.millis.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Timestamp {
        let millis = self.millis.fetch_add(self.step_millis, Ordering::SeqCst);
        chrono::DateTime::from_timestamp_millis(millis).unwrap_or_default()
    }
}

/// A source of record ids. Ids carry a readable prefix (`prj_`, `ver_`, ...) and sort
/// by creation order.
pub trait IdSource: Send + Sync {
    fn next_id(&self, prefix: &str) -> String;
}

/// ULID-based ids: `prj_01JD...`.
#[derive(Default)]
pub struct UlidIds {
    generator: std::sync::Mutex<ulid::Generator>,
}

impl IdSource for UlidIds {
    fn next_id(&self, prefix: &str) -> String {
        // The monotonic generator keeps ids from one process strictly increasing even
        // within one millisecond; on overflow (2^80 ids in a millisecond) fall back to a
        // fresh ULID.
        let ulid = match self.generator.lock() {
            Ok(mut generator) => generator.generate().unwrap_or_else(|_| ulid::Ulid::new()),
            Err(_) => ulid::Ulid::new(),
        };
        format!("{prefix}_{ulid}")
    }
}

/// `prj_0000000001`, `ver_0000000002`, ... — one counter for all prefixes.
#[derive(Debug, Default)]
pub struct SequentialIds {
    counter: AtomicU64,
}

impl IdSource for SequentialIds {
    fn next_id(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{prefix}_{n:010}")
    }
}
