//! MCP servers (docs/plugins.md): which servers a project has (config
//! `mcp` of every layer, then the project's `.mcp.json` in Claude Code's
//! format), one connection per server per project per process (started at
//! a turn or by `mcp list`; a project's own servers only once the workspace
//! is trusted), and their tools as [`mia_tools::Tool`]s named
//! `mcp__SERVER__TOOL`: planned under that permission (the permission engine
//! judges them like any tool; `build` asks by default), snapshotted like a
//! shell command (they may change any file), called with the server's
//! timeout and the turn's cancel, results capped, images and resource links
//! kept for the UI.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mia_config::{Config, LayerKind, McpKind, McpServerConfig};
use mia_mcp::{Connection, Content, Transport};
use mia_protocol::{McpServerView, McpState, ResultContent};
use mia_tools::{ExtraTools, Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan, ToolSpec};
use serde_json::Value;

use crate::CoreError;
use crate::runtime::{Runtime, lock};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const LIST_TIMEOUT: Duration = Duration::from_secs(15);
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// A server that exits is started again at most this often per process.
const MAX_RESTARTS: u32 = 3;

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerDef {
    name: String,
    /// The file it is defined in.
    source: String,
    /// Defined by the project (its config or `.mcp.json`): starts only in a
    /// trusted workspace.
    project_level: bool,
    /// A person's own stdio server: its data directory (its working
    /// directory, where it may write) and what else their config lets it
    /// write.
    own: Option<OwnServer>,
    transport: Result<Transport, String>,
    timeout: Duration,
    enabled: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct OwnServer {
    data_dir: PathBuf,
    writable: Vec<PathBuf>,
}

/// What defining a server needs to know.
pub(crate) struct DefContext<'a> {
    /// The project, canonical.
    pub project: &'a Path,
    /// Whether the workspace is trusted: a project's secrets (`${VAR}` in
    /// `.mcp.json` or its config) are resolved only then.
    pub trusted: bool,
    pub paths: &'a mia_config::Paths,
}

impl DefContext<'_> {
    /// Where a person's own server `name` keeps its data.
    fn data_dir(&self, name: &str) -> PathBuf {
        self.paths.home.join("mcp").join(sanitize(name))
    }
}

enum SlotState {
    Idle,
    Ready(Arc<Connection>),
    Failed(String),
}

struct Slot {
    def: ServerDef,
    state: tokio::sync::Mutex<SlotState>,
    restarts: AtomicU32,
}

/// A project's servers.
pub(crate) struct McpHub {
    defs: Vec<ServerDef>,
    slots: Vec<Arc<Slot>>,
}

/// `.mcp.json` as Claude Code writes it (unknown keys are ignored).
#[derive(serde::Deserialize)]
struct DotMcp {
    #[serde(default, rename = "mcpServers")]
    mcp_servers: BTreeMap<String, DotMcpServer>,
}

#[derive(serde::Deserialize)]
struct DotMcpServer {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
}

/// `[A-Za-z0-9_-]` only (what every provider accepts in a tool name).
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name the model calls a server's tool by (at most 64 characters).
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    full.chars().take(64).collect()
}

