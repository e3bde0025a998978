//! Token and cost metering: one record per model call (which profile and model
//! answered, for what, how many tokens, what it cost, how long it took, how it ended),
//! reports by day, profile and purpose, and the workspace quotas checked before a call
//! (pure functions over records; the API layer reads and writes them).

use std::collections::BTreeMap;

use chrono::Datelike;
use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;
use crate::model::Timestamp;
use crate::store::{Kind, Record};

/// How a model call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UsageOutcome {
    Ok,
    Error { code: ErrorCode },
}

/// One model call. Never holds a prompt, a reply or a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    pub id: String,
    pub at: Timestamp,
    pub profile_id: String,
    pub profile_name: String,
    /// The model that answered (as the server reported it) or was asked.
    pub model: String,
    /// What the call was for: `test_connection`, `drafting`, `optimize`, ...
    pub purpose: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The server reported no usage; the counts are estimates.
    pub tokens_estimated: bool,
    /// In the currency of the profile's prices; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    pub latency_ms: u64,
    pub attempts: u32,
    pub outcome: UsageOutcome,
}

impl Record for UsageRecord {
    const KIND: Kind = Kind::UsageRecords;
    fn key(&self) -> Vec<u8> {
        // Ids are sortable, so the tree is in call order.
        self.id.as_bytes().to_vec()
    }

    /// A call of a session or run is indexed by its owner in the same transaction, so
    /// the activity view finds the calls behind a proposal without reading every call.
    fn derived(&self, batch: &mut crate::store::Batch) -> Result<(), crate::store::StoreError> {
        if let Some(owner_id) = self.session_id.as_deref().or(self.run_id.as_deref()) {
            batch.put(&UsageByOwner { owner_id: owner_id.to_owned(), usage_id: self.id.clone() })?;
        }
        Ok(())
    }
}

/// Index entry: a usage record of a session or run (`owner_id 0x00 usage_id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageByOwner {
    pub owner_id: String,
    pub usage_id: String,
}

impl Record for UsageByOwner {
    const KIND: Kind = Kind::UsageIndex;
    fn key(&self) -> Vec<u8> {
        crate::store::keys::child(&self.owner_id, &self.usage_id)
    }
}

/// The usage records of a session or run, in call order.
pub fn by_owner(store: &crate::store::Store, owner_id: &str) -> Result<Vec<UsageRecord>, crate::store::StoreError> {
    let mut out = Vec::new();
    for entry in store.scan::<UsageByOwner>(&crate::store::keys::project_prefix(owner_id))? {
        if let Some(record) = store.get::<UsageRecord>(entry.usage_id.as_bytes())? {
            out.push(record);
        }
    }
    Ok(out)
}

/// The running total of the calls of one UTC calendar month (`2026-11`) or day
/// (`2026-11-27`): what the policy's monthly cap and the quotas compare, read as one
/// record instead of every call.
///
/// A data folder is one member's (every call it meters is its person's), so these are
/// the member's totals. Each is updated in the same batch as the usage record it counts
/// ([`stage_call`], under the write lock), so the two cannot disagree; an import writes
/// them from the imported records in its own batch ([`stage_totals`]), and a folder
/// written before they existed gets them when it opens (`activity::index_existing`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotal {
    /// `YYYY-MM` or `YYYY-MM-DD` (UTC).
    pub period: String,
    pub calls: u64,
    /// Input plus output tokens.
    pub tokens: u64,
    /// Sum of the priced calls' costs.
    pub cost: f64,
}

impl Record for UsageTotal {
    const KIND: Kind = Kind::UsageTotals;
    fn key(&self) -> Vec<u8> {
        self.period.as_bytes().to_vec()
    }
}

impl UsageTotal {
    fn add(&mut self, record: &UsageRecord) {
        self.calls += 1;
        self.tokens += record.input_tokens + record.output_tokens;
        self.cost += record.cost.unwrap_or(0.0);
    }

    fn remove(&mut self, record: &UsageRecord) {
        self.calls = self.calls.saturating_sub(1);
        self.tokens = self.tokens.saturating_sub(record.input_tokens + record.output_tokens);
        self.cost -= record.cost.unwrap_or(0.0);
    }
}

/// The UTC calendar month of `at`: `2026-11`.
pub fn month_of(at: Timestamp) -> String {
    at.format("%Y-%m").to_string()
}

/// The UTC day of `at`: `2026-11-27`.
pub fn day_of(at: Timestamp) -> String {
    at.format("%Y-%m-%d").to_string()
}

/// The stored total of a period (zero when nothing was metered in it).
pub fn total(store: &crate::store::Store, period: &str) -> Result<UsageTotal, crate::store::StoreError> {
    Ok(store.get::<UsageTotal>(period.as_bytes())?.unwrap_or_else(|| UsageTotal { period: period.to_owned(), ..UsageTotal::default() }))
}

