#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Every provider client against the mock server over real HTTP and SSE:
//! text, reasoning, tool calls with streamed arguments, usage, and a
//! multi-turn tool conversation checked by the mock's protocol invariants.

mod common;

use common::*;
use mia_providers::{
    CancellationToken, ChatMessage, ChatRequest, ChatRole, ContentPart, ProviderKind,
    ReasoningEffort, StopReason, StreamEvent, TokenUsage, ToolDefinition, collect,
};
use mia_testkit::{ApiKind, MockServer, Scenario};
use serde_json::json;

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "read".into(),
        description: "Read a file".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }]
}

fn full_scenario() -> Scenario {
    Scenario::from_json(
        r#"{"steps": [{"response": {
            "usage": {"input": 100, "output": 20, "cache_read": 50, "cache_write": 10},
            "events": [
                {"reasoning": "Let me think"}, {"reasoning": " about it."},
                {"text": "I'll read "}, {"text": "the file."},
                {"tool_call": {"id": "call_read_1", "name": "read", "arguments": {"path": "src/main.rs"}, "chunks": 4}}
            ]}}]}"#,
    )
    .unwrap()
}

#[tokio::test]
async fn all_providers_stream_text_reasoning_tool_calls_and_usage() {
    for kind in KINDS {
        let server = MockServer::start(full_scenario()).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let mut req = ChatRequest::new(model_for(kind), vec![ChatMessage::user("read main")]);
        req.system = "You are a test.".into();
        req.tools = tools();
        req.reasoning_effort = Some(ReasoningEffort::Low);
        req.max_tokens = Some(4096);
        let (events, error) = drain(provider.stream(req, CancellationToken::new())).await;
        assert_eq!(error, None, "{kind:?}");

        let reasoning: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ReasoningDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasoning, "Let me think about it.", "{kind:?}");
        let text_deltas: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            text_deltas,
            ["I'll read ", "the file."],
            "{kind:?}: deltas arrive as sent"
        );

        let arg_fragments: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { arguments, .. } => Some(arguments.as_str()),
                _ => None,
            })
            .collect();
        let joined: String = arg_fragments.concat();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&joined).unwrap(),
            json!({"path": "src/main.rs"}),
            "{kind:?}"
        );
        if kind != ProviderKind::Google {
            assert_eq!(
                arg_fragments.len(),
                4,
                "{kind:?}: arguments streamed in fragments"
            );
        }
        // Order: start before deltas before end.
        let pos = |f: &dyn Fn(&StreamEvent) -> bool| events.iter().position(f).unwrap();
        let start = pos(&|e| matches!(e, StreamEvent::ToolCallStart { .. }));
        let first_delta = pos(&|e| matches!(e, StreamEvent::ToolCallDelta { .. }));
        let end = pos(&|e| matches!(e, StreamEvent::ToolCallEnd { .. }));
        assert!(start < first_delta && first_delta < end, "{kind:?}");

        let c = completion_of(&events);
        assert_eq!(c.tool_calls.len(), 1);
        assert_eq!(c.tool_calls[0].name, "read");
        assert_eq!(c.tool_calls[0].input, json!({"path": "src/main.rs"}));
        assert_eq!(c.stop, Some(StopReason::ToolUse), "{kind:?}");
        let expected_usage = match kind {
            ProviderKind::Anthropic => TokenUsage {
                input: 100,
                output: 20,
                cache_read: 50,
                cache_write: 10,
            },
            // OpenAI and Gemini report no cache writes.
            _ => TokenUsage {
                input: 100,
                output: 20,
                cache_read: 50,
                cache_write: 0,
            },
        };
        assert_eq!(c.usage, Some(expected_usage), "{kind:?}");
        assert!(
            matches!(events.last(), Some(StreamEvent::Stop { .. })),
            "{kind:?}"
        );
        if kind == ProviderKind::Anthropic {
            assert_eq!(c.tool_calls[0].id, "call_read_1");
            assert!(c.reasoning_signature.is_some(), "thinking signature kept");
        }

        // What was sent.
        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        let r = &reqs[0];
        assert_eq!(r.model, model_for(kind));
        assert_eq!(r.system(), "You are a test.");
        match kind {
            ProviderKind::Anthropic => {
                assert_eq!(r.api, ApiKind::Anthropic);
                assert_eq!(r.header("x-api-key"), Some("<redacted>"));
                assert_eq!(r.body["tools"][0]["name"], "read");
                assert_eq!(r.body["thinking"]["type"], "enabled");
            }
            ProviderKind::OpenAi => {
                assert_eq!(r.header("authorization"), Some("<redacted>"));
                assert_eq!(r.body["tools"][0]["function"]["name"], "read");
                // gpt-4.1 is not a reasoning model: the effort is not sent.
                assert!(r.body.get("reasoning_effort").is_none());
            }
            ProviderKind::Google => {
                assert_eq!(r.header("x-goog-api-key"), Some("<redacted>"));
                assert_eq!(
                    r.body["tools"][0]["functionDeclarations"][0]["name"],
                    "read"
                );
            }
        }
        server.assert_no_violations();
    }
}

