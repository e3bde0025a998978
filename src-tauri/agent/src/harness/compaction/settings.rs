//! A profile's context settings (the token estimate's calibration against reported
//! usage and the server's tokenizer, the compaction threshold) and a session's own
//! threshold.

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::harness::event::EventBody;
use crate::harness::Harness;
use crate::store::{Durability, Kind, Record};

use super::*;

/// When a session compacts by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum CompactThreshold {
    /// At `percent` of the context window (40–95).
    Auto { percent: u8 },
    /// Only when the person asks (or when a request would not fit at all).
    Manual,
}

impl CompactThreshold {
    /// The automatic share, if any.
    pub fn percent(self) -> Option<u32> {
        match self {
            CompactThreshold::Auto { percent } => Some(u32::from(percent)),
            CompactThreshold::Manual => None,
        }
    }

    /// Refuses a share outside 40–95%.
    pub fn check(self, field: &str) -> Result<CompactThreshold, ApiError> {
        match self {
            CompactThreshold::Auto { percent } if !(MIN_COMPACT_PERCENT..=MAX_COMPACT_PERCENT).contains(&percent) => {
                Err(ApiError::validation(field, format!("The compaction threshold must be between {MIN_COMPACT_PERCENT}% and {MAX_COMPACT_PERCENT}% (or manual).")))
            }
            other => Ok(other),
        }
    }
}

impl Default for CompactThreshold {
    fn default() -> Self {
        CompactThreshold::Auto { percent: DEFAULT_COMPACT_PERCENT }
    }
}

/// A profile's context settings: the calibration of the token estimate against the
/// usage its server reports, and its compaction threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileContext {
    pub profile_id: String,
    /// Reported input tokens ÷ estimated input tokens (1.0 until calibrated).
    pub ratio: f64,
    /// Calls the ratio was learnt from.
    pub samples: u32,
    /// `None`: the default (80%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<CompactThreshold>,
    /// The server's tokenizer count the ratio was seeded from at profile test (`None`:
    /// learnt from usage alone, or not calibrated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<CalibrationSeed>,
}

/// A calibration read from the server's own tokenizer: it counted a fixed sample
/// (the one of [`crate::llm::window::TOKENIZER_SAMPLES`] it undercounts most) as
/// `server_tokens` where the estimate
/// says `estimated_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationSeed {
    pub endpoint: crate::llm::window::TokenizerEndpoint,
    pub server_tokens: u64,
    pub estimated_tokens: u64,
    pub at: crate::model::Timestamp,
}

pub(super) const META_PROFILE_CONTEXT: &str = "profile_context/";
/// The key prefix of every profile's context settings in the meta tree (the export
/// carries them).
pub const META_PROFILE_CONTEXT_PREFIX: &[u8] = META_PROFILE_CONTEXT.as_bytes();

impl Record for ProfileContext {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        profile_context_key(&self.profile_id)
    }
}

pub(super) fn profile_context_key(profile_id: &str) -> Vec<u8> {
    format!("{META_PROFILE_CONTEXT}{profile_id}").into_bytes()
}

impl ProfileContext {
    fn new(profile_id: &str) -> ProfileContext {
        ProfileContext { profile_id: profile_id.to_owned(), ratio: 1.0, samples: 0, threshold: None, seed: None }
    }

    /// An estimate corrected by the calibration.
    pub fn calibrated(&self, estimate: u64) -> u64 {
        (estimate as f64 * self.ratio).ceil() as u64
    }

    /// Folds one observation in (a running mean over the last ten or so calls; one
    /// odd answer moves it little). Samples outside ¼–4× are ignored as noise.
    pub fn learn(&mut self, estimated: u64, reported: u64) {
        if estimated == 0 || reported == 0 {
            return;
        }
        let sample = reported as f64 / estimated as f64;
        if !(0.25..=4.0).contains(&sample) {
            return;
        }
        let weight = f64::from(self.samples.min(9));
        self.ratio = (self.ratio * weight + sample) / (weight + 1.0);
        self.samples = self.samples.saturating_add(1);
    }
}

impl ProfileContext {
    /// Seeds the ratio from the server's tokenizer count of the sample: before any
    /// usage was learnt the count sets the ratio (as one sample, so the usage of real
    /// calls refines it); after, it is folded in as one more observation. A count
    /// outside ¼–4× of the estimate is ignored, as in [`ProfileContext::learn`].
    /// Returns whether it was taken.
    pub fn seed_from_tokenizer(&mut self, seed: CalibrationSeed) -> bool {
        let (estimated, counted) = (seed.estimated_tokens, seed.server_tokens);
        if estimated == 0 || !(0.25..=4.0).contains(&(counted as f64 / estimated as f64)) {
            return false;
        }
        if self.samples == 0 || (self.seed.is_some() && self.samples == 1) {
            // Untouched, or only the last test's seed: the new count replaces it.
            self.ratio = counted as f64 / estimated as f64;
            self.samples = 1;
        } else {
            self.learn(estimated, counted);
        }
        self.seed = Some(seed);
        true
    }
}

/// The profile's context settings (the defaults when none are stored).
pub fn profile_context(store: &crate::store::Store, profile_id: &str) -> Result<ProfileContext, ApiError> {
    Ok(store.get::<ProfileContext>(&profile_context_key(profile_id))?.unwrap_or_else(|| ProfileContext::new(profile_id)))
}

impl Harness<'_> {
    /// Sets the session's own threshold (`None`: the profile's).
    pub fn set_compaction_threshold(&self, session_id: &str, threshold: Option<CompactThreshold>) -> Result<(), ApiError> {
        let threshold = threshold.map(|t| t.check("threshold")).transpose()?;
        let live = self.live_session(session_id)?;
        if live.lock_state().compaction.threshold == threshold {
            return Ok(());
        }
        self.append_event(&live, crate::harness::Meta::default(), EventBody::CompactionSettingChanged { threshold }, crate::store::Batch::new(), Durability::Durable)?;
        Ok(())
    }
}

/// Sets a profile's compaction threshold (`None`: the default). Errors: NOT_FOUND
/// for an unknown profile; VALIDATION outside 40–95%.
pub fn set_profile_threshold(kernel: &crate::kernel::Kernel, profile: &str, threshold: Option<CompactThreshold>) -> Result<ProfileContext, ApiError> {
    let threshold = threshold.map(|t| t.check("threshold")).transpose()?;
    let profile = kernel.llm_profile(profile)?;
    let _guard = kernel.write_lock();
    let mut context = profile_context(kernel.store(), &profile.id)?;
    context.threshold = threshold;
    let mut batch = crate::store::Batch::new();
    batch.put(&context)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(context)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn thresholds_are_checked_and_the_calibration_moves_slowly() {
        assert!(CompactThreshold::Auto { percent: 39 }.check("t").is_err());
        assert!(CompactThreshold::Auto { percent: 95 }.check("t").is_ok());
        assert_eq!(CompactThreshold::default().percent(), Some(80));
        assert_eq!(serde_json::to_value(CompactThreshold::Manual).unwrap(), json!({"mode": "manual"}));
        let mut c = ProfileContext::new("p");
        c.learn(100, 150);
        assert!((c.ratio - 1.5).abs() < 1e-9, "the first sample is taken as is");
        c.learn(100, 100);
        assert!(c.ratio > 1.2 && c.ratio < 1.5);
        c.learn(100, 10_000);
        assert_eq!(c.samples, 2, "noise is ignored");
        assert_eq!(c.calibrated(100), (100.0 * c.ratio).ceil() as u64);
    }
}