/// Stages a call's record and its month's and day's totals. The caller holds the write
/// lock (the totals are read, added to and written back) and applies the batch. A record
/// that replaces a stored one under the same id takes the stored one's part out first,
/// so the totals stay the sum of the records whatever is put.
pub fn stage_call(store: &crate::store::Store, batch: &mut crate::store::Batch, record: &UsageRecord) -> Result<(), crate::store::StoreError> {
    let replaced = store.get::<UsageRecord>(&record.key())?;
    batch.put(record)?;
    let mut sums: BTreeMap<String, UsageTotal> = BTreeMap::new();
    if let Some(old) = &replaced {
        for period in [month_of(old.at), day_of(old.at)] {
            let mut sum = total(store, &period)?;
            sum.remove(old);
            sums.insert(period, sum);
        }
    }
    for period in [month_of(record.at), day_of(record.at)] {
        let mut sum = match sums.remove(&period) {
            Some(sum) => sum,
            None => total(store, &period)?,
        };
        sum.add(record);
        sums.insert(period, sum);
    }
    for sum in sums.values() {
        if sum.calls == 0 {
            batch.delete::<UsageTotal>(sum.key());
        } else {
            batch.put(sum)?;
        }
    }
    Ok(())
}

/// Stages the totals of `records` (every usage record of the folder), replacing the
/// stored ones: for a folder written before totals existed.
pub fn stage_totals<'a>(store: &crate::store::Store, batch: &mut crate::store::Batch, records: impl IntoIterator<Item = &'a UsageRecord>) -> Result<(), crate::store::StoreError> {
    for stale in store.scan::<UsageTotal>(b"")? {
        batch.delete::<UsageTotal>(stale.key());
    }
    stage_totals_of(batch, records)
}

/// Stages the totals of `records`, every usage record a store will hold once `batch`
/// is applied to one that holds no totals (an import: into an empty folder, or after
/// the batch deleted every record). Sums in the order given (the store's, which is
/// call order), as [`stage_call`] did.
pub fn stage_totals_of<'a>(batch: &mut crate::store::Batch, records: impl IntoIterator<Item = &'a UsageRecord>) -> Result<(), crate::store::StoreError> {
    let mut sums: BTreeMap<String, UsageTotal> = BTreeMap::new();
    for record in records {
        for period in [month_of(record.at), day_of(record.at)] {
            sums.entry(period.clone()).or_insert_with(|| UsageTotal { period, ..UsageTotal::default() }).add(record);
        }
    }
    for sum in sums.values() {
        batch.put(sum)?;
    }
    Ok(())
}

/// A project's limits on model use, across all its sessions (and their compactions).
/// `None` is no limit. A model call of a session whose project's budget is spent is
/// not sent; the person raises the budget to go on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectBudget {
    pub project_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_budget: Option<f64>,
}

impl Record for ProjectBudget {
    const KIND: Kind = Kind::ProjectBudgets;
    fn key(&self) -> Vec<u8> {
        self.project_id.as_bytes().to_vec()
    }
}

/// What a set of sessions spent: tokens (input + output) and cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spent {
    pub tokens: u64,
    pub cost: f64,
}

/// What the usage records of `sessions` add up to.
pub fn spent_by<'a>(records: impl IntoIterator<Item = &'a UsageRecord>, sessions: &[String]) -> Spent {
    let mut spent = Spent::default();
    for record in records {
        if record.session_id.as_ref().is_some_and(|s| sessions.contains(s)) {
            spent.tokens += record.input_tokens + record.output_tokens;
            spent.cost += record.cost.unwrap_or(0.0);
        }
    }
    spent
}

/// Which limit of a budget `spent` reached, as the message the person reads; `None`
/// while there is room.
pub fn budget_exceeded(what: &str, token_budget: Option<u64>, cost_budget: Option<f64>, spent: Spent) -> Option<String> {
    if let Some(budget) = token_budget.filter(|b| spent.tokens >= *b) {
        return Some(format!("The {what}'s budget of {budget} tokens is spent ({} used); nothing more was sent.", spent.tokens));
    }
    if let Some(budget) = cost_budget.filter(|b| spent.cost >= *b) {
        return Some(format!("The {what}'s cost budget of {budget:.4} is spent ({:.4}); nothing more was sent.", spent.cost));
    }
    None
}

/// Workspace limits on model use. `None` is no limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quotas {
    /// Input plus output tokens per UTC day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_tokens: Option<u64>,
    /// Cost per UTC calendar month, in the profiles' currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cost: Option<f64>,
}

