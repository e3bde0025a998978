//! What the engine takes from its surroundings: the data dir, time, ids and who the
//! local user is. Nothing in core reads the clock, the environment or a random source
//! directly, so tests can pass a fake clock and sequential ids.

use std::path::PathBuf;
use std::sync::Arc;

pub use crate::clock::{Clock, FakeClock, IdSource, SequentialIds, SystemClock, UlidIds};

/// Everything the engine needs to start.
#[derive(Clone)]
pub struct EngineConfig {
    /// The folder holding the sled database, media files and backups.
    pub data_dir: PathBuf,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdSource>,
    /// The display name used at first run, before the user picks one.
    pub default_display_name: String,
    /// Who is opening the data dir ("Inkstone desktop", "inkstone-cli serve", ...);
    /// written into the lock file so a second opener can say who holds it.
    pub holder: String,
    /// sled's page cache, in bytes.
    pub cache_capacity_bytes: u64,
    /// How long autosaved working-copy changes may wait before they are synced to disk.
    pub group_commit_millis: u64,
    /// Where LLM API keys are kept: the OS keychain in production.
    pub secrets: Arc<dyn crate::llm::keychain::SecretStore>,
    /// A key for this process only, used before the keychain's (the binaries read it
    /// from `INKSTONE_LLM_API_KEY`); never written anywhere.
    pub env_api_key: Option<crate::llm::ApiKey>,
    /// A workspace server token for this process only, used before the keychain's (the
    /// binaries read it from `INKSTONE_WORKSPACE_TOKEN`); never written anywhere.
    pub env_workspace_token: Option<crate::llm::ApiKey>,
    /// Retries of model calls (429 and 5xx only).
    pub llm_retry: crate::llm::retry::RetryPolicy,
    /// Seed of the retry jitter.
    pub jitter_seed: u64,
    /// How the sync transport delivers versions to the workspace server.
    pub sync: crate::outbox::DeliverySettings,
    /// Where this process writes its log files, if it does (the desktop app); Help shows
    /// it and "Report a problem" reads its last lines.
    pub log_dir: Option<PathBuf>,
    /// Where updates come from and how this installation takes them: the feed and key
    /// built in (`packaging/update/`), told only, until the shell says more.
    pub update: crate::update::UpdateSettings,
}

impl EngineConfig {
    /// The production setup: system clock, ULIDs, a 32 MiB cache, 1 s group commit.
    pub fn new(data_dir: impl Into<PathBuf>, holder: impl Into<String>) -> Self {
        EngineConfig {
            data_dir: data_dir.into(),
            clock: Arc::new(SystemClock),
            ids: Arc::new(UlidIds::default()),
            default_display_name: "Inkstone user".to_owned(),
            holder: holder.into(),
            cache_capacity_bytes: 32 * 1024 * 1024,
            group_commit_millis: 1000,
            secrets: Arc::new(crate::llm::keychain::OsKeychain::new(crate::llm::keychain::KeychainBackend::Platform)),
            env_api_key: None,
            env_workspace_token: None,
            llm_retry: crate::llm::retry::RetryPolicy::default(),
            sync: crate::outbox::DeliverySettings::default(),
            log_dir: None,
            update: crate::update::UpdateSettings::built_in(),
            jitter_seed: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos() as u64 ^ d.as_secs()).unwrap_or(1),
        }
    }

    /// Deterministic setup for tests: a fake clock stepping 1 s and sequential ids.
    pub fn for_tests(data_dir: impl Into<PathBuf>) -> Self {
        EngineConfig {
            clock: Arc::new(FakeClock::new(1000)),
            ids: Arc::new(SequentialIds::default()),
            default_display_name: "Tester".to_owned(),
            secrets: Arc::new(crate::llm::keychain::MemoryKeychain::default()),
            llm_retry: crate::llm::retry::RetryPolicy {
                max_retries: 2,
                initial_backoff: std::time::Duration::from_millis(5),
                max_backoff: std::time::Duration::from_millis(20),
                max_retry_after: std::time::Duration::from_secs(2),
            },
            jitter_seed: 1,
            // Tests contact only a feed they start themselves.
            update: crate::update::UpdateSettings::off(),
            // The fake clock steps a second per reading, so a backoff is always over
            // by the next cycle: tests give up only after many attempts.
            sync: crate::outbox::DeliverySettings {
                retry: crate::outbox::RetryPolicy { base_millis: 10, cap_millis: 200, max_attempts: 10_000 },
                timeout: std::time::Duration::from_secs(5),
                poll: std::time::Duration::from_millis(50),
                ..crate::outbox::DeliverySettings::default()
            },
            ..EngineConfig::new(data_dir, "test")
        }
    }

    /// Keeps LLM API keys in `secrets` (the OS keychain by default).
    pub fn with_secrets(mut self, secrets: Arc<dyn crate::llm::keychain::SecretStore>) -> Self {
        self.secrets = secrets;
        self
    }

    pub fn with_display_name(mut self, name: impl Into<String>) -> Self {
        self.default_display_name = name.into();
        self
    }

    /// Names the folder this process writes its log files to.
    pub fn with_log_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.log_dir = Some(dir.into());
        self
    }
}

impl EngineConfig {
    /// Applies what the binaries take from the environment, given as a lookup so core
    /// itself reads none: the OS user name as the first-run display name,
    /// `INKSTONE_LLM_API_KEY` (a key for this process only, never stored),
    /// `INKSTONE_WORKSPACE_TOKEN` (the workspace server's token, the same way) and
    /// `INKSTONE_KEYCHAIN=keyutils` (the Linux kernel keyring, whose keys vanish at
    /// reboot, only when asked for) and `INKSTONE_UPDATE_FEED` (the update feed instead of
    /// the built-in one; empty turns updates off).
    pub fn with_env(mut self, env: impl Fn(&str) -> Option<String>) -> Self {
        if let Some(name) = os_user_name(&env) {
            self.default_display_name = name;
        }
        self.env_api_key = env("INKSTONE_LLM_API_KEY").filter(|k| !k.trim().is_empty()).map(|k| crate::llm::ApiKey::new(k.trim()));
        self.env_workspace_token = env("INKSTONE_WORKSPACE_TOKEN").filter(|k| !k.trim().is_empty()).map(|k| crate::llm::ApiKey::new(k.trim()));
        if let Some(feed) = env("INKSTONE_UPDATE_FEED") {
            self.update.feed_url = crate::update::configured_url(&feed);
        }
        if env("INKSTONE_KEYCHAIN").as_deref() == Some("keyutils") {
            self.secrets = Arc::new(crate::llm::keychain::OsKeychain::new(crate::llm::keychain::KeychainBackend::KernelKeyring));
        }
        self
    }
}

/// The OS user name, for the default display name; `None` when the environment does
/// not say. Binaries call this; core itself never reads the environment.
pub fn os_user_name(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    ["USER", "USERNAME", "LOGNAME"].iter().find_map(|key| env(key).filter(|v| !v.trim().is_empty()))
}
