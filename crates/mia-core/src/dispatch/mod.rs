//! One tool call, as a pipeline of named stages: resolve the tool and
//! plan the call → judge it ([`judge`]: rules, plugins, a person) →
//! snapshot what it may change → run it → record the result
//! ([`execute`]). `Some(end)` from a stage stops the turn.

mod execute;
mod gate;
mod judge;
pub(crate) mod network;

use std::sync::Arc;

use mia_permission::Checker;
use mia_protocol::{Event, MessageId, PartContent, PermissionReplyKind, SessionId, TurnEnd};
use mia_tools::ToolContext;
use tokio::sync::oneshot;
use tracing::Instrument as _;

use crate::CoreError;
use crate::runtime::Runtime;
use crate::session::SessionState;

/// The same tool call with identical arguments this many times in a row is a doom loop.
pub(crate) const DOOM_LOOP: usize = 3;

/// Where a call happens: its session, the step's message, the agent, and
/// the context its tool runs with.
pub(crate) struct CallSite<'a> {
    pub(crate) state: &'a Arc<SessionState>,
    pub(crate) session_id: SessionId,
    pub(crate) message_id: MessageId,
    pub(crate) agent: &'a str,
    pub(crate) call: &'a mia_providers::ToolCall,
    pub(crate) ctx: &'a ToolContext,
    /// The hooks that ran for the call, for its card.
    pub(crate) hook_runs: std::sync::Mutex<Vec<mia_protocol::HookRun>>,
}

/// What a step lends each of its calls.
#[derive(Clone, Copy)]
pub(crate) struct CallEnv<'a> {
    pub(crate) checker: &'a Checker<'a>,
    pub(crate) snapshot_config: Option<&'a mia_snapshot::SnapshotConfig>,
    pub(crate) plugins: &'a crate::plugins::TurnPlugins,
    pub(crate) hooks: &'a crate::hooks::Hooks,
    pub(crate) config: &'a mia_config::Config,
}

/// A call's result as recorded.
pub(crate) struct Outcome {
    pub(crate) output: String,
    pub(crate) is_error: bool,
    pub(crate) duration_ms: u64,
}

impl Outcome {
    /// A call that did not run: `output` says why, as an error.
    pub(crate) fn refused(output: String) -> Self {
        Self {
            output,
            is_error: true,
            duration_ms: 0,
        }
    }
}

impl Runtime {
    /// Resolve → judge → snapshot → run → record, for one call. `Some(end)`
    /// stops the turn.
    pub(crate) async fn run_tool(
        &self,
        site: &CallSite<'_>,
        env: CallEnv<'_>,
        doom_loop: bool,
    ) -> Result<Option<TurnEnd>, CoreError> {
        let span = tracing::info_span!(
            "tool_call",
            session = %site.session_id,
            tool = %site.call.name,
            call = %site.call.id
        );
        self.run_tool_stages(site, env, doom_loop)
            .instrument(span)
            .await
    }

    async fn run_tool_stages(
        &self,
        site: &CallSite<'_>,
        env: CallEnv<'_>,
        doom_loop: bool,
    ) -> Result<Option<TurnEnd>, CoreError> {
        let plan = match self
            .inner
            .tools
            .plan(&site.call.name, &site.call.input, site.ctx)
        {
            Ok(p) => p,
            Err(e) => {
                self.record(
                    site,
                    Outcome::refused(e.to_string()),
                    Vec::new(),
                    None,
                    None,
                )
                .await?;
                return Ok(None);
            }
        };
        let cleared = match self.judge_call(site, env, &plan, doom_loop).await? {
            judge::Judged::Settled(end) => return Ok(end),
            judge::Judged::Cleared(cleared) => cleared,
        };
        self.execute(site, env, &plan, cleared).await
    }

    /// A call Stop kept from running: its card says so, and the turn ends.
    pub(crate) async fn record_stopped(
        &self,
        site: &CallSite<'_>,
        before: Vec<PartContent>,
        permission: Option<mia_protocol::PermissionNote>,
    ) -> Result<Option<TurnEnd>, CoreError> {
        self.record(
            site,
            Outcome::refused("Stopped before it ran.".into()),
            before,
            permission,
            None,
        )
        .await?;
        Ok(Some(TurnEnd::Cancelled))
    }

