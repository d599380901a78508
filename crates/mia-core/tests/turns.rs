#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Whole turns through the runtime against the mock LLM server over real
//! HTTP with real SSE framing, in a real git repository.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mia_config::Paths;
use mia_core::{OpResult, Runtime, RuntimeOptions, StoreHandle};
use mia_protocol::{Event, Op, PartContent, PermissionReplyKind, Session, TurnEnd};
use mia_providers::credentials::{Credentials, FileStore};
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

struct Harness {
    _dir: tempfile::TempDir,
    project: PathBuf,
    runtime: Runtime,
    events: tokio::sync::broadcast::Receiver<Event>,
    server: MockServer,
    session: Session,
}

fn base_url(server: &MockServer, provider: &str) -> String {
    match provider {
        "anthropic" => server.anthropic_base_url(),
        "openai" => server.openai_base_url(),
        _ => server.gemini_base_url(),
    }
}

fn model_for(provider: &str) -> &'static str {
    match provider {
        "anthropic" => "anthropic/claude-sonnet-4-5",
        "openai" => "openai/gpt-5",
        _ => "google/gemini-2.5-pro",
    }
}

async fn harness(
    provider: &str,
    steps: Value,
    config: Value,
    interactive: bool,
    agent: &str,
) -> Harness {
    harness_with(provider, steps, config, interactive, agent, |_| {}).await
}

async fn harness_with(
    provider: &str,
    steps: Value,
    config: Value,
    interactive: bool,
    agent: &str,
    tune: impl FnOnce(&mut RuntimeOptions),
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let project = project.canonicalize().unwrap();
    std::fs::write(project.join("greet.txt"), "hello\n").unwrap();
    mia_testkit::repo::init(&project).unwrap();
    mia_testkit::repo::commit_all(&project, "init").unwrap();

    let scenario: Scenario = serde_json::from_value(json!({ "steps": steps })).unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let mut global = json!({
        "providers": { provider: { "baseURL": base_url(&server, provider), "apiKey": "test-key" } },
        "unifier": { "enabled": false }
    });
    if let (Some(g), Some(extra)) = (global.as_object_mut(), config.as_object()) {
        for (k, v) in extra {
            g.insert(k.clone(), v.clone());
        }
    }
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        global.to_string(),
    )
    .unwrap();

    let paths = Paths::new(home.join(".mia-code"), home.clone(), &home.join(".config"));
    let db = mia_store::SessionDb::open(paths.data_db()).unwrap();
    let store = StoreHandle::spawn(db).unwrap();
    let mut opts = RuntimeOptions::new(paths.clone());
    opts.interactive = interactive;
    opts.credentials = Arc::new(Credentials::new(
        Arc::new(|_: &str| None),
        None,
        FileStore::in_home(&paths.home),
    ));
    opts.client = opts.client.scaled(0.1);
    tune(&mut opts);
    let runtime = Runtime::new(opts, store);
    let events = runtime.subscribe();
    let OpResult::Session(session) = runtime
        .submit(Op::CreateSession {
            directory: project.display().to_string(),
            title: Some("test".into()),
            agent: Some(agent.into()),
            model: Some(model_for(provider).into()),
        })
        .await
        .unwrap()
    else {
        panic!("no session")
    };
    Harness {
        _dir: dir,
        project,
        runtime,
        events,
        server,
        session,
    }
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

    /// Events until `stop` says so (or the turn ends), with a deadline.
    async fn until(&mut self, stop: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out; events so far: {seen:#?}"))
                .unwrap();
            let done = stop(&event) || matches!(event, Event::TurnFinished { .. });
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    async fn turn(&mut self) -> (Vec<Event>, TurnEnd) {
        let events = self.until(|_| false).await;
        let Some(Event::TurnFinished { end, .. }) = events.last() else {
            panic!("{events:#?}")
        };
        let end = *end;
        (events, end)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.project.join(rel)).unwrap()
    }

    async fn messages(&self) -> Vec<mia_protocol::Message> {
        let id = self.session.id;
        self.runtime.session_messages(id, false).await.unwrap()
    }
}

fn tool_step(matcher: Value, id: &str, name: &str, args: Value) -> Value {
    json!({"match": matcher, "response": {"events": [
        {"text": format!("Calling {name}.")},
        {"tool_call": {"id": id, "name": name, "arguments": args, "chunks": 3}}
    ]}})
}

fn build_scenario() -> Value {
    json!([
        tool_step(json!({"last_message_contains": "fix the greeting"}), "call_1", "read", json!({"path": "greet.txt"})),
        tool_step(json!({"has_tool_result": "call_1"}), "call_2", "edit",
            json!({"path": "greet.txt", "old_string": "hello", "new_string": "hello world"})),
        tool_step(json!({"has_tool_result": "call_2"}), "call_3", "bash", json!({"command": "cat greet.txt"})),
        {"match": {"has_tool_result": "call_3"}, "response": {
            "usage": {"input": 1000, "output": 50},
            "events": [{"text": "The greeting now says hello world."}]}}
    ])
}

