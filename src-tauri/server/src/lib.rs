//! `inkstone-server`: the workspace server. Teams push the versions they accepted and
//! pull what colleagues accepted. Every request names one workspace through its bearer
//! token and is checked against the member's role; a push is numbered after the
//! server's head only when its base is that head, and its dedupe key makes a retried
//! push return the original result.
//!
//! - [`storage`]: the [`storage::Storage`] trait; [`storage::sled`], the embedded sled
//!   store (an acknowledged write is synced to disk, as in the app); [`storage::pg`],
//!   the same trait on PostgreSQL (`serve --database-url`), for several server
//!   processes on one database; versioned migrations run at start.
//! - [`http`]: the axum routes, limits and the error bodies.
//! - [`pgtemp`]: a throwaway PostgreSQL cluster in a temporary folder, for the tests
//!   and the benchmark.

pub mod http;
pub mod pgtemp;
pub mod storage;

pub use inkstone_sync_proto as proto;
