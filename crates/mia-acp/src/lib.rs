//! `mia-code acp`: mia-code as an Agent Client Protocol agent over stdio
//! (docs/editors.md), on the official SDK `agent-client-protocol` (v1).
//!
//! A thin front end over [`mia_core::Runtime`], like `mia-server`:
//! `session/new` creates an ordinary session (the ACP `sessionId` is the
//! mia-code session id, so it shows in the desktop app, forks, undoes and
//! shares like any other), `session/load` replays a stored one,
//! `session/prompt` sends a user message and streams the turn's Events as
//! `session/update`s, asks become `session/request_permission`,
//! `session/cancel` stops the turn, `session/set_mode` switches between
//! the primary agents (plan, build, ...). The client's MCP servers join the
//! session's project as the person's own; when the client offers `fs/*`,
//! the write and edit tools go through the editor's buffers.

mod editor;
mod translate;
mod turn;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, CurrentModeUpdate, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, SessionMode, SessionModeState, SessionNotification,
    SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{self, ConnectionTo};
use agent_client_protocol::{
    Agent, Client, Error, Stdio, on_receive_notification, on_receive_request,
};
use mia_core::{ErrorKind, OpResult, Runtime};
use mia_protocol::{Op, SessionId};

pub use translate::{prompt_text, reply_for, stop_reason, tool_kind};

/// Why `mia-code acp` stopped.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    #[error("the ACP connection failed: {0}")]
    Connection(String),
}

/// The connection's state: the runtime and what the client offered.
struct Conn {
    runtime: Runtime,
    client: Mutex<ClientCapabilities>,
}

type Shared = Arc<Conn>;

/// A core error as a JSON-RPC error.
pub(crate) fn core_error(e: mia_core::CoreError) -> Error {
    let data = serde_json::json!(e.to_string());
    match e.kind() {
        ErrorKind::BadInput => Error::invalid_params().data(data),
        ErrorKind::NotFound => Error::new(-32002, "Resource not found").data(data),
        _ => Error::internal_error().data(data),
    }
}

fn session_id(id: &v1::schema::SessionId) -> Result<SessionId, Error> {
    id.0.parse::<SessionId>().map_err(|_| {
        Error::invalid_params().data(serde_json::json!(format!(
            "{} is not a mia-code session id",
            id.0
        )))
    })
}

/// The primary agents of `dir` as modes, `current` selected.
fn modes(
    runtime: &Runtime,
    dir: &std::path::Path,
    current: Option<&str>,
) -> Option<SessionModeState> {
    let agents = runtime.agents(dir).ok()?;
    let list: Vec<SessionMode> = agents
        .iter()
        .filter(|a| a.mode != mia_protocol::AgentModeView::Subagent)
        .map(|a| {
            SessionMode::new(a.name.clone(), a.name.clone()).description(a.description.clone())
        })
        .collect();
    let current = current
        .map(str::to_string)
        .or_else(|| list.first().map(|m| m.id.0.to_string()))?;
    Some(SessionModeState::new(current, list))
}

/// The client's MCP servers as config entries (run as the person's own).
fn mcp_servers(servers: &[McpServer]) -> BTreeMap<String, mia_config::McpServerConfig> {
    let mut out = BTreeMap::new();
    for s in servers {
        let (name, cfg) = match s {
            McpServer::Stdio(s) => (
                s.name.clone(),
                mia_config::McpServerConfig {
                    kind: Some(mia_config::McpKind::Stdio),
                    command: Some(s.command.display().to_string()),
                    args: Some(s.args.clone()),
                    env: Some(
                        s.env
                            .iter()
                            .map(|e| (e.name.clone(), e.value.clone()))
                            .collect(),
                    ),
                    ..Default::default()
                },
            ),
            McpServer::Http(h) => (
                h.name.clone(),
                mia_config::McpServerConfig {
                    kind: Some(mia_config::McpKind::Http),
                    url: Some(h.url.clone()),
                    headers: Some(
                        h.headers
                            .iter()
                            .map(|e| (e.name.clone(), e.value.clone()))
                            .collect(),
                    ),
                    ..Default::default()
                },
            ),
            _ => continue,
        };
        out.insert(name, cfg);
    }
    out
}

impl Conn {
    /// The client's MCP servers and, when it offers both, its files.
    async fn equip(
        &self,
        cx: &ConnectionTo<Client>,
        id: SessionId,
        acp: &v1::schema::SessionId,
        cwd: &std::path::Path,
        servers: &[McpServer],
    ) -> Result<(), Error> {
        let servers = mcp_servers(servers);
        if !servers.is_empty() {
            self.runtime
                .set_client_mcp_servers(cwd, servers)
                .map_err(core_error)?;
        }
        let fs = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .fs
            .clone();
        let files: Option<Arc<dyn mia_core::EditorFs>> = (fs.read_text_file && fs.write_text_file)
            .then(|| {
                Arc::new(editor::ClientFiles {
                    cx: cx.clone(),
                    session: acp.clone(),
                }) as Arc<dyn mia_core::EditorFs>
            });
        self.runtime
            .attach_editor(id, files)
            .await
            .map_err(core_error)
    }