pub const META_QUOTAS: &[u8] = b"llm_quotas";

impl Record for Quotas {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_QUOTAS.to_vec()
    }
}

/// The cost of `input` and `output` tokens at prices per million tokens.
pub fn cost(input_price_per_mtok: Option<f64>, output_price_per_mtok: Option<f64>, input: u64, output: u64) -> Option<f64> {
    if input_price_per_mtok.is_none() && output_price_per_mtok.is_none() {
        return None;
    }
    let part = |price: Option<f64>, tokens: u64| price.unwrap_or(0.0) * tokens as f64 / 1_000_000.0;
    Some(part(input_price_per_mtok, input) + part(output_price_per_mtok, output))
}

/// Which quota a call would break.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QuotaExceeded {
    #[error("today's token quota is used up ({used} of {limit} tokens; this call needs about {needed} more)")]
    DailyTokens { limit: u64, used: u64, needed: u64 },
    #[error("this month's cost quota is used up ({used:.4} of {limit:.4})")]
    MonthlyCost { limit: f64, used: f64 },
}

impl From<QuotaExceeded> for crate::error::ApiError {
    fn from(error: QuotaExceeded) -> Self {
        let message = format!("The call was not sent: {error}.");
        let details = match &error {
            QuotaExceeded::DailyTokens { limit, used, needed } => serde_json::json!({ "quota": "dailyTokens", "limit": limit, "used": used, "needed": needed }),
            QuotaExceeded::MonthlyCost { limit, used } => serde_json::json!({ "quota": "monthlyCost", "limit": limit, "used": used }),
        };
        crate::error::ApiError::new(ErrorCode::QuotaExceeded, message)
            .hint("raise_quota", "Raise the workspace quota in Settings → Usage, or wait for the next period.")
            .details(details)
    }
}

fn same_day(a: &Timestamp, b: &Timestamp) -> bool {
    a.date_naive() == b.date_naive()
}

fn same_month(a: &Timestamp, b: &Timestamp) -> bool {
    a.year() == b.year() && a.month() == b.month()
}

/// Checks a call that needs about `needed_tokens` against the quotas, given the
/// records so far. Refusing is the caller's job: nothing is sent when this fails.
pub fn check_quota(quotas: &Quotas, records: &[UsageRecord], now: Timestamp, needed_tokens: u64) -> Result<(), QuotaExceeded> {
    let today_tokens: u64 = records.iter().filter(|r| same_day(&r.at, &now)).map(|r| r.input_tokens + r.output_tokens).sum();
    let month_cost: f64 = records.iter().filter(|r| same_month(&r.at, &now)).filter_map(|r| r.cost).sum();
    check_quota_spent(quotas, today_tokens, month_cost, needed_tokens)
}

/// [`check_quota`] given what today's and this month's calls add up to (the stored
/// [`UsageTotal`]s, which `llm::Runtime` reads instead of every record).
pub fn check_quota_spent(quotas: &Quotas, today_tokens: u64, month_cost: f64, needed_tokens: u64) -> Result<(), QuotaExceeded> {
    if let Some(limit) = quotas.daily_tokens {
        if today_tokens + needed_tokens > limit {
            return Err(QuotaExceeded::DailyTokens { limit, used: today_tokens, needed: needed_tokens });
        }
    }
    if let Some(limit) = quotas.monthly_cost {
        if month_cost >= limit {
            return Err(QuotaExceeded::MonthlyCost { limit, used: month_cost });
        }
    }
    Ok(())
}

/// Totals of a group of calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    pub calls: u64,
    pub failed_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    /// Calls whose profile had prices; with none, `cost` means "unknown", not free.
    #[serde(default)]
    pub priced_calls: u64,
    /// Some calls' tokens are estimates.
    pub estimated: bool,
    pub latency_ms_total: u64,
}

impl UsageTotals {
    fn add(&mut self, record: &UsageRecord) {
        self.calls += 1;
        if matches!(record.outcome, UsageOutcome::Error { .. }) {
            self.failed_calls += 1;
        }
        self.input_tokens += record.input_tokens;
        self.output_tokens += record.output_tokens;
        if let Some(cost) = record.cost {
            self.cost += cost;
            self.priced_calls += 1;
        }
        self.estimated |= record.tokens_estimated;
        self.latency_ms_total += record.latency_ms;
    }
}

/// One row of a report: a key (a day `2026-01-31`, a profile name, a purpose) and
/// its totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    pub key: String,
    pub totals: UsageTotals,
}

/// Usage grouped three ways.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// Oldest day first.
    pub by_day: Vec<UsageRow>,
    pub by_profile: Vec<UsageRow>,
    pub by_purpose: Vec<UsageRow>,
    pub totals: UsageTotals,
    pub quotas: Quotas,
}

