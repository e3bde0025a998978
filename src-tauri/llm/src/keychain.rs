//! Where API keys live: the OS keychain through keyring-core (macOS Keychain, Windows
//! Credential Manager, Linux Secret Service over D-Bus; the Linux kernel keyring only
//! when the user opts in, since its keys vanish at reboot). Nothing else ever holds a
//! key at rest: sled keeps only a fingerprint.
//!
//! The OS store is opened on first use, not at engine start, so commands that never
//! touch a key never touch D-Bus. When no backend works the error is
//! KEYCHAIN_UNAVAILABLE with hints (and the `INKSTONE_LLM_API_KEY` way out), never a
//! silent in-memory fallback: a key that seems saved but is gone after a restart is
//! worse than an error. [`MemoryKeychain`] exists for unit tests only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::ApiKey;
use inkstone_error::{ApiError, ErrorCode};

/// The keychain "service" every Inkstone entry is filed under.
pub const SERVICE: &str = "inkstone";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeychainError {
    /// No keychain backend could be reached (no D-Bus session, no Secret Service, ...).
    #[error("the {backend} keychain is not available: {detail}")]
    Unavailable { backend: String, detail: String },
    /// The keychain is there but refused (locked, prompt dismissed, access denied).
    #[error("the {backend} keychain refused access: {detail}")]
    Denied { backend: String, detail: String },
    /// The stored entry cannot be used (not UTF-8, ambiguous).
    #[error("the {backend} keychain entry is unusable: {detail}")]
    BadEntry { backend: String, detail: String },
}

impl From<KeychainError> for ApiError {
    /// The headline is worded (`problem.keychain.*`) without the system's detail (a
    /// D-Bus address, an OS error), which stays in the English message and `details`.
    fn from(error: KeychainError) -> Self {
        let message = format!("{}.", capitalize(&error.to_string()));
        let env_hint = "For headless use, set INKSTONE_LLM_API_KEY for the process instead (it is never saved).";
        match error {
            KeychainError::Unavailable { backend, detail } => ApiError::new(ErrorCode::KeychainUnavailable, message)
                .problem("keychain.unavailable", &[("backend", &backend)])
                .hint("start_keyring", "On Linux, run a Secret Service provider (GNOME Keyring or KWallet) in your desktop session.")
                .hint("use_kernel_keyring", KERNEL_KEYRING_HINT)
                .hint("use_env_key", env_hint)
                .details(serde_json::json!({ "backend": backend, "detail": detail })),
            KeychainError::Denied { backend, detail } => ApiError::new(ErrorCode::KeychainUnavailable, message)
                .problem("keychain.denied", &[("backend", &backend)])
                .hint("unlock_keyring", "Unlock the keychain (log in to the desktop session) and try again.")
                .hint("use_kernel_keyring", KERNEL_KEYRING_HINT)
                .hint("use_env_key", env_hint)
                .details(serde_json::json!({ "backend": backend, "detail": detail })),
            KeychainError::BadEntry { backend, detail } => ApiError::new(ErrorCode::KeychainUnavailable, message)
                .problem("keychain.bad_entry", &[("backend", &backend)])
                .hint("set_secret_again", "Enter the key or token again; the stored one is replaced.")
                .details(serde_json::json!({ "backend": backend, "detail": detail })),
        }
    }
}

/// How to keep secrets without a desktop session on Linux.
const KERNEL_KEYRING_HINT: &str = "On Linux without a desktop session, set INKSTONE_KEYCHAIN=keyutils to use the kernel keyring (its entries vanish at reboot).";

/// A keychain failure while keeping the workspace server's token: as for model keys,
/// but the process-only way out is `INKSTONE_WORKSPACE_TOKEN` (`INKSTONE_LLM_API_KEY`
/// is for model keys and would not help).
pub fn workspace_token_error(error: KeychainError) -> ApiError {
    let mut error = ApiError::from(error);
    for hint in &mut error.hints {
        if hint.id == "use_env_key" {
            *hint = inkstone_error::Hint::new("use_env_token", "Without a usable keychain, set INKSTONE_WORKSPACE_TOKEN for the process instead (it is never saved).");
        }
    }
    error
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or_default()
}