async fn multi_step_build_turn(provider: &str) {
    let mut h = harness(provider, build_scenario(), json!({}), false, "build").await;
    h.send("Please fix the greeting").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    assert_eq!(h.read("greet.txt"), "hello world\n");

    let results: Vec<(&str, &str, bool)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                tool,
                output,
                is_error,
                ..
            } => Some((tool.as_str(), output.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3, "{events:#?}");
    assert_eq!(results[0].0, "read");
    assert!(results[0].1.contains("hello"));
    assert_eq!(results[1].0, "edit");
    assert_eq!(results[2], ("bash", "hello world\n", false));

    // The edit and the bash call were snapshotted; the edit changed greet.txt.
    let snaps: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Snapshot {
                call_id,
                files,
                unavailable,
                ..
            } => Some((call_id.clone(), files.clone(), unavailable.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(snaps.len(), 2, "{snaps:?}");
    assert_eq!(snaps[0].2, None, "{snaps:?}");
    assert_eq!(snaps[0].1.len(), 1);
    assert_eq!(snaps[0].1[0].path, "greet.txt");
    assert!(snaps[1].1.is_empty(), "cat changed nothing: {snaps:?}");

    // The final text streamed and the turn's usage was counted.
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        text.ends_with("The greeting now says hello world."),
        "{text}"
    );
    let Some(Event::TurnFinished { steps, usage, .. }) = events.last() else {
        panic!()
    };
    assert_eq!(*steps, 4);
    assert!(usage.input >= 1000, "{usage:?}");

    // Stored: user message, 4 assistant messages with tool calls, results and snapshots.
    let messages = h.messages().await;
    assert_eq!(messages.len(), 5);
    let kinds: Vec<&str> = messages[1].parts.iter().map(|p| p.content.kind()).collect();
    assert_eq!(kinds, vec!["text", "tool_call", "tool_result"]);
    let kinds: Vec<&str> = messages[2].parts.iter().map(|p| p.content.kind()).collect();
    assert_eq!(kinds, vec!["text", "tool_call", "snapshot", "tool_result"]);
    assert!(
        matches!(&messages[4].parts[0].content, PartContent::Text { text, .. } if text.contains("hello world"))
    );
    assert_eq!(messages[4].metadata.tokens.unwrap().input, 1000);

    // The steps are indexed in the store for undo/revert (edit and bash).
    let id = h.session.id;
    let steps = database(&h.runtime).snapshot_steps(&id).unwrap();
    assert_eq!(steps.len(), 2, "{steps:#?}");
    assert_eq!(steps[0].step.kind, "tool");
    assert_eq!(steps[0].step.record["changes"][0]["path"], "greet.txt");
    let snaps = h.runtime.snapshot_rows(id).await.unwrap();
    let kinds: Vec<_> = snaps.iter().map(|s| s.snapshot.kind).collect();
    assert_eq!(
        kinds,
        vec![
            mia_store::SnapshotKind::Baseline,
            mia_store::SnapshotKind::Step,
            mia_store::SnapshotKind::Step
        ],
        "a baseline before the session's first change, then one per step"
    );
    assert!(
        snaps
            .iter()
            .all(|s| s.snapshot.unavailable.is_none() && !s.snapshot.hash.is_empty())
    );

    // Before each request: the context meter's estimate, growing with the
    // history, against the model's window; the detail keeps the last one.
    let usages: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ContextUsage { usage, .. } => Some(usage.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(usages.len(), 4, "one per request: {usages:?}");
    assert!(
        usages.windows(2).all(|w| w[1].tokens > w[0].tokens),
        "{usages:?}"
    );
    assert!(
        usages[0].tokens > 500,
        "the system prompt and tools count: {usages:?}"
    );
    assert!(
        usages
            .iter()
            .all(|u| u.complete && u.window >= 100_000 && u.budget < u.window)
    );
    let detail = h.runtime.session_detail(h.session.id).await.unwrap();
    assert_eq!(detail.context.as_ref(), usages.last());

    // Every request was valid for the provider, and the system prompt was sent.
    h.server.assert_no_violations();
    let requests = h.server.requests();
    assert_eq!(requests.len(), 4);
    let body = requests[0].body.to_string();
    assert!(
        body.contains("mia-code's build agent"),
        "system prompt missing"
    );
    assert!(h.server.unused_steps().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_multi_step_build_turn() {
    multi_step_build_turn("anthropic").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_multi_step_build_turn() {
    multi_step_build_turn("openai").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_multi_step_build_turn() {
    multi_step_build_turn("google").await;
}

fn ask_scenario() -> Value {
    json!([
        tool_step(json!({"last_message_contains": "run it"}), "call_1", "bash", json!({"command": "echo ran > out.txt"})),
        {"match": {"has_tool_result": "call_1"}, "response": {"events": [{"text": "ok"}]}}
    ])
}

async fn answer_ask(reply: PermissionReplyKind) -> (Harness, Vec<Event>) {
    let mut h = harness(
        "anthropic",
        ask_scenario(),
        json!({"permissions": [{"permission": "bash", "action": "ask"}]}),
        true,
        "build",
    )
    .await;
    h.send("run it").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert_eq!(request.tool, "bash");
    assert_eq!(request.target, "echo ran > out.txt");
    assert!(
        request
            .matched_rule
            .as_deref()
            .unwrap_or("")
            .contains("ask bash"),
        "{request:?}"
    );
    assert!(request.options.contains(&mia_protocol::ReplyOption::Once));
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply,
        })
        .await
        .unwrap();
    let (rest, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{rest:#?}");
    (h, rest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_ask_answered_once_runs_the_command() {
    let (h, events) = answer_ask(PermissionReplyKind::Once).await;
    assert_eq!(h.read("out.txt"), "ran\n");
    assert!(events.iter().any(|e| matches!(e, Event::PermissionResolved { decision, by, .. } if *decision == mia_protocol::Resolution::Allow && by == "user")));
    h.server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_rejected_with_feedback_reaches_the_model() {
    let (h, _events) = answer_ask(PermissionReplyKind::RejectWithFeedback {
        feedback: "use printf instead".into(),
    })
    .await;
    assert!(
        !h.project.join("out.txt").exists(),
        "the command did not run"
    );
    let requests = h.server.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("use printf instead"), "{last}");
    h.server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_refuses_writes_and_sed_in_place_headless() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "change it"}), "call_1", "write", json!({"path": "greet.txt", "content": "bye\n"})),
        tool_step(json!({"has_tool_result": "call_1"}), "call_2", "bash", json!({"command": "sed -i s/hello/bye/ greet.txt"})),
        {"match": {"has_tool_result": "call_2"}, "response": {"events": [{"text": "I cannot change files in plan mode."}]}}
    ]);
    let mut h = harness("openai", steps, json!({}), false, "plan").await;
    h.send("change it").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    assert_eq!(h.read("greet.txt"), "hello\n", "nothing changed");
    let results: Vec<(&str, bool, &str)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                tool,
                is_error,
                output,
                ..
            } => Some((tool.as_str(), *is_error, output.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        results
            .iter()
            .all(|(_, err, out)| *err && out.starts_with("Permission denied")),
        "{results:?}"
    );
    // The plan agent is not even offered the write and edit tools.
    let tools = h.server.requests()[0].body["tools"].to_string();
    assert!(
        !tools.contains("\"write\"") && !tools.contains("\"edit\""),
        "{tools}"
    );
    assert!(tools.contains("\"read\""));
    // Its shell is offered: read-only commands are allowed even headless.
    assert!(tools.contains("\"bash\""), "{tools}");
    let system = h.server.requests()[0].body.to_string();
    assert!(
        system.contains("Shell commands: DENIED (some targets: allowed)"),
        "{system}"
    );
    assert!(system.contains("some targets: allowed"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_bash_stops_the_process_and_the_turn() {
    let steps = json!([tool_step(
        json!({"last_message_contains": "slow"}),
        "call_1",
        "bash",
        json!({"command": "echo $$ > sh.pid; sleep 30"})
    )]);
    // `$$` is an expansion: without the OS sandbox never auto-allowed, so a
    // person approves it once.
    let mut h = harness(
        "anthropic",
        steps,
        json!({"sandbox": {"mode": "off"}}),
        true,
        "build",
    )
    .await;
    h.send("do something slow").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert!(
        !request
            .options
            .contains(&mia_protocol::ReplyOption::Session),
        "no 'always' for expansions"
    );
    // An answer that was not offered is refused and the ask keeps waiting.
    let err = h
        .runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Session,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not offered"), "{err}");
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Once,
        })
        .await
        .unwrap();
    let pid_file = h.project.join("sh.pid");
    // The shell creates the file before it writes the pid: wait for a number.
    let read_pid = || {
        std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while read_pid().is_none() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = read_pid().expect("the command started and wrote its pid");
    h.runtime
        .submit(Op::Cancel {
            session_id: h.session.id,
        })
        .await
        .unwrap();
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Cancelled, "{events:#?}");
    // The stopped command is reported as failed, not as a normal result.
    let stopped = events.iter().find_map(|e| match e {
        Event::ToolResult {
            is_error, output, ..
        } => Some((*is_error, output.clone())),
        _ => None,
    });
    let (is_error, output) = stopped.expect("a tool result for the cancelled command");
    assert!(is_error && output.contains("cancelled"), "{output}");
    let gone = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.split(") ").nth(1).unwrap_or("").starts_with('Z'))
            .unwrap_or(true)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !gone(pid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone(pid), "bash {pid} survived the cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_retryable_error_is_reported_and_kept() {
    let steps = json!([
        {"match": {}, "response": {"status": 401, "message": "invalid x-api-key"}}
    ]);
    let mut h = harness("anthropic", steps, json!({}), false, "build").await;
    h.send("hi").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Error);
    let err = events
        .iter()
        .find_map(|e| match e {
            Event::Error { kind, message, .. } => Some((kind.clone(), message.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(err.0, "auth");
    assert!(err.1.contains("API key"), "{}", err.1);
    let messages = h.messages().await;
    assert!(
        messages[1]
            .parts
            .iter()
            .any(|p| p.content.kind() == "error")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retryable_error_is_recovered() {
    let steps = json!([
        {"match": {}, "times": 1, "response": {"status": 529}},
        {"match": {}, "response": {"events": [{"text": "recovered"}]}}
    ]);
    let mut h = harness("anthropic", steps, json!({}), false, "build").await;
    h.send("hi").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    assert!(events.iter().any(|e| matches!(e, Event::Retrying { .. })));
    let messages = h.messages().await;
    assert!(
        matches!(&messages[1].parts[0].content, PartContent::Text { text, .. } if text == "recovered")
    );
}

#[allow(dead_code)]
fn _path(_: &Path) {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_always_adds_a_session_rule() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "twice"}), "call_1", "bash", json!({"command": "touch one.txt"})),
        tool_step(json!({"has_tool_result": "call_1"}), "call_2", "bash", json!({"command": "touch two.txt"})),
        {"match": {"has_tool_result": "call_2"}, "response": {"events": [{"text": "both"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({"permissions": [{"permission": "bash", "action": "ask"}]}),
        true,
        "build",
    )
    .await;
    h.send("touch twice").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert!(
        request
            .options
            .contains(&mia_protocol::ReplyOption::Session),
        "{request:?}"
    );
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Session,
        })
        .await
        .unwrap();
    // `touch two.txt` matches the stored `touch *` rule: no second ask.
    let (rest, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{rest:#?}");
    assert!(
        !rest
            .iter()
            .any(|e| matches!(e, Event::PermissionAsked { .. })),
        "{rest:#?}"
    );
    assert!(h.project.join("one.txt").exists() && h.project.join("two.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_keeps_partial_output() {
    let steps = json!([
        {"match": {}, "response": {"events": [
            {"text": "partial answer"},
            {"delay_ms": 30000},
            {"text": " never sent"}
        ]}},
        {"match": {"last_message_contains": "continue"}, "response": {"events": [{"text": "resumed"}]}}
    ]);
    let mut h = harness("openai", steps, json!({}), false, "build").await;
    h.send("stream slowly").await;
    let seen = h.until(|e| matches!(e, Event::TextDelta { .. })).await;
    assert!(
        matches!(seen.last(), Some(Event::TextDelta { text, .. }) if text.contains("partial")),
        "{seen:#?}"
    );
    h.runtime
        .submit(Op::Cancel {
            session_id: h.session.id,
        })
        .await
        .unwrap();
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Cancelled, "{events:#?}");
    let messages = h.messages().await;
    let assistant = &messages[1];
    assert_eq!(assistant.metadata.finish.as_deref(), Some("cancelled"));
    assert!(
        matches!(&assistant.parts[0].content, PartContent::Text { text, .. } if text == "partial answer")
    );
    // The next turn's history (with the cut-off message) is valid for the provider.
    h.send("continue").await;
    let (_, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    h.server.assert_no_violations();
    let last = h.server.requests().last().unwrap().body.to_string();
    assert!(last.contains("partial answer"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_agents_is_queued_during_a_turn_and_the_model_is_told() {
    let steps = json!([
        {"match": {"last_message_contains": "first"}, "response": {"events": [
            {"delay_ms": 300}, {"text": "planned"}]}},
        {"match": {"last_message_contains": "switched from plan mode"}, "response": {"events": [{"text": "building"}]}}
    ]);
    let mut h = harness("anthropic", steps, json!({}), false, "plan").await;
    h.send("first message").await;
    h.runtime
        .submit(Op::SwitchAgent {
            session_id: h.session.id,
            agent: "build".into(),
        })
        .await
        .unwrap();
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::AgentSwitched { queued: true, to, .. } if to == "build")),
        "{events:#?}"
    );
    h.send("second message").await;
    let (_, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    assert!(
        h.server.unused_steps().is_empty(),
        "the build turn was told about the switch"
    );
    let err = h
        .runtime
        .submit(Op::SwitchAgent {
            session_id: h.session.id,
            agent: "explore".into(),
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("subagent"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unifier_commentary_is_requested_and_stored_apart() {
    let steps = json!([
        {"match": {"system_contains": "Dual perspective"}, "response": {"events": [
            {"text": "Nothing to change.\n\n🧠 Mia: The module is already consistent.\n"},
            {"text": "🌸 Miette: A quiet moment in the code."}
        ]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({"unifier": {"enabled": true}}),
        false,
        "build",
    )
    .await;
    h.send("check it").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    let messages = h.messages().await;
    let parts: Vec<&PartContent> = messages[1].parts.iter().map(|p| &p.content).collect();
    assert_eq!(parts.len(), 3, "{parts:#?}");
    assert!(matches!(parts[0], PartContent::Text { text, .. } if text == "Nothing to change."));
    assert!(
        matches!(parts[1], PartContent::Commentary { perspective, .. } if perspective == "mia")
    );
    assert!(
        matches!(parts[2], PartContent::Commentary { perspective, text } if perspective == "miette" && text == "A quiet moment in the code.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_for_this_project_is_persisted_and_checks_are_audited() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "first"}), "call_1", "bash", json!({"command": "touch one.txt"})),
        {"match": {"has_tool_result": "call_1"}, "response": {"events": [{"text": "one"}]}},
        tool_step(json!({"last_message_contains": "second"}), "call_2", "bash", json!({"command": "touch two.txt"})),
        {"match": {"has_tool_result": "call_2"}, "response": {"events": [{"text": "two"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({"permissions": [{"permission": "bash", "action": "ask"}]}),
        true,
        "build",
    )
    .await;
    h.send("first").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Project,
        })
        .await
        .unwrap();
    let (_, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);

    // A new session in the same project is not asked again.
    let OpResult::Session(other) = h
        .runtime
        .submit(Op::CreateSession {
            directory: h.project.display().to_string(),
            title: None,
            agent: Some("build".into()),
            model: Some("anthropic/claude-sonnet-4-5".into()),
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    h.runtime
        .submit(Op::UserMessage {
            session_id: other.id,
            text: "second".into(),
            agent: None,
            model: None,
        })
        .await
        .unwrap();
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PermissionAsked { .. })),
        "{events:#?}"
    );
    assert!(h.project.join("two.txt").exists());

    let approvals = h
        .runtime
        .project_approvals(Some(h.project.clone()))
        .await
        .unwrap();
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0].rule.pattern.as_deref(), Some("touch *"));
    let audit = database(&h.runtime)
        .permission_audit(&mia_store::AuditQuery::default())
        .unwrap();
    assert_eq!(audit.len(), 2, "{audit:#?}");
    assert!(
        audit
            .iter()
            .any(|a| a.record.decision == mia_protocol::PermissionAction::Ask)
    );
    assert!(
        audit.iter().any(
            |a| a.record.decision == mia_protocol::PermissionAction::Allow
                && a.record
                    .layer
                    .as_deref()
                    .is_some_and(|l| l.contains("approval"))
        ),
        "{audit:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_after_an_edit_restores_the_file_and_redo_brings_it_back() {
    let mut h = harness("anthropic", build_scenario(), json!({}), false, "build").await;
    h.send("Please fix the greeting").await;
    let (_, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    assert_eq!(h.read("greet.txt"), "hello world\n");

    let OpResult::Reverted(summary) = h
        .runtime
        .submit(Op::Undo {
            step: None,
            session_id: h.session.id,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(summary.applied, "{summary:?}");
    assert_eq!(summary.restored, vec!["greet.txt".to_string()]);
    assert_eq!(h.read("greet.txt"), "hello\n", "the edit was undone");
    let messages = h.messages().await;
    let last = messages.last().unwrap();
    assert_eq!(last.message_type, mia_protocol::MessageType::Revert);
    assert!(last.parts.iter().any(|p| p.content.kind() == "revert"));

    // Nothing else to undo: the bash step changed nothing.
    let err = h
        .runtime
        .submit(Op::Undo {
            step: None,
            session_id: h.session.id,
            force: false,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no file-modifying step"), "{err}");

    let OpResult::Reverted(redo) = h
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
    assert!(redo.applied, "{redo:?}");
    assert_eq!(h.read("greet.txt"), "hello world\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_refuses_to_overwrite_outside_changes_unless_forced() {
    let mut h = harness("openai", build_scenario(), json!({}), false, "build").await;
    h.send("Please fix the greeting").await;
    let (_, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    std::fs::write(h.project.join("greet.txt"), "edited by hand\n").unwrap();
    let OpResult::Reverted(s) = h
        .runtime
        .submit(Op::Undo {
            step: None,
            session_id: h.session.id,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(!s.applied);
    assert_eq!(s.conflicts.len(), 1);
    assert!(s.conflicts[0].reason.contains("outside"), "{s:?}");
    assert_eq!(
        h.read("greet.txt"),
        "edited by hand\n",
        "nothing overwritten"
    );
    let OpResult::Reverted(s) = h
        .runtime
        .submit(Op::Undo {
            step: None,
            session_id: h.session.id,
            force: true,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(s.applied);
    assert_eq!(h.read("greet.txt"), "hello\n");
    let backup = s.conflicts[0]
        .backup
        .clone()
        .expect("the hand edit was kept");
    assert_eq!(
        std::fs::read_to_string(h.project.join(backup)).unwrap(),
        "edited by hand\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_can_be_turned_off() {
    let mut h = harness(
        "anthropic",
        build_scenario(),
        json!({"snapshot": {"enabled": false}}),
        false,
        "build",
    )
    .await;
    h.send("Please fix the greeting").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    assert!(!events.iter().any(|e| matches!(e, Event::Snapshot { .. })));
    assert!(!h.project.join(".mia-code/snapshots").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_streams_apart_from_text_and_is_stored() {
    for provider in ["anthropic", "openai", "google"] {
        let steps = json!([
            {"match": {}, "response": {"events": [
                {"reasoning": "Let me think"}, {"reasoning": " about it."},
                {"text": "The answer"}, {"text": " is 42."}
            ]}}
        ]);
        let mut h = harness(provider, steps, json!({}), false, "build").await;
        h.send("question").await;
        let (events, end) = h.turn().await;
        assert_eq!(end, TurnEnd::Completed, "{provider}: {events:#?}");
        let mut reasoning = String::new();
        let mut text = String::new();
        let mut text_started = false;
        for e in &events {
            match e {
                Event::ReasoningDelta { text: t, .. } => {
                    assert!(!text_started, "{provider}: reasoning after text");
                    reasoning.push_str(t);
                }
                Event::TextDelta { text: t, .. } => {
                    text_started = true;
                    text.push_str(t);
                }
                _ => {}
            }
        }
        assert_eq!(reasoning, "Let me think about it.", "{provider}");
        assert_eq!(text, "The answer is 42.", "{provider}");
        let messages = h.messages().await;
        assert!(
            matches!(&messages[1].parts[0].content, PartContent::Reasoning { text, .. } if text == "Let me think about it."),
            "{provider}: {:?}",
            messages[1].parts
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_prunes_old_snapshots_but_keeps_the_baseline_and_undo() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "three"}), "c1", "write", json!({"path": "a.txt", "content": "a\n"})),
        tool_step(json!({"has_tool_result": "c1"}), "c2", "write", json!({"path": "b.txt", "content": "b\n"})),
        tool_step(json!({"has_tool_result": "c2"}), "c3", "write", json!({"path": "c.txt", "content": "c\n"})),
        {"match": {"has_tool_result": "c3"}, "response": {"events": [{"text": "done"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({"snapshot": {"retention": 1}}),
        false,
        "build",
    )
    .await;
    h.send("write three files").await;
    let (_, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    let id = h.session.id;
    // Snapshots before the steps: H0 (baseline and step 1), H1 (step 2), H2 (step 3).
    // Keeping 1 per session plus the baseline prunes the rows of steps 1
    // and 2. Retention runs before the turn lets go of the session.
    let rows = h.runtime.snapshot_rows(id).await.unwrap();
    let kinds: Vec<_> = rows.iter().map(|s| s.snapshot.kind).collect();
    assert_eq!(
        kinds,
        vec![
            mia_store::SnapshotKind::Baseline,
            mia_store::SnapshotKind::Step
        ],
        "{rows:#?}"
    );
    // The session's ref to H1 went; H0 (baseline) and H2 stay.
    let refs_dir = |hash: &str| {
        let store = h.runtime.options().paths.home.join("snapshots");
        walk_files(&store).into_iter().any(|p| {
            p.ends_with(hash)
                && p.to_string_lossy()
                    .replace('\\', "/")
                    .contains("/refs/mia/s/")
        })
    };
    assert!(refs_dir(&rows[0].snapshot.hash));
    assert!(refs_dir(&rows[1].snapshot.hash));
    // The latest step can still be undone.
    let OpResult::Reverted(s) = h
        .runtime
        .submit(Op::Undo {
            step: None,
            session_id: id,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(s.applied, "{s:?}");
    assert!(!h.project.join("c.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_steps_record_exactly_what_they_changed() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "first"}), "c1", "bash", json!({"command": "touch made.txt"})),
        {"match": {"has_tool_result": "c1"}, "response": {"events": [{"text": "made"}]}},
        tool_step(json!({"last_message_contains": "second"}), "c2", "bash", json!({"command": "rm greet.txt"})),
        {"match": {"has_tool_result": "c2"}, "response": {"events": [{"text": "removed"}]}}
    ]);
    let mut h = harness("anthropic", steps, json!({}), false, "build").await;
    h.send("first").await;
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    // A change made by hand between turns is not the session's.
    std::fs::write(h.project.join("by-hand.txt"), "mine\n").unwrap();
    h.send("second").await;
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    // Both turns used one pooled client.
    assert_eq!(h.runtime.resident().providers, 1);
    let id = h.session.id;
    let steps = database(&h.runtime).snapshot_steps(&id).unwrap();
    let changed: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            s.step.record["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    format!(
                        "{} {}",
                        c["path"].as_str().unwrap(),
                        c["kind"].as_str().unwrap()
                    )
                })
                .collect()
        })
        .collect();
    assert_eq!(
        changed,
        vec![
            vec!["made.txt added".to_string()],
            vec!["greet.txt deleted".to_string()]
        ]
    );
    // The watcher narrowed the bash captures instead of scanning the project.
    let snaps = h.runtime.snapshot_rows(id).await.unwrap();
    let modes: Vec<&str> = snaps
        .iter()
        .filter(|s| s.snapshot.kind == mia_store::SnapshotKind::Step)
        .map(|s| s.snapshot.mode.as_str())
        .collect();
    assert_eq!(modes, vec!["paths", "paths"], "{snaps:#?}");
    // Undo both: greet.txt comes back, made.txt goes, the hand-made file stays.
    for _ in 0..2 {
        let OpResult::Reverted(s) = h
            .runtime
            .submit(Op::Undo {
                step: None,
                session_id: id,
                force: false,
            })
            .await
            .unwrap()
        else {
            panic!()
        };
        assert!(s.applied, "{s:?}");
    }
    assert_eq!(h.read("greet.txt"), "hello\n");
    assert!(!h.project.join("made.txt").exists());
    assert_eq!(h.read("by-hand.txt"), "mine\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_cannot_write_mia_codes_own_data_headless() {
    // The harness's MIA_CODE_HOME is <tmp>/home/.mia-code; the project is <tmp>/project.
    let steps = json!([
        tool_step(json!({"last_message_contains": "tamper"}), "c1", "write",
            json!({"path": "../home/.mia-code/credentials.json", "content": "{}"})),
        {"match": {"has_tool_result": "c1"}, "response": {"events": [{"text": "refused"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({"permissions": [{"permission": "*", "action": "allow"}]}),
        false,
        "build",
    )
    .await;
    h.send("tamper with it").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    let result = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult {
                output, is_error, ..
            } => Some((output.clone(), *is_error)),
            _ => None,
        })
        .unwrap();
    assert!(
        result.1 && result.0.starts_with("Permission denied"),
        "{result:?}"
    );
    assert!(
        !h.project
            .parent()
            .unwrap()
            .join("home/.mia-code/credentials.json")
            .exists()
    );
}

fn same_call_three_times() -> Value {
    json!([
        tool_step(json!({"last_message_contains": "loop"}), "c1", "read", json!({"path": "greet.txt"})),
        tool_step(json!({"has_tool_result": "c1"}), "c2", "read", json!({"path": "greet.txt"})),
        tool_step(json!({"has_tool_result": "c2"}), "c3", "read", json!({"path": "greet.txt"})),
        {"match": {"has_tool_result": "c3"}, "response": {"events": [{"text": "stopped looping"}]}}
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doom_loop_stops_headless_and_asks_a_person() {
    let mut h = harness(
        "anthropic",
        same_call_three_times(),
        json!({}),
        false,
        "build",
    )
    .await;
    h.send("loop please").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Blocked, "{events:#?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Error { kind, .. } if kind == "doom_loop"))
    );
    let results = events
        .iter()
        .filter(|e| matches!(e, Event::ToolResult { .. }))
        .count();
    assert_eq!(results, 3, "two reads ran, the third was stopped");

    let mut h = harness(
        "anthropic",
        same_call_three_times(),
        json!({}),
        true,
        "build",
    )
    .await;
    h.send("loop please").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert!(request.reason.contains("3 times in a row"), "{request:?}");
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::RejectWithFeedback {
                feedback: "you already read it".into(),
            },
        })
        .await
        .unwrap();
    let (_, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    let last = h.server.requests().last().unwrap().body.to_string();
    assert!(last.contains("you already read it"), "{last}");
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_and_their_project_resources_are_evicted_and_come_back() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "write"}), "c1", "write", json!({"path": "a.txt", "content": "a\n"})),
        {"match": {"has_tool_result": "c1"}, "response": {"events": [{"text": "done"}]}}
    ]);
    let mut h = harness_with("anthropic", steps, json!({}), false, "build", |o| {
        o.idle_eviction = Duration::ZERO;
    })
    .await;
    h.send("write a file").await;
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    let r = h.runtime.resident();
    assert_eq!((r.sessions, r.open_repos, r.watchers), (1, 1, 1), "{r:?}");
    assert_eq!(r.providers, 1, "one pooled client for the provider: {r:?}");
    // The next operation sweeps first: the idle session and its project's
    // repository and watcher go, then the session is loaded again.
    let id = h.session.id;
    h.runtime
        .submit(Op::Cancel { session_id: id })
        .await
        .unwrap();
    let r = h.runtime.resident();
    assert_eq!((r.sessions, r.open_repos, r.watchers), (1, 0, 0), "{r:?}");
    // Nothing was lost: undo reopens the store and works.
    let OpResult::Reverted(s) = h
        .runtime
        .submit(Op::Undo {
            step: None,
            session_id: id,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(s.applied, "{s:?}");
    assert!(!h.project.join("a.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_visible_primary_agents_can_be_a_sessions_agent() {
    let h = harness("anthropic", json!([]), json!({}), false, "build").await;
    let dir = h.project.display().to_string();
    for agent in ["compaction", "title", "explore", "general"] {
        let err = h
            .runtime
            .submit(Op::CreateSession {
                directory: dir.clone(),
                title: None,
                agent: Some(agent.into()),
                model: None,
            })
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("not a session's agent"),
            "{agent}: {err}"
        );
        let err = h
            .runtime
            .submit(Op::SwitchAgent {
                session_id: h.session.id,
                agent: agent.into(),
            })
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("use a primary agent (build"),
            "{agent}: {err}"
        );
        let mut rx = h.runtime.subscribe();
        h.runtime
            .submit(Op::UserMessage {
                session_id: h.session.id,
                text: "hi".into(),
                agent: Some(agent.into()),
                model: None,
            })
            .await
            .unwrap();
        // The turn fails at setup, naming the rule, and runs nothing.
        let message = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match rx.recv().await.unwrap() {
                    Event::Error { message, .. } => return message,
                    Event::StepStarted { .. } => panic!("{agent}: the turn ran"),
                    _ => {}
                }
            }
        })
        .await
        .unwrap();
        assert!(
            message.contains("not a session's agent"),
            "{agent}: {message}"
        );
        wait_idle(&h.runtime, h.session.id).await;
    }
    // The config's defaultAgent is held to the same check.
    let h = harness(
        "anthropic",
        json!([]),
        json!({"defaultAgent": "compaction"}),
        false,
        "build",
    )
    .await;
    let err = h
        .runtime
        .submit(Op::CreateSession {
            directory: h.project.display().to_string(),
            title: None,
            agent: None,
            model: None,
        })
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("compaction is an internal agent"),
        "{err}"
    );
}

/// Wait (bounded) until no turn holds the session.
async fn wait_idle(runtime: &Runtime, id: mia_protocol::SessionId) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match runtime.submit(Op::Cancel { session_id: id }).await {
            Ok(_) => {}
            Err(e) => panic!("{e}"),
        }
        let busy = runtime
            .session_detail(id)
            .await
            .map(|d| d.running)
            .unwrap_or(false);
        if !busy {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the session stayed busy"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_and_tools_are_identical_across_steps_and_turns() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "first"}), "c1", "write", json!({"path": "a.txt", "content": "a\n"})),
        {"match": {"has_tool_result": "c1"}, "response": {"events": [{"text": "one"}]}},
        {"match": {"last_message_contains": "second"}, "response": {"events": [{"text": "two"}]}}
    ]);
    let mut h = harness("anthropic", steps, json!({}), false, "build").await;
    h.send("first").await;
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    h.send("second").await;
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    let requests = h.server.requests();
    assert_eq!(requests.len(), 3);
    let prefix = |r: &mia_testkit::RecordedRequest| {
        (r.body["system"].to_string(), r.body["tools"].to_string())
    };
    let first = prefix(&requests[0]);
    assert!(first.0.contains("The session started on 20"), "{}", first.0);
    for r in &requests[1..] {
        assert_eq!(
            prefix(r),
            first,
            "the cached prefix changed between requests"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_after_allow_once_stops_the_command_before_it_runs() {
    let mut h = harness(
        "anthropic",
        ask_scenario(),
        json!({"permissions": [{"permission": "bash", "action": "ask"}]}),
        true,
        "build",
    )
    .await;
    // Another shell step holds this work tree, so the allowed command waits
    // for its snapshot; Stop arrives meanwhile.
    let cfg = mia_core::store_config(&h.runtime.options().paths);
    let held = mia_snapshot::acquire_step_lock(&h.project, &cfg, "another session").unwrap();
    h.send("run it").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Once,
        })
        .await
        .unwrap();
    // The answer is taken; the call now waits for its snapshot.
    h.until(|e| matches!(e, Event::PermissionResolved { .. }))
        .await;
    h.runtime
        .submit(Op::Cancel {
            session_id: h.session.id,
        })
        .await
        .unwrap();
    let (rest, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Cancelled, "{rest:#?}");
    assert!(
        rest.iter().any(|e| matches!(e, Event::ToolResult { output, is_error: true, .. } if output == "Stopped before it ran.")),
        "{rest:#?}"
    );
    drop(held);
    assert!(!h.project.join("out.txt").exists(), "the command ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_answer_reaches_the_model_as_a_note_not_a_new_system_prompt() {
    let mut h = harness(
        "anthropic",
        json!([
            tool_step(json!({"last_message_contains": "list"}), "call_1", "bash", json!({"command": "ls"})),
            {"match": {"has_tool_result": "call_1"}, "response": {"events": [{"text": "ok"}]}}
        ]),
        json!({"permissions": [{"permission": "bash", "action": "ask"}]}),
        true,
        "build",
    )
    .await;
    h.send("list the files").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Session,
        })
        .await
        .unwrap();
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    let requests = h.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["system"], requests[1].body["system"],
        "the system prompt was rewritten after the answer"
    );
    assert_eq!(requests[0].body["tools"], requests[1].body["tools"]);
    let second = requests[1].body.to_string();
    assert!(
        second.contains("Permission note: the user allowed")
            && second.contains("for the rest of this session"),
        "{second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_for_this_project_in_build_never_lifts_plans_read_only_floor() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "first edit"}), "e1", "write", json!({"path": "a.txt", "content": "build\n"})),
        {"match": {"has_tool_result": "e1"}, "response": {"events": [{"text": "edited"}]}},
        tool_step(json!({"last_message_contains": "plan edit"}), "e2", "write", json!({"path": "a.txt", "content": "plan\n"})),
        {"match": {"has_tool_result": "e2"}, "response": {"events": [{"text": "tried"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({"permissions": [{"permission": "write", "action": "ask"}]}),
        true,
        "build",
    )
    .await;
    h.send("first edit").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert!(
        request
            .options
            .contains(&mia_protocol::ReplyOption::Project),
        "{request:?}"
    );
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Project,
        })
        .await
        .unwrap();
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    assert_eq!(h.read("a.txt"), "build\n");
    // Tab to plan: the same edit is refused, without asking, file untouched.
    h.runtime
        .submit(Op::SwitchAgent {
            session_id: h.session.id,
            agent: "plan".into(),
        })
        .await
        .unwrap();
    h.send("plan edit").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PermissionAsked { .. })),
        "plan asked instead of refusing: {events:#?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, Event::ToolResult { is_error: true, output, .. } if output.contains("deny write"))),
        "{events:#?}"
    );
    assert_eq!(h.read("a.txt"), "build\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answer_applies_only_to_the_agent_that_was_asked() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "as build"}), "b1", "bash", json!({"command": "ls"})),
        {"match": {"has_tool_result": "b1"}, "response": {"events": [{"text": "listed"}]}},
        tool_step(json!({"last_message_contains": "as ops"}), "o1", "bash", json!({"command": "ls"})),
        {"match": {"has_tool_result": "o1"}, "response": {"events": [{"text": "listed again"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({
            "permissions": [{"permission": "bash", "action": "ask"}],
            "agent": {"ops": {"mode": "primary", "description": "Operations"}}
        }),
        true,
        "build",
    )
    .await;
    h.send("list as build").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Session,
        })
        .await
        .unwrap();
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    h.runtime
        .submit(Op::SwitchAgent {
            session_id: h.session.id,
            agent: "ops".into(),
        })
        .await
        .unwrap();
    h.send("list as ops").await;
    let events = h
        .until(|e| {
            matches!(
                e,
                Event::PermissionAsked { .. } | Event::TurnFinished { .. }
            )
        })
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("build's session answer was applied to ops: {events:#?}")
    };
    assert_eq!(request.agent, "ops");
    h.runtime
        .submit(Op::Cancel {
            session_id: h.session.id,
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_approval_records_and_applies_to_the_agent_that_was_asked() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "as build"}), "b1", "bash", json!({"command": "ls"})),
        {"match": {"has_tool_result": "b1"}, "response": {"events": [{"text": "listed"}]}},
        tool_step(json!({"last_message_contains": "build again"}), "b2", "bash", json!({"command": "ls -a"})),
        {"match": {"has_tool_result": "b2"}, "response": {"events": [{"text": "listed"}]}},
        tool_step(json!({"last_message_contains": "as ops"}), "o1", "bash", json!({"command": "ls"})),
        {"match": {"has_tool_result": "o1"}, "response": {"events": [{"text": "listed again"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({
            "permissions": [{"permission": "bash", "action": "ask"}],
            "agent": {"ops": {"mode": "primary", "description": "Operations"}}
        }),
        true,
        "build",
    )
    .await;
    h.send("list as build").await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    h.runtime
        .submit(Op::PermissionReply {
            session_id: h.session.id,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Project,
        })
        .await
        .unwrap();
    assert_eq!(h.turn().await.1, TurnEnd::Completed);
    let approvals = h.runtime.approvals(h.project.clone()).await.unwrap();
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(approvals[0].agent.as_deref(), Some("build"));
    // build: the approval holds (no ask).
    h.send("list build again").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PermissionAsked { .. })),
        "{events:#?}"
    );
    // ops: asked again.
    h.runtime
        .submit(Op::SwitchAgent {
            session_id: h.session.id,
            agent: "ops".into(),
        })
        .await
        .unwrap();
    h.send("list as ops").await;
    let events = h
        .until(|e| {
            matches!(
                e,
                Event::PermissionAsked { .. } | Event::TurnFinished { .. }
            )
        })
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("build's project approval was applied to ops: {events:#?}")
    };
    assert_eq!(request.agent, "ops");
    h.runtime
        .submit(Op::Cancel {
            session_id: h.session.id,
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_and_glob_skip_files_a_read_rule_denies_and_say_so() {
    let steps = json!([
        tool_step(json!({"last_message_contains": "search"}), "g1", "grep", json!({"pattern": "TOPSECRET"})),
        tool_step(json!({"has_tool_result": "g1"}), "g2", "glob", json!({"pattern": "**/*.txt"})),
        {"match": {"has_tool_result": "g2"}, "response": {"events": [{"text": "done"}]}}
    ]);
    let mut h = harness(
        "anthropic",
        steps,
        json!({"permissions": [{"permission": "read", "pattern": "secrets/**", "action": "deny"}]}),
        false,
        "build",
    )
    .await;
    std::fs::create_dir_all(h.project.join("secrets")).unwrap();
    std::fs::write(h.project.join("secrets/token.txt"), "TOPSECRET value\n").unwrap();
    std::fs::write(h.project.join("notes.txt"), "mentions TOPSECRET too\n").unwrap();
    h.send("search for it").await;
    let (events, end) = h.turn().await;
    assert_eq!(end, TurnEnd::Completed, "{events:#?}");
    let output = |id: &str| {
        events
            .iter()
            .find_map(|e| match e {
                Event::ToolResult {
                    call_id, output, ..
                } if call_id == id => Some(output.clone()),
                _ => None,
            })
            .unwrap()
    };
    let grep = output("g1");
    assert!(grep.contains("notes.txt"), "{grep}");
    assert!(
        !grep.contains("TOPSECRET value") && !grep.contains("token.txt"),
        "{grep}"
    );
    assert!(
        grep.contains("1 file skipped: reading it is not allowed"),
        "{grep}"
    );
    let glob = output("g2");
    assert!(
        glob.contains("notes.txt") && !glob.contains("token.txt"),
        "{glob}"
    );
    assert!(glob.contains("1 file skipped"), "{glob}");
}

/// The session database as another process sees it (the runtime keeps
/// its store to itself).
fn database(rt: &mia_core::Runtime) -> mia_store::SessionDb {
    mia_store::SessionDb::open(rt.options().paths.data_db()).unwrap()
}
