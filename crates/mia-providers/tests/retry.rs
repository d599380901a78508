#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Every retry, timeout and cancel rule, driven through the mock server.
//! Backoff is scaled down 100x (`fast_options`) and jitter is off, so the
//! exact schedule is visible in the `Retrying` events.

mod common;

use std::time::{Duration, Instant};

use common::*;
use mia_providers::{
    CancellationToken, ChatMessage, ChatRequest, ClientOptions, ProviderError, ProviderKind,
    RetryPolicy, StreamEvent, TimeoutPhase, Timeouts,
};
use mia_testkit::{MockServer, Scenario, StalledListener};

fn req(kind: ProviderKind) -> ChatRequest {
    ChatRequest::new(model_for(kind), vec![ChatMessage::user("hello")])
}

fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap()
}

async fn run(
    kind: ProviderKind,
    scenario_json: &str,
    options: ClientOptions,
) -> (Vec<StreamEvent>, Option<ProviderError>, MockServer) {
    let server = MockServer::start(scenario(scenario_json)).await.unwrap();
    let provider = client(kind, &server, options);
    let (events, error) = drain(provider.stream(req(kind), CancellationToken::new())).await;
    (events, error, server)
}

const OK: &str = r#"{"response": {"events": [{"text": "recovered"}]}}"#;

