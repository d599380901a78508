//! The agent's built-in tools.
//!
//! Each tool has a typed input (its JSON Schema is generated from the Rust
//! type, and the model's arguments are validated by deserialising into it),
//! declares up front the permission it needs and the paths it touches
//! ([`ToolPlan`]), and runs cancellably. The runtime checks the plan with the
//! permission engine and snapshots the paths before calling [`Tool::run`].

mod bash;
mod edit;
mod error;
mod fetch;
mod fs_tools;
mod paths;
mod search;
pub mod shell;
mod task;
mod todo;

use std::path::PathBuf;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use bash::{BashInput, BashTool};
pub use edit::{EditInput, EditOp, EditTool};
pub use error::ToolError;
pub use fetch::{FetchInput, FetchTool};
pub use fs_tools::{ReadInput, ReadTool, WriteInput, WriteTool};
pub use search::{GlobInput, GlobTool, GrepInput, GrepTool};
pub use task::{Delegate, Delegator, TASK_DESCRIPTION, TaskInput, TaskTool};
pub use todo::{Todo, TodoInput, TodoList, TodoStatus, TodoTool};

/// What a tool will touch, known before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file or directory, absolute (resolved against the project root).
    Path(PathBuf),
    /// A shell command line, judged by the permission engine on its parsed segments.
    Command(String),
    /// A URL.
    Url(String),
    /// Nothing beyond the permission itself (todo).
    None,
    /// A name judged as text (`task`: the subagent).
    Text(String),
}

/// The permission check and snapshot input for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPlan {
    /// Permission id (`read`, `write`, `edit`, `bash`, `glob`, `grep`, `todo_create`, ...).
    pub permission: String,
    pub targets: Vec<Target>,
    /// Files the call may change: `Some(paths)` when known (write/edit),
    /// `Some([])` for read-only tools, `None` when unknown (bash: the snapshot
    /// engine scans the tree).
    pub modifies: Option<Vec<PathBuf>>,
}

/// The result handed back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub output: String,
    /// Structured details for UIs (exit code, counts, truncation, ...).
    pub metadata: Value,
}

impl ToolOutput {
    pub fn text(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            metadata: Value::Null,
        }
    }
}

/// Whether a file may be read, as the permission engine judges it: `None`
/// when it may, else why not. Tools that read many files at once (grep,
/// glob) skip the files it refuses, so no tool returns a denied file's
/// content (or name) by another route.
#[derive(Clone)]
pub struct ReadFilter(pub Arc<ReadJudge>);

/// The judge behind a [`ReadFilter`].
pub type ReadJudge = dyn Fn(&std::path::Path) -> Option<String> + Send + Sync;

impl std::fmt::Debug for ReadFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadFilter")
    }
}

/// Where a running tool reports output as it comes (bash: stdout and
/// stderr, live). Text is already valid UTF-8; the final result still
/// carries the whole (capped) output.
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// Where a sandboxed command's connections are judged (the proxy asks it).
#[derive(Clone)]
pub struct NetworkGate(pub Arc<dyn mia_sandbox::proxy::HostGate>);

impl std::fmt::Debug for NetworkGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetworkGate")
    }
}

/// Everything a tool may use while running.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Canonical project root; relative paths resolve against it.
    pub project_root: PathBuf,
    pub cancel: CancellationToken,
    /// The session's todo list.
    pub todos: Arc<std::sync::Mutex<TodoList>>,
    /// The read rules, for tools that read many files (None: no rules).
    pub read_filter: Option<ReadFilter>,
    /// The agent cannot write (plan, explore): `bash` runs git with optional
    /// locks off and the repository's pager, fsmonitor and hooks disabled,
    /// and refuses implicit bare repositories (see [`READ_ONLY_GIT_CONFIG`]).
    pub read_only_shell: bool,
    /// How `bash` confines its commands.
    pub sandbox: ShellSandbox,
    /// Decides the hosts a sandboxed command's connections go to (the
    /// session's rules and asks); `None`: the rules alone (nobody is asked).
    pub network: Option<NetworkGate>,
    /// Live output of the running call (None: nobody listens).
    pub progress: Option<Progress>,
    /// This turn's tools from MCP servers and plugins.
    pub extra_tools: ExtraTools,
    /// Who runs `task` calls this step (`None`: `task` is not offered).
    pub delegator: Option<Delegator>,
    /// The id of the call the tool is running for (set per call).
    pub call_id: Option<String>,
    /// An editor's buffers (an ACP client offering `fs/*`): write and edit
    /// read and write text files through it instead of the disk.
    pub editor: Option<EditorFiles>,
}