/// A server's transport. A person's own stdio server (`own`) runs outside
/// the project ([`crate::external::Outside`]); a project's server's `${VAR}`
/// references stay unresolved (and unprinted) until the workspace is trusted.
fn transport_of(
    name: &str,
    cfg: &McpServerConfig,
    ctx: &DefContext<'_>,
    own: Option<&OwnServer>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Transport, String> {
    let resolve = own.is_some() || ctx.trusted;
    let outside = crate::external::Outside {
        project: ctx.project,
        home: &ctx.paths.user_home,
    };
    let expand = |v: &str, key: String| -> Result<String, String> {
        if !resolve {
            return Ok(v.to_string());
        }
        let v = mia_config::resolve_env_refs_with(v, &key, env).map_err(|e| e.to_string())?;
        Ok(if own.is_some() { outside.expand(&v) } else { v })
    };
    let kind = cfg.kind.unwrap_or(if cfg.url.is_some() {
        McpKind::Http
    } else {
        McpKind::Stdio
    });
    match kind {
        McpKind::Stdio => {
            let Some(command) = cfg.command.clone().filter(|c| !c.trim().is_empty()) else {
                return Err(format!(
                    "mcp.{name} has no `command` (a stdio server) and no `url` (an HTTP server)"
                ));
            };
            let mut full_env = crate::external::base_env(&["SHELL", "TERM"], env);
            if own.is_some()
                && let Some(path) = full_env.get_mut("PATH")
            {
                *path = outside.path(path);
            }
            for (k, v) in cfg.env.iter().flatten() {
                full_env.insert(k.clone(), expand(v, format!("mcp.{name}.env.{k}"))?);
            }
            let args = cfg
                .args
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, a)| expand(a, format!("mcp.{name}.args[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            let (command, cwd) = match own {
                Some(o) => {
                    let path = full_env.get("PATH").cloned().unwrap_or_default();
                    let program = outside
                        .program(&command, &path)
                        .map_err(|e| format!("mcp.{name}.command: {e}"))?;
                    (program.display().to_string(), o.data_dir.clone())
                }
                None => (command, ctx.project.to_path_buf()),
            };
            Ok(Transport::Stdio {
                command,
                args,
                env: full_env,
                cwd,
                confine: None,
            })
        }
        McpKind::Http => {
            let Some(url) = cfg.url.clone().filter(|u| !u.trim().is_empty()) else {
                return Err(format!("mcp.{name} is an HTTP server without a `url`"));
            };
            let lower = url.to_ascii_lowercase();
            if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                return Err(format!("mcp.{name}.url {url:?} is not an http(s) URL"));
            }
            let mut headers = BTreeMap::new();
            for (k, v) in cfg.headers.iter().flatten() {
                headers.insert(k.clone(), expand(v, format!("mcp.{name}.headers.{k}"))?);
            }
            Ok(Transport::Http { url, headers })
        }
    }
}

/// Every server `config` and the project's `.mcp.json` define. A project
/// adds servers; it never replaces one of the person's own (a same-named
/// entry of the project is ignored), and may switch one off
/// (`enabled: false`) only once the workspace is trusted.
pub(crate) fn server_defs(config: &Config, ctx: &DefContext<'_>) -> Vec<ServerDef> {
    let env = |k: &str| std::env::var(k).ok();
    let mut by_name: BTreeMap<String, ServerDef> = BTreeMap::new();
    for layer in &config.layers {
        let project_level = layer.kind == LayerKind::Project;
        for (name, cfg) in layer.file.mcp.iter().flatten() {
            if project_level
                && let Some(mine) = by_name.get_mut(name)
                && !mine.project_level
            {
                if ctx.trusted && cfg.enabled == Some(false) {
                    mine.enabled = false;
                    mine.source = format!("{} (switched off by {})", mine.source, layer.source());
                } else {
                    tracing::warn!(server = %name, source = %layer.source(), "a project's config names one of your own MCP servers; yours stands");
                }
                continue;
            }
            let own = (!project_level && cfg.command.is_some() && cfg.url.is_none()).then(|| {
                let outside = crate::external::Outside {
                    project: ctx.project,
                    home: &ctx.paths.user_home,
                };
                OwnServer {
                    data_dir: ctx.data_dir(name),
                    writable: cfg
                        .writable
                        .iter()
                        .flatten()
                        .map(|w| expand_home(&outside.expand(w), &ctx.paths.user_home))
                        .collect(),
                }
            });
            by_name.insert(
                name.clone(),
                ServerDef {
                    name: name.clone(),
                    source: layer.source(),
                    project_level,
                    transport: transport_of(name, cfg, ctx, own.as_ref(), &env),
                    own,
                    timeout: cfg
                        .timeout
                        .map(Duration::from_secs)
                        .unwrap_or(DEFAULT_CALL_TIMEOUT),
                    enabled: cfg.enabled != Some(false),
                },
            );
        }
    }
    dot_mcp(&mut by_name, ctx, &env);
    by_name.into_values().collect()
}

/// `~/…` under the person's home.
fn expand_home(p: &str, home: &Path) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(p),
    }
}

