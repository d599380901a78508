//! Agent and model routes (specs 013, 016): models to pick from, `/model`,
//! `/cost`, and generating an agent (propose, refine, save); thin over
//! `mia_core::Runtime`.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_core::OpResult;
use mia_protocol::{AgentProposal, Op};
use serde::Deserialize;
use serde_json::json;

use crate::{AppState, BadRequest, core_error, parse_id, reply};

pub(crate) fn routes() -> axum::Router<AppState> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/api/models", get(models))
        .route("/api/sessions/{id}/model", post(set_model))
        .route("/api/sessions/{id}/cost", get(cost))
        .route("/api/agents/propose", post(propose))
        .route("/api/agents/save", post(save))
}

#[derive(Deserialize)]
struct DirQuery {
    directory: Option<String>,
}

async fn models(State(s): State<AppState>, Query(q): Query<DirQuery>) -> Response {
    let rt = s.runtime.clone();
    let dir = q
        .directory
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from);
    reply(
        tokio::task::spawn_blocking(move || rt.models(dir.as_deref()))
            .await
            .unwrap_or_else(|e| Err(mia_core::CoreError::Internal(e.to_string()))),
    )
}

#[derive(Deserialize)]
struct ModelBody {
    model: Option<String>,
    /// The agent it is for (default: the session's current agent).
    agent: Option<String>,
}

async fn set_model(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Json(b): Json<ModelBody>,
) -> Response {
    let session_id = match parse_id(&id) {
        Ok(id) => id,
        Err(r) => return r.into_response(),
    };
    match s
        .runtime
        .submit(Op::SetModel {
            session_id,
            agent: b.agent.filter(|a| !a.is_empty()),
            model: b.model.filter(|m| !m.is_empty()),
        })
        .await
    {
        Ok(OpResult::Session(session)) => Json(session).into_response(),
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => core_error(e),
    }
}

/// `/cost`: per agent and model, the session's subagents included.
async fn cost(State(s): State<AppState>, Path(id): Path<String>) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.cost(id).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
struct ProposeBody {
    directory: String,
    #[serde(default)]
    description: String,
    /// The agent creating it (default: the project's default agent).
    agent: Option<String>,
    /// With `refine`: the proposal to change.
    previous: Option<AgentProposal>,
    refine: Option<String>,
}

async fn propose(State(s): State<AppState>, Json(b): Json<ProposeBody>) -> Response {
    if b.description.trim().is_empty() && b.refine.is_none() {
        return BadRequest(
            "say what the agent should do (`description`), or send `previous` with `refine`".into(),
        )
        .into_response();
    }
    if b.refine.is_some() && b.previous.is_none() {
        return BadRequest("`refine` needs the `previous` proposal".into()).into_response();
    }
    let dir = std::path::PathBuf::from(&b.directory);
    reply(
        s.runtime
            .propose_agent(
                &dir,
                &b.description,
                b.agent.as_deref(),
                b.previous,
                b.refine.as_deref(),
            )
            .await,
    )
}

#[derive(Deserialize)]
struct SaveBody {
    directory: String,
    proposal: AgentProposal,
    /// `project` (default) or `global`.
    #[serde(default)]
    to: Option<String>,
    agent: Option<String>,
}

async fn save(State(s): State<AppState>, Json(b): Json<SaveBody>) -> Response {
    let dir = std::path::PathBuf::from(&b.directory);
    let to = match b.to.as_deref() {
        None | Some("project") => mia_core::agentgen::SaveTo::Project,
        Some("global") => mia_core::agentgen::SaveTo::Global,
        Some(other) => {
            return BadRequest(format!("`to` is `project` or `global`, not `{other}`"))
                .into_response();
        }
    };
    // Checked again: what is saved is what the rules allow, whatever the client sent.
    let proposal = match s
        .runtime
        .check_proposal(&dir, b.agent.as_deref(), b.proposal)
        .await
    {
        Ok(p) => p,
        Err(e) => return core_error(e),
    };
    match s.runtime.save_agent(&dir, &proposal, to) {
        Ok(path) => (
            StatusCode::CREATED,
            Json(json!({"path": path.display().to_string(), "proposal": proposal})),
        )
            .into_response(),
        Err(e) => core_error(e),
    }
}