#[tokio::test]
async fn retryable_statuses_are_retried_then_succeed() {
    for kind in KINDS {
        for status in [408, 409, 429, 500, 502, 503, 504] {
            let json = format!(r#"{{"steps": [{{"response": {{"status": {status}}}}}, {OK}]}}"#);
            let (events, error, server) = run(kind, &json, fast_options()).await;
            assert_eq!(error, None, "{kind:?} {status}");
            assert_eq!(
                completion_of(&events).text,
                "recovered",
                "{kind:?} {status}"
            );
            assert_eq!(retry_delays(&events).len(), 1, "{kind:?} {status}");
            assert_eq!(server.request_count(), 2);
        }
    }
}

#[tokio::test]
async fn anthropic_529_overloaded_is_retried_with_the_slow_backoff() {
    let json = format!(r#"{{"steps": [{{"response": {{"status": 529}}, "times": 2}}, {OK}]}}"#);
    let (events, error, _) = run(ProviderKind::Anthropic, &json, fast_options()).await;
    assert_eq!(error, None);
    // 1 s · 2ⁿ scaled by 0.01.
    assert_eq!(retry_delays(&events), vec![10, 20]);
}

#[tokio::test]
async fn never_retried_statuses_fail_at_once() {
    let cases: &[(ProviderKind, u16, &str, &str)] = &[
        (ProviderKind::Anthropic, 400, "bad", "bad_request"),
        (ProviderKind::Anthropic, 401, "invalid x-api-key", "auth"),
        (ProviderKind::OpenAi, 403, "forbidden", "auth"),
        (ProviderKind::Google, 404, "model not found", "bad_request"),
        (
            ProviderKind::Anthropic,
            413,
            "request too large",
            "bad_request",
        ),
        (ProviderKind::OpenAi, 422, "unprocessable", "bad_request"),
        (
            ProviderKind::Anthropic,
            400,
            "prompt is too long: 210000 tokens > 200000 maximum",
            "context_too_long",
        ),
        (
            ProviderKind::Google,
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            "context_too_long",
        ),
    ];
    for (kind, status, message, expected) in cases {
        let json = format!(
            r#"{{"steps": [{{"response": {{"status": {status}, "message": "{message}"}}}}, {OK}]}}"#
        );
        let (events, error, server) = run(*kind, &json, fast_options()).await;
        let error = error.expect("must fail");
        assert_eq!(error.kind(), *expected, "{kind:?} {status}: {error}");
        assert!(retry_delays(&events).is_empty(), "{kind:?} {status}");
        assert_eq!(server.request_count(), 1, "{kind:?} {status}: not retried");
    }
}

#[tokio::test]
async fn openai_context_length_code_and_quota_429_are_not_retried() {
    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 400, "body": {{"error": {{"message": "This model's maximum context length is 128000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}}}}}}}, {OK}]}}"#
    );
    let (_, error, server) = run(ProviderKind::OpenAi, &json, fast_options()).await;
    assert_eq!(error.unwrap().kind(), "context_too_long");
    assert_eq!(server.request_count(), 1);

    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 429, "body": {{"error": {{"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "code": "insufficient_quota"}}}}}}}}, {OK}]}}"#
    );
    let (_, error, server) = run(ProviderKind::OpenAi, &json, fast_options()).await;
    let error = error.unwrap();
    assert_eq!(error.kind(), "quota");
    assert!(error.to_string().contains("billing"), "{error}");
    assert_eq!(server.request_count(), 1);

    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 429, "body": {{"error": {{"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED", "details": [{{"violations": [{{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}]}}]}}}}}}}}, {OK}]}}"#
    );
    let (_, error, server) = run(ProviderKind::Google, &json, fast_options()).await;
    assert_eq!(error.unwrap().kind(), "quota");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn at_most_four_retries_with_exponential_backoff() {
    let json = r#"{"steps": [{"response": {"status": 500}, "times": 10}]}"#;
    let (events, error, server) = run(ProviderKind::Anthropic, json, fast_options()).await;
    assert_eq!(error.unwrap().kind(), "server");
    assert_eq!(server.request_count(), 5, "1 attempt + 4 retries");
    // 0.5 s · 2ⁿ scaled by 0.01: 5, 10, 20, 40 ms.
    assert_eq!(retry_delays(&events), vec![5, 10, 20, 40]);

    let json = r#"{"steps": [{"response": {"status": 429}, "times": 10}]}"#;
    let (events, error, server) = run(ProviderKind::OpenAi, json, fast_options()).await;
    assert_eq!(error.unwrap().kind(), "rate_limited");
    assert_eq!(server.request_count(), 5);
    // 1 s · 2ⁿ scaled by 0.01.
    assert_eq!(retry_delays(&events), vec![10, 20, 40, 80]);
}

#[tokio::test]
async fn backoff_is_capped() {
    let mut options = fast_options();
    options.retry.max_retries = 7;
    let json = r#"{"steps": [{"response": {"status": 503}, "times": 10}]}"#;
    let (events, _, _) = run(ProviderKind::Google, json, options.clone()).await;
    // cap 8 s scaled: 80 ms.
    assert_eq!(retry_delays(&events), vec![5, 10, 20, 40, 80, 80, 80]);
    let json = r#"{"steps": [{"response": {"status": 529}, "times": 10}]}"#;
    let (events, _, _) = run(ProviderKind::Anthropic, json, options).await;
    // cap 30 s scaled: 300 ms.
    assert_eq!(retry_delays(&events), vec![10, 20, 40, 80, 160, 300, 300]);
}

#[tokio::test]
async fn retry_after_headers_are_honoured() {
    // retry-after: 2 s, scaled by 0.05 → 100 ms, and the wait really happens.
    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 429, "headers": {{"retry-after": "2"}}}}}}, {OK}]}}"#
    );
    let started = Instant::now();
    let (events, error, _) = run(ProviderKind::Anthropic, &json, fast_options()).await;
    assert_eq!(error, None);
    assert_eq!(retry_delays(&events), vec![100]);
    assert!(started.elapsed() >= Duration::from_millis(100));

    // retry-after-ms wins over retry-after.
    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 503, "headers": {{"retry-after-ms": "1500", "retry-after": "9"}}}}}}, {OK}]}}"#
    );
    let (events, error, _) = run(ProviderKind::OpenAi, &json, fast_options()).await;
    assert_eq!(error, None);
    // 1.5 s scaled by 0.05; a 5xx's retry header is honoured too.
    assert_eq!(retry_delays(&events), vec![75]);

    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 429, "headers": {{"retry-after-ms": "1500"}}}}}}, {OK}]}}"#
    );
    let (events, error, _) = run(ProviderKind::OpenAi, &json, fast_options()).await;
    assert_eq!(error, None);
    assert_eq!(retry_delays(&events), vec![75]);
}