/// The project's `.mcp.json` (Claude Code's format): its servers, where no
/// config layer defines the name.
fn dot_mcp(
    by_name: &mut BTreeMap<String, ServerDef>,
    ctx: &DefContext<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) {
    let dot = ctx.project.join(".mcp.json");
    let Ok(text) = std::fs::read_to_string(&dot) else {
        return;
    };
    let source = dot.display().to_string();
    let project_def = |name: &str, transport: Result<Transport, String>| ServerDef {
        name: name.to_string(),
        source: source.clone(),
        project_level: true,
        own: None,
        transport,
        timeout: DEFAULT_CALL_TIMEOUT,
        enabled: true,
    };
    let file = match serde_json::from_str::<DotMcp>(&text) {
        Ok(file) => file,
        Err(e) => {
            by_name.insert(
                ".mcp.json".into(),
                project_def(".mcp.json", Err(format!("{source} is not valid: {e}"))),
            );
            return;
        }
    };
    for (name, s) in file.mcp_servers {
        if by_name.contains_key(&name) {
            continue; // the config's definition wins
        }
        let kind = match s.kind.as_deref() {
            None => None,
            Some("stdio") => Some(McpKind::Stdio),
            Some("http" | "streamable-http" | "streamableHttp") => Some(McpKind::Http),
            Some(other) => {
                let why = format!(
                    "transport {other:?} is not supported (use stdio or the server's streamable HTTP endpoint)"
                );
                by_name.insert(name.clone(), project_def(&name, Err(why)));
                continue;
            }
        };
        let cfg = McpServerConfig {
            kind,
            command: s.command,
            args: s.args,
            env: s.env,
            url: s.url,
            headers: s.headers,
            ..McpServerConfig::default()
        };
        let transport = transport_of(&name, &cfg, ctx, None, env);
        by_name.insert(name.clone(), project_def(&name, transport));
    }
}

impl McpHub {
    fn new(defs: Vec<ServerDef>) -> Self {
        let slots = defs
            .iter()
            .cloned()
            .map(|def| {
                Arc::new(Slot {
                    def,
                    state: tokio::sync::Mutex::new(SlotState::Idle),
                    restarts: AtomicU32::new(0),
                })
            })
            .collect();
        Self { defs, slots }
    }

    /// Connect every server that may run and is not connected (a server
    /// that exited is started again, at most [`MAX_RESTARTS`] times).
    async fn start(&self, trusted: bool) {
        let starts = self
            .slots
            .iter()
            .filter(|s| s.def.enabled && (trusted || !s.def.project_level))
            .map(|slot| async move {
                let mut state = slot.state.lock().await;
                let again = match &*state {
                    SlotState::Idle => true,
                    SlotState::Ready(c) if c.is_closed() => {
                        let n = slot.restarts.fetch_add(1, Ordering::SeqCst);
                        if n >= MAX_RESTARTS {
                            let tail = c.stderr().last().cloned().unwrap_or_default();
                            *state = SlotState::Failed(format!(
                                "the server exited {} times; not started again until mia-code restarts{}",
                                n + 1,
                                if tail.is_empty() { String::new() } else { format!(" (last stderr: {tail})") }
                            ));
                            false
                        } else {
                            true
                        }
                    }
                    _ => false,
                };
                if !again {
                    return;
                }
                *state = match &slot.def.transport {
                    Err(e) => SlotState::Failed(e.clone()),
                    Ok(t) => match Connection::connect(&slot.def.name, t, CONNECT_TIMEOUT).await {
                        Ok(c) => {
                            tracing::info!(server = %slot.def.name, transport = %t.describe(), "MCP server connected");
                            SlotState::Ready(Arc::new(c))
                        }
                        Err(e) => {
                            tracing::warn!(server = %slot.def.name, error = %e, "MCP server failed to start");
                            SlotState::Failed(e.to_string())
                        }
                    },
                };
            });
        futures_util::future::join_all(starts).await;
    }

