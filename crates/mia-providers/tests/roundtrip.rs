#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Generated responses (random mixes of text, reasoning and tool calls with
//! awkward characters and argument fragmentation) round-trip through the
//! mock server's rendering of each wire format and the real client.

mod common;

use common::*;
use mia_providers::{CancellationToken, ChatMessage, ChatRequest, ProviderKind, collect};
use mia_testkit::{EventSpec, MockServer, Response, Scenario, Step, ToolCallSpec};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Ev {
    Text(String),
    Reasoning(String),
    Tool(String, String, usize),
}

fn piece() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 \"\\\\\n{}:,é€😀]{1,12}"
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        4 => piece().prop_map(Ev::Text),
        2 => piece().prop_map(Ev::Reasoning),
        1 => ("[a-z_]{1,8}", piece(), 1usize..6).prop_map(|(n, v, c)| Ev::Tool(n, v, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn generated_streams_round_trip(events in proptest::collection::vec(ev(), 1..20)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let mut specs = Vec::new();
            let (mut text, mut reasoning, mut calls) = (String::new(), String::new(), Vec::new());
            for (i, e) in events.iter().enumerate() {
                match e {
                    Ev::Text(t) => { text.push_str(t); specs.push(EventSpec::Text(t.clone())); }
                    Ev::Reasoning(t) => { reasoning.push_str(t); specs.push(EventSpec::Reasoning(t.clone())); }
                    Ev::Tool(name, value, chunks) => {
                        let args = json!({"value": value, "n": i});
                        calls.push((name.clone(), args.clone()));
                        specs.push(EventSpec::ToolCall(ToolCallSpec {
                            id: Some(format!("call_{i}")),
                            name: name.clone(),
                            arguments: args,
                            chunks: Some(*chunks),
                        }));
                    }
                }
            }
            for kind in KINDS {
                let scenario = Scenario {
                    name: None,
                    steps: vec![Step::reply(Response { events: specs.clone(), ..Response::default() })],
                };
                let server = MockServer::start(scenario).await.unwrap();
                let provider = client(kind, &server, fast_options());
                let c = collect(provider.stream(
                    ChatRequest::new(model_for(kind), vec![ChatMessage::user("go")]),
                    CancellationToken::new(),
                ))
                .await
                .unwrap();
                assert_eq!(c.text, text, "{kind:?}");
                assert_eq!(c.reasoning, reasoning, "{kind:?}");
                let got: Vec<_> = c.tool_calls.iter().map(|t| (t.name.clone(), t.input.clone())).collect();
                assert_eq!(got, calls, "{kind:?}");
                if kind != ProviderKind::Google {
                    let ids: Vec<_> = c.tool_calls.iter().map(|t| t.id.clone()).collect();
                    let want: Vec<_> = events.iter().enumerate()
                        .filter(|(_, e)| matches!(e, Ev::Tool(..)))
                        .map(|(i, _)| format!("call_{i}"))
                        .collect();
                    assert_eq!(ids, want, "{kind:?}");
                }
                server.assert_no_violations();
            }
        });
    }
}