#[tokio::test]
async fn retry_after_longer_than_60s_falls_back_to_backoff() {
    // 120 s scaled by 0.05 is 6 s, above the scaled 0.6 s limit: the
    // exponential backoff is used instead, and the final error keeps the
    // server's wait for the user.
    let json = r#"{"steps": [{"response": {"status": 429, "headers": {"retry-after": "120"}}, "times": 10}]}"#;
    let (events, error, server) = run(ProviderKind::Anthropic, json, fast_options()).await;
    let error = error.unwrap();
    assert_eq!(error.retry_after(), Some(Duration::from_secs(120)));
    assert!(error.to_string().contains("retry after 120s"), "{error}");
    assert_eq!(retry_delays(&events), vec![10, 20, 40, 80]);
    assert_eq!(server.request_count(), 5);

    // Within the limit it is waited for exactly.
    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 429, "headers": {{"retry-after": "12"}}}}}}, {OK}]}}"#
    );
    let (events, error, _) = run(ProviderKind::Anthropic, &json, fast_options()).await;
    assert_eq!(error, None);
    assert_eq!(retry_delays(&events), vec![600]);
}

#[tokio::test]
async fn error_event_before_content_is_retried_after_content_is_not() {
    // Anthropic overloaded_error event as the first thing in the stream.
    let json = format!(
        r#"{{"steps": [{{"response": {{"events": [{{"error": {{"type": "overloaded_error", "message": "Overloaded"}}}}]}}}}, {OK}]}}"#
    );
    let (events, error, server) = run(ProviderKind::Anthropic, &json, fast_options()).await;
    assert_eq!(error, None);
    assert_eq!(completion_of(&events).text, "recovered");
    assert_eq!(server.request_count(), 2);

    for kind in KINDS {
        let json = format!(
            r#"{{"steps": [{{"response": {{"events": [{{"text": "Half an ans"}}, {{"error": {{}}}}]}}}}, {OK}]}}"#
        );
        let (events, error, server) = run(kind, &json, fast_options()).await;
        let error = error.unwrap();
        let ProviderError::Interrupted { cause, .. } = &error else {
            panic!("{kind:?}: expected Interrupted, got {error:?}");
        };
        assert!(
            cause.is_retryable(),
            "{kind:?}: the cause was a transient error: {cause}"
        );
        assert_eq!(
            completion_of(&events).text,
            "Half an ans",
            "{kind:?}: partial output kept"
        );
        assert_eq!(
            server.request_count(),
            1,
            "{kind:?}: not retried after content"
        );
    }
}

#[tokio::test]
async fn stream_cut_before_content_is_retried() {
    for kind in KINDS {
        let json =
            format!(r#"{{"steps": [{{"response": {{"events": [{{"cut": true}}]}}}}, {OK}]}}"#);
        let (events, error, server) = run(kind, &json, fast_options()).await;
        assert_eq!(error, None, "{kind:?}");
        assert_eq!(completion_of(&events).text, "recovered");
        assert_eq!(server.request_count(), 2);
    }
}

#[tokio::test]
async fn stream_cut_after_content_keeps_partial_output() {
    for kind in KINDS {
        let json = format!(
            r#"{{"steps": [{{"response": {{"events": [{{"text": "Hello, "}}, {{"text": "wor"}}, {{"cut": true}}]}}}}, {OK}]}}"#
        );
        let (events, error, server) = run(kind, &json, fast_options()).await;
        let error =
            error.unwrap_or_else(|| panic!("{kind:?}: {events:?} {:?}", server.requests().len()));
        assert_eq!(error.kind(), "interrupted", "{kind:?}: {error}");
        let ProviderError::Interrupted { cause, .. } = &error else {
            unreachable!()
        };
        assert_eq!(cause.kind(), "network", "{kind:?}");
        let partial = completion_of(&events);
        assert_eq!(partial.text, "Hello, wor", "{kind:?}");
        if kind == ProviderKind::Anthropic {
            // message_start reported the input tokens: the partial response can be costed.
            assert_eq!(partial.usage.map(|u| u.input), Some(10), "{kind:?}");
        }
        assert_eq!(server.request_count(), 1, "{kind:?}");
    }
}

#[tokio::test]
async fn a_tool_call_cut_mid_arguments_is_never_retried_or_executed() {
    for kind in [ProviderKind::Anthropic, ProviderKind::OpenAi] {
        let json = format!(
            r#"{{"steps": [{{"response": {{"events": [
                {{"text": "Running it."}},
                {{"raw": "{}"}},
                {{"cut": true}}]}}}}, {OK}]}}"#,
            match kind {
                ProviderKind::Anthropic =>
                    r#"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_cut\",\"name\":\"bash\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"rm -rf bu\"}}\n\n"#,
                _ =>
                    r#"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"toolu_cut\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\": \\\"rm -rf bu\"}}]},\"finish_reason\":null}]}\n\n"#,
            }
        );
        let (events, error, server) = run(kind, &json, fast_options()).await;
        assert_eq!(error.unwrap().kind(), "interrupted", "{kind:?}");
        let c = completion_of(&events);
        assert!(c.tool_calls.is_empty(), "{kind:?}: no finished call");
        assert_eq!(
            c.incomplete_tool_calls,
            vec!["toolu_cut".to_string()],
            "{kind:?}"
        );
        assert_eq!(server.request_count(), 1, "{kind:?}");
    }
}

