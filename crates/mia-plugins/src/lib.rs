//! Plugins (spec 073, docs/plugins.md): [`spec`] classifies and validates
//! `plugin` entries, [`install`] installs npm plugins with a lock file and
//! integrity, [`host`] runs a plugin as a Node program speaking the
//! versioned JSON-RPC protocol over stdio.

pub mod host;
pub mod install;
pub mod spec;

pub use host::{InitResult, Launch, PROTOCOL, PluginProcess, PluginToolDef, read_manifest};
pub use install::{Installer, LockEntry, LockFile, Outcome, PackageManager, tree_integrity};
pub use spec::{PluginRef, parse, satisfies};

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("plugin entry {entry:?} is refused: {why}")]
    BadReference { entry: String, why: String },
    #[error("the plugin lock file {path}: {message}")]
    Lock { path: String, message: String },
    #[error("Failed to install {name}: {message}")]
    Install { name: String, message: String },
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