/// Text files as an editor holds them (its open buffers, unsaved changes
/// included).
#[async_trait::async_trait]
pub trait EditorFs: Send + Sync {
    /// The file's text as the editor has it.
    async fn read_text(&self, path: &std::path::Path) -> Result<String, String>;
    /// Replace the file's text (the editor saves it).
    async fn write_text(&self, path: &std::path::Path, text: &str) -> Result<(), String>;
}

/// A shared [`EditorFs`].
#[derive(Clone)]
pub struct EditorFiles(pub Arc<dyn EditorFs>);

impl std::fmt::Debug for EditorFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EditorFiles")
    }
}

/// How `bash` runs commands: under the OS sandbox, or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellSandbox {
    /// No sandbox: `sandbox.mode` is off (the environment rule still applies).
    Off { env: mia_sandbox::EnvRule },
    /// Under `policy`. `escapable`: the agent may ask to run one command
    /// outside it (`outside_sandbox`); read-only agents may not.
    Confined {
        policy: mia_sandbox::SandboxPolicy,
        mechanism: mia_sandbox::Mechanism,
        escapable: bool,
    },
    /// A sandbox is wanted but this machine cannot apply it: every command
    /// needs a person's yes first (the runtime asks), then runs unconfined.
    Unavailable {
        policy: mia_sandbox::SandboxPolicy,
        reason: String,
    },
}

/// Git configuration forced on a read-only agent's shell, through
/// `GIT_CONFIG_COUNT` (command-line priority, above every config file).
/// `safe.bareRepository=explicit` stops a bare-repository layout inside the
/// project from bringing its own `diff.external`, hooks or filters.
pub const READ_ONLY_GIT_CONFIG: &[(&str, &str)] = &[
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.untrackedCache", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

impl ToolContext {
    pub fn new(project_root: PathBuf) -> Self {
        Self {
            project_root,
            cancel: CancellationToken::new(),
            todos: Arc::default(),
            read_filter: None,
            read_only_shell: false,
            sandbox: ShellSandbox::Off {
                env: mia_sandbox::EnvRule::default(),
            },
            network: None,
            progress: None,
            extra_tools: ExtraTools::default(),
            delegator: None,
            call_id: None,
            editor: None,
        }
    }
}

/// A tool definition as sent to the model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolSpec {
    /// Built-in tools have static names; tools of MCP servers and plugins
    /// are named at run time (`mcp__server__tool`).
    pub name: std::borrow::Cow<'static, str>,
    pub description: std::borrow::Cow<'static, str>,
    pub input_schema: Value,
}

/// Tools found at run time (MCP servers' and plugins'), by the name the
/// model calls them with; looked up after the built-in ones.
#[derive(Clone, Default)]
pub struct ExtraTools(pub Arc<std::collections::BTreeMap<String, Arc<dyn Tool>>>);

impl std::fmt::Debug for ExtraTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// Validate the arguments and say what the call will touch.
    fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolPlan, ToolError>;
    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
    /// Why this call would run outside the OS sandbox although one is
    /// configured (`bash` asked to, or the sandbox is unavailable): the
    /// runtime asks a person first. `None` for everything else.
    fn unconfined(&self, _input: &Value, _ctx: &ToolContext) -> Option<Unconfined> {
        None
    }
    /// Where the tool comes from when it is not built in (`MCP server
    /// "docs" (http: https://…)`), for the permission dialog.
    fn origin(&self) -> Option<String> {
        None
    }
    /// The change a file-writing call would make, for the permission
    /// dialog to show before it runs. `None` for other tools, or when it
    /// cannot be known (the edit does not apply, the file is too big).
    fn proposed(&self, _input: &Value, _ctx: &ToolContext) -> Option<Proposed> {
        None
    }
    /// The definition offered to the model this step; `None` when the tool
    /// cannot be used here at all (`task` with nobody to delegate to).
    fn offer(&self, _ctx: &ToolContext) -> Option<ToolSpec> {
        Some(self.spec())
    }
    /// The permission whose rules decide whether the tool is offered, when
    /// it is not the tool's name (`todo` → `todo_create`, a plugin tool's
    /// declared permission).
    fn offered_under(&self) -> Option<String> {
        None
    }
    /// Several calls of this tool in one step run at once (`task`: each
    /// subagent in its own session); other calls run in order.
    fn concurrent(&self) -> bool {
        false
    }
}

/// A file's content before and after a proposed write or edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    /// Project-relative (or absolute, outside the project) path as shown.
    pub path: String,
    /// `None`: the file does not exist yet.
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
}

/// Files over this size get no proposed diff in the dialog.
pub const MAX_PROPOSED_BYTES: u64 = 1024 * 1024;