#[tokio::test]
async fn multi_turn_tool_conversation_passes_protocol_invariants() {
    for kind in KINDS {
        let scenario = Scenario::from_json(
            r#"{"steps": [
                {"match": {"last_message_contains": "list the files"},
                 "response": {"events": [{"text": "Looking."}, {"tool_call": {"name": "glob", "arguments": {"pattern": "*.rs"}}}]}},
                {"match": {"last_message_contains": "main.rs"},
                 "response": {"events": [{"text": "There is one file: main.rs"}]}}
            ]}"#,
        )
        .unwrap();
        let server = MockServer::start(scenario).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let mut messages = vec![ChatMessage::user("please list the files")];
        let mut req = ChatRequest::new(model_for(kind), messages.clone());
        req.tools = tools();
        let first = collect(provider.stream(req.clone(), CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(first.stop, Some(StopReason::ToolUse));
        let call = first.tool_calls[0].clone();
        assert_eq!(call.name, "glob");
        let mut assistant = vec![ContentPart::text(first.text.clone())];
        assistant.push(ContentPart::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            signature: call.signature.clone(),
        });
        messages.push(ChatMessage {
            role: ChatRole::Assistant,
            content: assistant,
        });
        messages.push(ChatMessage {
            role: ChatRole::User,
            content: vec![ContentPart::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: "src/main.rs".into(),
                is_error: false,
            }],
        });
        req.messages = messages;
        let second = collect(provider.stream(req, CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(second.text, "There is one file: main.rs", "{kind:?}");
        assert_eq!(second.stop, Some(StopReason::EndTurn));
        assert_eq!(server.unused_steps(), Vec::<usize>::new(), "{kind:?}");
        assert_eq!(server.requests()[1].conversation().len(), 3, "{kind:?}");
        server.assert_no_violations();
    }
}

