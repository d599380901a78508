//! Stage "equip" of a step: what the step's tools work with. The OS
//! sandbox for the agent's commands and the gate its proxy asks, the
//! project's MCP servers' and plugins' tools, and the filter that keeps
//! many-file tools (grep, glob) away from what read rules refuse.

use std::sync::Arc;

use mia_permission::{Checker, Policy};
use mia_protocol::SessionId;
use tokio_util::sync::CancellationToken;

use crate::delegate::Lineage;
use crate::dispatch::network::StepNetGate;
use crate::runtime::Runtime;
use crate::session::SessionState;
use crate::turn::policy::step_checker;
use crate::turn::setup::TurnSetup;

impl Runtime {
    /// Set the step's tool context up under `policy`; returns the gate a
    /// sandboxed command's connections are judged by, when its network
    /// goes through the proxy.
    pub(crate) async fn equip_step(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
        policy: &Arc<Policy>,
        lineage: &Lineage,
        cancel: &CancellationToken,
    ) -> Option<Arc<StepNetGate>> {
        let opts = &self.inner.opts;
        let session_id = state.id;
        let read_only_shell = {
            let checker = step_checker(policy, &t.path_ctx, t.answerer, lineage);
            !crate::permissions::tool_offered(&checker, "edit")
                && !crate::permissions::tool_offered(&checker, "write")
        };
        t.tool_ctx.read_only_shell = read_only_shell;
        // The OS sandbox for this agent's commands; with it confining them,
        // commands need no confirmation only for not being plain words.
        let sandbox_policy = crate::sandbox::policy(
            &t.config,
            &t.agent_name,
            read_only_shell,
            &t.path_ctx.root,
            &opts.paths,
            mia_sandbox::session_tmp(&session_id.to_string()),
        );
        t.tool_ctx.sandbox = crate::sandbox::shell_sandbox(sandbox_policy, read_only_shell);
        let net_gate = self.net_gate(state, t, session_id, policy, lineage, cancel);
        // The project's MCP servers' tools (its own servers only in a trusted
        // workspace): started at the first step, the same set at the next
        // unless a server said its list changed.
        let mcp = self.mcp_tools(&t.path_ctx.root, &t.config, t.trusted).await;
        let (mut extra, plugins) = self
            .plugin_tools(&t.path_ctx.root, &t.config, t.trusted)
            .await;
        for (name, tool) in mcp.0.iter() {
            extra.insert(name.clone(), tool.clone());
        }
        t.tool_ctx.extra_tools = mia_tools::ExtraTools(Arc::new(extra));
        t.plugins = plugins;
        t.tool_ctx.read_filter = read_filter(policy, t);
        t.tool_ctx.delegator = Some(self.subagents(state, t, policy, lineage));
        net_gate
    }

    /// Who the step's `task` calls delegate to: subagents the agent may
    /// call while delegation may go deeper.
    fn subagents(
        &self,
        state: &Arc<SessionState>,
        t: &TurnSetup,
        policy: &Arc<Policy>,
        lineage: &Lineage,
    ) -> mia_tools::Delegator {
        let agents = crate::agents::Agents::from_config(&t.config);
        let callable = crate::delegate::callable(&agents, &t.agent_name, lineage);
        let description = (t.agent.caps.can_delegate
            && lineage.depth < crate::delegate::MAX_DEPTH
            && !callable.is_empty())
        .then(|| crate::delegate::task_description(&callable));
        mia_tools::Delegator(Arc::new(crate::delegate::Subagents {
            runtime: self.clone(),
            parent: state.clone(),
            step: crate::delegate::StepContext {
                config: t.config.clone(),
                model: t.model.clone(),
                agent: t.agent_name.clone(),
                policy: policy.clone(),
            },
            description,
        }))
    }

    /// A sandboxed command's connections are judged here (its proxy asks).
    fn net_gate(
        &self,
        state: &Arc<SessionState>,
        t: &TurnSetup,
        session_id: SessionId,
        policy: &Arc<Policy>,
        lineage: &Lineage,
        cancel: &CancellationToken,
    ) -> Option<Arc<StepNetGate>> {
        match &t.tool_ctx.sandbox {
            mia_tools::ShellSandbox::Confined { policy: sp, .. } if sp.network.proxied() => {
                Some(Arc::new(StepNetGate {
                    runtime: self.clone(),
                    state: state.clone(),
                    session_id,
                    agent: t.agent_name.clone(),
                    policy: policy.clone(),
                    ancestors: lineage.ancestors.clone(),
                    path_ctx: t.path_ctx.clone(),
                    answerer: t.answerer,
                    mode: sp.network,
                    cancel: cancel.clone(),
                    answered: Default::default(),
                }))
            }
            _ => None,
        }
    }
}

/// Tools that read many files (grep, glob) skip what the read rules refuse,
/// under the same policy as every other check of the step. Only when some
/// rule restricts reads: judging every file of a big tree costs a path
/// check each.
fn read_filter(policy: &Arc<Policy>, t: &TurnSetup) -> Option<mia_tools::ReadFilter> {
    if !policy.read_restricted_under(&t.path_ctx.root.to_string_lossy()) {
        return None;
    }
    let policy = policy.clone();
    let path_ctx = t.path_ctx.clone();
    Some(mia_tools::ReadFilter(Arc::new(move |path| {
        let checker = Checker::new(&policy, &path_ctx);
        let d = checker.check(&mia_permission::Request::path(
            "read",
            &path.display().to_string(),
        ));
        // The rule, not the file: a denied file's name stays unsaid.
        (!d.is_allowed()).then(|| match d.reason.split_once("(matched rule: ") {
            Some((_, rule)) => format!("rule {}", rule.trim_end_matches(')')),
            None => "a read rule".to_string(),
        })
    })))
}
