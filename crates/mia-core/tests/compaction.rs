#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Compaction through the runtime (specs 017, 019) against the mock LLM over
//! real HTTP: what the model is sent before and after, the user's words
//! surviving two rounds, the token trigger mid-turn, the provider's overflow
//! answered once, compaction off, a failed compaction changing nothing, and
//! undo across a compaction.

use std::time::Duration;

use mia_core::OpResult;
use mia_protocol::{Event, Message, MessageType, Op, SessionId, SessionStatus, TurnEnd};
use serde_json::{Value, json};

mod common;
use common::{Harness, Setup, harness_with};

async fn harness(steps: Value, config: Value) -> Harness {
    harness_with(
        steps,
        config,
        Setup {
            interactive: false,
            title: "long",
            scale: 0.05,
            prepare: &|_| {},
        },
    )
    .await
}

impl Harness {
    /// Send a message; the turn's events until it finishes.
    async fn turn(&mut self, text: &str) -> (TurnEnd, Vec<Event>) {
        self.runtime
            .submit(Op::UserMessage {
                session_id: self.session.id,
                text: text.into(),
                agent: None,
                model: None,
            })
            .await
            .unwrap();
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let e = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out: {seen:#?}"))
                .unwrap();
            if let Event::TurnFinished { end, .. } = &e {
                let end = *end;
                seen.push(e);
                return (end, seen);
            }
            seen.push(e);
        }
    }

    async fn messages(&self, all: bool) -> Vec<Message> {
        let id = self.session.id;
        self.runtime.session_messages(id, all).await.unwrap()
    }

    /// The requests the conversation model got (not the compaction agent's).
    fn chat_requests(&self) -> Vec<String> {
        self.server
            .requests()
            .into_iter()
            .map(|r| r.body.to_string())
            .filter(|b| !b.contains("compaction agent"))
            .collect()
    }

    fn compaction_requests(&self) -> Vec<String> {
        self.server
            .requests()
            .into_iter()
            .map(|r| r.body.to_string())
            .filter(|b| b.contains("compaction agent"))
            .collect()
    }
}

fn reply(contains: &str, text: &str) -> Value {
    json!({"match": {"last_message_contains": contains}, "response": {"events": [{"text": text}]}})
}

fn summary(text: &str) -> Value {
    json!({"match": {"system_contains": "compaction agent"}, "response": {"events": [{"text": text}]}})
}

fn finished(events: &[Event]) -> Vec<(String, u64, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CompactionFinished {
                trigger,
                compacted,
                retained,
                ..
            } => Some((trigger.as_str().to_string(), *compacted, *retained)),
            _ => None,
        })
        .collect()
}

