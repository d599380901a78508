#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Subagent delegation (spec 015) through the runtime against the mock LLM:
//! the child's own prompt and model, its result back in the parent's next
//! request, @mentions, the intersection of permissions, the timeout with a
//! partial result, three at a time with a fourth queued, and cancel
//! cascading to the children.

use std::time::Duration;

use mia_core::OpResult;
use mia_protocol::{Event, Op, SessionId, TurnEnd};
use serde_json::{Value, json};

mod common;
use common::{Harness, Setup, harness_with};

async fn harness(steps: Value, config: Value) -> Harness {
    harness_with(
        steps,
        config,
        Setup {
            interactive: false,
            title: "parent",
            scale: 0.05,
            prepare: &|_| {},
        },
    )
    .await
}

impl Harness {
    async fn send(&self, text: &str) {
        self.runtime
            .submit(Op::UserMessage {
                session_id: self.session.id,
                text: text.into(),
                agent: None,
                model: None,
            })
            .await
            .unwrap();
    }

    /// Events until the parent's turn finishes.
    async fn parent_turn(&mut self) -> (TurnEnd, Vec<Event>) {
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let e = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out: {seen:#?}"))
                .unwrap();
            if let Event::TurnFinished {
                session_id, end, ..
            } = &e
                && *session_id == self.session.id
            {
                let end = *end;
                seen.push(e);
                return (end, seen);
            }
            seen.push(e);
        }
    }

    fn bodies(&self) -> Vec<String> {
        self.server
            .requests()
            .into_iter()
            .map(|r| r.body.to_string())
            .collect()
    }
}

fn task_call(contains: &str, calls: &[(&str, &str, &str)]) -> Value {
    let events: Vec<Value> = calls
        .iter()
        .map(|(id, agent, prompt)| {
            json!({"tool_call": {"id": id, "name": "task", "arguments": {"agent": agent, "prompt": prompt}}})
        })
        .collect();
    json!({"match": {"last_message_contains": contains}, "response": {"events": events}})
}