    /// The tools of the connected servers, as tools of the turn.
    async fn tools(&self) -> BTreeMap<String, Arc<dyn Tool>> {
        let mut out: BTreeMap<String, Arc<dyn Tool>> = BTreeMap::new();
        for slot in &self.slots {
            let conn = match &*slot.state.lock().await {
                SlotState::Ready(c) => c.clone(),
                _ => continue,
            };
            let Ok(transport) = &slot.def.transport else {
                continue;
            };
            let tools = match conn.tools(LIST_TIMEOUT).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(server = %slot.def.name, error = %e, "listing MCP tools failed");
                    continue;
                }
            };
            for t in tools {
                let name = tool_name(&slot.def.name, &t.name);
                if out.contains_key(&name) {
                    tracing::warn!(server = %slot.def.name, tool = %t.name, "two MCP tools map to {name}; the second is left out");
                    continue;
                }
                out.insert(
                    name.clone(),
                    Arc::new(McpTool {
                        name,
                        server: slot.def.name.clone(),
                        tool: t.name,
                        description: t.description,
                        schema: t.input_schema,
                        conn: conn.clone(),
                        timeout: slot.def.timeout,
                        origin: format!(
                            "MCP server \"{}\" ({})",
                            slot.def.name,
                            transport.describe()
                        ),
                    }),
                );
            }
        }
        out
    }

    async fn views(&self, trusted: bool) -> Vec<McpServerView> {
        let mut out = Vec::new();
        for slot in &self.slots {
            let d = &slot.def;
            let transport = match &d.transport {
                Ok(t) => t.describe(),
                Err(_) => "invalid".into(),
            };
            let mut view = McpServerView {
                name: d.name.clone(),
                source: d.source.clone(),
                transport,
                state: McpState::Stopped,
                error: None,
                server: None,
                tools: Vec::new(),
                stderr: Vec::new(),
            };
            if !d.enabled {
                view.state = McpState::Disabled;
            } else if d.project_level && !trusted {
                view.state = McpState::Untrusted;
                view.error = Some(
                    "a project's servers start once you trust the workspace (`mia-code permissions trust`)".into(),
                );
            } else {
                match &*slot.state.lock().await {
                    SlotState::Idle => view.state = McpState::Stopped,
                    SlotState::Failed(e) => {
                        view.state = McpState::Failed;
                        view.error = Some(e.clone());
                    }
                    SlotState::Ready(c) => {
                        view.server = c.server_version();
                        view.stderr = c.stderr().into_iter().rev().take(5).rev().collect();
                        match c.tools(LIST_TIMEOUT).await {
                            Ok(t) => {
                                view.state = if c.is_closed() {
                                    McpState::Exited
                                } else {
                                    McpState::Ready
                                };
                                view.tools = t.into_iter().map(|t| t.name).collect();
                            }
                            Err(e) => {
                                view.state = McpState::Failed;
                                view.error = Some(e.to_string());
                            }
                        }
                    }
                }
            }
            out.push(view);
        }
        out
    }
}

/// One MCP tool, as a tool of the turn.
struct McpTool {
    name: String,
    server: String,
    tool: String,
    description: String,
    schema: Value,
    conn: Arc<Connection>,
    timeout: Duration,
    origin: String,
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        let description = if self.description.trim().is_empty() {
            format!("{} (MCP server {})", self.tool, self.server)
        } else {
            format!("{} (MCP server {})", self.description.trim(), self.server)
        };
        ToolSpec {
            name: self.name.clone().into(),
            description: description.into(),
            input_schema: self.schema.clone(),
        }
    }

    fn plan(&self, input: &Value, _ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        if !(input.is_object() || input.is_null()) {
            return Err(ToolError::InvalidInput {
                tool: self.name.clone(),
                message: "the arguments must be a JSON object".into(),
            });
        }
        Ok(ToolPlan {
            permission: self.name.clone(),
            targets: vec![Target::None],
            // A server may change any file: snapshot like a shell command.
            modifies: None,
        })
    }

    fn origin(&self) -> Option<String> {
        Some(self.origin.clone())
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let out = self
            .conn
            .call(&self.tool, input, self.timeout, &ctx.cancel)
            .await
            .map_err(|e| match e {
                mia_mcp::McpError::Cancelled => ToolError::Invalid("cancelled".into()),
                other => ToolError::Invalid(format!("MCP server {}: {other}", self.server)),
            })?;
        let mut text = out.text();
        crate::external::cap_output(&mut text, |total| {
            format!(
                "\n… [output cut at {} of {total} bytes]",
                crate::external::MAX_OUTPUT
            )
        });
        if out.is_error {
            return Err(ToolError::Invalid(if text.is_empty() {
                format!("MCP server {} reported an error", self.server)
            } else {
                text
            }));
        }
        let rich: Vec<ResultContent> = out
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Image { media_type, data } => Some(ResultContent::Image {
                    media_type: media_type.clone(),
                    data: data.clone(),
                }),
                Content::ResourceLink {
                    uri,
                    name,
                    description,
                    mime_type,
                } => Some(ResultContent::ResourceLink {
                    uri: uri.clone(),
                    name: name.clone(),
                    description: description.clone(),
                    mime_type: mime_type.clone(),
                }),
                Content::Resource {
                    uri,
                    mime_type,
                    text,
                } => Some(ResultContent::Resource {
                    uri: uri.clone(),
                    mime_type: mime_type.clone(),
                    text: text.clone(),
                }),
                _ => None,
            })
            .collect();
        Ok(ToolOutput {
            output: text,
            metadata: serde_json::json!({
                "mcp": {"server": self.server, "tool": self.tool},
                "content": rich,
            }),
        })
    }
}

