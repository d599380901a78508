//! The mia-code runtime.
//!
//! A [`Runtime`] takes [`Op`]s and reports [`Event`]s. Each active session
//! has its own state and at most one running turn. A turn: record the user
//! message → resolve agent and model → assemble the system prompt → stream
//! from the provider → for each tool call: permission check → snapshot of
//! what it may change → run → record the result and the snapshot → continue
//! until the model stops or the step limit is hit.

pub mod agentgen;
pub mod agents;
mod commands;
/// The `todo` tool's list (ACP's plan).
pub use mia_tools::{EditorFs, Todo, TodoStatus};
pub mod compaction;
mod delegate;
mod dispatch;
pub mod editor;
mod error;
mod events;
mod external;
mod fork;
mod hooks;
mod limits;
mod llm;
pub mod mcp;
pub mod permissions;
mod plugins;
pub mod project_snapshots;
pub mod prompt;
mod queries;
pub mod retention;
pub mod review;
mod runtime;
pub mod sandbox;
mod session;
mod session_retention;
pub mod share;
pub mod ship;
pub mod skills;
mod snapshots;
mod store;
mod turn;
mod undo;
pub mod unifier;
mod views;
pub mod worktrees;

pub use error::{CoreError, ErrorKind};
pub use events::{EventItem, EventStream, Reset, Resume, SeqEvent};
pub use mia_protocol::{Event, Op};
pub use queries::{
    GcSummary, ProjectApproval, SessionListItem, SnapshotKind, SnapshotRow, StorageSizes,
    StoreHealth, ensure_private_dir, exposed_files, secure_home, storage_sizes, store_health,
};
pub use runtime::{OpResult, Runtime, RuntimeOptions};
pub use session::Resident;
pub use session_retention::SessionsPruned;
pub use snapshots::store_config;
pub use store::StoreHandle;
pub use turn::title_from;
pub use views::{MAX_FILES, SessionListQuery};

/// API keys: where each provider's key is found, and storing or removing
/// one (the keychain, else a 0600 file under `$MIA_CODE_HOME`).
pub mod credentials {
    pub use mia_providers::credentials::{
        CredentialSource, Credentials, FileStore, KeyringStore, StoreTarget, env_vars,
    };
}

/// `$0.0123`, or `unknown` when the cost is not known.
pub fn format_cost(cost_usd: Option<f64>) -> String {
    mia_providers::catalog::format_cost(cost_usd)
}
