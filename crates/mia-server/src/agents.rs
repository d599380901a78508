//! Agent and model routes (specs 013, 016): models to pick from, `/model`,
//! `/cost`, and generating an agent (propose, refine, save); thin over
//! `mia_core::Runtime`.

use aide::axum::ApiRouter;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_core::OpResult;
use mia_protocol::{AgentProposal, Op};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::openapi::Answers as _;
use crate::{AppState, BadRequest, SessionPath, core_error, parse_id, reply};

/// The model and agent routes (the caller adds authentication).
pub(crate) fn routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{get_with, post_with};
    use mia_protocol::{CostView, ModelChoice, Session};
    ApiRouter::new()
        .api_route(
            "/api/models",
            get_with(models, |op| {
                op.summary("Models to pick from: the catalog's, for configured providers (context window, prices)")
                    .json::<200, Vec<ModelChoice>>("The models")
            }),
        )
        .api_route(
            "/api/sessions/{id}/model",
            post_with(set_model, |op| {
                op.summary("/model: the session's model from now on (Op set_model); no model: back to the defaults")
                    .json::<200, Session>("The session")
                    .error::<400>("Not a model reference")
            }),
        )
        .api_route(
            "/api/sessions/{id}/cost",
            get_with(cost, |op| {
                op.summary("What the session cost per agent and model, its subagents' sessions included")
                    .json::<200, CostView>("The cost")
            }),
        )
        .api_route(
            "/api/agents/propose",
            post_with(propose, |op| {
                op.summary("Generate an agent (spec 013) from a description, or refine a previous proposal: a validated AgentProposal")
                    .json::<200, AgentProposal>("The proposal")
                    .error::<400>("Broader than the creating agent, or unusable")
            }),
        )
        .api_route(
            "/api/agents/save",
            post_with(save, |op| {
                op.summary("Save a proposal (checked again) as a markdown agent file")
                    .json::<201, crate::openapi::shapes::SavedAgent>("Saved")
                    .error::<409>("The file exists")
            }),
        )
        .with_path_items(|item| item.tag("agents"))
}

#[derive(Deserialize, JsonSchema)]
struct DirQuery {
    /// The project folder (its providers and models too).
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

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "SetModel")]
struct ModelBody {
    /// `provider/model` (absent or empty: back to the defaults).
    model: Option<String>,
    /// The agent it is for (default: the session's current agent).
    agent: Option<String>,
}

async fn set_model(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
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
async fn cost(State(s): State<AppState>, Path(SessionPath { id }): Path<SessionPath>) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(s.runtime.cost(id).await),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "ProposeAgent")]
struct ProposeBody {
    /// The project folder.
    directory: String,
    /// What the agent should do.
    #[serde(default)]
    description: String,
    /// The agent creating it (default: the project's default agent).
    agent: Option<String>,
    /// With `refine`: the proposal to change.
    previous: Option<AgentProposal>,
    /// With `previous`: what to change.
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

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "SaveAgent")]
struct SaveBody {
    /// The project folder.
    directory: String,
    proposal: AgentProposal,
    /// `project` (default) or `global`.
    #[serde(default)]
    to: Option<String>,
    /// The agent creating it (default: the project's default agent).
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
