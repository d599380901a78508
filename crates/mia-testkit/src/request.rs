//! Reading recorded requests and checking protocol invariants.

use serde::Serialize;
use serde_json::Value;

use crate::scenario::Matcher;

/// Which API a request was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKind {
    Anthropic,
    OpenAi,
    Google,
}

impl ApiKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
            Self::Google => "google",
        }
    }
}

/// A request the mock received.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRequest {
    pub api: ApiKind,
    pub path: String,
    pub model: String,
    /// Lower-cased header names with values; credential headers are
    /// replaced by `<redacted>`.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// Index of the scenario step that answered, if any.
    pub step: Option<usize>,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The conversation in a provider-neutral form.
    pub fn conversation(&self) -> Vec<Msg> {
        normalize(self.api, &self.body)
    }

    /// The system prompt text.
    pub fn system(&self) -> String {
        match self.api {
            ApiKind::Anthropic => match self.body.get("system") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(blocks)) => blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            },
            ApiKind::OpenAi => self
                .body
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|m| {
                    matches!(
                        m.get("role").and_then(Value::as_str),
                        Some("system" | "developer")
                    )
                })
                .map(|m| text_of(m.get("content")))
                .collect::<Vec<_>>()
                .join("\n"),
            ApiKind::Google => self
                .body
                .get("systemInstruction")
                .and_then(|s| s.get("parts"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    pub fn matches(&self, m: &Matcher) -> bool {
        if let Some(p) = &m.provider
            && p != self.api.as_str()
        {
            return false;
        }
        if let Some(model) = &m.model
            && model != &self.model
        {
            return false;
        }
        if let Some(needle) = &m.system_contains
            && !self.system().contains(needle.as_str())
        {
            return false;
        }
        let conv = self.conversation();
        if let Some(needle) = &m.last_message_contains {
            let last = conv.last().map(Msg::text).unwrap_or_default();
            if !last.contains(needle.as_str()) {
                return false;
            }
        }
        if let Some(id) = &m.has_tool_result {
            let found = conv.iter().any(|msg| {
                msg.items
                    .iter()
                    .any(|i| matches!(i, Item::ToolResult { id: rid, .. } if rid == id))
            });
            if !found {
                return false;
            }
        }
        true
    }
}

/// One message, provider-neutral.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Msg {
    /// `user`, `assistant` or `tool` (OpenAI tool messages).
    pub role: String,
    pub items: Vec<Item>,
}

impl Msg {
    pub fn text(&self) -> String {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Text(t) => Some(t.as_str()),
                Item::ToolResult { content, .. } => Some(content.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    Text(String),
    ToolCall {
        id: String,
        name: String,
    },
    ToolResult {
        id: String,
        name: String,
        content: String,
    },
    Other,
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn s(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn normalize(api: ApiKind, body: &Value) -> Vec<Msg> {
    let mut out = Vec::new();
    match api {
        ApiKind::Anthropic => {
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let mut items = Vec::new();
                match m.get("content") {
                    Some(Value::String(t)) => items.push(Item::Text(t.clone())),
                    Some(Value::Array(blocks)) => {
                        for b in blocks {
                            items.push(match b.get("type").and_then(Value::as_str) {
                                Some("text") => Item::Text(s(b, "text")),
                                Some("tool_use") => Item::ToolCall {
                                    id: s(b, "id"),
                                    name: s(b, "name"),
                                },
                                Some("tool_result") => Item::ToolResult {
                                    id: s(b, "tool_use_id"),
                                    name: String::new(),
                                    content: text_of(b.get("content")),
                                },
                                _ => Item::Other,
                            });
                        }
                    }
                    _ => {}
                }
                out.push(Msg {
                    role: s(m, "role"),
                    items,
                });
            }
        }
        ApiKind::OpenAi => {
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let role = s(m, "role");
                if role == "system" || role == "developer" {
                    continue;
                }
                let mut items = Vec::new();
                if role == "tool" {
                    items.push(Item::ToolResult {
                        id: s(m, "tool_call_id"),
                        name: String::new(),
                        content: text_of(m.get("content")),
                    });
                } else {
                    match m.get("content") {
                        Some(Value::String(t)) => items.push(Item::Text(t.clone())),
                        Some(Value::Array(parts)) => {
                            for p in parts {
                                items.push(match p.get("type").and_then(Value::as_str) {
                                    Some("text") => Item::Text(s(p, "text")),
                                    _ => Item::Other,
                                });
                            }
                        }
                        _ => {}
                    }
                    for tc in m
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        items.push(Item::ToolCall {
                            id: s(tc, "id"),
                            name: tc.get("function").map(|f| s(f, "name")).unwrap_or_default(),
                        });
                    }
                }
                out.push(Msg { role, items });
            }
        }
        ApiKind::Google => {
            for c in body
                .get("contents")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let role = match s(c, "role").as_str() {
                    "model" => "assistant".to_string(),
                    _ => "user".to_string(),
                };
                let mut items = Vec::new();
                for p in c
                    .get("parts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    items.push(if let Some(t) = p.get("text").and_then(Value::as_str) {
                        Item::Text(t.to_string())
                    } else if let Some(fc) = p.get("functionCall") {
                        Item::ToolCall {
                            id: s(fc, "id"),
                            name: s(fc, "name"),
                        }
                    } else if let Some(fr) = p.get("functionResponse") {
                        Item::ToolResult {
                            id: s(fr, "id"),
                            name: s(fr, "name"),
                            content: fr.get("response").map(Value::to_string).unwrap_or_default(),
                        }
                    } else {
                        Item::Other
                    });
                }
                out.push(Msg { role, items });
            }
        }
    }
    out
}

