//! The mia-code session store (spec 018).
//!
//! One SQLite file (`$MIA_CODE_HOME/data.db`) in WAL mode holds sessions,
//! messages and parts. Schema changes are forward-only SQL files in
//! `/migrations`, embedded at build time and applied by `PRAGMA user_version`.
//! A [`SessionDb`] owns one connection; the runtime gives it to one task and
//! talks to it over a channel.

mod compaction;
mod db;
mod error;
mod fork;
mod leases;
mod legacy;
mod messages;
pub mod permissions;
pub mod private;
mod review;
mod sessions;
mod shares;
pub mod snapshots;
mod tree;

pub use compaction::CompactRequest;
pub use db::{Compacted, OpenOptions, Recovery, SCHEMA_VERSION, SessionDb};
pub use error::{ConcurrencyError, CorruptionError, MigrationError, Result, StoreError};
pub use fork::{
    ForkFilesPoint, ForkRequest, Forked, MAX_FORK_DEPTH, SessionStats, UsageRow, fork_title,
};
pub use leases::{LEASE_STALE_MS, Lease, LeaseOwner, this_host};
pub use legacy::{LegacyImport, LegacySkip};
pub use messages::MessageQuery;
pub use permissions::{AuditQuery, ProjectApproval, StoredPermissionAudit};
pub use review::StoredComment;
pub use sessions::{NewSession, SessionFilter, SessionListItem, SessionPatch, project_id_for};
pub use shares::StoredShare;
pub use snapshots::{NewSnapshot, NewStep, SessionPrune, SnapshotKind, SnapshotRow, StepRow};
pub use tree::{TreeNode, build_tree};
