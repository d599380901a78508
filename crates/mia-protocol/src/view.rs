//! What front ends read (as opposed to [`crate::Op`]s, which change things):
//! the shapes of the query endpoints of `mia-code serve` and of the desktop
//! app's commands. TypeScript types for the UI are generated from these.

use serde::{Deserialize, Serialize};

use crate::{DiffStats, FileChange, FileDiff, Message, PermissionRequest, Session};

/// A plugin of a project: its entry, state, version, tools and hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PluginView {
    /// As written in the config (`name@range`, `./path`).
    pub entry: String,
    pub name: String,
    /// The config file listing it.
    pub source: String,
    pub state: PluginState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub hooks: Vec<String>,
}

/// Where a plugin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum PluginState {
    #[serde(rename = "loaded")]
    Loaded,
    #[serde(rename = "installing")]
    Installing,
    #[serde(rename = "failed")]
    Failed,
    /// Its entry may not be used (a URL, a git source without `plugin.allowGit`).
    #[serde(rename = "refused")]
    Refused,
    #[serde(rename = "skipped")]
    Skipped,
    /// A project's plugin in a workspace not trusted.
    #[serde(rename = "untrusted")]
    Untrusted,
    /// Not started yet (it starts with the first turn).
    #[serde(rename = "not loaded")]
    NotLoaded,
}

impl PluginState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loaded => "loaded",
            Self::Installing => "installing",
            Self::Failed => "failed",
            Self::Refused => "refused",
            Self::Skipped => "skipped",
            Self::Untrusted => "untrusted",
            Self::NotLoaded => "not loaded",
        }
    }
}

impl std::fmt::Display for PluginState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an MCP server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    Ready,
    Failed,
    /// It was running and has stopped on its own.
    Exited,
    /// Not started (it starts with the first turn).
    Stopped,
    Disabled,
    /// A project's server in a workspace not trusted.
    Untrusted,
}

impl McpState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Failed => "failed",
            Self::Exited => "exited",
            Self::Stopped => "stopped",
            Self::Disabled => "disabled",
            Self::Untrusted => "untrusted",
        }
    }
}

impl std::fmt::Display for McpState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An MCP server of a project: where it is defined, its state and tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct McpServerView {
    pub name: String,
    /// The config file or `.mcp.json` that defines it.
    pub source: String,
    /// `stdio: command args` or `http: url`.
    pub transport: String,
    pub state: McpState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The server's own name and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Its tools' names (as the server names them).
    #[serde(default)]
    pub tools: Vec<String>,
    /// The last lines it wrote to stderr.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
}

/// A session in a list, with its message count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionSummary {
    #[serde(flatten)]
    pub session: Session,
    pub message_count: u64,
    /// The git worktree the session works in (its name), when its directory is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
}

/// A session opened in a front end: everything needed to draw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionDetail {
    pub session: Session,
    pub messages: Vec<Message>,
    /// Asks waiting for an answer (oldest first), so a reloaded window shows them.
    #[serde(default)]
    pub pending_permissions: Vec<PermissionRequest>,
    /// A turn is running in this process.
    #[serde(default)]
    pub running: bool,
    /// An agent switch waiting for the running turn to end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_agent: Option<String>,
    /// The primary agent the next message goes to.
    pub agent: String,
    /// How full the model's context is (the runtime's estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextUsage>,
    /// The session's last Event number when it was read (the Events stream's
    /// `id`s): Events up to it may already be in this answer.
    #[serde(default)]
    pub seq: u64,
    /// The process that numbered them (the stream's `hello` epoch).
    #[serde(default)]
    pub epoch: String,
}

/// The runtime's estimate of the next request (system prompt, tools and
/// the visible history) against the model's context window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ContextUsage {
    /// Estimated tokens of the next request.
    pub tokens: u64,
    /// The model's context window.
    pub window: u64,
    /// Where automatic compaction starts (the window less the reply's room,
    /// times `compaction.tokenRatio`).
    pub budget: u64,
    /// `provider/model` the estimate is for.
    pub model: String,
    /// False when the system prompt and tools are not counted (the session
    /// has not sent a request in this process yet).
    pub complete: bool,
}

/// A project the store knows sessions for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProjectSummary {
    pub directory: String,
    pub project_id: String,
    pub sessions: u64,
    pub last_used: i64,
}

