//! Turning a scenario response into each provider's real SSE stream.

use serde_json::{Value, json};

use crate::request::ApiKind;
use crate::scenario::{EventSpec, Response, StreamError, ToolCallSpec, Usage};

/// One piece of a streamed body.
#[derive(Debug, Clone, PartialEq)]
pub enum Chunk {
    Bytes(Vec<u8>),
    DelayMs(u64),
    /// Abort the connection.
    Cut,
}

fn sse(event: Option<&str>, data: &Value) -> Chunk {
    let mut s = String::new();
    if let Some(e) = event {
        s.push_str("event: ");
        s.push_str(e);
        s.push('\n');
    }
    s.push_str("data: ");
    s.push_str(&data.to_string());
    s.push_str("\n\n");
    Chunk::Bytes(s.into_bytes())
}

fn raw_data(event: Option<&str>, data: &str) -> Chunk {
    let mut s = String::new();
    if let Some(e) = event {
        s.push_str(&format!("event: {e}\n"));
    }
    s.push_str(&format!("data: {data}\n\n"));
    Chunk::Bytes(s.into_bytes())
}

/// Split `s` into `n` roughly equal pieces on char boundaries.
fn split_n(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let n = n.clamp(1, chars.len().max(1));
    let size = chars.len().div_ceil(n).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn arguments_text(tc: &ToolCallSpec) -> String {
    match &tc.arguments {
        Value::String(s) => s.clone(),
        Value::Null => "{}".into(),
        other => other.to_string(),
    }
}

#[derive(PartialEq, Clone, Copy)]
enum Open {
    None,
    Text,
    Thinking,
}

/// The status a response error body describes.
pub fn default_error_body(api: ApiKind, resp: &Response) -> Value {
    if let Some(b) = &resp.body {
        return b.clone();
    }
    let status = resp.status;
    let message = resp
        .message
        .clone()
        .unwrap_or_else(|| format!("mock error {status}"));
    match api {
        ApiKind::Anthropic => {
            let kind = resp.error_type.clone().unwrap_or_else(|| {
                match status {
                    400 | 413 | 422 => "invalid_request_error",
                    401 => "authentication_error",
                    403 => "permission_error",
                    404 => "not_found_error",
                    429 => "rate_limit_error",
                    529 => "overloaded_error",
                    _ => "api_error",
                }
                .to_string()
            });
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        ApiKind::OpenAi => {
            let kind = resp.error_type.clone().unwrap_or_else(|| {
                match status {
                    400 | 404 | 413 | 422 => "invalid_request_error",
                    401 | 403 => "authentication_error",
                    429 => "rate_limit_exceeded",
                    _ => "server_error",
                }
                .to_string()
            });
            json!({"error": {"message": message, "type": kind, "code": kind, "param": null}})
        }
        ApiKind::Google => {
            let kind = resp.error_type.clone().unwrap_or_else(|| {
                match status {
                    400 => "INVALID_ARGUMENT",
                    401 => "UNAUTHENTICATED",
                    403 => "PERMISSION_DENIED",
                    404 => "NOT_FOUND",
                    429 => "RESOURCE_EXHAUSTED",
                    503 => "UNAVAILABLE",
                    _ => "INTERNAL",
                }
                .to_string()
            });
            json!({"error": {"code": status, "message": message, "status": kind}})
        }
    }
}

fn has_tool_calls(resp: &Response) -> bool {
    resp.events
        .iter()
        .any(|e| matches!(e, EventSpec::ToolCall(_)))
}

/// Render a successful response as stream chunks. `include_usage`: the
/// OpenAI client asked for the usage chunk.
pub fn render(api: ApiKind, resp: &Response, model: &str, include_usage: bool) -> Vec<Chunk> {
    let mut out = Vec::new();
    if resp.verbatim {
        for e in &resp.events {
            match e {
                EventSpec::Raw(s) => out.push(Chunk::Bytes(s.clone().into_bytes())),
                EventSpec::DelayMs(ms) => out.push(Chunk::DelayMs(*ms)),
                EventSpec::Cut(true) => out.push(Chunk::Cut),
                _ => {}
            }
        }
    } else {
        render_api(api, resp, model, include_usage, &mut out);
    }
    if resp.chunk_delay_ms > 0 {
        let mut delayed = Vec::with_capacity(out.len() * 2);
        for c in out {
            if matches!(c, Chunk::Bytes(_)) {
                delayed.push(Chunk::DelayMs(resp.chunk_delay_ms));
            }
            delayed.push(c);
        }
        return delayed;
    }
    out
}

fn render_api(
    api: ApiKind,
    resp: &Response,
    model: &str,
    include_usage: bool,
    out: &mut Vec<Chunk>,
) {
    match api {
        ApiKind::Anthropic => render_anthropic(resp, model, out),
        ApiKind::OpenAi => render_openai(resp, model, include_usage, out),
        ApiKind::Google => render_google(resp, model, out),
    }
}

fn usage_or_default(resp: &Response) -> Usage {
    resp.usage.unwrap_or(Usage {
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    })
}

fn render_anthropic(resp: &Response, model: &str, out: &mut Vec<Chunk>) {
    let usage = usage_or_default(resp);
    out.push(sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "content": [], "model": model,
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.input, "output_tokens": 1,
                      "cache_creation_input_tokens": usage.cache_write, "cache_read_input_tokens": usage.cache_read}
        }}),
    ));
    out.push(sse(Some("ping"), &json!({"type": "ping"})));
    let mut index = 0usize;
    let mut open = Open::None;
    let mut tool_n = 0usize;
    let close = |open: &mut Open, index: &mut usize, out: &mut Vec<Chunk>| {
        if *open == Open::Thinking {
            out.push(sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": *index,
                        "delta": {"type": "signature_delta", "signature": "bW9jay1zaWduYXR1cmU="}}),
            ));
        }
        if *open != Open::None {
            out.push(sse(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": *index}),
            ));
            *index += 1;
            *open = Open::None;
        }
    };
    for e in &resp.events {
        match e {
            EventSpec::Text(t) => {
                if open != Open::Text {
                    close(&mut open, &mut index, out);
                    out.push(sse(
                        Some("content_block_start"),
                        &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
                    ));
                    open = Open::Text;
                }
                out.push(sse(
                    Some("content_block_delta"),
                    &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": t}}),
                ));
            }
            EventSpec::Reasoning(t) => {
                if open != Open::Thinking {
                    close(&mut open, &mut index, out);
                    out.push(sse(
                        Some("content_block_start"),
                        &json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}),
                    ));
                    open = Open::Thinking;
                }
                out.push(sse(
                    Some("content_block_delta"),
                    &json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": t}}),
                ));
            }
            EventSpec::ToolCall(tc) => {
                close(&mut open, &mut index, out);
                let id = tc
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("toolu_mock_{tool_n}"));
                tool_n += 1;
                out.push(sse(
                    Some("content_block_start"),
                    &json!({"type": "content_block_start", "index": index,
                            "content_block": {"type": "tool_use", "id": id, "name": tc.name, "input": {}}}),
                ));
                for piece in split_n(&arguments_text(tc), tc.chunks.unwrap_or(3)) {
                    out.push(sse(
                        Some("content_block_delta"),
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    ));
                }
                out.push(sse(
                    Some("content_block_stop"),
                    &json!({"type": "content_block_stop", "index": index}),
                ));
                index += 1;
            }
            EventSpec::DelayMs(ms) => out.push(Chunk::DelayMs(*ms)),
            EventSpec::Cut(true) => {
                out.push(Chunk::Cut);
                return;
            }
            EventSpec::Cut(false) => {}
            EventSpec::Malformed(data) => out.push(raw_data(Some("content_block_delta"), data)),
            EventSpec::Error(err) => {
                out.push(sse(Some("error"), &anthropic_error(err)));
                return;
            }
            EventSpec::Raw(s) => out.push(Chunk::Bytes(s.clone().into_bytes())),
        }
    }
    close(&mut open, &mut index, out);
    if !resp.finish {
        return;
    }
    let stop = resp.stop.clone().unwrap_or_else(|| {
        if has_tool_calls(resp) {
            "tool_use"
        } else {
            "end_turn"
        }
        .to_string()
    });
    out.push(sse(
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": usage.output}}),
    ));
    out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
}

