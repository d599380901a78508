//! `task`: delegate a piece of work to a subagent (spec 015). The tool's
//! arguments and permission are judged here like any tool's; running it is
//! the runtime's job (a child session with the subagent's own prompt, model
//! and an intersection of permissions), so the dispatcher in mia-core runs
//! `task` calls itself and never calls [`TaskTool::run`].

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

    async fn run(&self, _input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Invalid(
            "task calls are run by the runtime, not by the tool registry".into(),
        ))
    }
}