#[tokio::test]
async fn early_clean_end_and_malformed_events() {
    for kind in KINDS {
        // Stream ends cleanly but without its closing events, after content.
        let json = format!(
            r#"{{"steps": [{{"response": {{"events": [{{"text": "partial"}}], "finish": false}}}}, {OK}]}}"#
        );
        let (events, error, server) = run(kind, &json, fast_options()).await;
        assert_eq!(error.unwrap().kind(), "interrupted", "{kind:?}");
        assert_eq!(completion_of(&events).text, "partial");
        assert_eq!(server.request_count(), 1);

        // Malformed JSON after content: partial output + typed error.
        let json = format!(
            r#"{{"steps": [{{"response": {{"events": [{{"text": "ok so far"}}, {{"malformed": "{{not json"}}]}}}}, {OK}]}}"#
        );
        let (events, error, _) = run(kind, &json, fast_options()).await;
        let error = error.unwrap();
        let ProviderError::Interrupted { cause, .. } = &error else {
            panic!("{kind:?}: {error:?}")
        };
        assert_eq!(cause.kind(), "invalid_response", "{kind:?}");
        assert_eq!(completion_of(&events).text, "ok so far");

        // Malformed before content: retried like any transient failure.
        let json = format!(
            r#"{{"steps": [{{"response": {{"events": [{{"malformed": "{{not json"}}]}}}}, {OK}]}}"#
        );
        let (events, error, _) = run(kind, &json, fast_options()).await;
        assert_eq!(error, None, "{kind:?}");
        assert_eq!(completion_of(&events).text, "recovered");
    }
}

fn idle_options(idle_ms: u64) -> ClientOptions {
    let mut o = fast_options();
    o.timeouts.idle = Duration::from_millis(idle_ms);
    o
}

