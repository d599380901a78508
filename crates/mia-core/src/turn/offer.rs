//! Stage "build request" of a step: the tools offered (those the agent's
//! rules could ever allow), the system prompt, the history (compacted
//! first when it would not fit) and the context meter.

use std::sync::Arc;

use mia_protocol::{Event, SessionId};
use mia_providers::{ChatRequest, ToolDefinition};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::delegate::Lineage;
use crate::runtime::Runtime;
use crate::session::SessionState;
use crate::turn::policy::step_checker;
use crate::turn::session_date;
use crate::turn::setup::TurnSetup;
use crate::{permissions, prompt};

/// What the model is offered this step.
pub(crate) struct Offer {
    pub(crate) tools: Vec<ToolDefinition>,
    /// "File editing: DENIED"-style lines for the system prompt.
    pub(crate) permissions: String,
}

impl Runtime {
    /// The tools offered this step, judged by the prompt's policy.
    pub(crate) fn offer(&self, t: &mut TurnSetup, lineage: &Lineage) -> Offer {
        self.prompt_policy(t);
        let Some(prompt_policy) = t.prompt_policy.as_ref() else {
            return Offer {
                tools: Vec::new(),
                permissions: String::new(),
            };
        };
        let checker = step_checker(prompt_policy, &t.path_ctx, t.answerer, lineage);
        let tools: Vec<ToolDefinition> = self
            .inner
            .tools
            .offers(&t.tool_ctx)
            .into_iter()
            .filter(|(_, permission)| permissions::tool_offered(&checker, permission))
            .map(|(s, _)| ToolDefinition {
                name: s.name.to_string(),
                description: s.description.to_string(),
                input_schema: s.input_schema,
            })
            .collect();
        Offer {
            tools,
            permissions: permissions::summary(&checker),
        }
    }

    /// The request for this step: system prompt, history (compacted before
    /// it would not fit), tools, the agent's temperature and what plugins
    /// set. Reports the context meter.
    pub(crate) async fn build_request(
        &self,
        state: &Arc<SessionState>,
        t: &mut TurnSetup,
        offer: Offer,
        cancel: &CancellationToken,
    ) -> Result<ChatRequest, CoreError> {
        let session_id = state.id;
        let system = self.system_prompt(state, t, session_id, &offer);
        let messages = self
            .inner
            .store
            .call(move |db| db.get_messages(&session_id, &mia_store::MessageQuery::default()))
            .await?;
        // Compaction before every request (mid-turn too): over the message
        // threshold, or when this request would fill the token budget.
        let fixed = (system.len()
            + offer
                .tools
                .iter()
                .map(|d| d.description.len() + d.input_schema.to_string().len() + d.name.len())
                .sum::<usize>()) as u64
            / 4;
        let messages = self
            .compact_before_request(
                state,
                &t.config,
                &t.model,
                &mut t.compaction_failed,
                fixed,
                messages,
                cancel,
            )
            .await?;
        // The composer's context meter: this request, as estimated.
        let usage = {
            let visible: Vec<&mia_protocol::Message> = messages.iter().collect();
            state.with(|l| {
                let usage = crate::compaction::context_usage(
                    &t.config,
                    &t.model,
                    &visible,
                    Some(fixed),
                    &mut l.estimates,
                );
                l.last_context = Some(usage.clone());
                usage
            })
        };
        self.emit(Event::ContextUsage { session_id, usage });
        let mut request = ChatRequest::new(
            t.wire_model.clone(),
            mia_providers::convert::history_to_messages(&messages),
        );
        request.system = system;
        request.tools = offer.tools;
        request.temperature = t.agent.temperature.map(|t| t as f32);
        self.plugin_chat_params(&t.plugins, &t.agent_name, &mut request)
            .await;
        Ok(request)
    }

    fn system_prompt(
        &self,
        state: &SessionState,
        t: &TurnSetup,
        session_id: SessionId,
        offer: &Offer,
    ) -> String {
        let opts = &self.inner.opts;
        let tool_lines = offer
            .tools
            .iter()
            .map(|t| format!("- {}: {}", t.name, t.description))
            .collect::<Vec<_>>()
            .join("\n");
        let unifier = opts.unifier.unwrap_or_else(|| {
            t.config
                .merged
                .unifier
                .as_ref()
                .and_then(|u| u.enabled)
                .unwrap_or(true)
        });
        let (system, warnings) = prompt::assemble(&prompt::PromptInputs {
            agent: &t.agent,
            project_root: &t.path_ctx.root,
            session_id: session_id.to_string(),
            datetime: session_date(state.with(|l| l.session.created_at)),
            tools: tool_lines,
            permissions: offer.permissions.clone(),
            global_skills: opts.paths.global_skills_dir(),
            unifier,
        });
        for w in warnings {
            tracing::warn!(session = %session_id, "{w}");
        }
        system
    }
}
