use std::collections::BTreeMap;

use mia_protocol::PermissionRule;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One config file as written (`mia-code.json`, `.mia-code.json`,
/// `~/.config/mia-code/config.json`, `~/.mia-code.json`). Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "mia-code configuration")]
pub struct ConfigFile {
    /// Editor hint; ignored by mia-code.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Permission rules of this layer, checked top to bottom, first match wins (spec 074).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Vec<PermissionRule>>,
    /// Per-agent settings, by agent name (built-in `build`, `plan`, `explore`, `general`, or custom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<BTreeMap<String, AgentConfig>>,
    /// The primary agent a new session starts with (default `build`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_agent: Option<String>,
    /// Default model, `provider/model` (e.g. `anthropic/claude-sonnet-4-5`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::model_ref::deserialize"
    )]
    #[schemars(with = "Option<crate::model_ref::ModelRefSchema>")]
    pub model: Option<String>,
    /// Model for cheap background work (titles, summaries), `provider/model`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::model_ref::deserialize"
    )]
    #[schemars(with = "Option<crate::model_ref::ModelRefSchema>")]
    pub small_model: Option<String>,
    /// Provider settings by provider id (`anthropic`, `openai`, `google`, or a custom OpenAI-compatible id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub providers: Option<BTreeMap<String, ProviderConfig>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<ShareConfig>,
    /// Plugins (docs/plugins.md): a list of packages (`name@range`, `./path`,
    /// `file:…`), or an object with `packages` and options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginSetting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unifier: Option<UnifierConfig>,
    /// The OS sandbox shell commands run in (docs/security.md). A project
    /// config may only tighten it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxConfig>,
    /// How long session history is kept (global config only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionsConfig>,
    /// Updates of the desktop app (global config only; docs/platforms.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates: Option<UpdatesConfig>,
    /// "Open in editor" (global config only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor: Option<EditorConfig>,
    /// MCP servers by name (docs/plugins.md); a project's start only once
    /// the workspace is trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<std::collections::BTreeMap<String, McpServerConfig>>,
    /// GitHub for `mia-code pr` (global config only: the token goes there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<ForgeConfig>,
    /// GitLab for `mia-code pr` (global config only: the token goes there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitlab: Option<ForgeConfig>,
    /// Hooks (docs/configuration.md#hooks): commands run at points of a
    /// session, by event name, in Claude Code's format. A project's run
    /// only once the workspace is trusted and that hook set approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<BTreeMap<HookEvent, Vec<HookMatcher>>>,
}

/// When a hook runs (Claude Code's event names).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum HookEvent {
    /// Before a tool call runs (after the rules judged it): may deny, ask or allow.
    PreToolUse,
    /// After a tool call ran: may send the model a reason or more context.
    PostToolUse,
    /// Before a prompt is sent: may block it or add context.
    UserPromptSubmit,
    /// When the agent would end its turn: may make it go on.
    Stop,
    /// When a subagent would end its turn.
    SubagentStop,
    /// Before a compaction.
    PreCompact,
    /// At a session's first turn in a process (`startup` or `resume`).
    SessionStart,
    /// When a session ends (`mia-code run` finishing, or its deletion).
    SessionEnd,
    /// When mia-code needs the person (a permission ask).
    Notification,
}

impl HookEvent {
    pub const ALL: [HookEvent; 9] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::UserPromptSubmit,
        Self::Stop,
        Self::SubagentStop,
        Self::PreCompact,
        Self::SessionStart,
        Self::SessionEnd,
        Self::Notification,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::Stop => "Stop",
            Self::SubagentStop => "SubagentStop",
            Self::PreCompact => "PreCompact",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::Notification => "Notification",
        }
    }
}

/// A group of hooks and the tool names (or sources) they run for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookMatcher {
    /// A regular expression on the tool name (whole name), e.g. `Bash`,
    /// `Edit|Write`, `mcp__github__.*`; mia-code's names (`bash`, `edit`)
    /// and Claude Code's (`Bash`, `Edit`) both match. Empty or `*`: all.
    /// For `SessionStart` the source (`startup`, `resume`), for
    /// `PreCompact` the trigger (`manual`, `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    pub hooks: Vec<HookCommand>,
}

