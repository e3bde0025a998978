//! The wire types of records the core keeps: what the API returns for them, and what
//! codegen turns into the UI's TypeScript. A domain record derives serde for storage
//! only; its wire twin here derives `TS` and is built from it by a plain `From` copy, so
//! a stored field can be renamed (or re-encoded) without the UI noticing. Nothing below
//! `inkstone-api` names `ts_rs` once its records have moved here (tidy checks the crates
//! that are done).

mod model;
mod proposals;

pub use model::*;
pub use proposals::*;