    /// Store `before` (e.g. the snapshot part) and the tool result in one
    /// commit, with how the permission was settled and how the OS sandbox
    /// confined the call (shell commands).
    pub(crate) async fn record(
        &self,
        site: &CallSite<'_>,
        outcome: Outcome,
        mut before: Vec<PartContent>,
        permission: Option<mia_protocol::PermissionNote>,
        sandbox: Option<Box<mia_protocol::SandboxNote>>,
    ) -> Result<(), CoreError> {
        let call = site.call;
        let Outcome {
            output,
            is_error,
            duration_ms,
        } = outcome;
        before.push(PartContent::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            output: output.clone(),
            is_error,
            duration_ms: Some(duration_ms),
            permission,
            sandbox: sandbox.clone(),
            hooks: std::mem::take(
                &mut *site
                    .hook_runs
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            ),
        });
        self.append(site.session_id, site.message_id, before)
            .await?;
        self.emit(Event::ToolResult {
            session_id: site.session_id,
            message_id: site.message_id,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            output,
            is_error,
            duration_ms,
            sandbox,
        });
        Ok(())
    }

    /// Keep what an answer said for later: "always" rules for the session,
    /// "always for this project" approvals in the store.
    pub(crate) async fn keep_answer(
        &self,
        state: &Arc<SessionState>,
        agent: &str,
        session_id: SessionId,
        outcome: &mia_permission::ReplyOutcome,
    ) -> Result<(), CoreError> {
        state.with(|l| {
            l.session_rules
                .entry(agent.to_string())
                .or_default()
                .add(&outcome.session_rules);
        });
        if !outcome.project_rules.is_empty() {
            let rules = outcome.project_rules.clone();
            let project = crate::worktrees::project_key(&state.directory);
            let session = session_id.to_string();
            let asked = agent.to_string();
            self.inner
                .store
                .call(move |db| db.add_project_approvals(&project, &asked, &rules, Some(&session)))
                .await?;
            state.with(|l| {
                l.new_approvals.extend(
                    outcome
                        .project_rules
                        .iter()
                        .map(|r| (agent.to_string(), r.clone())),
                );
            });
        }
        Ok(())
    }

    /// Every check is an audit record: a tracing event (deny/ask at warn,
    /// allow at debug) and a row in the store.
    pub(crate) async fn audit(
        &self,
        session_id: SessionId,
        agent: &str,
        decisions: &[mia_permission::Decision],
    ) {
        let now = mia_protocol::now_ms();
        let session = session_id.to_string();
        let rows: Vec<mia_protocol::AuditRecord> = decisions
            .iter()
            .map(|d| {
                use mia_permission::Audit as _;
                let r = mia_protocol::AuditRecord::new(d, agent, Some(&session), now);
                r.emit();
                r
            })
            .collect();
        if let Err(e) = self
            .inner
            .store
            .call(move |db| db.record_permission_checks(&rows))
            .await
        {
            tracing::warn!(session = %session_id, error = %e, "could not store permission audit rows");
        }
    }
}

/// A permission ask waiting for its answer: the request (with the replies
/// offered) and where to send the one given.
pub(crate) type PendingAsk = (
    mia_protocol::PermissionRequest,
    oneshot::Sender<PermissionReplyKind>,
);

/// The option a reply is, as offered in `PermissionRequest::options`.
pub(crate) fn reply_option(reply: &PermissionReplyKind) -> mia_protocol::ReplyOption {
    use mia_protocol::ReplyOption as O;
    match reply {
        PermissionReplyKind::Once => O::Once,
        PermissionReplyKind::Session => O::Session,
        PermissionReplyKind::Project => O::Project,
        PermissionReplyKind::Deny => O::Deny,
        PermissionReplyKind::Never => O::Never,
        PermissionReplyKind::RejectWithFeedback { .. } => O::RejectWithFeedback,
    }
}