fn anthropic_error(err: &StreamError) -> Value {
    json!({"type": "error", "error": {
        "type": err.kind.clone().unwrap_or_else(|| "overloaded_error".into()),
        "message": err.message.clone().unwrap_or_else(|| "Overloaded".into()),
    }})
}

fn render_openai(resp: &Response, model: &str, include_usage: bool, out: &mut Vec<Chunk>) {
    let chunk = |delta: Value, finish: Value| {
        sse(
            None,
            &json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_700_000_000u64,
                    "model": model, "system_fingerprint": "fp_mock",
                    "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]}),
        )
    };
    out.push(chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ));
    let mut tool_n = 0usize;
    for e in &resp.events {
        match e {
            EventSpec::Text(t) => out.push(chunk(json!({"content": t}), Value::Null)),
            EventSpec::Reasoning(t) => {
                out.push(chunk(json!({"reasoning_content": t}), Value::Null));
            }
            EventSpec::ToolCall(tc) => {
                let id = tc
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_mock_{tool_n}"));
                out.push(chunk(
                    json!({"tool_calls": [{"index": tool_n, "id": id, "type": "function",
                                           "function": {"name": tc.name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for piece in split_n(&arguments_text(tc), tc.chunks.unwrap_or(3)) {
                    out.push(chunk(
                        json!({"tool_calls": [{"index": tool_n, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
                tool_n += 1;
            }
            EventSpec::DelayMs(ms) => out.push(Chunk::DelayMs(*ms)),
            EventSpec::Cut(true) => {
                out.push(Chunk::Cut);
                return;
            }
            EventSpec::Cut(false) => {}
            EventSpec::Malformed(data) => out.push(raw_data(None, data)),
            EventSpec::Error(err) => {
                out.push(sse(
                    None,
                    &json!({"error": {
                        "message": err.message.clone().unwrap_or_else(|| "The server had an error".into()),
                        "type": err.kind.clone().unwrap_or_else(|| "server_error".into()),
                        "code": err.code.clone().unwrap_or(Value::Null),
                    }}),
                ));
                return;
            }
            EventSpec::Raw(s) => out.push(Chunk::Bytes(s.clone().into_bytes())),
        }
    }
    if !resp.finish {
        return;
    }
    let stop = resp
        .stop
        .clone()
        .unwrap_or_else(|| if tool_n > 0 { "tool_calls" } else { "stop" }.to_string());
    out.push(chunk(json!({}), json!(stop)));
    if include_usage {
        let u = usage_or_default(resp);
        out.push(sse(
            None,
            &json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_700_000_000u64,
                    "model": model, "choices": [],
                    "usage": {"prompt_tokens": u.input + u.cache_read, "completion_tokens": u.output,
                              "total_tokens": u.input + u.cache_read + u.output,
                              "prompt_tokens_details": {"cached_tokens": u.cache_read},
                              "completion_tokens_details": {"reasoning_tokens": 0}}}),
        ));
    }
    out.push(Chunk::Bytes(b"data: [DONE]\n\n".to_vec()));
}

fn render_google(resp: &Response, model: &str, out: &mut Vec<Chunk>) {
    let chunk = |parts: Value, finish: Option<&str>, usage: Option<Usage>| {
        let mut cand = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(f) = finish {
            cand["finishReason"] = json!(f);
        }
        let mut v =
            json!({"candidates": [cand], "modelVersion": model, "responseId": "mock-response"});
        if let Some(u) = usage {
            v["usageMetadata"] = json!({
                "promptTokenCount": u.input + u.cache_read,
                "candidatesTokenCount": u.output,
                "totalTokenCount": u.input + u.cache_read + u.output,
                "cachedContentTokenCount": u.cache_read,
            });
        }
        sse(None, &v)
    };
    for e in &resp.events {
        match e {
            EventSpec::Text(t) => out.push(chunk(json!([{"text": t}]), None, None)),
            EventSpec::Reasoning(t) => {
                out.push(chunk(json!([{"text": t, "thought": true}]), None, None));
            }
            EventSpec::ToolCall(tc) => {
                let args = match &tc.arguments {
                    Value::Null => json!({}),
                    Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| json!(s)),
                    other => other.clone(),
                };
                let mut call = json!({"name": tc.name, "args": args});
                if let Some(id) = &tc.id {
                    call["id"] = json!(id);
                }
                out.push(chunk(
                    json!([{"functionCall": call, "thoughtSignature": "bW9jay1zaWc="}]),
                    None,
                    None,
                ));
            }
            EventSpec::DelayMs(ms) => out.push(Chunk::DelayMs(*ms)),
            EventSpec::Cut(true) => {
                out.push(Chunk::Cut);
                return;
            }
            EventSpec::Cut(false) => {}
            EventSpec::Malformed(data) => out.push(raw_data(None, data)),
            EventSpec::Error(err) => {
                out.push(sse(
                    None,
                    &json!({"error": {
                        "code": err.code.clone().unwrap_or(json!(503)),
                        "message": err.message.clone().unwrap_or_else(|| "The model is overloaded.".into()),
                        "status": err.kind.clone().unwrap_or_else(|| "UNAVAILABLE".into()),
                    }}),
                ));
                return;
            }
            EventSpec::Raw(s) => out.push(Chunk::Bytes(s.clone().into_bytes())),
        }
    }
    if !resp.finish {
        return;
    }
    let stop = resp.stop.clone().unwrap_or_else(|| "STOP".into());
    out.push(chunk(
        json!([{"text": ""}]),
        Some(&stop),
        Some(usage_or_default(resp)),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_char_boundaries() {
        assert_eq!(split_n("abcdef", 3), vec!["ab", "cd", "ef"]);
        assert_eq!(split_n("é€x", 2), vec!["é€", "x"]);
        assert_eq!(split_n("", 3), vec![""]);
    }
}
