//! Performance data: publishing accounts, publications, and metric snapshots typed by
//! hand. See [`crate::performance`] for the rules (absent never 0, keys keep their
//! basis, removal keeps metrics until confirmed, AI changes derived from versions).
//!
//! The folder beside this file holds the methods by family, each with its wire types:
//! accounts (and their days), publications, metric snapshots typed by hand, imports
//! of a platform's export, the before/after report with what the AI reads, and the
//! dashboard with its export.

mod accounts;
mod dashboard;
mod import;
mod publications;
mod report;
mod snapshots;

pub use accounts::*;
pub use dashboard::*;
pub use import::*;
pub use publications::*;
pub use report::*;
pub use snapshots::*;

use super::ApiError;
use crate::performance::metrics;

fn known_metric(field: &str, metric: &str) -> Result<(), ApiError> {
    if metrics::metric_key(metric).is_none() {
        let shown: String = metric.chars().take(60).collect();
        return Err(ApiError::validation(field, format!("{shown:?} is not a metric key.")).problem("perf.unknown_metric", &[("key", &shown)]).action("list_metric_keys", &[]));
    }
    Ok(())
}
