#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Conformance: example streams written from each provider's public API
//! documentation (tests/fixtures/*.sse) decode into the expected events.
//! Each fixture is decoded whole, split at every byte and served over real
//! HTTP by a raw scenario, and all three must agree.

mod common;

use common::*;
use mia_providers::{
    CancellationToken, ChatMessage, ChatRequest, ProviderKind, StopReason, StreamEvent, TokenUsage,
    decode_sse_body,
};
use mia_testkit::{EventSpec, MockServer, Response, Scenario, Step};
use serde_json::json;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: t.into() }
}
fn reasoning(t: &str) -> StreamEvent {
    StreamEvent::ReasoningDelta { text: t.into() }
}
fn start(index: u32, id: &str, name: &str) -> StreamEvent {
    StreamEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
    }
}
fn delta(index: u32, id: &str, a: &str) -> StreamEvent {
    StreamEvent::ToolCallDelta {
        index,
        id: id.into(),
        arguments: a.into(),
    }
}
fn end(index: u32, id: &str, name: &str, input: serde_json::Value) -> StreamEvent {
    StreamEvent::ToolCallEnd {
        index,
        id: id.into(),
        name: name.into(),
        input,
        signature: None,
    }
}
fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> StreamEvent {
    StreamEvent::Usage {
        usage: TokenUsage {
            input,
            output,
            cache_read,
            cache_write,
        },
    }
}
fn stop(r: StopReason) -> StreamEvent {
    StreamEvent::Stop { reason: r }
}

/// Gemini makes up ids for calls that come without one; make them stable.
fn normalize_ids(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    events
        .into_iter()
        .map(|e| match e {
            StreamEvent::ToolCallStart { index, id, name } if id.starts_with("gemini-call-") => {
                StreamEvent::ToolCallStart {
                    index,
                    id: "GEN".into(),
                    name,
                }
            }
            StreamEvent::ToolCallDelta {
                index,
                id,
                arguments,
            } if id.starts_with("gemini-call-") => StreamEvent::ToolCallDelta {
                index,
                id: "GEN".into(),
                arguments,
            },
            StreamEvent::ToolCallEnd {
                index,
                id,
                name,
                input,
                signature,
            } if id.starts_with("gemini-call-") => StreamEvent::ToolCallEnd {
                index,
                id: "GEN".into(),
                name,
                input,
                signature,
            },
            other => other,
        })
        .collect()
}