/// What kind of entry a timeline step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKindView {
    /// A tool call that changed files.
    Tool,
    /// An undo or revert (its changes put files back).
    Revert,
    /// A redo of an undo/revert.
    Redo,
}

/// One file-changing step of a session (spec 021's `/snapshots`), for the undo timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineStep {
    /// 1-based position in the session's timeline.
    pub index: u32,
    pub id: String,
    pub message_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool that made the change (`write`, `edit`, `bash`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub kind: StepKindView,
    pub before: String,
    pub after: String,
    pub changes: Vec<FileChange>,
    /// Paths whose content could not be captured (binary, too large): not restorable.
    #[serde(default)]
    pub uncaptured: Vec<String>,
    /// This step's changes are currently undone.
    pub undone: bool,
    pub created_at: i64,
    /// Set when a subagent made the step (in its own session, for this
    /// session's `task` call): that session and its agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<String>,
}

/// Which history operation a preview is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum HistoryAction {
    /// The session's last file-changing step, or `step` when given.
    Undo {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
    },
    /// Back to the state before `message_id`'s first change.
    Revert {
        message_id: String,
    },
    Redo,
}

/// What a file will go through if a planned undo/revert/redo is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PreviewAction {
    /// Written back with its earlier content.
    Restore,
    /// Deleted (the steps created it).
    Remove,
}

/// One file of a preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PreviewFile {
    pub path: String,
    pub action: PreviewAction,
    /// What the undone steps did to it.
    pub was: crate::FileChangeKind,
    /// Set when the file changed outside mia-code since: applying without
    /// `force` refuses; with `force` the current content is kept as a backup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
}

/// Exactly which files an undo/revert/redo will change, computed without changing anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RevertPreview {
    pub action: HistoryAction,
    /// Ids of the steps it undoes (for redo: the revert it undoes).
    pub steps: Vec<String>,
    pub files: Vec<PreviewFile>,
    /// Touched files that cannot be restored (never captured).
    #[serde(default)]
    pub unrestorable: Vec<String>,
    /// Files that changed while the undone steps ran but not by them, which
    /// it leaves as they are, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_alone: Vec<LeftAlone>,
    pub additions: u32,
    pub deletions: u32,
    /// The diff from the current files to the state it restores.
    pub diff: Vec<FileDiff>,
}

/// A file an undo leaves as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LeftAlone {
    pub path: String,
    /// "changed by session X while the step ran", "changed by someone
    /// else, not by the command", ...
    pub reason: String,
}

/// What a diff request covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum DiffScope {
    /// Session start → the files on disk now (only files the session touched).
    Session,
    /// Before the message's first step → after its last.
    Message { message_id: String },
    /// Before → after one step (a tool call id or step id).
    Step { step: String },
}

/// A diff ready to show (spec 077): files, statistics, the summary line and a patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffView {
    pub scope: DiffScope,
    pub files: Vec<FileDiff>,
    pub stats: DiffStats,
    /// e.g. `3 files changed, 45 insertions(+), 12 deletions(-)`.
    pub summary: String,
    /// Unified diff that `git apply` accepts.
    pub patch: String,
}

/// Whether an agent can be selected as the conversation's agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentModeView {
    Primary,
    Subagent,
    All,
}

/// An agent as the UI lists it (mode toggle, settings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentInfo {
    pub name: String,
    pub description: String,
    pub mode: AgentModeView,
    /// `provider/model` configured for it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub builtin: bool,
    /// Cannot write or edit (plan-like).
    pub read_only: bool,
    /// The config file that defines or changes it (`built-in` when none does).
    #[serde(default)]
    pub source: String,
    /// Seconds a delegation to it may run.
    #[serde(default)]
    pub timeout_secs: u32,
}

/// A configured provider and where its key comes from (never the key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProviderInfo {
    pub id: String,
    /// Wire format: `anthropic`, `openai`, `gemini`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// `config`, `env:NAME`, `keychain`, `file`; absent when no key is found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_source: Option<String>,
    /// Models of the bundled catalog for this provider.
    #[serde(default)]
    pub models: Vec<String>,
}

/// The settings screen: what is configured and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SettingsView {
    pub providers: Vec<ProviderInfo>,
    pub default_agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub agents: Vec<AgentInfo>,
    /// The global config file settings are written to.
    pub global_config: String,
    /// Config files that were read, lowest precedence first.
    pub config_files: Vec<String>,
    /// The OS sandbox shell commands run in, on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxView>,
    /// `updates.check`: the desktop app looks for a new version at start.
    #[serde(default = "yes")]
    pub updates_check: bool,
}

