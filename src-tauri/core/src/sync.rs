//! Team sync, the client half: the transport that delivers the outbox's jobs to the
//! workspace server, the pull that brings colleagues' versions in, and conflicts.
//!
//! - Which versions go where is decided below (`outbox`: a job per version, in the
//!   version's own transaction); how they travel is [`transport`] (endpoint, token).
//! - A push carries the server head this client last saw for the project
//!   ([`ProjectLink::server_head`]) and the job's dedupe key; the job's first send
//!   fixes that base, so every resend is the same push and can never make a second
//!   version. Pushes of one project go one at a time, in order; a first send carries
//!   the project's next never-sent versions along (up to `max_batch`), fixed with the
//!   base, so a backlog goes in a few pushes.
//! - A pull reads the workspace's changes since the stored cursor: the client's own
//!   versions are recognised by id (an ack that never arrived is completed there);
//!   a colleague's version becomes a local version with their name as author and
//!   origin `pulled`. The working copy is never overwritten: it follows a pulled head
//!   only when it holds nothing unsynced; otherwise the pull is a [`SyncConflict`].
//! - A stale base (409) imports the server's newer versions and opens a conflict:
//!   the person's side, the server's and the common base, with a three-way merge when
//!   the edits do not overlap ([`merge`]). The resolution is a new version (unsaved
//!   work is first kept as an autosnapshot), pushed on the new base; the conflicted
//!   jobs are superseded. Nothing is overwritten on either side.
//! - The server token lives in the keychain (`config.secrets`, account
//!   `sync:<workspace id>`); sled holds its fingerprint only.
//! - [`Runtime`] is the engine's delivery thread and the cycle lock: one cycle (pull,
//!   then push) at a time, whether the thread or an API call runs it.

pub mod ai_activity;
mod connect;
pub mod cycle;
pub mod members;
pub mod merge;
pub mod policy;
mod records;
mod resolve;
mod runtime;
mod status;
pub mod transport;

pub use cycle::CycleReport;
pub use merge::Overlap;

pub use crate::outbox::DeliverySettings;

pub(crate) use connect::server_failed;
pub use connect::{connect, connection, local_only, normalize_server_url, token, token_account, Connect};
pub(crate) use records::stage_change_marker;
pub use records::{
    change_marker, ChangeMarker, ConflictKind, ConflictSide, ConflictState, Connection, LastFailure, MergedContent, ProjectLink, SyncConflict, META_CHANGES, META_CONNECTION,
    META_LAST_FAILURE,
};
pub use resolve::{resolve, Choice, Resolved};
pub(crate) use runtime::lock;
pub use runtime::{health, Changes, CyclePart, Health, Jitter, Runtime, Waited};
pub use status::{conflicts, held_behind, is_paused, job_counts, jobs, overall, owed, retry, set_paused, unsendable, unsynced, SyncState};