/// A call that would run outside the configured OS sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconfined {
    /// The agent asked to run it outside (after the sandbox blocked it).
    Escalation,
    /// This machine cannot apply the sandbox (the reason).
    Unavailable(String),
}

/// Deserialise the model's arguments into a tool's input type, with an error
/// the model can act on.
pub fn parse_input<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, ToolError> {
    serde_json::from_value(input.clone()).map_err(|e| ToolError::InvalidInput {
        tool: tool.to_string(),
        message: e.to_string(),
    })
}

pub(crate) fn schema_of<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// The built-in tools: a closed set, in the order they are offered.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum BuiltinTool {
    Read,
    Write,
    Edit,
    Glob,
    Grep,
    Bash,
    Fetch,
    Todo,
    Task,
}

impl BuiltinTool {
    pub const ALL: [Self; 9] = [
        Self::Read,
        Self::Write,
        Self::Edit,
        Self::Glob,
        Self::Grep,
        Self::Bash,
        Self::Fetch,
        Self::Todo,
        Self::Task,
    ];

    /// The name the model calls it by.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Edit => "edit",
            Self::Glob => "glob",
            Self::Grep => "grep",
            Self::Bash => "bash",
            Self::Fetch => "fetch",
            Self::Todo => "todo",
            Self::Task => "task",
        }
    }

    /// The built-in tool called `name`, if one is.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    fn tool(self) -> Box<dyn Tool> {
        match self {
            Self::Read => Box::new(ReadTool),
            Self::Write => Box::new(WriteTool),
            Self::Edit => Box::new(EditTool),
            Self::Glob => Box::new(GlobTool),
            Self::Grep => Box::new(GrepTool),
            Self::Bash => Box::new(BashTool),
            Self::Fetch => Box::new(FetchTool),
            Self::Todo => Box::new(TodoTool),
            Self::Task => Box::new(TaskTool),
        }
    }
}

impl std::fmt::Display for BuiltinTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The built-in tools, keyed by [`BuiltinTool`].
pub struct ToolRegistry {
    tools: Vec<(BuiltinTool, Box<dyn Tool>)>,
}

impl ToolRegistry {
    pub fn builtin() -> Self {
        Self {
            tools: BuiltinTool::ALL
                .into_iter()
                .map(|t| (t, t.tool()))
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        let kind = BuiltinTool::from_name(name)?;
        self.tools
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, t)| t.as_ref())
    }

    /// What the model may be offered this step, built-in tools first, then
    /// the turn's extra tools in name order (the prompt prefix must not
    /// change between steps), each with the permission deciding whether it
    /// is offered.
    pub fn offers(&self, ctx: &ToolContext) -> Vec<(ToolSpec, String)> {
        self.tools
            .iter()
            .map(|(_, t)| t.as_ref())
            .chain(ctx.extra_tools.0.values().map(|t| t.as_ref()))
            .filter_map(|t| {
                let spec = t.offer(ctx)?;
                let permission = t.offered_under().unwrap_or_else(|| spec.name.to_string());
                Some((spec, permission))
            })
            .collect()
    }

    /// Whether calls of `name` in one step run at once.
    pub fn concurrent(&self, name: &str, ctx: &ToolContext) -> bool {
        self.get_with(name, ctx).is_some_and(|t| t.concurrent())
    }

    /// A built-in tool, else one of the turn's extra tools (MCP, plugins).
    pub fn get_with<'a>(&'a self, name: &str, ctx: &'a ToolContext) -> Option<&'a dyn Tool> {
        self.get(name)
            .or_else(|| ctx.extra_tools.0.get(name).map(|t| t.as_ref()))
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|(_, t)| t.spec()).collect()
    }

    /// See [`Tool::proposed`].
    pub fn proposed(&self, name: &str, input: &Value, ctx: &ToolContext) -> Option<Proposed> {
        self.get_with(name, ctx)
            .and_then(|t| t.proposed(input, ctx))
    }

    /// See [`Tool::unconfined`].
    pub fn unconfined(&self, name: &str, input: &Value, ctx: &ToolContext) -> Option<Unconfined> {
        self.get_with(name, ctx)
            .and_then(|t| t.unconfined(input, ctx))
    }

    /// Plan a call by tool name; an unknown tool is an error naming the known ones.
    pub fn plan(
        &self,
        name: &str,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<ToolPlan, ToolError> {
        self.get_with(name, ctx)
            .ok_or_else(|| ToolError::UnknownTool {
                name: name.to_string(),
                known: self
                    .tools
                    .iter()
                    .map(|(k, _)| k.name().to_string())
                    .chain(ctx.extra_tools.0.keys().cloned())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?
            .plan(input, ctx)
    }
}