fn cases() -> Vec<(ProviderKind, &'static str, Vec<StreamEvent>)> {
    let weather = "toolu_01T1x1fJ34qAmk2tNTrN7Up6";
    let call = "call_DdmO9pD3xa9XTPNJ32zg2hcA";
    vec![
        (
            ProviderKind::Anthropic,
            "anthropic_text.sse",
            vec![
                text("Hello"),
                text("!"),
                usage(25, 15, 0, 0),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            ProviderKind::Anthropic,
            "anthropic_tool_use.sse",
            vec![
                text("Okay"),
                text(","),
                text(" let"),
                text("'s check the weather for San Francisco, CA:"),
                start(0, weather, "get_weather"),
                delta(0, weather, "{\"location\":"),
                delta(0, weather, " \"San"),
                delta(0, weather, " Francisc"),
                delta(0, weather, "o,"),
                delta(0, weather, " CA\""),
                delta(0, weather, ", "),
                delta(0, weather, "\"unit\": \"fah"),
                delta(0, weather, "renheit\"}"),
                end(
                    0,
                    weather,
                    "get_weather",
                    json!({"location": "San Francisco, CA", "unit": "fahrenheit"}),
                ),
                usage(472, 89, 2048, 120),
                stop(StopReason::ToolUse),
            ],
        ),
        (
            ProviderKind::Anthropic,
            "anthropic_thinking.sse",
            vec![
                reasoning(
                    "I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147",
                ),
                reasoning("\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0\n\nSo GCD(1071, 462) = 21"),
                StreamEvent::ReasoningSignature {
                    signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...".into(),
                },
                text("The greatest common divisor of 1071 and 462 is **21**."),
                usage(0, 0, 0, 0),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            ProviderKind::OpenAi,
            "openai_text.sse",
            vec![
                text("Hello"),
                text("!"),
                usage(19, 10, 0, 0),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            ProviderKind::OpenAi,
            "openai_tool_calls.sse",
            vec![
                start(0, call, "get_weather"),
                delta(0, call, "{\""),
                delta(0, call, "location"),
                delta(0, call, "\":\""),
                delta(0, call, "Paris"),
                delta(0, call, ", France\"}"),
                start(1, "call_2", "get_time"),
                delta(1, "call_2", "{\"tz\":\"CET\"}"),
                end(0, call, "get_weather", json!({"location": "Paris, France"})),
                end(1, "call_2", "get_time", json!({"tz": "CET"})),
                // prompt 120 of which 64 cached.
                usage(56, 37, 64, 0),
                stop(StopReason::ToolUse),
            ],
        ),
        (
            ProviderKind::OpenAi,
            "openai_compatible_reasoning.sse",
            vec![
                reasoning("9.11 vs 9.8: compare tenths."),
                text("9.8 is greater."),
                usage(15, 40, 0, 0),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            ProviderKind::Anthropic,
            "anthropic_redacted_thinking.sse",
            vec![
                StreamEvent::RedactedReasoning {
                    data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP".into(),
                },
                text("Done."),
                usage(40, 12, 0, 0),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            ProviderKind::Google,
            "gemini_text.sse",
            vec![
                text("The"),
                text(" quick brown fox"),
                text(" jumps over the lazy dog."),
                usage(8, 60, 0, 0),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            ProviderKind::Google,
            "gemini_function_call.sse",
            vec![
                reasoning(
                    "**Checking the weather**\nThe user wants Boston's weather; call the tool.",
                ),
                start(0, "GEN", "get_current_weather"),
                delta(0, "GEN", "{\"location\":\"Boston, MA\"}"),
                StreamEvent::ToolCallEnd {
                    index: 0,
                    id: "GEN".into(),
                    name: "get_current_weather".into(),
                    input: json!({"location": "Boston, MA"}),
                    signature: Some("CiQB0e2Kb...".into()),
                },
                // 70 prompt (20 cached), 8 candidates + 42 thoughts.
                usage(50, 50, 20, 0),
                stop(StopReason::ToolUse),
            ],
        ),
    ]
}

#[test]
fn documented_streams_decode_to_the_expected_events() {
    for (kind, file, expected) in cases() {
        let body = fixture(file);
        let events = normalize_ids(decode_sse_body(kind, body.as_bytes()).unwrap());
        assert_eq!(events, expected, "{file}");
        // Same result with CRLF line endings.
        let crlf = body.replace('\n', "\r\n");
        let events = normalize_ids(decode_sse_body(kind, crlf.as_bytes()).unwrap());
        assert_eq!(events, expected, "{file} (CRLF)");
    }
}

#[test]
fn documented_error_event_decodes_to_overloaded() {
    let err = decode_sse_body(
        ProviderKind::Anthropic,
        fixture("anthropic_error.sse").as_bytes(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), "overloaded");
    assert!(err.is_retryable());
    let err =
        decode_sse_body(ProviderKind::Google, fixture("gemini_error.sse").as_bytes()).unwrap_err();
    assert_eq!(err.kind(), "server");
    assert!(err.is_retryable());
    assert!(err.to_string().contains("overloaded"), "{err}");
}

#[tokio::test]
async fn documented_streams_over_http_in_small_chunks() {
    for (kind, file, expected) in cases() {
        // Serve the fixture verbatim, 7 bytes per write with a pause, so the
        // client sees events split across reads.
        let body = fixture(file);
        let mut events = Vec::new();
        let mut piece = String::new();
        for ch in body.chars() {
            piece.push(ch);
            if piece.len() >= 7 {
                events.push(EventSpec::Raw(std::mem::take(&mut piece)));
                events.push(EventSpec::DelayMs(1));
            }
        }
        events.push(EventSpec::Raw(piece));
        let scenario = Scenario {
            name: None,
            steps: vec![Step::reply(Response {
                events,
                verbatim: true,
                ..Response::default()
            })],
        };
        let server = MockServer::start(scenario).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let (got, error) = drain(provider.stream(
            ChatRequest::new(model_for(kind), vec![ChatMessage::user("hi")]),
            CancellationToken::new(),
        ))
        .await;
        assert_eq!(error, None, "{file}");
        let got = normalize_ids(got);
        assert_eq!(got, expected, "{file} over HTTP");
        server.assert_no_violations();
    }
}
