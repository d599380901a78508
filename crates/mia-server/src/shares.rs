//! Share routes (spec 022): preview, publish or update, revoke, "My
//! shares"; thin over `mia_core::Runtime::{share_preview, share_publish,
//! unshare_session, revoke_share, shares}`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mia_protocol::ShareRequest;

use crate::{AppState, core_error, parse_id, reply};

/// The share routes (the caller adds authentication).
pub(crate) fn routes() -> axum::Router<AppState> {
    use axum::routing::{delete, get, post};
    axum::Router::new()
        .route("/api/sessions/{id}/share/preview", post(preview))
        .route("/api/sessions/{id}/share", post(publish).delete(unshare))
        .route("/api/shares", get(list))
        .route("/api/shares/{share}", delete(revoke))
}

async fn preview(
    State(s): State<AppState>,
    Path(id): Path<String>,
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
    Path(id): Path<String>,
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

async fn unshare(State(s): State<AppState>, Path(id): Path<String>) -> Response {
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

async fn revoke(State(s): State<AppState>, Path(share): Path<String>) -> Response {
    match s.runtime.revoke_share(&share).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => core_error(e),
    }
}
