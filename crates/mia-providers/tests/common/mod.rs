#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use mia_providers::{
    ClientOptions, Completion, EventStream, Provider, ProviderConfig, ProviderError, ProviderKind,
    RetryPolicy, StreamEvent, Timeouts, build_provider,
};
use mia_testkit::MockServer;

pub const KINDS: [ProviderKind; 3] = [
    ProviderKind::Anthropic,
    ProviderKind::OpenAi,
    ProviderKind::Google,
];

pub fn provider_id(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::OpenAi => "openai",
        ProviderKind::Google => "google",
    }
}

pub fn model_for(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "claude-sonnet-4-20250514",
        ProviderKind::OpenAi => "gpt-4.1",
        ProviderKind::Google => "gemini-2.5-flash",
    }
}

/// Fast, deterministic options: generous timeouts (the machine is shared),
/// backoff scaled down 100x, no jitter.
pub fn fast_options() -> ClientOptions {
    ClientOptions {
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            idle: Duration::from_secs(10),
        },
        retry: RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default().scaled(0.01)
        },
        retry_after_scale: 0.05,
        ..ClientOptions::default()
    }
}

pub fn base_url(kind: ProviderKind, server: &MockServer) -> String {
    match kind {
        ProviderKind::Anthropic => server.anthropic_base_url(),
        ProviderKind::OpenAi => server.openai_base_url(),
        ProviderKind::Google => server.gemini_base_url(),
    }
}

pub fn client(
    kind: ProviderKind,
    server: &MockServer,
    options: ClientOptions,
) -> Arc<dyn Provider> {
    build_provider(
        ProviderConfig::new(provider_id(kind))
            .with_base_url(base_url(kind, server))
            .with_api_key("test-key")
            .with_options(options),
    )
    .unwrap()
}

/// All events and the final error, if any.
pub async fn drain(mut stream: EventStream) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let next = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("stream did not finish within 60 s");
        match next {
            Some(Ok(e)) => events.push(e),
            Some(Err(e)) => {
                assert!(stream.next().await.is_none(), "no items after an error");
                return (events, Some(e));
            }
            None => return (events, None),
        }
    }
}

pub fn completion_of(events: &[StreamEvent]) -> Completion {
    let mut c = Completion::default();
    for e in events {
        c.apply(e);
    }
    c
}

pub fn retry_delays(events: &[StreamEvent]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { delay_ms, .. } => Some(*delay_ms),
            _ => None,
        })
        .collect()
}
