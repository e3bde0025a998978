//! When to try a request again (pure). Only 429 and 5xx retry ([`LlmError::is_retryable`]);
//! the wait doubles from `initial_backoff` up to `max_backoff`, with "full jitter"
//! between half and all of it, so clients that failed together do not retry together.
//! A server's `retry-after` hint is honoured up to `max_retry_after`; a longer hint
//! gives up at once (waiting minutes inside an interactive call helps nobody) and the
//! error carries the hint.

use std::time::Duration;

use super::error::LlmError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (the official SDK's default is 2).
    pub max_retries: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 2, initial_backoff: Duration::from_millis(500), max_backoff: Duration::from_secs(8), max_retry_after: Duration::from_secs(60) }
    }
}

impl RetryPolicy {
    /// No retries at all (tests of the single-attempt paths).
    pub fn none() -> Self {
        RetryPolicy { max_retries: 0, ..RetryPolicy::default() }
    }

    /// How long to wait before retry number `retry` (1-based) after `error`, or `None`
    /// to give up. `jitter` is a number in [0, 1).
    pub fn next_delay(&self, retry: u32, error: &LlmError, jitter: f64) -> Option<Duration> {
        if retry > self.max_retries || !error.is_retryable() {
            return None;
        }
        if let Some(hint) = error.retry_after() {
            return (hint <= self.max_retry_after).then_some(hint);
        }
        let exponent = retry.saturating_sub(1).min(16);
        let base = self.initial_backoff.saturating_mul(1u32 << exponent).min(self.max_backoff);
        let factor = 0.5 + 0.5 * jitter.clamp(0.0, 1.0);
        Some(base.mul_f64(factor))
    }
}

/// A small deterministic pseudo-random source for jitter (xorshift64*), seeded by the
/// engine configuration so tests are repeatable.
#[derive(Debug)]
pub struct Jitter {
    state: std::sync::atomic::AtomicU64,
}

impl Jitter {
    pub fn new(seed: u64) -> Self {
        Jitter { state: std::sync::atomic::AtomicU64::new(seed | 1) }
    }

    /// A number in [0, 1).
    pub fn next(&self) -> f64 {
        use std::sync::atomic::Ordering;
        let mut x = self.state.load(Ordering::Relaxed);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state.store(x, Ordering::Relaxed);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn unavailable() -> LlmError {
        LlmError::Unavailable { status: Some(503), message: String::new() }
    }

    #[test]
    fn backs_off_exponentially_with_jitter_and_a_cap() {
        let policy = RetryPolicy { max_retries: 6, ..RetryPolicy::default() };
        let delays: Vec<_> = (1..=6).map(|r| policy.next_delay(r, &unavailable(), 1.0).map(|d| d.as_millis())).collect();
        assert_eq!(delays, vec![Some(500), Some(1000), Some(2000), Some(4000), Some(8000), Some(8000)]);
        assert_eq!(policy.next_delay(1, &unavailable(), 0.0), Some(Duration::from_millis(250)));
        assert_eq!(policy.next_delay(7, &unavailable(), 0.5), None);
    }

    #[test]
    fn honours_and_caps_retry_after() {
        let policy = RetryPolicy::default();
        let hinted = |secs| LlmError::RateLimited { retry_after: Some(Duration::from_secs(secs)), message: String::new() };
        assert_eq!(policy.next_delay(1, &hinted(3), 0.3), Some(Duration::from_secs(3)));
        assert_eq!(policy.next_delay(1, &hinted(600), 0.3), None);
    }

    #[test]
    fn never_retries_the_rest() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.next_delay(1, &LlmError::InsufficientQuota { message: String::new() }, 0.5), None);
        assert_eq!(policy.next_delay(1, &LlmError::Auth { status: 401, message: String::new() }, 0.5), None);
        assert_eq!(policy.next_delay(1, &LlmError::Timeout { after: Duration::from_secs(1) }, 0.5), None);
    }

    #[test]
    fn jitter_stays_in_range() {
        let jitter = Jitter::new(42);
        assert!((0..1000).map(|_| jitter.next()).all(|x| (0.0..1.0).contains(&x)));
    }
}
