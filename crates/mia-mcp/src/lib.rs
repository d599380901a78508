//! A client for MCP servers (the Model Context Protocol), over the
//! official Rust SDK (`rmcp`): stdio servers started as child processes and
//! streamable-HTTP servers. A [`Connection`] lists the server's tools
//! (refreshed after a `notifications/tools/list_changed`), calls them with a
//! timeout and the caller's cancellation, and keeps the tail of a stdio
//! server's stderr (also logged) for error reports.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientInfo, ContentBlock, Implementation,
    ResourceContents,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// The whole environment of the process (the caller scrubs it).
        env: BTreeMap<String, String>,
        cwd: PathBuf,
        /// The OS sandbox it runs in (a project's own servers), or none.
        confine: Option<Box<mia_sandbox::Confinement>>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `stdio: python server.py` / `http: https://…`, for status lines.
    pub fn describe(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => {
                let mut s = format!("stdio: {command}");
                for a in args {
                    s.push(' ');
                    s.push_str(a);
                }
                s
            }
            Transport::Http { url, .. } => format!("http: {url}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start `{command}`: {message}")]
    Spawn { command: String, message: String },
    #[error("{0}")]
    Header(String),
    #[error("the MCP handshake failed: {message}{}", stderr_hint(.stderr))]
    Handshake {
        message: String,
        stderr: Vec<String>,
    },
    #[error("the server did not answer within {0:?}")]
    Timeout(Duration),
    #[error("cancelled")]
    Cancelled,
    #[error("{message}{}", stderr_hint(.stderr))]
    Call {
        message: String,
        stderr: Vec<String>,
    },
}

fn stderr_hint(lines: &[String]) -> String {
    match lines.last() {
        Some(l) => format!(" (its stderr ends: {l})"),
        None => String::new(),
    }
}

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// One piece of a tool's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
    Image {
        media_type: String,
        data: String,
    },
    Audio {
        media_type: String,
        bytes: usize,
    },
    ResourceLink {
        uri: String,
        name: String,
        description: Option<String>,
        mime_type: Option<String>,
    },
    Resource {
        uri: String,
        mime_type: Option<String>,
        text: Option<String>,
    },
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    pub content: Vec<Content>,
    pub structured: Option<Value>,
    pub is_error: bool,
}

impl CallOutput {
    /// The result as text for the model: text parts as they are, the rest
    /// described in one line each.
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        for c in &self.content {
            out.push(match c {
                Content::Text(t) => t.clone(),
                Content::Image { media_type, data } => format!(
                    "[image {media_type}, {} bytes: shown to the user]",
                    data.len() * 3 / 4
                ),
                Content::Audio { media_type, bytes } => {
                    format!("[audio {media_type}, {bytes} bytes]")
                }
                Content::ResourceLink {
                    uri,
                    name,
                    description,
                    ..
                } => match description {
                    Some(d) => format!("[resource link {name}: {uri} — {d}]"),
                    None => format!("[resource link {name}: {uri}]"),
                },
                Content::Resource { uri, text, .. } => match text {
                    Some(t) => format!("[resource {uri}]\n{t}"),
                    None => format!("[resource {uri} (binary)]"),
                },
            });
        }
        if out.is_empty()
            && let Some(s) = &self.structured
        {
            out.push(s.to_string());
        }
        out.join("\n")
    }
}

/// Receives the server's notifications.
#[derive(Clone)]
struct Handler {
    tools_changed: Arc<AtomicBool>,
    info: ClientInfo,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientInfo {
        self.info.clone()
    }
}

/// The last lines a server wrote to stderr.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    const KEEP: usize = 50;

    fn push(&self, line: String) {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() == Self::KEEP {
            q.pop_front();
        }
        q.push_back(line);
    }

    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// A live connection to one server.
pub struct Connection {
    name: String,
    service: RunningService<RoleClient, Handler>,
    tools_changed: Arc<AtomicBool>,
    tools: tokio::sync::Mutex<Option<Vec<McpTool>>>,
    stderr: StderrTail,
    /// The server's sandbox (its proxy, its placeholders) while it runs.
    _running: Option<std::sync::Mutex<mia_sandbox::Running>>,
}

