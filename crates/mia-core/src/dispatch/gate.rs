//! Where a tool call's permission asks go. A primary session's gate shows
//! the ask in that session and waits for `Op::PermissionReply`; a child
//! session (a subagent) will route its asks to its parent's view through a
//! gate of its own, so the person answering sees them where they work.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mia_protocol::{Event, PermissionReplyKind, PermissionRequest};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::runtime::Runtime;
use crate::session::SessionState;

/// The answer to an ask, or `None` when the call was cancelled first.
pub(crate) type Answer<'a> = Pin<Box<dyn Future<Output = Option<PermissionReplyKind>> + Send + 'a>>;

/// Asks a person (or whoever answers for this session) about one call.
pub(crate) trait PermissionGate: Send + Sync {
    fn ask<'a>(&'a self, request: PermissionRequest, cancel: &'a CancellationToken) -> Answer<'a>;
}

/// The gate of a session a person drives: the ask is pending in the
/// session (listed in its detail, answered by `Op::PermissionReply`) and
/// announced with `Event::PermissionAsked`.
pub(crate) struct SessionGate<'s> {
    pub(crate) runtime: &'s Runtime,
    pub(crate) state: &'s Arc<SessionState>,
}

impl PermissionGate for SessionGate<'_> {
    fn ask<'a>(&'a self, request: PermissionRequest, cancel: &'a CancellationToken) -> Answer<'a> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            let id = request.id.clone();
            self.state
                .with(|l| l.pending.insert(id.clone(), (request.clone(), tx)));
            self.runtime.notification_hooks(
                self.state.id,
                &self.state.directory,
                format!(
                    "mia-code needs your permission to use {} ({})",
                    crate::hooks::claude_tool_name(&request.tool),
                    request.target
                ),
            );
            self.runtime.emit(Event::PermissionAsked { request });
            let reply = tokio::select! {
                r = rx => r.ok(),
                () = cancel.cancelled() => None,
            };
            self.state.with(|l| l.pending.remove(&id));
            reply
        })
    }
}