/// A place to keep secrets by account name. The real one is [`OsKeychain`]; the
/// trait is the seam for unit tests ([`MemoryKeychain`]).
pub trait SecretStore: Send + Sync + std::fmt::Debug {
    fn set(&self, account: &str, key: &ApiKey) -> Result<(), KeychainError>;
    /// `Ok(None)` when there is no entry.
    fn get(&self, account: &str) -> Result<Option<ApiKey>, KeychainError>;
    /// Deleting an absent entry is not an error.
    fn delete(&self, account: &str) -> Result<(), KeychainError>;
    /// A name for messages: "Secret Service", "kernel keyring", ...
    fn backend(&self) -> &str;
}

/// Which OS store to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeychainBackend {
    /// The platform's keychain (Secret Service on Linux).
    Platform,
    /// The Linux kernel keyring (keyutils), opted into with `INKSTONE_KEYCHAIN=keyutils`.
    /// Keys vanish at reboot.
    KernelKeyring,
}

impl KeychainBackend {
    fn name(self) -> &'static str {
        match self {
            KeychainBackend::Platform if cfg!(target_os = "macos") => "macOS Keychain",
            KeychainBackend::Platform if cfg!(target_os = "windows") => "Windows Credential Manager",
            KeychainBackend::Platform => "Secret Service",
            KeychainBackend::KernelKeyring => "kernel keyring",
        }
    }
}

type Store = Arc<keyring_core::api::CredentialStore>;

/// The OS keychain, opened on first use.
pub struct OsKeychain {
    backend: KeychainBackend,
    store: OnceLock<Result<Store, BackendError>>,
}

impl std::fmt::Debug for OsKeychain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OsKeychain").field("backend", &self.backend).finish()
    }
}

impl OsKeychain {
    pub fn new(backend: KeychainBackend) -> Self {
        OsKeychain { backend, store: OnceLock::new() }
    }

    fn open(backend: KeychainBackend) -> Result<Store, BackendError> {
        match backend {
            KeychainBackend::Platform => open_platform(),
            KeychainBackend::KernelKeyring => open_kernel_keyring(),
        }
    }

    fn entry(&self, account: &str) -> Result<keyring_core::Entry, KeychainError> {
        let store = self.store.get_or_init(|| OsKeychain::open(self.backend));
        match store {
            Ok(store) => store.build(SERVICE, account, None).map_err(|e| self.map(e)),
            Err(error) => Err(KeychainError::Unavailable { backend: self.backend().to_owned(), detail: error.to_string() }),
        }
    }

    fn map(&self, error: keyring_core::Error) -> KeychainError {
        let backend = self.backend().to_owned();
        // The messages of keyring-core and its stores name the service and account,
        // never the secret.
        match error {
            keyring_core::Error::PlatformFailure(e) => KeychainError::Unavailable { backend, detail: e.to_string() },
            keyring_core::Error::NoStorageAccess(e) => KeychainError::Denied { backend, detail: e.to_string() },
            keyring_core::Error::NoDefaultStore => KeychainError::Unavailable { backend, detail: "no store".to_owned() },
            keyring_core::Error::NotSupportedByStore(what) => KeychainError::Unavailable { backend, detail: format!("not supported: {what}") },
            keyring_core::Error::BadEncoding(_) => KeychainError::BadEntry { backend, detail: "the stored key is not UTF-8".to_owned() },
            keyring_core::Error::BadDataFormat(_, e) => KeychainError::BadEntry { backend, detail: e.to_string() },
            keyring_core::Error::Ambiguous(entries) => KeychainError::BadEntry { backend, detail: format!("{} entries match", entries.len()) },
            other => KeychainError::BadEntry { backend, detail: other.to_string() },
        }
    }
}

/// Why a keychain backend could not be opened. Kept with the keychain (every later
/// call answers with the same failure), so it is Clone and holds the store's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The backend's store refused to open (no D-Bus session, no Secret Service, ...).
    #[error("{detail}")]
    Open { detail: String },
    /// This operating system has no keychain Inkstone can use.
    #[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
    #[error("this operating system has no supported keychain")]
    NoPlatformKeychain,
    /// The kernel keyring was asked for on a system other than Linux.
    #[cfg(not(target_os = "linux"))]
    #[error("the kernel keyring exists on Linux only")]
    KernelKeyringNotLinux,
}

impl BackendError {
    fn open(error: impl std::fmt::Display) -> Self {
        BackendError::Open { detail: error.to_string() }
    }
}

#[cfg(target_os = "linux")]
fn open_platform() -> Result<Store, BackendError> {
    let store: Store = zbus_secret_service_keyring_store::Store::new().map_err(BackendError::open)?;
    Ok(store)
}

