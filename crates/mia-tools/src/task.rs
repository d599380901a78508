//! `task`: delegate a piece of work to a subagent (spec 015). A tool like
//! any other: its arguments and permission are judged like every tool's,
//! and it runs through the step's [`Delegator`] (the runtime's subagents:
//! a child session with the subagent's own prompt, model and an
//! intersection of permissions). Without a delegator it is not offered.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::{
    Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan, ToolSpec, parse_input, schema_of,
};

/// The arguments of a `task` call.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    /// The subagent to delegate to (one of those listed in the description).
    pub agent: String,
    /// The task, complete and self-contained: the subagent sees only this,
    /// the last few messages of this conversation and the project.
    pub prompt: String,
    /// A few words shown to the user while the subagent works.
    #[serde(default)]
    pub description: Option<String>,
}

pub struct TaskTool;

/// Runs `task` calls: whom the step may delegate to, and the delegation.
#[async_trait::async_trait]
pub trait Delegate: Send + Sync {
    /// The tool's description this step, naming the subagents that may be
    /// called; `None` when none may be (the tool is not offered).
    fn description(&self) -> Option<String>;
    /// Run the subagent for the call `ctx.call_id`; the output is its final
    /// answer and figures (`metadata.subagent_failed` when it failed).
    async fn delegate(&self, input: TaskInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The step's [`Delegate`].
#[derive(Clone)]
pub struct Delegator(pub std::sync::Arc<dyn Delegate>);

impl std::fmt::Debug for Delegator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Delegator")
    }
}

/// The tool's description without the list of subagents (the runtime adds
/// the agents that may be called).
pub const TASK_DESCRIPTION: &str = "Delegate a self-contained task to a subagent, which works in its own context with its own tools and returns its final answer as this tool's result. Several task calls in one message run concurrently.";

#[async_trait::async_trait]
impl Tool for TaskTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "task".into(),
            description: TASK_DESCRIPTION.into(),
            input_schema: schema_of::<TaskInput>(),
        }
    }

    fn plan(&self, input: &Value, _ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let t: TaskInput = parse_input("task", input)?;
        if t.agent.trim().is_empty() || t.prompt.trim().is_empty() {
            return Err(ToolError::InvalidInput {
                tool: "task".into(),
                message: "`agent` and `prompt` must not be empty".into(),
            });
        }
        Ok(ToolPlan {
            permission: "task".into(),
            targets: vec![Target::Text(t.agent)],
            // The subagent's own steps are snapshotted in its session.
            modifies: Some(Vec::new()),
        })
    }

    fn offer(&self, ctx: &ToolContext) -> Option<ToolSpec> {
        let description = ctx.delegator.as_ref()?.0.description()?;
        Some(ToolSpec {
            description: description.into(),
            ..self.spec()
        })
    }

    fn concurrent(&self) -> bool {
        true
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: TaskInput = parse_input("task", &input)?;
        let Some(delegator) = &ctx.delegator else {
            return Err(ToolError::Invalid(
                "there is no subagent to delegate to here".into(),
            ));
        };
        delegator.0.delegate(input, ctx).await
    }
}
