//! Scenario files: what the mock server answers, request by request.
//! The format is documented in the crate README.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    /// Answers, tried in order: a request takes the first step that still
    /// has uses left and whose `match` fits the request.
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[serde(default, rename = "match")]
    pub matcher: Matcher,
    /// How many requests this step answers (default 1).
    #[serde(default = "one")]
    pub times: u32,
    #[serde(default)]
    pub response: Response,
}

fn one() -> u32 {
    1
}

/// Conditions on the request; all given ones must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// `anthropic`, `openai` or `google`.
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// The text of the last message (text parts and tool results) contains this.
    #[serde(default)]
    pub last_message_contains: Option<String>,
    #[serde(default)]
    pub system_contains: Option<String>,
    /// The request answers this tool call id with a tool result.
    #[serde(default)]
    pub has_tool_result: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Response {
    /// HTTP status (default 200). Anything else sends an error body.
    #[serde(default = "ok")]
    pub status: u16,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Error response body; by default the provider's error JSON built from
    /// `error_type` and `message`.
    #[serde(default)]
    pub body: Option<Value>,
    #[serde(default)]
    pub error_type: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    /// Wait before sending the response headers.
    #[serde(default)]
    pub headers_delay_ms: u64,
    /// Wait before every stream event.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    #[serde(default)]
    pub events: Vec<EventSpec>,
    /// Stop reason in the provider's own words (`end_turn`, `tool_calls`,
    /// `STOP`, ...); by default the natural one (tool use when the response
    /// has tool calls, else end of turn).
    #[serde(default)]
    pub stop: Option<String>,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Send the closing events (`message_stop`, `[DONE]`, `finishReason`).
    /// `false` ends the stream cleanly but early.
    #[serde(default = "yes")]
    pub finish: bool,
    /// Send only the `raw`, `delay_ms` and `cut` events, with no opening or
    /// closing events of the provider's format (to replay a recorded stream).
    #[serde(default)]
    pub verbatim: bool,
}

fn ok() -> u16 {
    200
}

fn yes() -> bool {
    true
}

impl Default for Response {
    fn default() -> Self {
        Self {
            status: 200,
            headers: BTreeMap::new(),
            body: None,
            error_type: None,
            message: None,
            headers_delay_ms: 0,
            chunk_delay_ms: 0,
            events: Vec::new(),
            stop: None,
            usage: None,
            finish: true,
            verbatim: false,
        }
    }
}

/// One thing the stream does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum EventSpec {
    Text(String),
    Reasoning(String),
    ToolCall(ToolCallSpec),
    /// Pause the stream.
    DelayMs(u64),
    /// Abort the connection here (no clean end of the HTTP body).
    Cut(bool),
    /// Send this as the `data:` of an event (e.g. broken JSON).
    Malformed(String),
    /// An error event in the provider's stream format; the stream ends after it.
    Error(StreamError),
    /// Raw bytes written to the stream as is.
    Raw(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// Default: `toolu_mock_N` (Anthropic), `call_mock_N` (OpenAI); Gemini
    /// sends no id unless one is given.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    /// A JSON object, or a string sent verbatim (to test broken arguments).
    #[serde(default)]
    pub arguments: Value,
    /// Number of argument fragments (default 3; Gemini always sends one).
    #[serde(default)]
    pub chunks: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamError {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    /// Gemini/OpenAI numeric code.
    #[serde(default)]
    pub code: Option<Value>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("could not read scenario {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "scenario {path} is not valid: {source} (see crates/mia-testkit/README.md for the format)"
    )]
    Parse {
        path: String,
        source: serde_json::Error,
    },
}

impl Scenario {
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        serde_json::from_str(text).map_err(|source| ScenarioError::Parse {
            path: "<inline>".into(),
            source,
        })
    }

    pub fn from_file(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.display().to_string(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ScenarioError::Parse {
            path: path.display().to_string(),
            source,
        })
    }

    /// A scenario of one step answering with these text chunks.
    pub fn text(chunks: &[&str]) -> Self {
        Self {
            name: None,
            steps: vec![Step {
                response: Response {
                    events: chunks
                        .iter()
                        .map(|c| EventSpec::Text((*c).to_string()))
                        .collect(),
                    ..Response::default()
                },
                ..Step::default()
            }],
        }
    }
}

impl Default for Step {
    fn default() -> Self {
        Self {
            matcher: Matcher::default(),
            times: 1,
            response: Response::default(),
        }
    }
}

impl Step {
    pub fn reply(response: Response) -> Self {
        Self {
            matcher: Matcher::default(),
            times: 1,
            response,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_event_kind() {
        let s = Scenario::from_json(
            r#"{"name": "all", "steps": [
              {"match": {"provider": "anthropic", "last_message_contains": "hi"}, "times": 2,
               "response": {"chunk_delay_ms": 1, "usage": {"input": 3, "output": 4},
                 "events": [{"text": "a"}, {"reasoning": "r"}, {"delay_ms": 5},
                            {"tool_call": {"name": "read", "arguments": {"path": "x"}, "chunks": 2}},
                            {"malformed": "{oops"}, {"error": {"type": "overloaded_error"}},
                            {"raw": "data: x\n\n"}, {"cut": true}]}},
              {"response": {"status": 429, "headers": {"retry-after": "1"}}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(s.steps.len(), 2);
        assert_eq!(s.steps[0].times, 2);
        assert_eq!(s.steps[0].response.events.len(), 8);
        assert_eq!(s.steps[1].response.status, 429);
        assert!(s.steps[1].response.finish);
        let err = Scenario::from_json(r#"{"steps": [{"response": {"evnts": []}}]}"#).unwrap_err();
        assert!(err.to_string().contains("evnts"), "{err}");
    }
}
