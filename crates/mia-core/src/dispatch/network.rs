//! The network gate of a session: where the proxy of a sandboxed command
//! asks about a host it has not decided yet.
//!
//! The host is judged as a `fetch` of `https://host/` (or the plain-HTTP
//! URL itself) by the step's policy: `fetch` rules apply to every program,
//! not only to the fetch tool. A rule's deny refuses; a rule's allow (or
//! `sandbox.network: "allow"`) lets it through; otherwise the person is
//! asked in the session ("`git` wants to reach github.com:443"), and a
//! headless run refuses. Answers "always" become `fetch` rules for that
//! host (never for a URL carrying a long opaque string), exactly as a
//! fetch ask's would.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use mia_permission::{Answerer, Checker, PathContext, PermissionAction, Policy, Request};
use mia_protocol::{Event, PermissionReplyKind, SessionId};
use mia_sandbox::NetworkAccess;
use mia_sandbox::proxy::{HostGate, HostRequest, Verdict};
use tokio_util::sync::CancellationToken;

use crate::permissions;
use crate::runtime::{Runtime, lock};
use crate::session::SessionState;

/// One step's gate: what it judges with, and the answers given in it.
pub(crate) struct StepNetGate {
    pub(crate) runtime: Runtime,
    pub(crate) state: Arc<SessionState>,
    pub(crate) session_id: SessionId,
    pub(crate) agent: String,
    pub(crate) policy: Arc<Policy>,
    pub(crate) ancestors: Vec<Arc<Policy>>,
    pub(crate) path_ctx: PathContext,
    pub(crate) answerer: Answerer,
    pub(crate) mode: NetworkAccess,
    pub(crate) cancel: CancellationToken,
    /// "Always"/"never" answers of this step by host: the step's compiled
    /// policy does not have them yet (the next step's will).
    pub(crate) answered: Mutex<HashMap<String, bool>>,
}

/// The gate for one tool call (its card gets the asks).
pub(crate) struct CallNetGate {
    pub(crate) step: Arc<StepNetGate>,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) input: serde_json::Value,
    /// Hosts the call's own ask allowed (its command named them).
    pub(crate) preapproved: Mutex<Vec<String>>,
}

impl StepNetGate {
    /// The gate a call's proxy uses.
    pub(crate) fn for_call(
        self: &Arc<Self>,
        call: &mia_providers::ToolCall,
    ) -> mia_tools::NetworkGate {
        mia_tools::NetworkGate(Arc::new(CallNetGate {
            step: self.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            input: call.input.clone(),
            preapproved: Mutex::default(),
        }))
    }

    /// The engine's verdict as if someone could answer (whether anyone can
    /// is decided after `sandbox.network: "allow"` had its say).
    fn check(&self, url: &str) -> mia_permission::Decision {
        let mut checker =
            Checker::new(&self.policy, &self.path_ctx).with_answerer(Answerer::Person);
        for p in &self.ancestors {
            checker = checker.with_parent(p);
        }
        checker.check(&Request::url("fetch", url))
    }
}

impl HostGate for CallNetGate {
    fn decide<'a>(
        &'a self,
        req: HostRequest,
    ) -> Pin<Box<dyn Future<Output = Verdict> + Send + 'a>> {
        Box::pin(async move { self.decide_host(req).await })
    }

    fn preapprove(&self, hosts: &[String]) {
        lock(&self.preapproved).extend(hosts.iter().cloned());
    }
}

impl CallNetGate {
    async fn decide_host(&self, req: HostRequest) -> Verdict {
        let step = &self.step;
        if lock(&self.preapproved).contains(&req.host) {
            return Verdict::Allow;
        }
        if let Some(allowed) = lock(&step.answered).get(&req.host).copied() {
            return if allowed {
                Verdict::Allow
            } else {
                Verdict::Deny(format!("you denied {} for this session", req.host))
            };
        }
        let url = req.url_for_rules();
        let mut decision = step.check(&url);
        match decision.decision {
            PermissionAction::Deny => {
                return Verdict::Deny(
                    decision
                        .denial_message()
                        .unwrap_or_else(|| format!("{} is denied", req.target())),
                );
            }
            PermissionAction::Allow => return Verdict::Allow,
            PermissionAction::Ask if step.mode == NetworkAccess::Allow => return Verdict::Allow,
            PermissionAction::Ask if step.answerer != Answerer::Person => {
                return Verdict::Deny(format!(
                    "{} needs a person's yes and nobody can answer in a headless run (allow the host with a `fetch` rule, e.g. --allow \"fetch:{}\")",
                    req.target(),
                    req.host
                ));
            }
            PermissionAction::Ask => {}
        }
        let who = req
            .program
            .as_deref()
            .map_or_else(|| "A command".to_string(), |p| format!("`{p}`"));
        decision.reason = match &req.url {
            Some(u) => format!("{who} wants to fetch {u} (through mia-code's network proxy)."),
            None => format!(
                "{who} wants to reach {} (through mia-code's network proxy).",
                req.target()
            ),
        };
        let request_id = format!("perm-{}", mia_protocol::PartId::new());
        let mut request = permissions::dialog(
            request_id.clone(),
            step.session_id,
            &step.agent,
            &self.tool,
            &self.input,
            &decision,
        );
        request.call_id = Some(self.call_id.clone());
        request.target = req.target();
        request.root_session_id = step.state.lineage().root;
        let gate = super::gate::SessionGate {
            runtime: &step.runtime,
            state: &step.state,
        };
        let reply = super::gate::PermissionGate::ask(&gate, request, &step.cancel).await;
        let Some(reply) = reply else {
            return Verdict::Deny("the command was stopped while the question was open".into());
        };
        let outcome =
            match mia_permission::apply_reply(&decision, permissions::engine_reply(&reply)) {
                Ok(o) => o,
                Err(e) => return Verdict::Deny(e.to_string()),
            };
        if let Err(e) = step
            .runtime
            .keep_answer(&step.state, &step.agent, step.session_id, &outcome)
            .await
        {
            tracing::warn!("could not keep a network answer: {e}");
        }
        if matches!(
            reply,
            PermissionReplyKind::Session
                | PermissionReplyKind::Project
                | PermissionReplyKind::Never
        ) {
            lock(&step.answered).insert(req.host.clone(), outcome.proceed);
        }
        step.runtime.emit(Event::PermissionResolved {
            session_id: step.session_id,
            request_id,
            decision: mia_protocol::Resolution::allowed(outcome.proceed),
            by: "user".into(),
            reason: outcome.message_to_model.clone().unwrap_or_default(),
            root_session_id: step.state.lineage().root,
        });
        if outcome.proceed {
            Verdict::Allow
        } else {
            Verdict::Deny(format!("you denied {}", req.target()))
        }
    }
}