    async fn new_session(
        &self,
        req: NewSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<NewSessionResponse, Error> {
        if !req.cwd.is_absolute() {
            return Err(
                Error::invalid_params().data(serde_json::json!("cwd must be an absolute path"))
            );
        }
        let session = match self
            .runtime
            .submit(Op::CreateSession {
                directory: req.cwd.display().to_string(),
                title: None,
                agent: None,
                model: None,
            })
            .await
            .map_err(core_error)?
        {
            OpResult::Session(s) => s,
            _ => return Err(Error::internal_error()),
        };
        let acp = v1::schema::SessionId::new(session.id.to_string());
        self.equip(cx, session.id, &acp, &req.cwd, &req.mcp_servers)
            .await?;
        let mut resp = NewSessionResponse::new(acp);
        if let Some(m) = modes(&self.runtime, &req.cwd, session.agent.as_deref()) {
            resp = resp.modes(m);
        }
        Ok(resp)
    }

    async fn load_session(
        &self,
        req: LoadSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<LoadSessionResponse, Error> {
        let id = session_id(&req.session_id)?;
        let detail = self.runtime.session_detail(id).await.map_err(core_error)?;
        let dir = PathBuf::from(&detail.session.directory);
        for update in translate::replay(&detail.messages, &dir) {
            cx.send_notification(SessionNotification::new(req.session_id.clone(), update))?;
        }
        self.equip(cx, id, &req.session_id, &dir, &req.mcp_servers)
            .await?;
        let mut resp = LoadSessionResponse::new();
        if let Some(m) = modes(&self.runtime, &dir, detail.session.agent.as_deref()) {
            resp = resp.modes(m);
        }
        Ok(resp)
    }

    async fn set_mode(
        &self,
        req: SetSessionModeRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<SetSessionModeResponse, Error> {
        let id = session_id(&req.session_id)?;
        self.runtime
            .submit(Op::SwitchAgent {
                session_id: id,
                agent: req.mode_id.0.to_string(),
            })
            .await
            .map_err(core_error)?;
        cx.send_notification(SessionNotification::new(
            req.session_id.clone(),
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(req.mode_id)),
        ))?;
        Ok(SetSessionModeResponse::new())
    }
}

fn initialize(conn: &Conn, req: InitializeRequest) -> InitializeResponse {
    *conn
        .client
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = req.client_capabilities.clone();
    InitializeResponse::new(req.protocol_version)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                .mcp_capabilities(McpCapabilities::new().http(true)),
        )
        .auth_methods(vec![])
        .agent_info(Implementation::new("mia-code", env!("CARGO_PKG_VERSION")))
}

/// Serve ACP on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(runtime: Runtime) -> Result<(), AcpError> {
    let conn: Shared = Arc::new(Conn {
        runtime,
        client: Mutex::new(ClientCapabilities::default()),
    });
    let c = |conn: &Shared| conn.clone();
    Agent
        .v1()
        .name("mia-code")
        .on_receive_request(
            {
                let conn = c(&conn);
                async move |req: InitializeRequest,
                            responder: v1::Responder<InitializeResponse>,
                            _cx: ConnectionTo<Client>| {
                    responder.respond(initialize(&conn, req))
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let conn = c(&conn);
                async move |req: NewSessionRequest,
                            responder: v1::Responder<NewSessionResponse>,
                            cx: ConnectionTo<Client>| {
                    responder.respond_with_result(conn.new_session(req, &cx).await)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let conn = c(&conn);
                async move |req: LoadSessionRequest,
                            responder: v1::Responder<LoadSessionResponse>,
                            cx: ConnectionTo<Client>| {
                    responder.respond_with_result(conn.load_session(req, &cx).await)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let conn = c(&conn);
                async move |req: SetSessionModeRequest,
                            responder: v1::Responder<SetSessionModeResponse>,
                            cx: ConnectionTo<Client>| {
                    responder.respond_with_result(conn.set_mode(req, &cx).await)
                }
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            {
                let conn = c(&conn);
                async move |n: CancelNotification, _cx: ConnectionTo<Client>| {
                    if let Ok(id) = session_id(&n.session_id)
                        && let Err(e) = conn.runtime.submit(Op::Cancel { session_id: id }).await
                    {
                        tracing::warn!(error = %e, "acp: session/cancel");
                    }
                    Ok(())
                }
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            {
                let conn = c(&conn);
                async move |req: PromptRequest,
                            responder: v1::Responder<PromptResponse>,
                            cx: ConnectionTo<Client>| {
                    prompt(conn.clone(), req, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| AcpError::Connection(e.message))
}

/// `session/prompt`: the turn runs in a task of the connection, so
/// `session/cancel` and other requests are read while it runs.
fn prompt(
    conn: Shared,
    req: PromptRequest,
    responder: v1::Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    let id = match session_id(&req.session_id) {
        Ok(id) => id,
        Err(e) => return responder.respond_with_error(e),
    };
    let text = translate::prompt_text(&req.prompt);
    if text.trim().is_empty() {
        return responder.respond_with_error(
            Error::invalid_params().data(serde_json::json!("the prompt is empty")),
        );
    }
    // Subscribed before the message is sent: no Event of the turn is missed.
    let events = conn.runtime.subscribe();
    let task_cx = cx.clone();
    cx.spawn(async move {
        let cwd = match conn.runtime.session_detail(id).await {
            Ok(d) => PathBuf::from(d.session.directory),
            Err(e) => {
                let _ = responder.respond_with_error(core_error(e));
                return Ok(());
            }
        };
        let p = turn::Prompt {
            runtime: conn.runtime.clone(),
            cx: task_cx,
            session: id,
            acp_session: req.session_id.clone(),
            cwd,
        };
        let result = p.run(events, text).await.map(PromptResponse::new);
        // An error goes to this prompt; the connection lives on.
        if let Err(e) = responder.respond_with_result(result) {
            tracing::warn!(error = %e.message, "acp: the prompt's answer was not sent");
        }
        Ok(())
    })
}