/// One hook command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookCommand {
    #[serde(rename = "type")]
    pub kind: HookKind,
    /// A shell command line (`sh -c`), run with the project as its
    /// working directory and the event's JSON on stdin.
    pub command: String,
    /// Seconds before the hook is stopped (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout: Option<u32>,
}

/// What a hook is. Only commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HookKind {
    Command,
}

/// `github` / `gitlab`: where pull requests are opened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgeConfig {
    /// The REST API's base URL, for GitHub Enterprise
    /// (`https://ghe.example.com/api/v3`) or a self-managed GitLab
    /// (`https://gitlab.example.com/api/v4`). A remote on this URL's host
    /// opens its pull requests here.
    #[serde(rename = "apiURL", default, skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
}

/// `plugin`: `["name@^1", "./local"]`, or the same list under `packages`
/// with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PluginSetting {
    List(Vec<String>),
    Options(PluginOptions),
}

impl PluginSetting {
    pub fn packages(&self) -> &[String] {
        match self {
            PluginSetting::List(l) => l,
            PluginSetting::Options(o) => o.packages.as_deref().unwrap_or_default(),
        }
    }

    pub fn options(&self) -> Option<&PluginOptions> {
        match self {
            PluginSetting::List(_) => None,
            PluginSetting::Options(o) => Some(o),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PluginOptions {
    /// The plugins: `name`, `name@range` (npm), `./path` or `/abs` (a local
    /// directory), `file:…`, or `git+https:…` (only with `allowGit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<Vec<String>>,
    /// Package names whose install scripts may run (default: none; every
    /// install passes `--ignore-scripts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_scripts: Option<Vec<String>>,
    /// Accept `git+https:` references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_git: Option<bool>,
    /// Environment a plugin gets besides a minimal one, per package name
    /// (values may use `{env:VAR}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>>,
    /// Seconds one install attempt may take (default 30; 3 attempts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600))]
    pub install_timeout: Option<u64>,
    /// Seconds one call into a plugin may take (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout: Option<u64>,
    /// Never contact a registry: use installed plugins only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
    /// Where a plugin may write besides its data directory
    /// (`~/.mia-code/plugin-data/<name>`), per package name: paths, `~/…`,
    /// or `{project}` for the project it serves. From your own config only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writable: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

/// `mcp.<name>`: an MCP server, in the shape of Claude Code's `.mcp.json`
/// entries: `command` (+ `args`, `env`) for a stdio server, or `url` (+
/// `headers`) for a streamable-HTTP one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpServerConfig {
    /// `stdio` or `http` (default: `http` when `url` is set, else `stdio`).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<McpKind>,
    /// The program of a stdio server (found on PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Environment of a stdio server, on top of a minimal one (PATH, HOME,
    /// locale): values may use `{env:VAR}`, `$VAR`, `${VAR}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<std::collections::BTreeMap<String, String>>,
    /// The endpoint of a streamable-HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers (values may use `{env:VAR}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// Off: configured but not started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Seconds a tool call may take (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout: Option<u64>,
    /// Where one of your own stdio servers may write besides its data
    /// directory (`~/.mia-code/mcp/<name>`): paths, `~/…`, or `{project}`
    /// for the project it serves. Read from your global config only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writable: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpKind {
    Stdio,
    #[serde(alias = "streamable-http", alias = "streamableHttp")]
    Http,
}

/// `editor`: what "Open in editor" runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EditorConfig {
    /// The program and its arguments, run without a shell; `{file}` is the
    /// absolute path and `{line}` the line (1 when none), e.g.
    /// `["code", "--goto", "{file}:{line}"]`. Default: the system's opener
    /// for the file (xdg-open, open, start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
}

/// `updates`: whether Mia Code looks for a new version. It never installs
/// one without being asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdatesConfig {
    /// Check for a new version when the desktop app starts (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentMode {
    Primary,
    Subagent,
    All,
}

/// Settings for one agent (`agent.<name>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    /// `provider/model` for this agent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::model_ref::deserialize"
    )]
    #[schemars(with = "Option<crate::model_ref::ModelRefSchema>")]
    pub model: Option<String>,
    /// The agent's prompt, inline or `@path/to/file.md` (relative to the config file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Agent-specific permission rules, checked before the agent's built-in restrictions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Vec<PermissionRule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Most model steps (tool round trips) in one turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub steps: Option<u32>,
    /// Hidden agents are not offered in pickers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// Seconds a delegation to this agent (as a subagent) may run before its
    /// partial result is returned, marked `timeout` (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout: Option<u32>,
    /// Turn a built-in agent off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable: Option<bool>,
    /// This agent's sandbox (over `sandbox`). Agents that cannot edit
    /// (plan, explore) always run commands read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<AgentSandboxConfig>,
}