/// Aggregates the records whose time lies in `[from, to)` (either bound optional).
pub fn report(records: &[UsageRecord], from: Option<Timestamp>, to: Option<Timestamp>, quotas: Quotas) -> UsageReport {
    let mut by_day: BTreeMap<String, UsageTotals> = BTreeMap::new();
    let mut by_profile: BTreeMap<String, UsageTotals> = BTreeMap::new();
    let mut by_purpose: BTreeMap<String, UsageTotals> = BTreeMap::new();
    let mut totals = UsageTotals::default();
    for record in records.iter().filter(|r| from.is_none_or(|f| r.at >= f) && to.is_none_or(|t| r.at < t)) {
        by_day.entry(record.at.format("%Y-%m-%d").to_string()).or_default().add(record);
        by_profile.entry(record.profile_name.clone()).or_default().add(record);
        by_purpose.entry(record.purpose.clone()).or_default().add(record);
        totals.add(record);
    }
    let rows = |map: BTreeMap<String, UsageTotals>| map.into_iter().map(|(key, totals)| UsageRow { key, totals }).collect();
    UsageReport { by_day: rows(by_day), by_profile: rows(by_profile), by_purpose: rows(by_purpose), totals, quotas }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn record(id: &str, when: &str, purpose: &str, tokens: (u64, u64), cost: Option<f64>) -> UsageRecord {
        UsageRecord {
            id: id.to_owned(),
            at: at(when),
            profile_id: "llm_1".to_owned(),
            profile_name: "local".to_owned(),
            model: "m".to_owned(),
            purpose: purpose.to_owned(),
            session_id: None,
            run_id: None,
            input_tokens: tokens.0,
            output_tokens: tokens.1,
            tokens_estimated: false,
            cost,
            latency_ms: 10,
            attempts: 1,
            outcome: UsageOutcome::Ok,
        }
    }

    #[test]
    fn cost_uses_prices_per_million() {
        assert_eq!(cost(Some(2.0), Some(8.0), 1_000_000, 500_000), Some(6.0));
        assert_eq!(cost(None, None, 5, 5), None);
    }

    #[test]
    fn quotas_count_today_and_this_month() {
        let records = vec![record("u1", "2026-01-31T23:00:00Z", "drafting", (900, 100), Some(3.0)), record("u2", "2026-02-01T01:00:00Z", "drafting", (300, 100), Some(1.0))];
        let now = at("2026-02-01T12:00:00Z");
        let quotas = Quotas { daily_tokens: Some(1000), monthly_cost: None };
        assert_eq!(check_quota(&quotas, &records, now, 500), Ok(()));
        assert_eq!(check_quota(&quotas, &records, now, 601), Err(QuotaExceeded::DailyTokens { limit: 1000, used: 400, needed: 601 }));
        let quotas = Quotas { daily_tokens: None, monthly_cost: Some(1.0) };
        assert_eq!(check_quota(&quotas, &records, now, 1), Err(QuotaExceeded::MonthlyCost { limit: 1.0, used: 1.0 }));
        assert_eq!(check_quota(&Quotas::default(), &records, now, 1_000_000), Ok(()));
    }

    #[test]
    fn reports_group_by_day_profile_and_purpose() {
        let mut failed = record("u3", "2026-02-01T02:00:00Z", "test_connection", (5, 0), None);
        failed.outcome = UsageOutcome::Error { code: ErrorCode::ProviderAuth };
        let records =
            vec![record("u1", "2026-01-31T23:00:00Z", "drafting", (900, 100), Some(3.0)), record("u2", "2026-02-01T01:00:00Z", "drafting", (300, 100), Some(1.0)), failed];
        let report = report(&records, None, None, Quotas::default());
        assert_eq!(report.by_day.iter().map(|r| (r.key.as_str(), r.totals.calls)).collect::<Vec<_>>(), vec![("2026-01-31", 1), ("2026-02-01", 2)]);
        assert_eq!(report.by_purpose.iter().map(|r| (r.key.as_str(), r.totals.input_tokens)).collect::<Vec<_>>(), vec![("drafting", 1200), ("test_connection", 5)]);
        assert_eq!(report.totals.failed_calls, 1);
        assert_eq!(report.totals.cost, 4.0);
        assert_eq!(report.totals.priced_calls, 2, "the unpriced call's cost is unknown, not zero");
        assert_eq!(report.by_purpose.iter().map(|r| r.totals.priced_calls).collect::<Vec<_>>(), vec![2, 0]);
        let february = super::report(&records, Some(at("2026-02-01T00:00:00Z")), None, Quotas::default());
        assert_eq!(february.totals.calls, 2);
    }
}
