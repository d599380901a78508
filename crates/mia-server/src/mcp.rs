//! `GET /api/mcp?directory=`: a project's MCP servers, their state and
//! tools (servers that may run are started first), `GET /api/plugins` and
//! `GET /api/commands`; thin over `mia_core::Runtime::{mcp_servers, plugins, commands}`.

use aide::axum::ApiRouter;
use axum::extract::{Query, State};
use axum::response::Response;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::openapi::Answers as _;
use crate::{AppState, reply};

/// The MCP server and plugin routes (the caller adds authentication).
pub(crate) fn routes() -> ApiRouter<AppState> {
    use aide::axum::routing::get_with;
    ApiRouter::new()
        .api_route(
            "/api/mcp",
            get_with(servers, |op| {
                op.summary("The project's MCP servers (config `mcp` and .mcp.json): state, tools, errors; servers that may run are started first")
                    .json::<200, Vec<mia_protocol::McpServerView>>("The servers")
            }),
        )
        .api_route(
            "/api/plugins",
            get_with(plugins, |op| {
                op.summary("The project's plugins (config `plugin`): state, version, tools, hooks, errors; what is missing is installed and started first")
                    .json::<200, Vec<mia_protocol::PluginView>>("The plugins")
            }),
        )
        .api_route(
            "/api/commands",
            get_with(commands, |op| {
                op.summary("The custom slash commands of the project and yours, in precedence order; a file that is not used has its error")
                    .json::<200, mia_protocol::CommandList>("The commands")
            }),
        )
        .api_route(
            "/api/trust",
            get_with(trust, |op| {
                op.summary("Whether the project's workspace is trusted, and its hooks: how many, and whether they are the approved set")
                    .json::<200, mia_protocol::TrustView>("The project's trust")
            })
            .post_with(set_trust, |op| {
                op.summary("Trust the workspace (approving its hooks as they are now) or withdraw trust")
                    .json::<200, mia_protocol::TrustView>("The project's trust after the change")
            }),
        )
        .with_path_items(|item| item.tag("extensions"))
}

#[derive(Deserialize, JsonSchema)]
struct DirQuery {
    /// The project folder.
    directory: String,
}

async fn servers(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    reply(s.runtime.mcp_servers(q.directory.into()).await)
}

/// `GET /api/plugins?directory=`: the project's plugins and their state.
async fn plugins(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    reply(s.runtime.plugins(q.directory.into(), false).await)
}

/// `GET /api/commands?directory=`: the custom slash commands.
async fn commands(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    reply(s.runtime.commands(q.directory.into()).await)
}

/// `GET /api/trust?directory=`: the workspace's trust and hooks.
async fn trust(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    reply(
        s.runtime
            .project_trust(std::path::Path::new(&q.directory))
            .await,
    )
}

/// `POST /api/trust`: trust (approving the hooks as they are) or untrust.
async fn set_trust(
    State(s): State<AppState>,
    axum::Json(body): axum::Json<mia_protocol::TrustUpdate>,
) -> Response {
    let dir = std::path::PathBuf::from(&body.directory);
    let result = match s.runtime.set_workspace_trust(&dir, body.trusted).await {
        Ok(_) => s.runtime.project_trust(&dir).await,
        Err(e) => Err(e),
    };
    reply(result)
}
