//! Publishing accounts: created, listed, updated, deleted, and their days as account
//! exports reported them (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto;
use crate::api::dto::Platform;
use crate::api::{required_text, ApiError, Deleted, Empty, Engine};
use crate::error::{bounded_text, ErrorCode};
use crate::performance::{self as domain, Account};
use crate::store::{Batch, Durability};

/// Longest account name or handle, in characters.
pub const MAX_ACCOUNT_CHARS: usize = 100;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountCreateParams {
    pub platform: Platform,
    pub name: String,
    #[serde(default)]
    #[ts(optional)]
    pub handle: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountRef {
    pub account_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountUpdateParams {
    pub account_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
    /// An empty handle clears it.
    #[serde(default)]
    #[ts(optional)]
    pub handle: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AccountListResult {
    pub accounts: Vec<dto::Account>,
}

fn handle(text: Option<&str>) -> Result<Option<String>, ApiError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(h) => Ok(Some(bounded_text("handle", h, MAX_ACCOUNT_CHARS)?)),
    }
}

fn refuse_duplicate_account(accounts: &[Account], platform: crate::model::Platform, name: &str, except: Option<&str>) -> Result<(), ApiError> {
    if accounts.iter().any(|a| a.platform == platform && a.name == name && Some(a.id.as_str()) != except) {
        return Err(ApiError::validation("name", format!("There is already a {} account named {name:?}.", platform.as_str()))
            .problem("perf.account_exists", &[("name", name), ("platform", platform.as_str())]));
    }
    Ok(())
}

pub(in crate::api) fn create_account(engine: &Engine, params: AccountCreateParams) -> Result<Account, ApiError> {
    let name = required_text("name", &params.name, MAX_ACCOUNT_CHARS)?;
    let handle = handle(params.handle.as_deref())?;
    let _guard = engine.write_lock();
    refuse_duplicate_account(&domain::accounts(engine.store())?, params.platform.into(), &name, None)?;
    let now = engine.now();
    let account = Account { id: engine.new_id("acc"), platform: params.platform.into(), name, handle, created_at: now, updated_at: now };
    let mut batch = Batch::new();
    batch.put(&account)?;
    domain::sync::stage_delivery(engine, &mut batch, inkstone_sync_proto::PerfKind::Account, &account.id, None, None)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(account)
}

pub(in crate::api) fn list_accounts(engine: &Engine, _params: Empty) -> Result<AccountListResult, ApiError> {
    Ok(AccountListResult { accounts: domain::accounts(engine.store())?.iter().map(Into::into).collect() })
}

pub(in crate::api) fn update_account(engine: &Engine, params: AccountUpdateParams) -> Result<Account, ApiError> {
    let name = params.name.as_deref().map(|n| required_text("name", n, MAX_ACCOUNT_CHARS)).transpose()?;
    let new_handle = params.handle.as_deref().map(|h| handle(Some(h))).transpose()?;
    let _guard = engine.write_lock();
    let mut account = domain::load_account(engine.store(), &params.account_id)?;
    if let Some(name) = name {
        refuse_duplicate_account(&domain::accounts(engine.store())?, account.platform, &name, Some(&account.id))?;
        account.name = name;
    }
    if let Some(h) = new_handle {
        account.handle = h;
    }
    account.updated_at = engine.now();
    let mut batch = Batch::new();
    batch.put(&account)?;
    domain::sync::stage_delivery(engine, &mut batch, inkstone_sync_proto::PerfKind::Account, &account.id, None, None)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(account)
}

/// Deletes an account no publication names, with its days. Errors: CONFLICT while one
/// does.
pub(in crate::api) fn delete_account(engine: &Engine, params: AccountRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let account = domain::load_account(engine.store(), &params.account_id)?;
    let used = domain::all_publications(engine.store())?.iter().filter(|p| p.account_id.as_deref() == Some(account.id.as_str())).count();
    if used > 0 {
        let n = used.to_string();
        return Err(ApiError::new(ErrorCode::Conflict, format!("Account {} is named by {used} publication(s); it cannot be deleted.", account.name))
            .problem("perf.account_in_use", &[("account", &account.name), ("n", &n)])
            .hint("reassign_publications", "Edit those publications to another account (or none) first.")
            .details(serde_json::json!({ "accountId": account.id, "publications": used })));
    }
    let mut batch = Batch::new();
    batch.delete::<Account>(account.id.as_bytes().to_vec());
    // Its days go with it, in the same batch; a day not yet sent need not go (the
    // deletion drops the account's days on the server too).
    domain::account_days::stage_delete_all(&mut batch, engine.store(), &account.id)?;
    let deleted_at = engine.now().max(account.updated_at + chrono::Duration::milliseconds(1));
    domain::sync::stage_delivery(engine, &mut batch, inkstone_sync_proto::PerfKind::Account, &account.id, None, Some(deleted_at))?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: account.id, deleted: true })
}
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfAccountDaysResult {
    pub account: dto::Account,
    /// The latest observation of each day, oldest first.
    pub days: Vec<dto::AccountSnapshot>,
}

/// An account's days (followers), as account exports reported them.
pub(in crate::api) fn account_days(engine: &Engine, params: AccountRef) -> Result<PerfAccountDaysResult, ApiError> {
    use crate::performance::account_days;
    let account = domain::load_account(engine.store(), &params.account_id)?;
    let all = account_days::snapshots(engine.store(), &account.id)?;
    let days = account_days::days(&all).into_iter().map(Into::into).collect();
    Ok(PerfAccountDaysResult { account: account.into(), days })
}
