//! Pulling the workspace's performance changes page by page from the server's
//! cursor: each page is applied in one batch with the cursor it reaches.

use super::apply::apply_page;
use super::{PerfSyncState, META_PERF_SYNC};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::store::{Batch, Durability};
use crate::sync::cycle::CycleReport;
use crate::sync::transport::{Failure, Transport};
use crate::sync::Connection;

/// The most records a page of performance changes is asked for.
const PAGE_RECORDS: usize = 200;

pub(super) fn pull(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, report: &mut CycleReport) -> Result<(), ApiError> {
    loop {
        let Some(mut state) = kernel.store().get::<PerfSyncState>(META_PERF_SYNC)? else { return Ok(()) };
        let page = match transport.perf_changes(&connection.server_url, token, state.cursor, PAGE_RECORDS, connection.server_keeps_account_days) {
            Ok(page) => page,
            Err(failure) => {
                report.offline |= matches!(failure, Failure::Network(_));
                report.error = Some(format!("performance data: {}", failure.reason()));
                report.error_code = Some(failure.code().to_owned());
                return Ok(());
            }
        };
        report.contacted = true;
        let _guard = kernel.write_lock();
        let mut batch = Batch::new();
        let changed = apply_page(kernel, &mut batch, &page.records)?;
        report.perf_pulled += changed;
        state.cursor = state.cursor.max(page.cursor);
        batch.put(&state)?;
        if changed > 0 {
            crate::sync::stage_change_marker(kernel, &mut batch)?;
        }
        kernel.store().apply(batch, Durability::Durable)?;
        if !page.more {
            return Ok(());
        }
    }
}