fn results(events: &[Event]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                tool,
                output,
                is_error,
                call_id,
                ..
            } if tool == "task" => Some((call_id.clone(), output.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parent_delegates_to_explore_and_gets_its_answer() {
    let steps = json!([
        task_call("@explore", &[("t1", "explore", "List the files that use Database.")]),
        {"match": {"system_contains": "read-only search subagent"}, "response": {"events": [
            {"text": "Found: src/db.rs and src/api.rs use Database."}]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [{"text": "Explore found two files."}]}}
    ]);
    let mut h = harness(steps, json!({})).await;
    h.send("@explore find the files that use the Database class")
        .await;
    let (end, events) = h.parent_turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");

    let bodies = h.bodies();
    assert_eq!(bodies.len(), 3, "{:?}", results(&events));
    // The mention reached the parent model as a delegation request, with the task tool offered.
    assert!(bodies[0].contains("delegate to @explore"), "{}", bodies[0]);
    assert!(
        bodies[0].contains("\"name\":\"task\"") && bodies[0].contains("- explore:"),
        "task tool listed with subagents"
    );
    // The child: explore's prompt, the provider's fast model, the task and the context.
    let reqs = h.server.requests();
    let child = &reqs[1];
    assert!(child.system().contains("read-only search subagent"));
    assert!(
        child.body["model"].as_str().unwrap().contains("haiku"),
        "{}",
        child.body["model"]
    );
    assert!(bodies[1].contains("List the files that use Database."));
    assert!(
        bodies[1].contains("find the files that use the Database class"),
        "the parent's last messages as context"
    );
    assert!(
        !bodies[1].contains("\"name\":\"write\""),
        "explore is read-only: no write tool"
    );
    // The parent's next request carries the child's answer.
    assert!(
        bodies[2].contains("Found: src/db.rs and src/api.rs use Database."),
        "{}",
        bodies[2]
    );
    let r = results(&events);
    assert_eq!(r.len(), 1);
    assert!(!r[0].2, "{:?}", r[0]);
    assert!(
        r[0].1.contains("[subagent explore — completed"),
        "{}",
        r[0].1
    );

    // The child session: spawned_by the parent and the call; not a fork.
    let started = events
        .iter()
        .find_map(|e| match e {
            Event::SubagentStarted {
                child_session_id, ..
            } => Some(*child_session_id),
            _ => None,
        })
        .unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::SubagentFinished { status, .. } if *status == mia_protocol::SubagentStatus::Completed))
    );
    let child_session = h
        .runtime
        .resolve_session(&started.to_string())
        .await
        .unwrap();
    let spawned = child_session.spawned_by.unwrap();
    assert_eq!(spawned.session_id, h.session.id);
    assert_eq!(spawned.call_id, "t1");
    assert_eq!(child_session.agent.as_deref(), Some("explore"));
    assert_eq!(child_session.parent_id, None);
    let tree = h.runtime.fork_tree(&h.project, false).await.unwrap();
    assert_eq!(tree.len(), 1, "the child is not in the fork tree");
    // The parent's message links the call to the child session.
    let pid = h.session.id;
    let parent_msgs = h.runtime.session_messages(pid, false).await.unwrap();
    assert!(parent_msgs.iter().flat_map(|m| m.parts.iter()).any(|p| matches!(
        &p.content,
        mia_protocol::PartContent::Subagent { session_id, agent, .. } if *session_id == started && agent == "explore"
    )));

    // Cost: per agent and model, the child included; the totals add up to
    // the per-message records.
    let cost = h.runtime.cost(h.session.id).await.unwrap();
    assert_eq!(cost.subagent_sessions, vec![started.to_string()]);
    assert_eq!(cost.session.requests, 2);
    assert_eq!(cost.total.requests, 3);
    let explore = cost.lines.iter().find(|l| l.agent == "explore").unwrap();
    assert!(explore.model.contains("haiku"), "{explore:?}");
    let mut sum = 0.0;
    let mut input = 0;
    for id in [h.session.id, started] {
        let msgs = h.runtime.session_messages(id, false).await.unwrap();
        for m in msgs {
            sum += m.metadata.cost_usd.unwrap_or(0.0);
            input += m.metadata.tokens.map_or(0, |t| t.input);
        }
    }
    assert!(
        (cost.total.cost_usd - sum).abs() < 1e-9,
        "{} vs {sum}",
        cost.total.cost_usd
    );
    // The model's source is recorded with each step (spec 016).
    let id = h.session.id;
    let msgs = h.runtime.session_messages(id, false).await.unwrap();
    let step = msgs
        .iter()
        .find(|m| m.role == mia_protocol::Role::Assistant)
        .unwrap();
    assert_eq!(step.metadata.extra["model_source"], json!("session"));
    assert_eq!(cost.total.input_tokens, input);
    h.server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_is_denied_what_its_parent_denies_although_its_own_rules_allow_it() {
    let steps = json!([
        task_call("delegate it", &[("t1", "helper", "Run: touch forbidden.txt")]),
        {"match": {"last_message_contains": "touch forbidden.txt"}, "response": {"events": [
            {"tool_call": {"id": "b1", "name": "bash", "arguments": {"command": "touch forbidden.txt"}}}]}},
        {"match": {"has_tool_result": "b1"}, "response": {"events": [{"text": "It was refused."}]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [{"text": "ok"}]}}
    ]);
    let mut h = harness(
        steps,
        json!({"agent": {
            "build": {"permissions": [{"permission": "bash", "pattern": "touch forbidden*", "action": "deny"}]},
            "helper": {"mode": "subagent", "description": "Runs commands.", "permissions": [{"permission": "bash", "action": "allow"}]}
        }}),
    )
    .await;
    h.send("delegate it").await;
    let (end, events) = h.parent_turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    assert!(!h.project.join("forbidden.txt").exists());
    let denied = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult {
                tool,
                output,
                is_error: true,
                ..
            } if tool == "bash" => Some(output.clone()),
            _ => None,
        })
        .expect("the child's bash call was refused");
    assert!(denied.contains("parent agent `build`"), "{denied}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_child_times_out_with_its_partial_result() {
    let steps = json!([
        task_call("go slow", &[("t1", "slow", "Think for a long time.")]),
        {"match": {"last_message_contains": "Think for a long time."}, "response": {"events": [
            {"text": "Partial finding: A is true."}, {"delay_ms": 20000}, {"text": " And B."}]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [{"text": "partial is fine"}]}}
    ]);
    let mut h = harness(
        steps,
        json!({"agent": {"slow": {"mode": "subagent", "description": "Slow.", "timeout": 1}}}),
    )
    .await;
    let started = std::time::Instant::now();
    h.send("go slow").await;
    let (end, events) = h.parent_turn().await;
    assert_eq!(end, TurnEnd::Completed);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "did not wait for the stream"
    );
    let r = results(&events);
    assert!(r[0].2, "a timeout is a failed result");
    assert!(r[0].1.contains("Partial finding: A is true."), "{}", r[0].1);
    assert!(
        r[0].1.contains("timeout") && r[0].1.contains("partial result"),
        "{}",
        r[0].1
    );
    assert!(!r[0].1.contains("And B"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_children_run_at_once_and_a_fourth_waits() {
    let mut steps = vec![task_call(
        "four ways",
        &[
            ("t1", "general", "way one"),
            ("t2", "general", "way two"),
            ("t3", "general", "way three"),
            ("t4", "general", "way four"),
        ],
    )];
    for w in ["one", "two", "three", "four"] {
        steps.push(
            json!({"match": {"last_message_contains": format!("way {w}")}, "response": {
            "events": [{"delay_ms": 400}, {"text": format!("answer {w}")}]}}),
        );
    }
    steps.push(
        json!({"match": {"has_tool_result": "t4"}, "response": {"events": [{"text": "all four"}]}}),
    );
    let mut h = harness(Value::Array(steps), json!({})).await;
    h.send("four ways").await;
    let (end, events) = h.parent_turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    let mut running = 0i32;
    let mut most = 0i32;
    for e in &events {
        match e {
            Event::SubagentStarted { .. } => {
                running += 1;
                most = most.max(running);
            }
            Event::SubagentFinished { .. } => running -= 1,
            _ => {}
        }
    }
    assert_eq!(most, 3, "at most three at once, and they do overlap");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::SubagentQueued { .. }))
            .count(),
        1,
        "the fourth waited, visibly"
    );
    let r = results(&events);
    assert_eq!(r.len(), 4);
    for w in ["one", "two", "three", "four"] {
        assert!(
            r.iter().any(|(_, o, _)| o.contains(&format!("answer {w}"))),
            "{r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_parent_cancels_its_children() {
    let steps = json!([
        task_call("start it", &[("t1", "general", "Work forever.")]),
        {"match": {"last_message_contains": "Work forever."}, "response": {"events": [
            {"text": "working"}, {"delay_ms": 30000}, {"text": "done"}]}}
    ]);
    let mut h = harness(steps, json!({})).await;
    h.send("start it").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let child: SessionId = loop {
        let e = tokio::time::timeout_at(deadline, h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::SubagentStarted {
            child_session_id, ..
        } = e
        {
            break child_session_id;
        }
    };
    // Let the child's stream begin, then stop the parent.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stopped = std::time::Instant::now();
    h.runtime
        .submit(Op::Cancel {
            session_id: h.session.id,
        })
        .await
        .unwrap();
    let mut child_end = None;
    let mut parent_end = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while parent_end.is_none() || child_end.is_none() {
        let e = tokio::time::timeout_at(deadline, h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::TurnFinished {
            session_id, end, ..
        } = e
        {
            if session_id == child {
                child_end = Some(end);
            } else if session_id == h.session.id {
                parent_end = Some(end);
            }
        }
    }
    assert!(stopped.elapsed() < Duration::from_secs(5));
    assert_eq!(child_end, Some(TurnEnd::Cancelled));
    assert_eq!(parent_end, Some(TurnEnd::Cancelled));
    h.server.take_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_of_the_parents_turn_includes_what_its_children_changed() {
    let steps = json!([
        task_call("delegate the file", &[("t1", "helper", "Write notes.txt")]),
        {"match": {"last_message_contains": "Write notes.txt"}, "response": {"events": [
            {"tool_call": {"id": "w1", "name": "write", "arguments": {"path": "notes.txt", "content": "by the child\n"}}}]}},
        {"match": {"has_tool_result": "w1"}, "response": {"events": [{"text": "written"}]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [{"text": "the helper wrote it"}]}}
    ]);
    let mut h = harness(
        steps,
        json!({"agent": {"helper": {"mode": "subagent", "description": "Writes files.",
            "permissions": [{"permission": "write", "action": "allow"}]}}}),
    )
    .await;
    h.send("delegate the file").await;
    let (end, events) = h.parent_turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    assert!(h.project.join("notes.txt").exists());

    // One timeline: the child's step is in the parent's, marked.
    let timeline = h.runtime.timeline(h.session.id).await.unwrap();
    assert_eq!(timeline.len(), 1, "{timeline:#?}");
    assert_eq!(timeline[0].subagent.as_deref(), Some("helper"));
    assert!(timeline[0].subagent_session_id.is_some());
    assert_eq!(timeline[0].changes[0].path, "notes.txt");

    // Undo in the parent undoes it; redo brings it back; revert to the
    // parent's message that delegated undoes it again.
    let OpResult::Reverted(u) = h
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
    assert!(u.applied, "{u:?}");
    assert!(!h.project.join("notes.txt").exists());
    let OpResult::Reverted(r) = h
        .runtime
        .submit(Op::Redo {
            session_id: h.session.id,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(r.applied, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(h.project.join("notes.txt")).unwrap(),
        "by the child\n"
    );
    let id = h.session.id;
    let msgs = h.runtime.session_messages(id, false).await.unwrap();
    let delegating = msgs
        .iter()
        .find(|m| {
            m.parts
                .iter()
                .any(|p| matches!(&p.content, mia_protocol::PartContent::ToolCall { tool, .. } if tool == "task"))
        })
        .unwrap()
        .id;
    let OpResult::Reverted(rv) = h
        .runtime
        .submit(Op::Revert {
            session_id: h.session.id,
            message_id: delegating,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(rv.applied, "{rv:?}");
    assert!(!h.project.join("notes.txt").exists());
    let _: SessionId = id;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_session_continued_in_another_process_stays_within_its_parents_rules() {
    let steps = json!([
        task_call("delegate it", &[("t1", "helper", "Say hello")]),
        {"match": {"last_message_contains": "Say hello"}, "response": {"events": [{"text": "hello"}]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [{"text": "ok"}]}},
        {"match": {"last_message_contains": "now touch"}, "response": {"events": [
            {"tool_call": {"id": "b2", "name": "bash", "arguments": {"command": "touch forbidden.txt"}}}]}},
        {"match": {"has_tool_result": "b2"}, "response": {"events": [{"text": "refused"}]}}
    ]);
    let mut h = harness(
        steps,
        json!({"agent": {
            "build": {"permissions": [{"permission": "bash", "pattern": "touch forbidden*", "action": "deny"}]},
            "helper": {"mode": "subagent", "description": "Runs commands.", "permissions": [{"permission": "bash", "action": "allow"}]}
        }}),
    )
    .await;
    h.send("delegate it").await;
    let (end, events) = h.parent_turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    let child = events
        .iter()
        .find_map(|e| match e {
            Event::SubagentStarted {
                child_session_id, ..
            } => Some(*child_session_id),
            _ => None,
        })
        .unwrap();

    // Another runtime on the same data (another process would be the same):
    // the child's lineage is rebuilt from spawned_by, so the parent's deny holds.
    let other = common::runtime_in(&h._dir.path().join("home"), false, 1.0);
    let mut rx = other.subscribe();
    other
        .submit(Op::UserMessage {
            session_id: child,
            text: "now touch forbidden.txt".into(),
            agent: None,
            model: None,
        })
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut denied = None;
    loop {
        let e = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .unwrap()
            .unwrap();
        match e {
            Event::ToolResult {
                tool,
                output,
                is_error: true,
                ..
            } if tool == "bash" => denied = Some(output),
            Event::TurnFinished { session_id, .. } if session_id == child => break,
            _ => {}
        }
    }
    let denied = denied.expect("the bash call was refused");
    assert!(denied.contains("parent agent `build`"), "{denied}");
    assert!(!h.project.join("forbidden.txt").exists());
}