impl Runtime {
    /// The project's hub, made again when its servers' definitions changed.
    fn mcp_hub(&self, project: &Path, config: &Config, trusted: bool) -> Arc<McpHub> {
        let project = dunce::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        let project = project.as_path();
        let paths = &self.inner.opts.paths;
        let ctx = DefContext {
            project,
            trusted,
            paths,
        };
        // The servers an editor brought (ACP): the person's own.
        let client = lock(&self.inner.client_mcp).get(project).cloned();
        let with_client;
        let config = match client {
            Some(servers) if !servers.is_empty() => {
                let mut c = config.clone();
                let at = c
                    .layers
                    .iter()
                    .position(|l| l.kind == LayerKind::Project)
                    .unwrap_or(c.layers.len());
                c.layers.insert(
                    at,
                    mia_config::Layer {
                        kind: LayerKind::Global,
                        path: Some(PathBuf::from("(the editor's MCP servers)")),
                        file: mia_config::ConfigFile {
                            mcp: Some(servers),
                            ..Default::default()
                        },
                    },
                );
                with_client = c;
                &with_client
            }
            _ => config,
        };
        let mut defs = server_defs(config, &ctx);
        // Every stdio server runs in the OS sandbox: a project's read-only
        // in the project; a person's own in its data directory, reading
        // the project, writing only there and where their config says.
        for d in &mut defs {
            let named = match &d.transport {
                Ok(Transport::Stdio { command, args, .. }) => {
                    crate::external::named_paths(command, args)
                }
                _ => continue,
            };
            let sandbox = match &d.own {
                Some(own) => {
                    if let Err(e) = std::fs::create_dir_all(&own.data_dir) {
                        d.transport = Err(format!(
                            "cannot create its data directory {}: {e}",
                            own.data_dir.display()
                        ));
                        continue;
                    }
                    crate::sandbox::own_server_confinement(
                        config,
                        &own.data_dir,
                        project,
                        &own.writable,
                        paths,
                        named,
                    )
                }
                None => crate::sandbox::server_confinement(config, project, paths, false),
            };
            if let Ok(Transport::Stdio { confine, .. }) = &mut d.transport {
                *confine = sandbox.map(Box::new);
            }
        }
        let mut hubs = lock(&self.inner.mcp);
        if let Some(h) = hubs.get(project)
            && h.defs == defs
        {
            return h.clone();
        }
        let hub = Arc::new(McpHub::new(defs));
        // The old hub's connections close when its last user drops it.
        hubs.insert(project.to_path_buf(), hub.clone());
        hub
    }

    /// MCP servers an editor (ACP client) brings for `directory`'s project,
    /// run as the person's own.
    pub fn set_client_mcp_servers(
        &self,
        directory: &Path,
        servers: BTreeMap<String, McpServerConfig>,
    ) -> Result<(), CoreError> {
        let project = self.project_dir(directory)?;
        let project = dunce::canonicalize(&project).unwrap_or(project);
        lock(&self.inner.client_mcp).insert(project, servers);
        Ok(())
    }

    /// The MCP tools a turn in `project` may offer.
    pub(crate) async fn mcp_tools(
        &self,
        project: &Path,
        config: &Config,
        trusted: bool,
    ) -> ExtraTools {
        let hub = self.mcp_hub(project, config, trusted);
        if hub.slots.is_empty() {
            return ExtraTools::default();
        }
        hub.start(trusted).await;
        ExtraTools(Arc::new(hub.tools().await))
    }

    /// Whether the workspace of `directory` is trusted (its project's
    /// scripts, servers and plugins may run).
    pub async fn workspace_trusted(&self, directory: &Path) -> Result<bool, CoreError> {
        let project = self.project_dir(directory)?;
        let key = crate::worktrees::project_key(&project);
        self.inner
            .store
            .call(move |db| db.is_workspace_trusted(&key))
            .await
    }

    /// Every MCP server of `directory` with its state and tools (servers
    /// that may run are started first).
    pub async fn mcp_servers(&self, directory: PathBuf) -> Result<Vec<McpServerView>, CoreError> {
        let project = self.project_dir(&directory)?;
        let config = self.load_config(Some(project.clone())).await?;
        let key = crate::worktrees::project_key(&project);
        let trusted = self
            .inner
            .store
            .call(move |db| db.is_workspace_trusted(&key))
            .await?;
        let hub = self.mcp_hub(&project, &config, trusted);
        hub.start(trusted).await;
        Ok(hub.views(trusted).await)
    }
}

/// Hubs by project directory (for `Inner`).
pub(crate) type Hubs = HashMap<PathBuf, Arc<McpHub>>;
