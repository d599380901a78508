//! Share routes (spec 022): preview, publish or update, revoke, "My
//! shares"; thin over `mia_core::Runtime::{share_preview, share_publish,
//! unshare_session, revoke_share, shares}`.

use aide::axum::ApiRouter;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_protocol::ShareRequest;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::openapi::Answers as _;
use crate::{AppState, SessionPath, core_error, parse_id, reply};

/// The share routes (the caller adds authentication).
pub(crate) fn routes() -> ApiRouter<AppState> {
    use aide::axum::routing::{delete_with, get_with, post_with};
    use mia_protocol::{SharePreview, ShareRecord};
    ApiRouter::new()
        .api_route(
            "/api/sessions/{id}/share/preview",
            post_with(preview, |op| {
                op.summary("Exactly the payload sharing would send (spec 022), redacted, with each redaction")
                    .optional_body()
                    .json::<200, SharePreview>("The preview")
                    .error::<400>("A bad share.redactPatterns entry or server URL")
            }),
        )
        .api_route(
            "/api/sessions/{id}/share",
            post_with(publish, |op| {
                op.summary("Share the session (or update its share) with the previewed payload")
                    .optional_body()
                    .json::<200, ShareRecord>("The share")
                    .error::<400>("Sharing disabled or no share server configured")
                    .error::<503>("The share server failed or refused")
            })
            .delete_with(unshare, |op| {
                op.summary("Revoke the session's share")
                    .empty::<204>("Revoked")
                    .error::<404>("The session is not shared")
            }),
        )
        .api_route(
            "/api/shares",
            get_with(list, |op| {
                op.summary("Every share this machine created (My shares), newest first")
                    .json::<200, Vec<ShareRecord>>("The shares")
            }),
        )
        .api_route(
            "/api/shares/{share}",
            delete_with(revoke, |op| {
                op.summary("Revoke a share by its id (also after its local session was deleted)")
                    .empty::<204>("Revoked")
                    .error::<404>("No such share")
            }),
        )
        .with_path_items(|item| item.tag("shares"))
}

/// The `{share}` of `/api/shares/{share}`.
#[derive(Deserialize, JsonSchema)]
struct SharePath {
    /// The share's id.
    share: String,
}

async fn preview(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    body: Option<Json<ShareRequest>>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(
            s.runtime
                .share_preview(id, body.map(|b| b.0).unwrap_or_default())
                .await,
        ),
        Err(r) => r.into_response(),
    }
}

async fn publish(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
    body: Option<Json<ShareRequest>>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => reply(
            s.runtime
                .share_publish(id, body.map(|b| b.0).unwrap_or_default())
                .await,
        ),
        Err(r) => r.into_response(),
    }
}

async fn unshare(
    State(s): State<AppState>,
    Path(SessionPath { id }): Path<SessionPath>,
) -> Response {
    match parse_id(&id) {
        Ok(id) => match s.runtime.unshare_session(id).await {
            Ok(_) => StatusCode::NO_CONTENT.into_response(),
            Err(e) => core_error(e),
        },
        Err(r) => r.into_response(),
    }
}

async fn list(State(s): State<AppState>) -> Response {
    reply(s.runtime.shares().await)
}

async fn revoke(State(s): State<AppState>, Path(SharePath { share }): Path<SharePath>) -> Response {
    match s.runtime.revoke_share(&share).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => core_error(e),
    }
}