#[tokio::test]
async fn the_mock_flags_a_tool_result_that_answers_nothing() {
    for kind in KINDS {
        let server = MockServer::start(Scenario::text(&["ok"])).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let req = ChatRequest::new(
            model_for(kind),
            vec![
                ChatMessage::user("hi"),
                ChatMessage::assistant("hello"),
                ChatMessage {
                    role: ChatRole::User,
                    content: vec![ContentPart::ToolResult {
                        call_id: "never_sent".into(),
                        name: "ghost".into(),
                        content: "x".into(),
                        is_error: false,
                    }],
                },
            ],
        );
        let c = collect(provider.stream(req, CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(c.text, "ok");
        let v = server.take_violations();
        assert_eq!(v.len(), 1, "{kind:?}: {v:?}");
        assert!(v[0].contains("answers no tool call"), "{kind:?}: {v:?}");
    }
}

#[tokio::test]
async fn openai_compatible_base_url_serves_local_provider_without_key() {
    let server = MockServer::start(Scenario::text(&["local ", "model"]))
        .await
        .unwrap();
    let provider = mia_providers::build_provider(
        mia_providers::ProviderConfig::new("local")
            .with_base_url(server.openai_base_url())
            .with_options(fast_options()),
    )
    .unwrap();
    assert_eq!(provider.id(), "local");
    let mut req = ChatRequest::new("llama3.2", vec![ChatMessage::user("hi")]);
    req.max_tokens = Some(50);
    let c = collect(provider.stream(req, CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(c.text, "local model");
    let r = &server.requests()[0];
    assert_eq!(r.header("authorization"), None, "no key, no header");
    assert_eq!(
        r.body["max_tokens"], 50,
        "compatible servers get max_tokens"
    );
    assert_eq!(
        mia_providers::catalog::builtin().cost(
            &mia_providers::ModelRef::new("local", "llama3.2"),
            &c.usage.unwrap()
        ),
        None,
        "unknown model: unknown cost"
    );
}

#[tokio::test]
async fn max_tokens_and_content_filter_stop_reasons_map() {
    let cases = [
        (ProviderKind::Anthropic, "max_tokens", StopReason::MaxTokens),
        (ProviderKind::OpenAi, "length", StopReason::MaxTokens),
        (
            ProviderKind::OpenAi,
            "content_filter",
            StopReason::ContentFilter,
        ),
        (ProviderKind::Google, "MAX_TOKENS", StopReason::MaxTokens),
        (ProviderKind::Google, "SAFETY", StopReason::ContentFilter),
    ];
    for (kind, wire, expected) in cases {
        let scenario = Scenario::from_json(&format!(
            r#"{{"steps": [{{"response": {{"events": [{{"text": "partial"}}], "stop": "{wire}"}}}}]}}"#
        ))
        .unwrap();
        let server = MockServer::start(scenario).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let c = collect(provider.stream(
            ChatRequest::new(model_for(kind), vec![ChatMessage::user("hi")]),
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        assert_eq!(c.stop, Some(expected), "{kind:?} {wire}");
    }
}

#[tokio::test]
async fn images_are_sent_in_each_providers_format() {
    for kind in KINDS {
        let server = MockServer::start(Scenario::text(&["a cat"])).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let req = ChatRequest::new(
            model_for(kind),
            vec![ChatMessage {
                role: ChatRole::User,
                content: vec![
                    ContentPart::text("what is this?"),
                    ContentPart::Image {
                        media_type: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                    },
                ],
            }],
        );
        let c = collect(provider.stream(req, CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(c.text, "a cat");
        let body = &server.requests()[0].body;
        match kind {
            ProviderKind::Anthropic => {
                let img = &body["messages"][0]["content"][1];
                assert_eq!(img["type"], "image");
                assert_eq!(
                    img["source"],
                    json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
                );
            }
            ProviderKind::OpenAi => {
                let img = &body["messages"][0]["content"][1];
                assert_eq!(img["type"], "image_url");
                assert_eq!(
                    img["image_url"]["url"],
                    "data:image/png;base64,iVBORw0KGgo="
                );
            }
            ProviderKind::Google => {
                let img = &body["contents"][0]["parts"][1];
                assert_eq!(
                    img["inlineData"],
                    json!({"mimeType": "image/png", "data": "iVBORw0KGgo="})
                );
            }
        }
        server.assert_no_violations();
    }
}

#[tokio::test]
async fn temperature_and_max_tokens_reach_the_wire() {
    for kind in KINDS {
        let server = MockServer::start(Scenario::text(&["ok"])).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let mut req = ChatRequest::new(model_for(kind), vec![ChatMessage::user("hi")]);
        req.temperature = Some(0.5);
        req.max_tokens = Some(321);
        collect(provider.stream(req, CancellationToken::new()))
            .await
            .unwrap();
        let body = &server.requests()[0].body;
        let (t, m) = match kind {
            ProviderKind::Anthropic => (&body["temperature"], &body["max_tokens"]),
            ProviderKind::OpenAi => (&body["temperature"], &body["max_completion_tokens"]),
            ProviderKind::Google => (
                &body["generationConfig"]["temperature"],
                &body["generationConfig"]["maxOutputTokens"],
            ),
        };
        assert_eq!((t.as_f64(), m.as_u64()), (Some(0.5), Some(321)), "{kind:?}");
    }
}

fn bundled(name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mia-testkit/scenarios")
        .join(name);
    Scenario::from_file(&path).unwrap()
}

#[tokio::test]
async fn bundled_scenarios_drive_every_provider() {
    for kind in KINDS {
        // tool-loop.json: a tool round trip.
        let server = MockServer::start(bundled("tool-loop.json")).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let mut req = ChatRequest::new(
            model_for(kind),
            vec![ChatMessage::user("Summarise the README")],
        );
        req.tools = tools();
        let first = collect(provider.stream(req.clone(), CancellationToken::new()))
            .await
            .unwrap();
        let call = &first.tool_calls[0];
        assert_eq!(call.input, json!({"path": "README.md"}));
        req.messages.push(ChatMessage {
            role: ChatRole::Assistant,
            content: vec![
                ContentPart::text(first.text.clone()),
                ContentPart::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input: call.input.clone(),
                    signature: call.signature.clone(),
                },
            ],
        });
        req.messages.push(ChatMessage {
            role: ChatRole::User,
            content: vec![ContentPart::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: "# mia-code\nA desktop agent.".into(),
                is_error: false,
            }],
        });
        let second = collect(provider.stream(req, CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(second.text, "The README describes the project.", "{kind:?}");
        assert_eq!(second.usage.unwrap().cache_read, 1100, "{kind:?}");
        assert!(server.unused_steps().is_empty());
        server.assert_no_violations();

        // flaky-provider.json: 429 + overloaded are retried, a cut after
        // content fails the request with the partial text, the next request works.
        let server = MockServer::start(bundled("flaky-provider.json"))
            .await
            .unwrap();
        let provider = client(kind, &server, fast_options());
        let req = ChatRequest::new(model_for(kind), vec![ChatMessage::user("hi")]);
        let failure = collect(provider.stream(req.clone(), CancellationToken::new()))
            .await
            .unwrap_err();
        assert_eq!(failure.error.kind(), "interrupted", "{kind:?}");
        assert_eq!(failure.partial.text, "Half an answ");
        assert_eq!(failure.partial.retries, 2, "{kind:?}");
        let ok = collect(provider.stream(req, CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(ok.text, "A full answer.");
        assert_eq!(server.request_count(), 4);
    }
}
