//! `GET /api/mcp?directory=`: a project's MCP servers, their state and
//! tools (servers that may run are started first); thin over
//! `mia_core::Runtime::mcp_servers`.

use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;

use crate::{AppState, reply};

pub(crate) fn routes() -> axum::Router<AppState> {
    axum::Router::new().route("/api/mcp", axum::routing::get(servers))
}

#[derive(Deserialize)]
struct DirQuery {
    directory: String,
}

async fn servers(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    reply(s.runtime.mcp_servers(q.directory.into()).await)
}

pub(crate) fn plugin_routes() -> axum::Router<AppState> {
    axum::Router::new().route("/api/plugins", axum::routing::get(plugins))
}

/// `GET /api/plugins?directory=`: the project's plugins and their state.
async fn plugins(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    reply(s.runtime.plugins(q.directory.into(), false).await)
}