#[tokio::test]
async fn idle_timeout_waiting_for_headers_is_retried() {
    let json = format!(r#"{{"steps": [{{"response": {{"headers_delay_ms": 8000}}}}, {OK}]}}"#);
    let started = Instant::now();
    let (events, error, server) = run(ProviderKind::OpenAi, &json, idle_options(1000)).await;
    assert_eq!(error, None);
    assert_eq!(completion_of(&events).text, "recovered");
    assert_eq!(server.request_count(), 2);
    let reason = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .unwrap();
    assert!(reason.contains("idle timeout"), "{reason}");
    assert!(
        started.elapsed() < Duration::from_millis(7000),
        "did not wait for the slow server"
    );
}

#[tokio::test]
async fn idle_timeout_mid_stream() {
    // Silence before any content: retried.
    let json = format!(
        r#"{{"steps": [{{"response": {{"events": [{{"delay_ms": 8000}}, {{"text": "late"}}]}}}}, {OK}]}}"#
    );
    let (events, error, server) = run(ProviderKind::Google, &json, idle_options(1000)).await;
    assert_eq!(error, None);
    assert_eq!(completion_of(&events).text, "recovered");
    assert_eq!(server.request_count(), 2);

    // Silence after content: partial output and a typed timeout.
    let json = format!(
        r#"{{"steps": [{{"response": {{"events": [{{"text": "early"}}, {{"delay_ms": 8000}}, {{"text": "late"}}]}}}}, {OK}]}}"#
    );
    let (events, error, server) = run(ProviderKind::Anthropic, &json, idle_options(1000)).await;
    let error = error.unwrap();
    let ProviderError::Interrupted { cause, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(
        matches!(
            **cause,
            ProviderError::Timeout {
                phase: TimeoutPhase::Idle,
                ..
            }
        ),
        "{cause:?}"
    );
    assert_eq!(completion_of(&events).text, "early");
    assert_eq!(server.request_count(), 1);

    // Anthropic pings keep a slow stream alive: chunk delay below the idle limit.
    let json = r#"{"steps": [{"response": {"chunk_delay_ms": 100, "events": [{"text": "a"}, {"text": "b"}]}}]}"#;
    let (events, error, _) = run(ProviderKind::Anthropic, json, idle_options(1000)).await;
    assert_eq!(error, None);
    assert_eq!(completion_of(&events).text, "ab");
}

#[tokio::test]
async fn connect_timeout_is_retried_and_reported() {
    let stalled = StalledListener::start().await.unwrap();
    let mut options = fast_options();
    options.timeouts.connect = Duration::from_millis(200);
    options.retry.max_retries = 1;
    let provider = mia_providers::build_provider(
        mia_providers::ProviderConfig::new("anthropic")
            .with_base_url(format!("http://{}", stalled.addr))
            .with_api_key("k")
            .with_options(options),
    )
    .unwrap();
    let started = Instant::now();
    let (events, error) =
        drain(provider.stream(req(ProviderKind::Anthropic), CancellationToken::new())).await;
    let error = error.unwrap();
    assert!(
        matches!(
            error,
            ProviderError::Timeout {
                phase: TimeoutPhase::Connect,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(retry_delays(&events).len(), 1);
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "two 200 ms connect waits"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn connection_refused_is_a_retried_network_error() {
    // Bind then drop a listener so the port is (very likely) closed.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let provider = mia_providers::build_provider(
        mia_providers::ProviderConfig::new("openai")
            .with_base_url(format!("http://{addr}/v1"))
            .with_api_key("k")
            .with_options(fast_options()),
    )
    .unwrap();
    let (events, error) =
        drain(provider.stream(req(ProviderKind::OpenAi), CancellationToken::new())).await;
    let error = error.unwrap();
    assert_eq!(error.kind(), "network", "{error}");
    assert!(
        error.to_string().contains("base URL"),
        "actionable: {error}"
    );
    assert_eq!(retry_delays(&events), vec![5, 10, 20, 40]);
}

#[tokio::test]
async fn cancel_interrupts_a_retry_wait_at_once() {
    // A 30 s retry-after (not scaled) would hold the request; cancel ends it.
    let json = format!(
        r#"{{"steps": [{{"response": {{"status": 429, "headers": {{"retry-after": "30"}}}}}}, {OK}]}}"#
    );
    let server = MockServer::start(scenario(&json)).await.unwrap();
    let mut options = fast_options();
    options.retry_after_scale = 1.0;
    options.retry.max_retry_after = Duration::from_secs(60);
    let provider = client(ProviderKind::Anthropic, &server, options);
    let cancel = CancellationToken::new();
    let mut stream = provider.stream(req(ProviderKind::Anthropic), cancel.clone());
    use futures_util::StreamExt;
    let first = stream.next().await.unwrap().unwrap();
    assert!(
        matches!(
            first,
            StreamEvent::Retrying {
                delay_ms: 30_000,
                ..
            }
        ),
        "{first:?}"
    );
    let started = Instant::now();
    cancel.cancel();
    let next = tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("cancel must end the wait at once");
    assert_eq!(next, Some(Err(ProviderError::Cancelled)));
    assert!(started.elapsed() < Duration::from_millis(2000));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn cancel_interrupts_a_stream_and_keeps_partial_output() {
    for kind in KINDS {
        let json = r#"{"steps": [{"response": {"events": [{"text": "first"}, {"delay_ms": 20000}, {"text": "never"}]}}]}"#;
        let server = MockServer::start(scenario(json)).await.unwrap();
        let provider = client(kind, &server, fast_options());
        let cancel = CancellationToken::new();
        let mut stream = provider.stream(req(kind), cancel.clone());
        use futures_util::StreamExt;
        let mut text = String::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while text.is_empty() {
            assert!(Instant::now() < deadline, "no text arrived");
            if let Some(Ok(StreamEvent::TextDelta { text: t })) = stream.next().await {
                text.push_str(&t);
            }
        }
        let started = Instant::now();
        cancel.cancel();
        let (rest, error) = drain(stream).await;
        assert_eq!(error, Some(ProviderError::Cancelled), "{kind:?}");
        assert!(
            rest.iter()
                .all(|e| !matches!(e, StreamEvent::TextDelta { .. }))
        );
        assert_eq!(text, "first");
        assert!(started.elapsed() < Duration::from_millis(2000), "{kind:?}");
    }
}

#[tokio::test]
async fn cancel_interrupts_waiting_for_response_headers() {
    let json = r#"{"steps": [{"response": {"headers_delay_ms": 20000}}]}"#;
    let server = MockServer::start(scenario(json)).await.unwrap();
    let provider = client(ProviderKind::Google, &server, fast_options());
    let cancel = CancellationToken::new();
    let stream = provider.stream(req(ProviderKind::Google), cancel.clone());
    // Wait until the request is in flight, then cancel.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.request_count() == 0 {
        assert!(Instant::now() < deadline, "request never arrived");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let started = Instant::now();
    cancel.cancel();
    let (events, error) = drain(stream).await;
    assert!(events.is_empty());
    assert_eq!(error, Some(ProviderError::Cancelled));
    assert!(started.elapsed() < Duration::from_millis(2000));
}

#[tokio::test]
async fn cancel_before_start_sends_nothing() {
    let server = MockServer::start(scenario(&format!(r#"{{"steps": [{OK}]}}"#)))
        .await
        .unwrap();
    let provider = client(ProviderKind::OpenAi, &server, fast_options());
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (_, error) = drain(provider.stream(req(ProviderKind::OpenAi), cancel)).await;
    assert_eq!(error, Some(ProviderError::Cancelled));
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn default_policy_numbers_match_the_rules() {
    let o = ClientOptions::default();
    assert_eq!(
        o.timeouts,
        Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(90)
        }
    );
    let r = RetryPolicy::default();
    assert_eq!(r.max_retries, 4);
    assert_eq!(
        (r.base, r.cap),
        (Duration::from_millis(500), Duration::from_secs(8))
    );
    assert_eq!(
        (r.slow_base, r.slow_cap),
        (Duration::from_secs(1), Duration::from_secs(30))
    );
    assert_eq!(r.max_retry_after, Duration::from_secs(60));
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_a_clear_non_retried_error() {
    let non_streamed = serde_json::json!({"id": "x", "choices": [{"message": {"content": "hi"}}]});
    let json = serde_json::json!({"steps": [
        {"response": {"verbatim": true, "headers": {"content-type": "application/json"},
                      "events": [{"raw": non_streamed.to_string()}]}},
        {"response": {"events": [{"text": "recovered"}]}}
    ]})
    .to_string();
    let (_, error, server) = run(ProviderKind::OpenAi, &json, fast_options()).await;
    let error = error.unwrap();
    assert_eq!(error.kind(), "bad_request", "{error}");
    assert!(error.to_string().contains("supports streaming"), "{error}");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn backoff_waits_are_jittered_within_bounds() {
    let mut options = fast_options();
    options.retry = RetryPolicy::default().scaled(0.1); // jitter 0.25 as in production
    let json = r#"{"steps": [{"response": {"status": 500}, "times": 10}]}"#;
    let (events, _, _) = run(ProviderKind::OpenAi, json, options).await;
    let delays = retry_delays(&events);
    let nominal = [50u64, 100, 200, 400];
    assert_eq!(delays.len(), 4);
    for (d, n) in delays.iter().zip(nominal) {
        assert!(
            *d <= n && *d * 4 >= n * 3 - 4,
            "{d} ms not within 75-100 % of {n} ms"
        );
    }
    assert_ne!(delays, nominal, "no jitter applied");
}