fn yes() -> bool {
    true
}

/// What happens to shell commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxEffect {
    /// They run in the OS sandbox.
    Sandboxed,
    /// No sandbox here: every command asks before it runs unconfined.
    Ask,
    /// `sandbox.mode` is off.
    Unconfined,
}

/// The OS sandbox as configured and as this machine can apply it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SandboxView {
    /// `sandbox.mode` as configured (or this OS's default).
    pub mode: crate::SandboxModeView,
    /// Absent when unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<crate::SandboxMechanism>,
    pub available: bool,
    /// What the mechanism offers, or why there is none.
    pub detail: String,
    /// What happens to commands.
    pub effect: SandboxEffect,
    /// The mechanism holds every promise (bubblewrap, Seatbelt); false for
    /// the Landlock fallback, under which commands the engine cannot read ask.
    #[serde(default)]
    pub full: bool,
    /// What the mechanism cannot hold.
    #[serde(default)]
    pub limits: Vec<String>,
    /// `sandbox.network` as configured for agents that can edit.
    pub network: crate::PermissionAction,
    /// The environment rule sandboxed commands get.
    #[serde(default)]
    pub env: String,
}

/// A change to the global config made from the settings screen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SettingsUpdate {
    /// `plan`, `build`, ... (empty string: remove the setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_agent: Option<String>,
    /// Default `provider/model` (empty string: remove).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Per-agent `provider/model` (empty string: remove).
    #[serde(default)]
    pub agent_models: std::collections::BTreeMap<String, String>,
    /// `updates.check` (the desktop app's check at start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates_check: Option<bool>,
    /// The global config's own permission rules, in check order; they
    /// replace its `permissions` (an empty list removes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Vec<crate::PermissionRule>>,
}

/// One compiled permission rule, in the order it is checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleView {
    pub permission: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    pub action: String,
    /// Which layer it comes from (invariant, session, project approval, agent config, ...).
    pub layer: String,
    /// File and index, or `built-in`.
    pub source: String,
}

/// The compiled rules of one agent, with lint warnings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionsView {
    pub agent: String,
    pub rules: Vec<RuleView>,
    pub warnings: Vec<String>,
    pub trusted: bool,
}

/// An "always for this project" approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApprovalView {
    pub id: i64,
    pub permission: String,
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub created_at: i64,
}

/// About the running backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerInfo {
    pub version: String,
    /// A scripted demo (mock model): the UI labels itself so.
    pub demo: bool,
    /// The project to open first (`mia-code serve --project`, the demo's sample project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    pub home: String,
}

/// A new fork (spec 020): the child session, and for a fork with files the
/// worktree it works in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForkResult {
    #[serde(flatten)]
    pub session: Session,
    /// Set for a fork with files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<ForkFiles>,
}

/// The workspace of a fork with files: a new worktree holding the project as
/// it was at the fork point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForkFiles {
    pub worktree: String,
    pub path: String,
    pub branch: String,
    /// The commit the worktree started from (the parent's HEAD).
    pub base: String,
    /// The snapshot applied over it (the files at the fork point); absent
    /// when the session had changed nothing by then (the files are the
    /// parent's as they are now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// Files that could not be carried over, each with why (over the
    /// snapshot size cap, unreadable; ignored files are never snapshotted).
    pub left_out: Vec<String>,
    /// Ignored files copied in because `.worktreeinclude` lists them.
    pub included: Vec<String>,
}

/// One session in a project's fork tree (the tree view and `sessions tree --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForkTreeNode {
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// Distinct files its own steps changed.
    pub files_changed: u64,
    /// Cost of its own messages (a fork's copied history is not counted again), USD.
    pub cost_usd: f64,
    /// The fork point's text, shortened (forks only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_excerpt: Option<String>,
    /// The fork's own first prompt after the fork point, shortened: what
    /// tells sibling forks (all titled "… (fork)") apart (forks only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_prompt: Option<String>,
    /// True when the fork has its own worktree (a fork with files) rather
    /// than its parent's directory.
    pub own_worktree: bool,
    pub children: Vec<ForkTreeNode>,
}

