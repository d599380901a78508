//! Shell commands in the OS sandbox, driven through the runtime as a user
//! would: the mock model calls bash, the permission engine judges, the
//! command runs under Landlock/seccomp (this machine), the card records how.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Harness, Setup, harness_outside_temp};
use mia_core::OpResult;
use mia_protocol::{Event, Op, PartContent, PermissionReplyKind, TurnEnd};
use serde_json::{Value, json};

fn bash(matcher: Value, id: &str, args: Value) -> Value {
    json!({"match": matcher, "response": {"events": [
        {"tool_call": {"id": id, "name": "bash", "arguments": args}}
    ]}})
}

fn reply(after: &str, text: &str) -> Value {
    json!({"match": {"has_tool_result": after}, "response": {"events": [{"text": text}]}})
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

impl Harness {
    async fn send(&self, text: &str, agent: Option<&str>) {
        self.runtime
            .submit(Op::UserMessage {
                session_id: self.session.id,
                text: text.into(),
                agent: agent.map(str::to_string),
                model: None,
            })
            .await
            .unwrap();
    }

    /// Events until `stop` holds (or the turn ends).
    async fn until(&mut self, stop: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let e = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out: {seen:#?}"))
                .unwrap();
            let done = stop(&e) || matches!(e, Event::TurnFinished { .. });
            seen.push(e);
            if done {
                return seen;
            }
        }
    }

    async fn answer(&self, request_id: &str, reply: PermissionReplyKind) {
        self.runtime
            .submit(Op::PermissionReply {
                session_id: self.session.id,
                request_id: request_id.into(),
                reply,
            })
            .await
            .unwrap();
    }

    /// The stored tool results, in order: (call id, output, sandbox note).
    async fn results(&self) -> Vec<(String, String, Option<Box<mia_protocol::SandboxNote>>)> {
        let id = self.session.id;
        let msgs = self
            .runtime
            .store()
            .call(move |db| db.get_messages(&id, &mia_store::MessageQuery::default()))
            .await
            .unwrap();
        msgs.iter()
            .flat_map(|m| m.parts.iter())
            .filter_map(|p| match &p.content {
                PartContent::ToolResult {
                    call_id,
                    output,
                    sandbox,
                    ..
                } => Some((call_id.clone(), output.clone(), sandbox.clone())),
                _ => None,
            })
            .collect()
    }
}

fn interactive() -> Setup<'static> {
    Setup {
        interactive: true,
        title: "sandbox",
        scale: 0.05,
        prepare: &|p| {
            git(p, &["init", "-q", "-b", "main"]);
        },
    }
}

