//! Logs go to a daily-rotated file in the OS log folder (seven kept) and to stderr.
//! Secrets never reach them: the API logs codes and safe messages only.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// Starts logging; keep the guard alive for the app's lifetime so the file is flushed.
pub fn init(log_dir: &Path) -> Option<WorkerGuard> {
    let filter = || EnvFilter::try_from_env("INKSTONE_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    match Builder::new().rotation(Rotation::DAILY).filename_prefix("inkstone").filename_suffix("log").max_log_files(7).build(log_dir) {
        Ok(appender) => {
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let file = tracing_subscriber::fmt::layer().with_ansi(false).with_writer(writer);
            let _ = tracing_subscriber::registry().with(filter()).with(file).with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr)).try_init();
            Some(guard)
        }
        Err(error) => {
            let _ = tracing_subscriber::registry().with(filter()).with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr)).try_init();
            tracing::warn!(%error, dir = %log_dir.display(), "cannot write log files; logging to stderr only");
            None
        }
    }
}
