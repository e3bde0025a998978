//! Account snapshots: an account's day (followers at the end of it, new, lost, net),
//! as an account-level export reports it (WeChat 用户分析). Append-only like metric
//! snapshots: a day imported twice from two different files keeps both observations,
//! the latest read first; the same file imported again changes nothing (its SHA-256).
//! They are kept apart from publications' snapshots: an account's followers are never
//! a post's number, and no report adds them to one.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::metrics::{MetricValue, SnapshotSource};
use crate::error::ApiError;
use crate::model::{Platform, Timestamp};
use crate::store::{keys, Kind, Record, Store};

/// One day of an account, as one source reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountSnapshot {
    pub id: String,
    pub account_id: String,
    pub platform: Platform,
    /// The day it covers, in the export's time zone (Beijing for WeChat).
    pub date: NaiveDate,
    pub source: SnapshotSource,
    /// `followers_total`, `followers_new`, `followers_lost`, `followers_net`: those the
    /// export reported (absent, never 0, when it did not).
    pub metrics: BTreeMap<String, MetricValue>,
    pub created_at: Timestamp,
}

impl Record for AccountSnapshot {
    const KIND: Kind = Kind::AccountSnapshots;
    fn key(&self) -> Vec<u8> {
        let mut key = keys::project_prefix(&self.account_id);
        key.extend_from_slice(self.date.format("%Y-%m-%d").to_string().as_bytes());
        key.push(0);
        key.extend_from_slice(self.id.as_bytes());
        key
    }
}

/// An account's days, oldest first; for a day observed more than once, every
/// observation in the order it was written.
pub fn snapshots(store: &Store, account_id: &str) -> Result<Vec<AccountSnapshot>, ApiError> {
    let mut all = store.scan::<AccountSnapshot>(&keys::project_prefix(account_id))?;
    all.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.created_at.cmp(&b.created_at)).then_with(|| a.id.cmp(&b.id)));
    Ok(all)
}

/// Adds to `batch` the deletion of every day of `account_id` and of their deliveries
/// owed to the server (an account's deletion takes its days on the server too).
pub fn stage_delete_all(batch: &mut crate::store::Batch, store: &Store, account_id: &str) -> Result<usize, ApiError> {
    let all = store.scan::<AccountSnapshot>(&keys::project_prefix(account_id))?;
    for day in &all {
        batch.delete::<AccountSnapshot>(day.key());
        batch.delete::<crate::outbox::PerfDelivery>(crate::outbox::perf_delivery_key(inkstone_sync_proto::PerfKind::AccountSnapshot, &day.id));
    }
    Ok(all.len())
}

/// The latest observation of each day, oldest day first.
pub fn days(all: &[AccountSnapshot]) -> Vec<&AccountSnapshot> {
    let mut by_day: BTreeMap<NaiveDate, &AccountSnapshot> = BTreeMap::new();
    for snapshot in all {
        by_day.insert(snapshot.date, snapshot);
    }
    by_day.into_values().collect()
}