/// Two sessions' file changes since the point where they diverged, for the
/// side-by-side comparison (`GET /api/sessions/{id}/compare?with=`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionCompare {
    pub left: SessionChanges,
    pub right: SessionChanges,
    /// Where they diverged: the fork point message in the common ancestor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_point: Option<String>,
}

/// One side of a [`SessionCompare`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionChanges {
    pub session_id: String,
    pub title: String,
    /// The worktree the session works in, when it has its own: when both
    /// sides have one, the worktree comparison screen compares them
    /// (uncommitted changes included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// Each changed file from its state before the session's first change to
    /// it (after the fork point) to its state after the last one.
    pub files: Vec<FileDiff>,
    pub stats: DiffStats,
}

/// What a compaction did (`mia-code compact --json`, `POST /api/sessions/{id}/compact`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompactResult {
    /// Messages archived (replaced by the summary in the model's context).
    pub compacted: u64,
    /// Messages kept verbatim after the summary.
    pub retained: u64,
    /// Estimated tokens of the conversation before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The summary message.
    pub message_id: String,
}

/// One (agent, model) line of a session's cost (`mia-code cost`, `/cost`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CostLine {
    pub agent: String,
    pub model: String,
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost_usd: f64,
}

/// What a session cost: per agent and model, its subagents' sessions included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CostView {
    pub session_id: String,
    /// Per agent and model, the session and its subagents together.
    pub lines: Vec<CostLine>,
    /// The session's own messages only.
    pub session: CostLine,
    /// The session plus every subagent session it spawned (recursively).
    pub total: CostLine,
    /// The subagent sessions counted in `total`.
    pub subagent_sessions: Vec<String>,
}

/// One permission rule of a generated agent, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProposedRule {
    pub permission: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `allow`, `ask` or `deny`.
    pub action: String,
    #[serde(default)]
    pub reason: String,
}

/// A generated agent definition, validated, before it is saved (spec 013).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentProposal {
    pub key: String,
    pub name: String,
    pub description: String,
    /// `primary`, `subagent` or `all`.
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default)]
    pub model_reason: String,
    pub prompt: String,
    pub permissions: Vec<ProposedRule>,
    /// What validation changed (a taken key renamed, an allow tightened to ask, ...).
    #[serde(default)]
    pub notes: Vec<String>,
    /// After a refinement: the fields it changed.
    #[serde(default)]
    pub changed: Vec<String>,
}

/// A model the user can pick (`GET /api/models`): from the catalog, for the
/// providers that are configured or have a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelChoice {
    /// `provider/model`.
    pub id: String,
    pub provider: String,
    pub context_window: u64,
    pub max_output: u32,
    /// US dollars per million input / output tokens.
    pub input_price: f64,
    pub output_price: f64,
    pub reasoning: bool,
}

/// Where a custom slash command file was found (precedence order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CommandSourceView {
    /// The project's `.mia-code/commands/`.
    Project,
    /// The project's `.claude/commands/`.
    Claude,
    /// The project's `.opencode/command/`.
    Opencode,
    /// `~/.config/mia-code/commands/`.
    User,
}

/// A custom slash command (`mia-code commands list --json`, `GET /api/commands`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandInfo {
    /// Without the slash: `review`, `git:commit`.
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub argument_hint: Option<String>,
    pub source: CommandSourceView,
    pub path: String,
    /// Why the file is not used (a YAML error, an unknown key, a built-in's
    /// name, a name taken by a file that wins); `null` when it is usable.
    #[serde(default)]
    pub error: Option<String>,
}

/// `{"commands": [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandList {
    pub commands: Vec<CommandInfo>,
}

/// One run of a hook, as its tool card and the log show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HookRun {
    /// The event (`PreToolUse`, `Stop`, ...).
    pub event: String,
    pub command: String,
    /// The exit code; `null` when it was stopped (timeout) or did not start.
    #[serde(default)]
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// What it decided: `block`, `deny`, `ask`, `allow`, `timeout`, `error`; `null` for nothing.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Its reason or stderr, shortened.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A project's workspace trust and its hooks (`GET /api/trust`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrustView {
    pub directory: String,
    pub trusted: bool,
    /// Hook commands the project's config defines.
    pub project_hooks: u32,
    /// The project's hooks as they are now are the set approved when the
    /// workspace was trusted (they run); false when there are none.
    pub hooks_approved: bool,
}

/// `POST /api/trust`: trust a workspace (approving its hooks as they are) or withdraw trust.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrustUpdate {
    pub directory: String,
    pub trusted: bool,
}