impl Connection {
    /// Start or reach the server and do the MCP handshake (within `timeout`).
    pub async fn connect(
        name: &str,
        transport: &Transport,
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let tools_changed = Arc::new(AtomicBool::new(false));
        let handler = Handler {
            tools_changed: tools_changed.clone(),
            info: ClientInfo::new(
                ClientCapabilities::default(),
                Implementation::new("mia-code", env!("CARGO_PKG_VERSION")),
            ),
        };
        let stderr = StderrTail::default();
        let mut running = None;
        let service = match transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
                confine,
            } => {
                let spawn_err = |message: String| McpError::Spawn {
                    command: command.clone(),
                    message,
                };
                let (mut cmd, guard) = match confine {
                    Some(c) => {
                        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                        let p = c
                            .prepare(command, &argv)
                            .map_err(|e| spawn_err(e.to_string()))?;
                        (tokio::process::Command::from(p.command), Some(p.guard))
                    }
                    None => {
                        let mut cmd = tokio::process::Command::new(command);
                        cmd.args(args);
                        (cmd, None)
                    }
                };
                cmd.env_clear().envs(env);
                // The sandbox's own variables (its proxy, its /tmp) after the server's.
                if let Some(g) = &guard {
                    cmd.envs(
                        g.sandbox_env()
                            .iter()
                            .map(|(k, v)| (k.as_str(), v.as_str())),
                    );
                }
                cmd.current_dir(cwd).kill_on_drop(true);
                let (proc, err) = rmcp::transport::TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| spawn_err(e.to_string()))?;
                if let (Some(c), Some(g)) = (confine, guard) {
                    running = Some(std::sync::Mutex::new(c.started(g, proc.id())));
                }
                if let Some(err) = err {
                    let tail = stderr.clone();
                    let server = name.to_string();
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(err).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::info!(target: "mia_mcp::stderr", server = %server, "{line}");
                            tail.push(line);
                        }
                    });
                }
                handshake(handler.serve(proc), timeout, &stderr).await?
            }
            Transport::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| McpError::Header(format!("header name {k:?}: {e}")))?;
                    let value = http::HeaderValue::from_str(v)
                        .map_err(|e| McpError::Header(format!("header {k}: {e}")))?;
                    custom.insert(name, value);
                }
                let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                let t = rmcp::transport::StreamableHttpClientTransport::from_config(config);
                handshake(handler.serve(t), timeout, &stderr).await?
            }
        };
        Ok(Self {
            name: name.to_string(),
            service,
            tools_changed,
            tools: tokio::sync::Mutex::new(None),
            stderr,
            _running: running,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lines()
    }

    /// The server's `name` and `version` from the handshake.
    pub fn server_version(&self) -> Option<String> {
        self.service
            .peer_info()
            .and_then(|i| i.server_info.clone())
            .map(|s| format!("{} {}", s.name, s.version))
    }

    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// The tools, listed again after the server said they changed.
    pub async fn tools(&self, timeout: Duration) -> Result<Vec<McpTool>, McpError> {
        let mut cached = self.tools.lock().await;
        let changed = self.tools_changed.swap(false, Ordering::SeqCst);
        if let Some(t) = cached.as_ref()
            && !changed
        {
            return Ok(t.clone());
        }
        let listed = tokio::time::timeout(timeout, self.service.list_all_tools())
            .await
            .map_err(|_| McpError::Timeout(timeout))?
            .map_err(|e| McpError::Call {
                message: format!("listing tools failed: {e}"),
                stderr: self.stderr(),
            })?;
        let tools: Vec<McpTool> = listed
            .into_iter()
            .map(|t| McpTool {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect();
        *cached = Some(tools.clone());
        Ok(tools)
    }

    /// Whether the server announced a changed tool list not yet fetched.
    pub fn tools_changed(&self) -> bool {
        self.tools_changed.load(Ordering::SeqCst)
    }

    /// Call `tool`; a cancel or the timeout stops waiting (and tells the
    /// server, through rmcp's request cancellation).
    pub async fn call(
        &self,
        tool: &str,
        args: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<CallOutput, McpError> {
        let arguments = match args {
            Value::Object(m) => Some(m),
            Value::Null => None,
            other => {
                return Err(McpError::Call {
                    message: format!("the arguments must be a JSON object, not {other}"),
                    stderr: Vec::new(),
                });
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(a) = arguments {
            params = params.with_arguments(a);
        }
        let call = self.service.call_tool(params);
        let result = tokio::select! {
            r = tokio::time::timeout(timeout, call) => r.map_err(|_| McpError::Timeout(timeout))?,
            _ = cancel.cancelled() => return Err(McpError::Cancelled),
        };
        let result = result.map_err(|e| McpError::Call {
            message: e.to_string(),
            stderr: self.stderr(),
        })?;
        let mut content = Vec::new();
        for block in result.content {
            content.push(match block {
                ContentBlock::Text(t) => Content::Text(t.text),
                ContentBlock::Image(i) => Content::Image {
                    media_type: i.mime_type,
                    data: i.data,
                },
                ContentBlock::Audio(a) => Content::Audio {
                    media_type: a.mime_type,
                    bytes: a.data.len() * 3 / 4,
                },
                ContentBlock::ResourceLink(r) => Content::ResourceLink {
                    uri: r.uri,
                    name: r.name,
                    description: r.description,
                    mime_type: r.mime_type,
                },
                ContentBlock::Resource(r) => match r.resource {
                    ResourceContents::TextResourceContents {
                        uri,
                        mime_type,
                        text,
                        ..
                    } => Content::Resource {
                        uri,
                        mime_type,
                        text: Some(text),
                    },
                    ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                        Content::Resource {
                            uri,
                            mime_type,
                            text: None,
                        }
                    }
                    #[allow(unreachable_patterns)]
                    _ => Content::Text("[a resource of an unknown kind]".into()),
                },
                #[allow(unreachable_patterns)]
                _ => Content::Text("[content of a kind this client does not know]".into()),
            });
        }
        Ok(CallOutput {
            content,
            structured: result.structured_content,
            is_error: result.is_error.unwrap_or(false),
        })
    }

    /// Close the connection (a stdio server's process is stopped).
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

async fn handshake<F, T, E>(fut: F, timeout: Duration, stderr: &StderrTail) -> Result<T, McpError>
where
    F: std::future::Future<Output = Result<T, E>>,
    E: std::fmt::Display,
{
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(McpError::Handshake {
            message: e.to_string(),
            stderr: stderr.lines(),
        }),
        Err(_) => Err(McpError::Timeout(timeout)),
    }
}
