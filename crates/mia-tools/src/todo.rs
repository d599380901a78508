use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan, ToolSpec, parse_input, schema_of,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Done,
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    pub id: u32,
    pub content: String,
    pub status: TodoStatus,
}

/// A session's todo list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoList {
    pub items: Vec<Todo>,
    next_id: u32,
}

impl TodoList {
    fn render(&self) -> String {
        if self.items.is_empty() {
            return "The todo list is empty.".into();
        }
        self.items
            .iter()
            .map(|t| {
                let mark = match t.status {
                    TodoStatus::Pending => "[ ]",
                    TodoStatus::InProgress => "[~]",
                    TodoStatus::Done => "[x]",
                    TodoStatus::Cancelled => "[-]",
                };
                format!("{mark} #{} {}", t.id, t.content)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum TodoInput {
    /// Add items.
    Create { items: Vec<String> },
    /// Change an item's status or text.
    Update {
        id: u32,
        #[serde(default)]
        status: Option<TodoStatus>,
        #[serde(default)]
        content: Option<String>,
    },
    /// Remove an item.
    Delete { id: u32 },
}

pub struct TodoTool;

#[async_trait::async_trait]
impl Tool for TodoTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "todo".into(),
            description: "Keep a todo list for this session: action create (items), update (id, status, content) or delete (id). Returns the whole list.".into(),
            input_schema: schema_of::<TodoInput>(),
        }
    }

    fn plan(&self, input: &Value, _ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: TodoInput = parse_input("todo", input)?;
        let permission = match input {
            TodoInput::Create { .. } => "todo_create",
            TodoInput::Update { .. } => "todo_update",
            TodoInput::Delete { .. } => "todo_delete",
        };
        Ok(ToolPlan {
            permission: permission.into(),
            targets: vec![Target::None],
            modifies: Some(Vec::new()),
        })
    }

    fn offered_under(&self) -> Option<String> {
        Some("todo_create".into())
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: TodoInput = parse_input("todo", &input)?;
        let mut list = ctx
            .todos
            .lock()
            .map_err(|_| ToolError::Invalid("the todo list is unavailable".into()))?;
        let missing = |id| {
            ToolError::Invalid(format!(
                "there is no todo #{id}; the list has ids {}",
                ids(&list)
            ))
        };
        match input {
            TodoInput::Create { items } => {
                if items.iter().all(|i| i.trim().is_empty()) {
                    return Err(ToolError::Invalid(
                        "give at least one non-empty item".into(),
                    ));
                }
                for content in items.into_iter().filter(|i| !i.trim().is_empty()) {
                    list.next_id += 1;
                    let id = list.next_id;
                    list.items.push(Todo {
                        id,
                        content,
                        status: TodoStatus::Pending,
                    });
                }
            }
            TodoInput::Update {
                id,
                status,
                content,
            } => {
                let err = missing(id);
                let item = list.items.iter_mut().find(|t| t.id == id).ok_or(err)?;
                if let Some(s) = status {
                    item.status = s;
                }
                if let Some(c) = content {
                    item.content = c;
                }
            }
            TodoInput::Delete { id } => {
                let err = missing(id);
                let before = list.items.len();
                list.items.retain(|t| t.id != id);
                if list.items.len() == before {
                    return Err(err);
                }
            }
        }
        Ok(ToolOutput {
            output: list.render(),
            metadata: json!({"items": list.items}),
        })
    }
}

fn ids(list: &TodoList) -> String {
    if list.items.is_empty() {
        return "none (it is empty)".into();
    }
    list.items
        .iter()
        .map(|t| format!("#{}", t.id))
        .collect::<Vec<_>>()
        .join(", ")
}