#[cfg(target_os = "macos")]
fn open_platform() -> Result<Store, BackendError> {
    let store: Store = apple_native_keyring_store::keychain::Store::new().map_err(BackendError::open)?;
    Ok(store)
}

#[cfg(target_os = "windows")]
fn open_platform() -> Result<Store, BackendError> {
    let store: Store = windows_native_keyring_store::Store::new().map_err(BackendError::open)?;
    Ok(store)
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
fn open_platform() -> Result<Store, BackendError> {
    Err(BackendError::NoPlatformKeychain)
}

#[cfg(target_os = "linux")]
fn open_kernel_keyring() -> Result<Store, BackendError> {
    let store: Store = linux_keyutils_keyring_store::Store::new().map_err(BackendError::open)?;
    Ok(store)
}

#[cfg(not(target_os = "linux"))]
fn open_kernel_keyring() -> Result<Store, BackendError> {
    Err(BackendError::KernelKeyringNotLinux)
}

impl SecretStore for OsKeychain {
    fn set(&self, account: &str, key: &ApiKey) -> Result<(), KeychainError> {
        self.entry(account)?.set_password(key.expose()).map_err(|e| self.map(e))
    }

    fn get(&self, account: &str) -> Result<Option<ApiKey>, KeychainError> {
        match self.entry(account)?.get_password() {
            Ok(key) => Ok(Some(ApiKey::new(key))),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(e) => Err(self.map(e)),
        }
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        match self.entry(account)?.delete_credential() {
            Ok(()) | Err(keyring_core::Error::NoEntry) => Ok(()),
            Err(e) => Err(self.map(e)),
        }
    }

    fn backend(&self) -> &str {
        self.backend.name()
    }
}

/// Secrets in memory, for unit tests. Never used by a shipped binary.
#[derive(Debug, Default)]
pub struct MemoryKeychain {
    entries: Mutex<HashMap<String, String>>,
    unavailable: bool,
}

impl MemoryKeychain {
    /// A keychain that refuses every operation, to test KEYCHAIN_UNAVAILABLE.
    pub fn unavailable() -> Self {
        MemoryKeychain { entries: Mutex::default(), unavailable: true }
    }

    /// The accounts that hold an entry, sorted: to prove a failed save left none behind.
    pub fn accounts(&self) -> Vec<String> {
        let mut accounts: Vec<String> = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).keys().cloned().collect();
        accounts.sort();
        accounts
    }

    fn check(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, String>>, KeychainError> {
        if self.unavailable {
            return Err(KeychainError::Unavailable { backend: "memory".to_owned(), detail: "switched off for this test".to_owned() });
        }
        Ok(self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

impl SecretStore for MemoryKeychain {
    fn set(&self, account: &str, key: &ApiKey) -> Result<(), KeychainError> {
        self.check()?.insert(account.to_owned(), key.expose().to_owned());
        Ok(())
    }

    fn get(&self, account: &str) -> Result<Option<ApiKey>, KeychainError> {
        Ok(self.check()?.get(account).map(ApiKey::new))
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        self.check()?.remove(account);
        Ok(())
    }

    fn backend(&self) -> &str {
        "memory"
    }
}

/// The keychain account of a profile's key.
pub fn account_for_profile(profile_id: &str) -> String {
    format!("llm-profile:{profile_id}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn memory_keychain_roundtrip() {
        let keychain = MemoryKeychain::default();
        let key = ApiKey::new("sk-test-0123456789");
        keychain.set("a", &key).unwrap();
        assert_eq!(keychain.get("a").unwrap(), Some(key));
        keychain.delete("a").unwrap();
        keychain.delete("a").unwrap();
        assert_eq!(keychain.get("a").unwrap(), None);
        let error: ApiError = MemoryKeychain::unavailable().get("a").unwrap_err().into();
        assert_eq!(error.code, ErrorCode::KeychainUnavailable);
        assert!(error.hints.iter().any(|h| h.id == "use_env_key"));
        // The system's detail stays out of the worded headline.
        let detail = "Platform failure: zbus error: Failed to connect to address `unix:path=/run/user/0/bus`";
        let error: ApiError = KeychainError::Unavailable { backend: "Secret Service".into(), detail: detail.into() }.into();
        assert_eq!(error.message_id.as_deref(), Some("keychain.unavailable"));
        assert_eq!(error.params.as_deref().and_then(|p| p.get("backend")).map(String::as_str), Some("Secret Service"));
        assert_eq!(error.details.as_ref().map(|d| d["detail"] == detail), Some(true));
    }
}
