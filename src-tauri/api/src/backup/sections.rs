//! The record kinds that travel outside a project's folder: each registers its layout
//! and its count here, and is exported and imported by the same two functions.

use std::path::Path;

use super::files::*;
use super::{ExportCounts, ExportError};
use crate::harness::log::{ApprovalRecord, ContextSnapshot, StoredResult, ToolExecution};
use crate::harness::StoredRules;
use crate::llm::profile::LlmProfile;
use crate::model::{Activity, BrandProfile, ContentTemplate};
use crate::store::{Batch, Record, Store};
use crate::usage::{Quotas, UsageRecord};

/// Where a record kind that is not part of a project's folder travels in an export.
#[derive(Debug, Clone, Copy)]
pub(super) enum Layout {
    /// One JSON file per record in this folder, named by the record's key (its id).
    FilePerRecord(&'static str),
    /// One record per line in this file; written only when there are records, unless
    /// `always`.
    Lines { file: &'static str, always: bool },
    /// The one record stored under `key` (a settings record), as this file.
    Single { file: &'static str, key: &'static [u8] },
    /// The records under a key prefix of a shared tree (the meta tree), one per line.
    Prefixed { file: &'static str, prefix: &'static [u8] },
}

/// A record kind's part of the export: its layout, and which count of the manifest it
/// adds to. Each subsystem whose records are not kept in a project's folder registers
/// one here, in [`sections`]; neither `store` nor the export code changes.
pub(super) struct Section {
    pub(super) layout: Layout,
    pub(super) count: Option<fn(&mut ExportCounts) -> &mut u64>,
    pub(super) export: fn(&Store, &Path, Layout) -> Result<u64, ExportError>,
    pub(super) import: fn(&Path, Layout, &mut Batch) -> Result<u64, ExportError>,
}

pub(super) fn section<R: Record>(layout: Layout, count: Option<fn(&mut ExportCounts) -> &mut u64>) -> Section {
    Section { layout, count, export: export_section::<R>, import: import_section::<R> }
}

/// The registered sections, in export order.
pub(super) fn sections() -> Vec<Section> {
    vec![
        section::<Activity>(Layout::Lines { file: "activities.jsonl", always: true }, Some(|c| &mut c.activities)),
        section::<BrandProfile>(Layout::FilePerRecord("brand-profiles"), Some(|c| &mut c.brand_profiles)),
        section::<ContentTemplate>(Layout::FilePerRecord("templates"), Some(|c| &mut c.templates)),
        section::<LlmProfile>(Layout::FilePerRecord("llm-profiles"), Some(|c| &mut c.llm_profiles)),
        Section {
            layout: Layout::Lines { file: "usage/records.jsonl", always: false },
            count: Some(|c| &mut c.usage_records),
            export: export_section::<UsageRecord>,
            import: import_usage,
        },
        section::<Quotas>(Layout::Single { file: "usage/quotas.json", key: crate::usage::META_QUOTAS }, None),
        section::<ApprovalRecord>(Layout::Lines { file: "harness/approvals.jsonl", always: false }, None),
        section::<ToolExecution>(Layout::Lines { file: "harness/executions.jsonl", always: false }, None),
        section::<ContextSnapshot>(Layout::Lines { file: "harness/context-snapshots.jsonl", always: false }, None),
        section::<StoredResult>(Layout::Lines { file: "harness/results.jsonl", always: false }, None),
        section::<crate::proposals::Proposal>(Layout::Lines { file: "proposals/proposals.jsonl", always: false }, None),
        section::<crate::proposals::ProposalLocation>(Layout::Lines { file: "proposals/index.jsonl", always: false }, None),
        section::<crate::proposals::apply::AuditRecord>(Layout::Lines { file: "proposals/audit.jsonl", always: false }, None),
        section::<crate::proposals::apply::Constraint>(Layout::Lines { file: "proposals/constraints.jsonl", always: false }, None),
        section::<crate::proposals::checkpoints::Checkpoint>(Layout::Lines { file: "proposals/checkpoints.jsonl", always: false }, None),
        section::<crate::proposals::staging::Staging>(Layout::Lines { file: "proposals/staging.jsonl", always: false }, None),
        section::<crate::outbox::DeliveryJob>(Layout::Lines { file: "sync/outbox.jsonl", always: false }, None),
        // The workspace policy last seen: a restored data folder keeps to it offline.
        section::<crate::policy::CachedPolicy>(Layout::Single { file: "sync/policy.json", key: crate::policy::META_POLICY }, None),
        section::<crate::performance::context::ContextSetting>(
            Layout::Single { file: "performance/context-setting.json", key: crate::performance::context::META_CONTEXT_SETTING },
            None,
        ),
        section::<StoredRules>(Layout::Single { file: "harness/permission-rules.json", key: crate::harness::META_PERMISSION_RULES }, None),
        section::<crate::harness::AllowRule>(Layout::Prefixed { file: "harness/allow-rules.jsonl", prefix: crate::harness::allow_rule::META_ALLOW_RULES }, None),
        section::<crate::harness::compaction::ProfileContext>(
            Layout::Prefixed { file: "harness/profile-context.jsonl", prefix: crate::harness::compaction::META_PROFILE_CONTEXT_PREFIX },
            None,
        ),
        section::<crate::memory::MemoryItem>(Layout::Lines { file: "memory/items.jsonl", always: false }, None),
        section::<crate::memory::HabitDismissal>(Layout::Prefixed { file: "memory/dismissed-habits.jsonl", prefix: crate::memory::META_DISMISSED_HABITS }, None),
        section::<crate::usage::ProjectBudget>(Layout::Lines { file: "usage/project-budgets.jsonl", always: false }, None),
        section::<crate::performance::Account>(Layout::Lines { file: "performance/accounts.jsonl", always: false }, None),
        section::<crate::performance::Publication>(Layout::Lines { file: "performance/publications.jsonl", always: false }, None),
        section::<crate::performance::metrics::MetricSnapshot>(Layout::Lines { file: "performance/snapshots.jsonl", always: false }, None),
        section::<crate::performance::import::ImportRecord>(Layout::Lines { file: "performance/imports.jsonl", always: false }, None),
    ]
}

pub(super) fn export_section<R: Record>(store: &Store, root: &Path, layout: Layout) -> Result<u64, ExportError> {
    match layout {
        Layout::FilePerRecord(dir) => {
            let records = store.scan::<R>(b"")?;
            for record in &records {
                let name = String::from_utf8_lossy(&record.key()).into_owned();
                let name = id_component(&format!("A record of {dir}"), &name, None)?;
                write(&root.join(dir).join(format!("{name}.json")), &json_bytes(record)?)?;
            }
            Ok(records.len() as u64)
        }
        Layout::Lines { file, always } => {
            let path = root.join(file);
            let records = store.scan::<R>(b"")?;
            let bytes = jsonl(&records, &path)?;
            if always || !bytes.is_empty() {
                write(&path, &bytes)?;
            }
            Ok(records.len() as u64)
        }
        Layout::Prefixed { file, prefix } => {
            let path = root.join(file);
            let records = store.scan::<R>(prefix)?;
            let bytes = jsonl(&records, &path)?;
            if !bytes.is_empty() {
                write(&path, &bytes)?;
            }
            Ok(records.len() as u64)
        }
        Layout::Single { file, key } => match store.get::<R>(key)? {
            Some(record) => {
                write(&root.join(file), &json_bytes(&record)?)?;
                Ok(1)
            }
            None => Ok(0),
        },
    }
}

/// The usage records and, in the same batch, their monthly and daily running totals
/// (derived data: an export does not carry them).
pub(super) fn import_usage(src: &Path, layout: Layout, batch: &mut Batch) -> Result<u64, ExportError> {
    let Layout::Lines { file, .. } = layout else { return import_section::<UsageRecord>(src, layout, batch) };
    let records: Vec<UsageRecord> = read_jsonl(&src.join(file))?;
    for record in &records {
        batch.put(record)?;
    }
    crate::usage::stage_totals_of(batch, &records)?;
    Ok(records.len() as u64)
}

pub(super) fn import_section<R: Record>(src: &Path, layout: Layout, batch: &mut Batch) -> Result<u64, ExportError> {
    let records: Vec<R> = match layout {
        Layout::FilePerRecord(dir) => {
            let mut records = Vec::new();
            for path in json_files(&src.join(dir))? {
                let record = read_json::<R>(&path)?;
                // Its key (its id) names its file at the next export.
                imported_id(&path, &String::from_utf8_lossy(&record.key()), None)?;
                records.push(record);
            }
            records
        }
        Layout::Lines { file, .. } | Layout::Prefixed { file, .. } => read_jsonl(&src.join(file))?,
        Layout::Single { file, .. } => {
            let path = src.join(file);
            if path.exists() {
                vec![read_json::<R>(&path)?]
            } else {
                Vec::new()
            }
        }
    };
    for record in &records {
        batch.put(record)?;
    }
    Ok(records.len() as u64)
}