const FIRST: &str = "Build the billing service. Decision: we use PostgreSQL, never MySQL. Constraint: the public API must stay backwards compatible.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_words_survive_two_rounds_and_the_request_shape_is_right() {
    let mut steps = vec![
        json!({"match": {"last_message_contains": "Build the billing"}, "response": {"events": [
            {"text": "Writing the schema."},
            {"tool_call": {"id": "w1", "name": "write", "arguments": {"path": "schema.sql", "content": "create table invoices ();\n"}}}
        ]}}),
        json!({"match": {"has_tool_result": "w1"}, "response": {"events": [{"text": "reply 1"}]}}),
        summary("SUMMARY-ONE: schema written with PostgreSQL."),
        summary("SUMMARY-TWO: schema and handlers done; next: tests."),
        summary("SUMMARY-THREE: all done."),
    ];
    for i in 2..=7 {
        steps.push(reply(&format!("turn {i}"), &format!("reply {i}")));
    }
    let mut h = harness(
        Value::Array(steps),
        json!({"compaction": {"threshold": 6, "retainCount": 2}, "permissions": [{"permission": "write", "action": "allow"}]}),
    )
    .await;
    let mut all_events = Vec::new();
    let (end, ev) = h.turn(FIRST).await;
    assert_eq!(end, TurnEnd::Completed, "{ev:#?}");
    all_events.extend(ev);
    for i in 2..=3 {
        let (end, ev) = h.turn(&format!("turn {i}")).await;
        assert_eq!(end, TurnEnd::Completed);
        all_events.extend(ev);
    }
    // 3 user + 4 assistant... past 6 visible: compacted at the end of the turn.
    let rounds = finished(&all_events);
    assert_eq!(rounds.len(), 1, "{all_events:#?}");
    assert_eq!(rounds[0].0, "messages");
    assert_eq!(rounds[0].2, 2, "the tail kept");
    assert!(
        all_events
            .iter()
            .any(|e| matches!(e, Event::CompactionStarted { .. })),
        "started is reported"
    );
    // The agent waits for the user: no request after the compaction.
    let after_first = h.chat_requests().len();

    let visible = h.messages(false).await;
    assert_eq!(visible.len(), 3, "summary + the 2 kept");
    let summary_msg = visible
        .iter()
        .find(|m| m.message_type == MessageType::CompactionSummary)
        .unwrap();
    let meta = &summary_msg.metadata.extra;
    assert_eq!(meta["trigger"], json!("messages"));
    assert!(meta["original_message_count"].as_u64().unwrap() >= 5);
    assert!(meta.contains_key("compacted_at") && meta.contains_key("summary_token_count"));
    assert!(meta.contains_key("tokens_before") && meta.contains_key("tokens_after"));
    // Nothing deleted: the archive holds every message, marked.
    let all = h.messages(true).await;
    assert!(
        all.iter()
            .filter(|m| m.compacted_by == Some(summary_msg.id))
            .count()
            >= 5
    );

    // Undo of a step whose message is archived still works.
    assert!(h.project.join("schema.sql").exists());
    let OpResult::Reverted(undo) = h
        .runtime
        .submit(Op::Undo {
            session_id: h.session.id,
            step: None,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(undo.applied, "{undo:?}");
    assert!(!h.project.join("schema.sql").exists());

    // The next request: summary first, then the tail verbatim; archived
    // messages are not sent.
    let (end, ev) = h.turn("turn 4").await;
    assert_eq!(end, TurnEnd::Completed);
    all_events.extend(ev);
    let req = h.chat_requests()[after_first].clone();
    assert!(req.contains("SUMMARY-ONE"), "{req}");
    assert!(req.contains("were summarised"), "the model is told: {req}");
    assert!(
        req.contains("reply 3") && req.contains("turn 3"),
        "tail verbatim: {req}"
    );
    assert!(!req.contains("reply 1"), "archived message sent: {req}");
    assert!(
        !req.contains("\"w1\""),
        "no orphaned tool call or result: {req}"
    );
    assert!(
        req.find("SUMMARY-ONE").unwrap() < req.find("turn 3").unwrap(),
        "summary first"
    );
    assert!(
        req.contains("never MySQL") && req.contains("backwards compatible"),
        "{req}"
    );

    // Round two updates the first summary.
    for i in 5..=6 {
        let (end, ev) = h.turn(&format!("turn {i}")).await;
        assert_eq!(end, TurnEnd::Completed);
        all_events.extend(ev);
    }
    // (The undo's revert note counts as a message: round two came in turn 5.)
    assert_eq!(finished(&all_events).len(), 2, "{all_events:#?}");
    let comp = h.compaction_requests();
    assert_eq!(comp.len(), 2);
    assert!(
        comp[1].contains("SUMMARY-ONE") && comp[1].contains("Update the earlier summary"),
        "{}",
        comp[1]
    );
    assert!(comp[0].contains("Summarise the conversation above"));

    let before = h.chat_requests().len();
    let (end, _) = h.turn("turn 7").await;
    assert_eq!(end, TurnEnd::Completed);
    let req = h.chat_requests()[before].clone();
    // The latest summary only (a third round may have run before this
    // request), never an earlier one.
    assert!(
        req.contains("SUMMARY-TWO") || req.contains("SUMMARY-THREE"),
        "{req}"
    );
    assert!(!req.contains("SUMMARY-ONE"), "{req}");
    // The decision and the constraint of the first message, after two rounds.
    assert!(req.contains("we use PostgreSQL, never MySQL"), "{req}");
    assert!(
        req.contains("the public API must stay backwards compatible"),
        "{req}"
    );
    // Files changed come from the store: round one listed schema.sql; it
    // was undone since, so round two does not.
    let first_summary = h
        .messages(true)
        .await
        .into_iter()
        .find(|m| m.message_type == MessageType::CompactionSummary)
        .unwrap();
    let first_text = format!("{:?}", first_summary.parts);
    assert!(
        first_text.contains("SUMMARY-ONE") && first_text.contains("schema.sql (added)"),
        "{first_text}"
    );
    assert!(!req.contains("schema.sql (added)"), "{req}");

    let s = h.runtime.session_detail(h.session.id).await.unwrap();
    assert_eq!(s.session.status, SessionStatus::Idle);
    h.server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_trigger_fires_mid_turn_before_an_overflowing_request() {
    let big = "x".repeat(20_000);
    let steps = json!([
        reply("warm up", "ready"),
        {"match": {"last_message_contains": "read it"}, "response": {"events": [
            {"tool_call": {"id": "b1", "name": "bash", "arguments": {"command": "cat big.txt"}}}
        ]}},
        summary("SUMMARY: big.txt holds 20,000 x characters."),
        reply("Summary of the earlier conversation", "continued after compaction")
    ]);
    // A small budget: 0.5 × (200,000 − 194,000) = 3,000 tokens (the system
    // prompt and tool definitions take most of it; big.txt is 5,000 more).
    let mut h = harness(
        steps,
        json!({"compaction": {"tokenRatio": 0.5, "reserved": 194000},
               "permissions": [{"permission": "bash", "action": "allow"}]}),
    )
    .await;
    std::fs::write(h.project.join("big.txt"), &big).unwrap();
    assert_eq!(h.turn("warm up").await.0, TurnEnd::Completed);
    let (end, events) = h.turn("read it").await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    let rounds = finished(&events);
    assert_eq!(rounds.len(), 1, "{events:#?}");
    assert_eq!(rounds[0].0, "tokens");
    // The compaction came between the tool step and the next request, which fit.
    let idx_result = events
        .iter()
        .position(|e| matches!(e, Event::ToolResult { .. }))
        .unwrap();
    let idx_compacted = events
        .iter()
        .position(|e| matches!(e, Event::CompactionFinished { .. }))
        .unwrap();
    assert!(idx_result < idx_compacted);
    let last = h.chat_requests().last().unwrap().clone();
    assert!(
        last.len() < 15_000,
        "the request after compaction is small: {}",
        last.len()
    );
    assert!(!last.contains(&big[..5000]));
    let texts: Vec<String> = h
        .messages(false)
        .await
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match &p.content {
            mia_protocol::PartContent::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        texts.iter().any(|t| t == "continued after compaction"),
        "{texts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_overflow_compacts_and_retries_once() {
    let steps = json!([
        reply("first", "first reply"),
        {"match": {"last_message_contains": "hello"}, "response": {
            "status": 400, "error_type": "invalid_request_error",
            "message": "prompt is too long: 250000 tokens > 200000 maximum"}},
        summary("SUMMARY: said first."),
        reply("hello", "hello after compaction")
    ]);
    let mut h = harness(steps, json!({})).await;
    assert_eq!(h.turn("first").await.0, TurnEnd::Completed);
    let (end, events) = h.turn("hello").await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    let rounds = finished(&events);
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0].0, "overflow");
    assert_eq!(
        h.chat_requests().len(),
        3,
        "first, the overflow, the one retry"
    );
    let last = h.chat_requests().last().unwrap().clone();
    assert!(
        last.contains("SUMMARY: said first.") && last.contains("hello"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_never_loops_and_compaction_off_is_never_overridden() {
    let overflow = json!({"match": {"last_message_contains": "hello"}, "response": {
        "status": 400, "error_type": "invalid_request_error",
        "message": "prompt is too long: 250000 tokens > 200000 maximum"}, "times": 5});
    // Off: reported with what to do, nothing compacted.
    let steps = json!([
        reply("first", "first reply"),
        reply("again", "again reply"),
        overflow.clone()
    ]);
    let mut h = harness(
        steps,
        json!({"compaction": {"enabled": false, "threshold": 4}}),
    )
    .await;
    assert_eq!(h.turn("first").await.0, TurnEnd::Completed);
    assert_eq!(h.turn("again").await.0, TurnEnd::Completed);
    let (end, events) = h.turn("hello").await;
    assert_eq!(end, TurnEnd::Error);
    assert!(finished(&events).is_empty());
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::CompactionStarted { .. }))
    );
    let msg = events
        .iter()
        .find_map(|e| match e {
            Event::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        msg.contains("Compaction is off") && msg.contains("/compact"),
        "{msg}"
    );
    assert_eq!(
        h.messages(true).await.len(),
        h.messages(false).await.len(),
        "nothing archived"
    );
    // `/compact` by hand says why not.
    let err = h
        .runtime
        .submit(Op::Compact {
            session_id: h.session.id,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("turned off"), "{err}");

    // On, but the provider keeps refusing: compact once, retry once, then report.
    let steps = json!([reply("first", "first reply"), overflow, summary("SUMMARY.")]);
    let mut h = harness(steps, json!({})).await;
    assert_eq!(h.turn("first").await.0, TurnEnd::Completed);
    let (end, events) = h.turn("hello").await;
    assert_eq!(end, TurnEnd::Error);
    assert_eq!(finished(&events).len(), 1);
    assert_eq!(h.chat_requests().len(), 3, "one retry, no loop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_compaction_changes_nothing_and_manual_compaction_reports_counts() {
    let steps = json!([
        reply("one", "r1"),
        reply("two", "r2"),
        reply("three", "r3"),
        {"match": {"system_contains": "compaction agent"}, "response": {
            "status": 500, "error_type": "api_error", "message": "boom"}, "times": 50},
    ]);
    let mut h = harness(steps, json!({})).await;
    for t in ["one", "two", "three"] {
        assert_eq!(h.turn(t).await.0, TurnEnd::Completed);
    }
    let before = h.messages(true).await;
    let err = h
        .runtime
        .submit(Op::Compact {
            session_id: h.session.id,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nothing was changed"), "{err}");
    assert!(err.to_string().contains("failed 2 times"), "{err}");
    let after = h.messages(true).await;
    assert_eq!(before, after, "the session is as it was");
    let s = h.runtime.session_detail(h.session.id).await.unwrap();
    assert_eq!(s.session.status, SessionStatus::Idle);
    // Two attempts (each with the provider client's own retries), then the circuit breaker.
    let n = h.compaction_requests().len();
    assert!(n >= 2 && n % 2 == 0, "{n} compaction requests");

    // The same session with a working compaction model.
    let steps = json!([
        reply("one", "r1"),
        reply("two", "r2"),
        reply("three", "r3"),
        summary("SUMMARY.")
    ]);
    let mut h = harness(steps, json!({"compaction": {"retainCount": 2}})).await;
    for t in ["one", "two", "three"] {
        assert_eq!(h.turn(t).await.0, TurnEnd::Completed);
    }
    let OpResult::Compacted(r) = h
        .runtime
        .submit(Op::Compact {
            session_id: h.session.id,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(r.compacted, 4);
    assert_eq!(r.retained, 2);
    assert!(r.tokens_before > 0 && r.tokens_after > 0);
    let _: SessionId = h.session.id;
}
