//! Layered mia-code configuration.
//!
//! Layers, later wins: built-in defaults → global (`~/.config/mia-code/config.json`,
//! then `~/.mia-code.json`) → project (`mia-code.json` or `.mia-code.json` at the
//! project root). Files are JSONC (comments and trailing commas). Every file is
//! checked against the typed [`ConfigFile`] on its own, so an error names the
//! file, the key path and the line. Permission rules are not merged: each layer's
//! rules are kept apart with their source so the permission engine can order them.

pub mod agent_file;
pub mod commands;
mod env;
mod error;
pub mod import;
mod load;
pub mod model_ref;
mod paths;
mod types;

pub use env::{resolve_env_refs, resolve_env_refs_with};
pub use error::ConfigError;
pub use load::{
    Config, Layer, LayerKind, NOT_YET_USED, NotApplied, PROJECT_AGENTS_DIR, PROJECT_FILE_NAMES,
    PROJECT_NEVER, PROJECT_ONCE_TRUSTED, ShareSettings, builtin_defaults, parse_file,
};
pub use paths::{Paths, Platform, data_home, host_name};
pub use types::{
    AgentConfig, AgentMode, AgentSandboxConfig, CompactionConfig, ConfigFile, EditorConfig,
    ForgeConfig, HookCommand, HookEvent, HookKind, HookMatcher, McpKind, McpServerConfig,
    NetworkSetting, PluginOptions, PluginSetting, ProviderConfig, SandboxConfig,
    SandboxModeSetting, SessionsConfig, ShareConfig, ShareMode, SnapshotConfig, UnifierConfig,
    UpdatesConfig, WorktreeConfig, json_schema,
};