/// Protocol invariants every request must satisfy; returns the violations.
pub fn check_invariants(req: &RecordedRequest) -> Vec<String> {
    let mut v = Vec::new();
    let api = req.api.as_str();
    match req.api {
        ApiKind::Anthropic => {
            if req.header("x-api-key").is_none() && req.header("authorization").is_none() {
                v.push("anthropic: no x-api-key header".into());
            }
            if req.header("anthropic-version").is_none() {
                v.push("anthropic: no anthropic-version header".into());
            }
            if req.body.get("max_tokens").and_then(Value::as_u64).is_none() {
                v.push("anthropic: max_tokens is required".into());
            }
        }
        ApiKind::OpenAi => {}
        ApiKind::Google => {
            if !req.path.ends_with(":streamGenerateContent") {
                v.push(format!("google: unexpected path {}", req.path));
            }
        }
    }
    if req.api != ApiKind::Google && req.body.get("stream") != Some(&Value::Bool(true)) {
        v.push(format!("{api}: request is not streaming (stream != true)"));
    }
    let conv = req.conversation();
    if conv.is_empty() {
        v.push(format!("{api}: no messages"));
        return v;
    }
    // Roles.
    if req.api != ApiKind::OpenAi {
        if conv.first().map(|m| m.role.as_str()) != Some("user") {
            v.push(format!("{api}: the first message must be from the user"));
        }
        for (i, pair) in conv.windows(2).enumerate() {
            if pair[0].role == pair[1].role {
                v.push(format!(
                    "{api}: messages {i} and {} are both `{}`; roles must alternate",
                    i + 1,
                    pair[0].role
                ));
            }
        }
    }
    // Empty text.
    for (i, m) in conv.iter().enumerate() {
        for item in &m.items {
            if let Item::Text(t) = item
                && t.trim().is_empty()
                && !(req.api == ApiKind::OpenAi && m.role == "assistant")
            {
                v.push(format!("{api}: message {i} has an empty text block"));
            }
        }
        if m.items.is_empty() {
            v.push(format!("{api}: message {i} has no content"));
        }
    }
    // Tool results answer tool calls that were sent, and every call is answered.
    let mut open: Vec<(String, String)> = Vec::new(); // (id, name) awaiting results
    for (i, m) in conv.iter().enumerate() {
        let is_result_msg =
            m.role == "tool" || m.items.iter().any(|x| matches!(x, Item::ToolResult { .. }));
        if !open.is_empty() && !is_result_msg && m.role != "tool" {
            let ids: Vec<_> = open
                .iter()
                .map(|(id, n)| if id.is_empty() { n.clone() } else { id.clone() })
                .collect();
            v.push(format!(
                "{api}: tool calls {ids:?} were not answered before message {i}"
            ));
            open.clear();
        }
        for item in &m.items {
            match item {
                Item::ToolResult { id, name, .. } => {
                    let pos = open.iter().position(|(oid, oname)| {
                        if id.is_empty() {
                            oname == name
                        } else {
                            oid == id
                        }
                    });
                    match pos {
                        Some(p) => {
                            open.remove(p);
                        }
                        None => v.push(format!(
                            "{api}: message {i} has a tool result for {} that answers no tool call of the previous assistant message",
                            if id.is_empty() { name } else { id }
                        )),
                    }
                }
                Item::ToolCall { id, .. } => {
                    if id.is_empty() && req.api != ApiKind::Google {
                        v.push(format!("{api}: message {i} has a tool call without an id"));
                    }
                    if m.role != "assistant" {
                        v.push(format!(
                            "{api}: message {i} is not from the assistant but has a tool call"
                        ));
                    }
                }
                _ => {}
            }
        }
        if m.role == "assistant" {
            if !open.is_empty() {
                v.push(format!(
                    "{api}: tool calls {open:?} were not answered before message {i}"
                ));
            }
            open = m
                .items
                .iter()
                .filter_map(|x| match x {
                    Item::ToolCall { id, name } => Some((id.clone(), name.clone())),
                    _ => None,
                })
                .collect();
        }
    }
    if conv.last().map(|m| m.role.as_str()) == Some("assistant") && req.api == ApiKind::Anthropic {
        // Prefill is allowed by Anthropic, but not with open tool calls.
        if !open.is_empty() {
            v.push(format!(
                "{api}: the conversation ends with unanswered tool calls"
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(api: ApiKind, body: Value) -> RecordedRequest {
        RecordedRequest {
            api,
            path: match api {
                ApiKind::Google => "/v1beta/models/m:streamGenerateContent".into(),
                _ => "/".into(),
            },
            model: "m".into(),
            headers: vec![
                ("x-api-key".into(), "<redacted>".into()),
                ("anthropic-version".into(), "2023-06-01".into()),
            ],
            body,
            step: None,
        }
    }

    #[test]
    fn good_anthropic_tool_round_trip_passes() {
        let r = req(
            ApiKind::Anthropic,
            json!({"stream": true, "max_tokens": 10, "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
            ]}),
        );
        assert_eq!(check_invariants(&r), Vec::<String>::new());
    }

    #[test]
    fn violations_are_reported() {
        let r = req(
            ApiKind::Anthropic,
            json!({"stream": true, "max_tokens": 10, "messages": [
                {"role": "user", "content": [{"type": "text", "text": ""}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
                {"role": "user", "content": "no result"}
            ]}),
        );
        let v = check_invariants(&r).join("\n");
        assert!(v.contains("empty text"), "{v}");
        assert!(v.contains("must alternate"), "{v}");
        assert!(v.contains("answers no tool call"), "{v}");
        assert!(v.contains("not answered"), "{v}");
    }

    #[test]
    fn openai_tool_messages_must_follow_calls() {
        let good = req(
            ApiKind::OpenAi,
            json!({"stream": true, "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "r"},
                {"role": "user", "content": "more"}
            ]}),
        );
        assert_eq!(check_invariants(&good), Vec::<String>::new());
        let bad = req(
            ApiKind::OpenAi,
            json!({"stream": false, "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "c9", "content": "r"}
            ]}),
        );
        let v = check_invariants(&bad).join("\n");
        assert!(v.contains("not streaming") && v.contains("c9"), "{v}");
    }

    #[test]
    fn gemini_matches_results_by_name_without_ids() {
        let r = req(
            ApiKind::Google,
            json!({"contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "x"}}}]}
            ]}),
        );
        assert_eq!(check_invariants(&r), Vec::<String>::new());
        let m = Matcher {
            last_message_contains: Some("\"x\"".into()),
            ..Matcher::default()
        };
        assert!(r.matches(&m));
    }
}