/// One provider's settings. `apiKey`, `baseURL` and `headers` are accepted
/// only in global config; values may use `$VAR` or `{env:VAR}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    #[serde(rename = "baseURL", default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// Wire protocol for a custom provider id (default: OpenAI-compatible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactionConfig {
    /// Compaction at all (default true). Off: nothing is ever summarised,
    /// and a context overflow is reported with what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Compact automatically (default true): past `threshold` messages, or
    /// when the next request would fill `tokenRatio` of the model's window.
    /// `/compact` works either way.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "auto")]
    pub auto_trigger: Option<bool>,
    /// Visible messages that trigger compaction (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4))]
    pub threshold: Option<u32>,
    /// Recent messages kept verbatim (default 20; fewer when they alone
    /// would fill half of the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub retain_count: Option<u32>,
    /// Fraction of the model's context window (minus `reserved`) the next
    /// request may fill before compaction runs (default 0.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.1, max = 0.95))]
    pub token_ratio: Option<f64>,
    /// Output tokens kept free in the window (default: the model's maximum
    /// output from the catalog, at most 32,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<u32>,
    /// `provider/model` for the compaction agent (`agent.compaction.model`
    /// wins when both are set; default: the session provider's fast model).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::model_ref::deserialize"
    )]
    #[schemars(with = "Option<crate::model_ref::ModelRefSchema>")]
    pub model: Option<String>,
}

/// `share.mode`: when sessions are published (spec 022).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShareMode {
    /// `/share` previews the payload and asks before anything is sent (the default).
    #[serde(alias = "manual")]
    Ask,
    /// Every session is shared and kept in sync after each turn (best effort).
    Auto,
    /// Nothing is ever shared.
    Disabled,
}

impl ShareMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ShareMode::Ask => "ask",
            ShareMode::Auto => "auto",
            ShareMode::Disabled => "disabled",
        }
    }
}

/// `share`: publishing sessions to a share server (docs/sharing.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShareConfig {
    /// `disabled`, `ask` (default) or `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ShareMode>,
    /// The share server's URL, e.g. `https://share.example.com` (global
    /// config only: a cloned repository must not redirect transcripts).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "url")]
    pub endpoint: Option<String>,
    /// Include tool output (file contents, command output); default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tool_results: Option<bool>,
    /// Include the session's file diffs; default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_diffs: Option<bool>,
    /// Regular expressions whose matches are redacted, on top of the
    /// built-in secret detection. Layers add to each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redact_patterns: Option<Vec<String>>,
    /// Days until a share expires (default 30; the server may cap it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3650))]
    pub ttl_days: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WorktreeConfig {
    /// Where experiment worktrees go: relative to the repository root, or
    /// absolute (default `.mia-code/worktrees`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// Remove a worktree once it has been promoted into its base branch (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_cleanup: Option<bool>,
    /// Branch name prefix for experiment branches (default `mia-code/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_prefix: Option<String>,
    /// Let the repository's git hooks run during worktree operations (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_hooks: Option<bool>,
    /// Commands run in a new worktree, in order (`npm install`); a failing one stops the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_scripts: Option<Vec<String>>,
    /// Command that checks an attempt when attempts are compared (`cargo test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_command: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SnapshotConfig {
    /// Snapshot before every file-changing step (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Files larger than this many bytes are noted but not stored (default 10 MB; binary files are stored up to it too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_size: Option<u64>,
    /// Snapshots kept per session besides the baseline (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<u32>,
    /// Time budget for one capture in milliseconds (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_budget_ms: Option<u64>,
    /// Extra gitignore-style patterns never snapshotted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<Vec<String>>,
    /// Snapshots older than this many days are released, whatever their
    /// session (1–3650; default 30). Undo cannot go back further.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3650))]
    pub max_age_days: Option<std::num::NonZeroU32>,
}