fn ended(events: &[Event]) -> Option<TurnEnd> {
    events.iter().find_map(|e| match e {
        Event::TurnFinished { end, .. } => Some(*end),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_is_not_plain_words_runs_sandboxed_without_asking() {
    let steps = json!([
        bash(
            json!({"last_message_contains": "stamp"}),
            "b1",
            json!({"command": "echo $$ > pid.txt && for f in *.txt; do wc -c $f; done"})
        ),
        reply("b1", "done"),
    ]);
    let mut h = harness_outside_temp(steps, json!({}), interactive()).await;
    h.send("stamp it", None).await;
    let events = h.until(|_| false).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PermissionAsked { .. })),
        "{events:#?}"
    );
    assert_eq!(ended(&events), Some(TurnEnd::Completed));
    assert!(h.project.join("pid.txt").exists());
    let results = h.results().await;
    let note = results[0].2.clone().expect("a sandbox note");
    assert_eq!(note.mode, "workspace-write");
    assert_eq!(note.network.as_deref(), Some("ask"));
    assert_eq!(note.mechanism.as_deref(), Some("bubblewrap"));
    assert_eq!(note.full, Some(true));
    // The live event carries it too.
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolResult { sandbox: Some(n), .. } if n.mode == "workspace-write")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_write_can_run_once_outside_after_a_person_says_yes() {
    // `$OUT` hides the target from the engine: it allows the command (the
    // sandbox stands in), the kernel refuses the write, the result says so.
    let steps = json!([
        bash(
            json!({"last_message_contains": "publish"}),
            "b1",
            json!({"command": "OUT=../outside.txt; echo hi > $OUT"})
        ),
        bash(
            json!({"has_tool_result": "b1"}),
            "b2",
            json!({"command": "OUT=../outside.txt; echo hi > $OUT", "outside_sandbox": true})
        ),
        reply("b2", "done"),
    ]);
    let mut h = harness_outside_temp(steps, json!({}), interactive()).await;
    let outside = h.project.parent().unwrap().join("outside.txt");
    h.send("publish it", None).await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    // The first run was blocked and said what to do.
    let results = h.results().await;
    assert_eq!(results.len(), 1, "{}", request.reason);
    assert!(!outside.exists());
    assert!(
        results[0].1.contains("outside_sandbox: true"),
        "{}",
        results[0].1
    );
    assert_eq!(
        results[0].2.as_ref().unwrap().blocked.as_deref(),
        Some("write")
    );
    // The escalation is an ask of its own, with no "always".
    assert_eq!(request.permission, "sandbox_escape");
    assert!(
        request.reason.contains("outside the OS sandbox"),
        "{}",
        request.reason
    );
    assert!(
        !request.options.contains(&"session".to_string()),
        "{:?}",
        request.options
    );
    h.answer(&request.id, PermissionReplyKind::Once).await;
    let events = h.until(|_| false).await;
    assert_eq!(ended(&events), Some(TurnEnd::Completed), "{events:#?}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "hi\n");
    let results = h.results().await;
    assert_eq!(
        results[1].2.as_ref().unwrap().unconfined.as_deref(),
        Some("escalated")
    );
    // Audited: the sandbox_escape check is a stored row.
    let rows = h
        .runtime
        .store()
        .call(|db| db.permission_audit(&mia_store::AuditQuery::default()))
        .await
        .unwrap();
    assert!(
        rows.iter().any(|r| r.record.permission == "sandbox_escape"),
        "{rows:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_cannot_write_even_through_a_command_its_read_only_list_allows() {
    // `git diff` is on plan's read-only list; a textconv driver in the
    // repository's config makes it run a program that writes a file.
    let prepare = |p: &Path| {
        git(p, &["init", "-q", "-b", "main"]);
        std::fs::write(p.join("a.txt"), "one\n").unwrap();
        std::fs::write(p.join(".gitattributes"), "*.txt diff=conv\n").unwrap();
        git(p, &["add", "."]);
        git(p, &["commit", "-q", "-m", "init"]);
        std::fs::write(p.join("a.txt"), "two\n").unwrap();
        git(
            p,
            &[
                "config",
                "diff.conv.textconv",
                "sh -c 'echo pwned > PWNED; cat \"$0\"'",
            ],
        );
    };
    let steps = json!([
        bash(
            json!({"last_message_contains": "look"}),
            "b1",
            json!({"command": "git diff"})
        ),
        reply("b1", "looked"),
    ]);
    let setup = Setup {
        interactive: false,
        title: "plan",
        scale: 0.05,
        prepare: &prepare,
    };
    let mut h = harness_outside_temp(steps.clone(), json!({}), setup).await;
    h.send("look at the diff", Some("plan")).await;
    let events = h.until(|_| false).await;
    assert_eq!(ended(&events), Some(TurnEnd::Completed), "{events:#?}");
    let results = h.results().await;
    assert!(!h.project.join("PWNED").exists(), "{}", results[0].1);
    let note = results[0].2.clone().unwrap();
    assert_eq!(note.mode, "read-only");
    assert_eq!(note.network.as_deref(), Some("deny"));

    // The same command with the sandbox off does write (the test can fail).
    let setup = Setup {
        interactive: false,
        title: "plan",
        scale: 0.05,
        prepare: &prepare,
    };
    let mut h = harness_outside_temp(steps, json!({"sandbox": {"mode": "off"}}), setup).await;
    h.send("look at the diff", Some("plan")).await;
    h.until(|_| false).await;
    assert!(h.project.join("PWNED").exists());
}

/// Runs the test body in a child process of this test binary with the
/// sandbox forced unavailable (the variable is process-wide, and this
/// workspace has no unsafe `set_var`). `true` in the child.
fn in_child_without_sandbox(test: &str) -> bool {
    if std::env::var_os(mia_sandbox::FORCE_UNAVAILABLE_ENV).is_some() {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(mia_sandbox::FORCE_UNAVAILABLE_ENV, "simulated for the test")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran no test: {text}");
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_sandbox_every_command_asks_and_headless_runs_none() {
    if !in_child_without_sandbox("without_a_sandbox_every_command_asks_and_headless_runs_none") {
        return;
    }
    let steps = json!([
        bash(
            json!({"last_message_contains": "touch"}),
            "b1",
            json!({"command": "touch made.txt"})
        ),
        reply("b1", "done"),
    ]);
    // A person is asked first; once allowed, the command runs unconfined.
    let mut h = harness_outside_temp(steps.clone(), json!({}), interactive()).await;
    h.send("touch it", None).await;
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert_eq!(request.permission, "sandbox_escape");
    assert!(
        request.reason.contains("sandbox is unavailable"),
        "{}",
        request.reason
    );
    assert!(
        request.reason.contains("simulated for the test"),
        "{}",
        request.reason
    );
    assert!(!h.project.join("made.txt").exists());
    h.answer(&request.id, PermissionReplyKind::Once).await;
    let events = h.until(|_| false).await;
    assert_eq!(ended(&events), Some(TurnEnd::Completed), "{events:#?}");
    assert!(h.project.join("made.txt").exists());
    let results = h.results().await;
    assert_eq!(
        results[0].2.as_ref().unwrap().unconfined.as_deref(),
        Some("unavailable")
    );

    // Headless: nobody can say yes, so nothing runs, and the result says how to fix it.
    let setup = Setup {
        interactive: false,
        ..interactive()
    };
    let mut h = harness_outside_temp(steps, json!({}), setup).await;
    h.send("touch it", None).await;
    h.until(|_| false).await;
    assert!(!h.project.join("made.txt").exists());
    let results = h.results().await;
    assert!(
        results[0].1.contains("sandbox.mode") || results[0].1.contains("\"mode\": \"off\""),
        "{}",
        results[0].1
    );
    assert!(results[0].1.contains("headless"), "{}", results[0].1);
}

/// A person edits a file while a sandboxed command runs: the kernel's
/// trace says the command did not touch it, so the step does not own the
/// edit, the undo preview says it leaves it alone and why, and undo keeps
/// it. Without the sandbox (no trace) the same edit is taken for the
/// command's (the test can fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_edit_during_a_command_is_not_the_commands_and_undo_keeps_it() {
    async fn scenario(config: Value) -> (Harness, mia_protocol::RevertPreview) {
        let steps = json!([
            // Plain words (a script file), so it runs without asking with
            // and without the sandbox.
            bash(
                json!({"last_message_contains": "build"}),
                "b1",
                json!({"command": "bash wait.sh"})
            ),
            reply("b1", "built"),
        ]);
        let setup = Setup {
            interactive: false,
            title: "attribution",
            scale: 0.05,
            prepare: &|p| {
                git(p, &["init", "-q", "-b", "main"]);
                std::fs::write(p.join("x.txt"), "mine\n").unwrap();
                std::fs::write(
                    p.join("wait.sh"),
                    "for i in $(seq 1 250); do [ -e .edited ] && break; sleep 0.02; done\necho out > a.out\n",
                )
                .unwrap();
            },
        };
        let mut h = harness_outside_temp(steps, config, setup).await;
        h.send("build it", None).await;
        // The person's edit, once the command is running.
        let project = h.project.clone();
        h.until(|e| matches!(e, Event::ToolCall { .. })).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        std::fs::write(project.join("x.txt"), "the person's edit\n").unwrap();
        std::fs::write(project.join(".edited"), "").unwrap();
        let events = h.until(|_| false).await;
        assert_eq!(ended(&events), Some(TurnEnd::Completed), "{events:#?}");
        assert!(project.join("a.out").exists(), "{:#?}", h.results().await);
        let preview = h
            .runtime
            .preview(
                h.session.id,
                mia_protocol::HistoryAction::Undo { step: None },
            )
            .await
            .unwrap();
        (h, preview)
    }

    let (h, preview) = scenario(json!({})).await;
    let files: Vec<&str> = preview.files.iter().map(|f| f.path.as_str()).collect();
    assert!(files.contains(&"a.out"), "{preview:#?}");
    assert!(!files.contains(&"x.txt"), "{preview:#?}");
    assert!(
        preview
            .left_alone
            .iter()
            .any(|l| l.path == "x.txt" && l.reason.contains("not by it")),
        "{preview:#?}"
    );
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
    assert!(!h.project.join("a.out").exists());
    assert_eq!(
        std::fs::read_to_string(h.project.join("x.txt")).unwrap(),
        "the person's edit\n"
    );
    assert!(
        summary.message.contains("not by the command"),
        "{}",
        summary.message
    );

    // No sandbox, no trace: the edit is taken for the command's.
    let (_h, preview) = scenario(json!({"sandbox": {"mode": "off"}})).await;
    assert!(
        preview.files.iter().any(|f| f.path == "x.txt"),
        "{preview:#?}"
    );
}
