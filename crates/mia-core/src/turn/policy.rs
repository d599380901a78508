//! Stage "judge rules" of a step: the compiled permission policy (again
//! only when the session's answers changed) and the checkers built on it.

use std::sync::Arc;

use mia_permission::{Checker, PathContext, PermissionRule, Policy};

use crate::delegate::Lineage;
use crate::permissions::PolicyRecipe;
use crate::runtime::Runtime;
use crate::session::SessionState;
use crate::turn::setup::TurnSetup;

impl Runtime {
    /// The step's policy: the agent's rules with the session's answers,
    /// `--allow` and the project's approvals (those answered during this
    /// turn too). Compiled again only when the session's rules changed;
    /// compiling costs milliseconds.
    pub(crate) fn step_policy(&self, state: &SessionState, t: &mut TurnSetup) -> Arc<Policy> {
        let opts = &self.inner.opts;
        let (mut session_rules, approved) = state.with(|l| {
            let rules: Vec<PermissionRule> = l
                .session_rules
                .get(&t.agent_name)
                .map(|r| r.rules().to_vec())
                .unwrap_or_default();
            (rules, std::mem::take(&mut l.new_approvals))
        });
        session_rules.extend(opts.allow.iter().cloned());
        // A command's `allowed-tools`, for its turn only.
        session_rules.extend(t.turn_rules.iter().cloned());
        if !approved.is_empty() {
            t.approvals.extend(
                approved
                    .into_iter()
                    .filter(|(agent, _)| *agent == t.agent_name)
                    .map(|(_, r)| r),
            );
            t.policy_cache = None;
        }
        if let Some((rules, policy)) = &t.policy_cache
            && *rules == session_rules
        {
            return policy.clone();
        }
        let policy = Arc::new(
            PolicyRecipe::new(&t.config, &t.agent_name, &opts.paths)
                .session(session_rules.clone())
                .project(t.approvals.clone(), t.trusted)
                .compile(),
        );
        t.policy_cache = Some((session_rules, policy.clone()));
        policy
    }

    /// The policy the system prompt and the offered tools come from: the
    /// agent and the config only (and `--allow`), never the session's
    /// answers, so the prompt prefix stays byte-identical. Once per turn.
    pub(crate) fn prompt_policy<'t>(&self, t: &'t mut TurnSetup) -> &'t Policy {
        let opts = &self.inner.opts;
        t.prompt_policy.get_or_insert_with(|| {
            PolicyRecipe::new(&t.config, &t.agent_name, &opts.paths)
                .session(opts.allow.clone())
                .project(Vec::new(), t.trusted)
                .compile()
        })
    }
}

/// A checker of `policy` for this step: who answers asks, the shell's
/// dialect, and every ancestor's policy (a subagent's checks intersect
/// with all of them; the strictest wins).
pub(crate) fn step_checker<'a>(
    policy: &'a Policy,
    path_ctx: &'a PathContext,
    answerer: mia_permission::Answerer,
    lineage: &'a Lineage,
) -> Checker<'a> {
    let mut checker = Checker::new(policy, path_ctx)
        .with_answerer(answerer)
        .with_shell_dialect(crate::permissions::shell_dialect());
    for p in &lineage.ancestors {
        checker = checker.with_parent(p);
    }
    checker
}
