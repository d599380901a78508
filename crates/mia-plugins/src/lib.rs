//! Plugins (spec 073, docs/plugins.md): [`spec`] classifies and validates
//! `plugin` entries, [`install`] installs npm plugins with a lock file and
//! integrity, [`host`] runs a plugin as a Node program speaking the
//! versioned JSON-RPC protocol over stdio.

pub mod host;
pub mod install;
pub mod lock;
pub mod spec;

pub use host::{InitResult, Launch, PROTOCOL, PluginProcess, PluginToolDef, read_manifest};
pub use install::{Installer, Outcome, PackageManager};
pub use lock::{LOCK_VERSION, LockEntry, LockFile, Locked, tree_integrity};
pub use spec::{PluginRef, parse, satisfies};

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("plugin entry {entry:?} is refused: {why}")]
    BadReference { entry: String, why: String },
    #[error("the plugin lock file {path}: {message}")]
    Lock { path: String, message: String },
    #[error("Failed to install {name}: {message}")]
    Install { name: String, message: String },
    #[error(
        "Refused plugin {name}: a version already installed came back with other contents ({changes}). The registry changed it, or another registry served it; nothing of it runs. If you trust the new contents, `mia-code plugin remove {name}` and add it again"
    )]
    IntegrityChanged { name: String, changes: String },
    #[error("{dir} is not a usable plugin: {message}")]
    Manifest { dir: String, message: String },
    #[error(
        "plugin {plugin} speaks protocol {found}; this mia-code speaks {known} (update the plugin or mia-code)"
    )]
    Protocol {
        plugin: String,
        found: u64,
        known: u64,
    },
    #[error("plugin {plugin} could not start: {message}")]
    Start { plugin: String, message: String },
}