/// `sessions`: how long your session history is kept (global config only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionsConfig {
    /// Delete sessions not touched for this many days (1–36500), with their
    /// messages and snapshots; a running session is never deleted. Unset:
    /// kept for ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 36500))]
    pub retention_days: Option<std::num::NonZeroU32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UnifierConfig {
    /// Dual-perspective commentary for primary agents (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `sandbox.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeSetting {
    /// Commands may write only the session's project or worktree, the temp
    /// dir, package caches and `sandbox.writable`.
    WorkspaceWrite,
    /// Commands may not write anywhere.
    ReadOnly,
    /// No sandbox: the permission engine alone decides.
    Off,
}

/// `sandbox.network`: what sandboxed commands may reach, always through
/// mia-code's proxy (a program that ignores it has no network).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetworkSetting {
    /// Every host but the denied ones.
    Allow,
    /// The first connection to a host asks (headless runs deny it).
    Ask,
    /// No network.
    Deny,
}

/// `sandbox.env`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxEnvConfig {
    /// Variables kept although their names look like secrets (`NPM_TOKEN`;
    /// a trailing `*` keeps a prefix). Global config only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<Vec<String>>,
    /// Variables set for sandboxed commands. Global config only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxConfig {
    /// `workspace-write` (default on Linux and macOS), `read-only`, or `off`
    /// (default on Windows, which has no sandbox yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SandboxModeSetting>,
    /// What sandboxed commands may reach through mia-code's proxy:
    /// `ask` (default for agents that can edit: the first connection to a
    /// host asks), `allow` (every host but the denied ones) or `deny` (no
    /// network; default for agents that cannot edit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSetting>,
    /// More directories sandboxed commands may write (`~/` expands; relative
    /// paths resolve against the project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writable: Option<Vec<String>>,
    /// Keep package-manager caches (`~/.npm`, `~/.cache`, `~/.cargo/registry`,
    /// ...) writable so installs and builds work (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_caches: Option<bool>,
    /// More paths that stay read-only for sandboxed commands, existing or
    /// not (relative paths resolve against the project). A project config
    /// may add paths; the built-in ones cannot be removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect: Option<Vec<String>>,
    /// Unix sockets outside the project sandboxed commands may connect to
    /// (a Docker socket, say). Global config only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix_sockets: Option<Vec<String>>,
    /// Let sandboxed commands reach this machine's own loopback services
    /// through the proxy (default false). Global config only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_localhost: Option<bool>,
    /// Reach the package registries (npm, crates.io, PyPI, the Go proxy,
    /// RubyGems, Maven Central) without asking (default true; docs/security.md
    /// lists the hosts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registries: Option<bool>,
    /// The environment of sandboxed commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<SandboxEnvConfig>,
}

/// `agent.<name>.sandbox`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentSandboxConfig {
    /// Over `sandbox.mode` for this agent (read-only agents stay read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SandboxModeSetting>,
    /// Over `sandbox.network` for this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSetting>,
}

/// The JSON Schema of [`ConfigFile`], as committed in `schema/config.schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(ConfigFile);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
