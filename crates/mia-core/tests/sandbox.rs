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
        let msgs = self.runtime.session_messages(id, false).await.unwrap();
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
    assert_eq!(wire(&note.mode), "workspace-write");
    assert_eq!(note.network.map(|v| wire(&v)).as_deref(), Some("ask"));
    assert_eq!(
        note.mechanism.map(|v| wire(&v)).as_deref(),
        Some("bubblewrap")
    );
    assert_eq!(note.full, Some(true));
    // The live event carries it too.
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolResult { sandbox: Some(n), .. } if wire(&n.mode) == "workspace-write")));
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
        results[0]
            .2
            .as_ref()
            .unwrap()
            .blocked
            .map(|v| wire(&v))
            .as_deref(),
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
        !request
            .options
            .contains(&mia_protocol::ReplyOption::Session),
        "{:?}",
        request.options
    );
    h.answer(&request.id, PermissionReplyKind::Once).await;
    let events = h.until(|_| false).await;
    assert_eq!(ended(&events), Some(TurnEnd::Completed), "{events:#?}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "hi\n");
    let results = h.results().await;
    assert_eq!(
        results[1]
            .2
            .as_ref()
            .unwrap()
            .unconfined
            .map(|v| wire(&v))
            .as_deref(),
        Some("escalated")
    );
    // Audited: the sandbox_escape check is a stored row.
    let rows = database(&h.runtime)
        .permission_audit(&mia_store::AuditQuery::default())
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
    assert_eq!(wire(&note.mode), "read-only");
    assert_eq!(note.network.map(|v| wire(&v)).as_deref(), Some("deny"));

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
        results[0]
            .2
            .as_ref()
            .unwrap()
            .unconfined
            .map(|v| wire(&v))
            .as_deref(),
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

/// The first global (non-loopback) IPv4 address of this machine: a host
/// the proxy treats as remote (loopback is refused as the host's own).
fn host_address() -> String {
    let out = std::process::Command::new("ip")
        .args(["-4", "-o", "addr", "show", "scope", "global"])
        .output()
        .expect("`ip` (iproute2) lists this machine's addresses");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .skip_while(|w| *w != "inet")
        .nth(1)
        .and_then(|a| a.split('/').next())
        .map(str::to_string)
        .unwrap_or_else(|| {
            panic!("this machine has no global IPv4 address to serve a test host on: {text}")
        })
}

/// An HTTP server on `addr` answering every request with `body`; its port.
fn http_host(addr: &str, body: &'static str) -> u16 {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind((addr, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = s;
                let mut head = [0u8; 4096];
                let _ = s.read(&mut head);
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_allow_and_a_script_the_engine_cannot_read_still_stay_inside_the_wall() {
    use std::os::unix::fs::PermissionsExt;
    let allow = json!({"permissions": [{"permission": "bash", "action": "allow"}]});
    let steps = json!([
        bash(
            json!({"last_message_contains": "run it"}),
            "b1",
            json!({"command": "python3 escape.py"})
        ),
        reply("b1", "done"),
    ]);
    let mut h = harness_outside_temp(steps, allow, interactive()).await;
    let base = h.project.parent().unwrap().to_path_buf();
    let mia_home = base.join("home/.mia-code");
    let config = base.join("home/.config/mia-code/config.json");
    let outside = base.join("outside.txt");
    std::fs::write(&outside, "v").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).unwrap();
    let sock = lasting_socket_dir().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            drop(s);
        }
    });
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let config_before = std::fs::read(h.project.join(".git/config")).unwrap();
    std::fs::write(
        h.project.join("escape.py"),
        format!(
            r##"
import os, socket, json
r = {{}}
def t(name, fn):
    try:
        r[name] = ["DID", str(fn())[:200]]
    except Exception as e:
        r[name] = ["refused", repr(e)[:200]]
def append(p, s):
    with open(p, "a") as f: f.write(s)
def create(p, s):
    with open(p, "w") as f: f.write(s)
t("git_config", lambda: append(".git/config", "[core]\n\tfsmonitor = touch pwned\n"))
t("hook", lambda: create(".git/hooks/pre-commit", "#!/bin/sh\ntouch pwned\n"))
t("mcp_json", lambda: create(".mcp.json", '{{"mcpServers": {{"x": {{"command": "touch"}}}}}}'))
t("mia_json", lambda: create(".mia-code.json", "{{}}"))
t("data_db", lambda: open("{db}", "rb").read(16))
t("config", lambda: open("{config}").read())
t("env", lambda: sorted(k for k in os.environ if ("KEY" in k.upper() or "TOKEN" in k.upper()) and not k.startswith("GIT_CONFIG_KEY_")))
t("parent_env", lambda: open("/proc/%d/environ" % os.getppid(), "rb").read().count(b"test-key"))
t("procs", lambda: len([p for p in os.listdir("/proc") if p.isdigit()]))
t("socket", lambda: socket.socket(socket.AF_UNIX).connect("{sock}"))
t("chmod", lambda: os.chmod("{outside}", 0o777))
t("tcp", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=3))
t("tty", lambda: os.open("/dev/tty", os.O_RDWR))
t("control", lambda: create("made-by-script.txt", "ok"))
print("RESULT " + json.dumps(r))
"##,
            db = mia_home.join("data.db").display(),
            config = config.display(),
            sock = sock.display(),
            outside = outside.display(),
        ),
    )
    .unwrap();
    h.send("run it", None).await;
    let events = h.until(|_| false).await;
    assert_eq!(ended(&events), Some(TurnEnd::Completed), "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PermissionAsked { .. })),
        "bash: allow covers it: {events:#?}"
    );
    let results = h.results().await;
    let (_, output, note) = &results[0];
    let json_line = output
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("{output}"));
    let r: serde_json::Map<String, Value> = serde_json::from_str(json_line).unwrap();
    let verdict = |k: &str| r[k][0].as_str().unwrap().to_string();
    for k in [
        "git_config",
        "hook",
        "mcp_json",
        "mia_json",
        "data_db",
        "config",
        "socket",
        "chmod",
        "tcp",
        "tty",
    ] {
        assert_eq!(verdict(k), "refused", "{k}: {:?}", r[k]);
    }
    assert_eq!(verdict("control"), "DID", "{:?}", r["control"]);
    assert_eq!(r["env"][1], "[]", "{:?}", r["env"]);
    assert!(
        r["parent_env"][1] == "0" || verdict("parent_env") == "refused",
        "{:?}",
        r["parent_env"]
    );
    let procs: usize = r["procs"][1].as_str().unwrap().parse().unwrap();
    assert!(procs <= 4, "the sandbox sees other processes: {procs}");
    // And on disk: nothing outside the project changed, nothing planted.
    assert_eq!(
        std::fs::read(h.project.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!h.project.join(".git/hooks/pre-commit").exists());
    for name in [
        ".mcp.json",
        ".mia-code.json",
        "mia-code.json",
        ".vscode",
        ".idea",
        ".envrc",
        ".claude",
        ".gitmodules",
    ] {
        assert!(!h.project.join(name).exists(), "{name} left in the project");
    }
    assert_eq!(
        std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert!(h.project.join("made-by-script.txt").exists());
    let note = note.as_ref().expect("a sandbox note");
    assert_eq!(
        note.mechanism.map(|v| wire(&v)).as_deref(),
        Some("bubblewrap")
    );
    drop(tcp);
}

fn curl(id: &str, after: Value, url: &str) -> Value {
    bash(
        after,
        id,
        json!({"command": format!("curl -sS --max-time 20 {url}")}),
    )
}

/// `python3 fetch.py URL`: a download the engine cannot read (the script
/// uses the proxy variables, as urllib does by default).
fn py_fetch(id: &str, after: Value, url: &str) -> Value {
    bash(
        after,
        id,
        json!({"command": format!("python3 fetch.py {url}")}),
    )
}

const FETCH_PY: &str = "import sys, urllib.request\ntry:\n    print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())\nexcept Exception as e:\n    print('FAILED', e)\n";

fn with_fetch_py() -> Setup<'static> {
    Setup {
        prepare: &|p| {
            git(p, &["init", "-q", "-b", "main"]);
            std::fs::write(p.join("fetch.py"), FETCH_PY).unwrap();
        },
        ..interactive()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_asks_for_a_programs_first_connection_and_always_covers_that_host_only() {
    let allow = json!({"permissions": [{"permission": "bash", "action": "allow"}]});
    let addr = host_address();
    let port = http_host(&addr, "hello-from-the-host");
    let url = format!("http://{addr}:{port}/x");
    let other = format!("http://other-host.invalid:{port}/y");
    let steps = json!([
        py_fetch(
            "n1",
            json!({"last_message_contains": "fetch"}),
            &format!("{url}?1")
        ),
        py_fetch("n2", json!({"has_tool_result": "n1"}), &format!("{url}?2")),
        py_fetch("n3", json!({"has_tool_result": "n2"}), &format!("{url}?3")),
        bash(
            json!({"has_tool_result": "n3"}),
            "n4",
            json!({"command": format!("python3 -c 'import socket; socket.create_connection((\"{addr}\", {port}), timeout=5); print(\"DIRECT-CONNECTED\")'")})
        ),
        py_fetch("n5", json!({"has_tool_result": "n4"}), &other),
        reply("n5", "done"),
    ]);
    let mut h = harness_outside_temp(steps, allow, with_fetch_py()).await;
    h.send("fetch it", None).await;
    // n1: the proxy asks, naming the program and the URL; allowed once.
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert_eq!(request.permission, "fetch");
    assert!(request.reason.contains("`python3"), "{}", request.reason);
    assert!(request.reason.contains(&url), "{}", request.reason);
    assert_eq!(request.call_id.as_deref(), Some("n1"));
    assert!(
        request
            .options
            .contains(&mia_protocol::ReplyOption::Project),
        "{:?}",
        request.options
    );
    h.answer(&request.id, PermissionReplyKind::Once).await;
    // n2: "once" was for that command: it asks again; always for the session.
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert_eq!(request.call_id.as_deref(), Some("n2"));
    h.answer(&request.id, PermissionReplyKind::Session).await;
    // n3: no ask; n4 ignores the proxy and has no network; n5 is another host: it asks.
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert_eq!(request.call_id.as_deref(), Some("n5"), "{events:#?}");
    h.answer(&request.id, PermissionReplyKind::Deny).await;
    let events = h.until(|_| false).await;
    assert_eq!(ended(&events), Some(TurnEnd::Completed), "{events:#?}");
    let results = h.results().await;
    let out = |id: &str| {
        results
            .iter()
            .find(|r| r.0 == id)
            .map(|r| r.1.clone())
            .unwrap()
    };
    for id in ["n1", "n2", "n3"] {
        assert!(out(id).contains("hello-from-the-host"), "{id}: {}", out(id));
    }
    assert!(!out("n4").contains("DIRECT-CONNECTED"), "{}", out("n4"));
    assert!(
        out("n5").contains("FAILED") && out("n5").contains("refused"),
        "{}",
        out("n5")
    );
    // The card lists the host and the program.
    let n1 = results
        .iter()
        .find(|r| r.0 == "n1")
        .unwrap()
        .2
        .clone()
        .unwrap();
    assert!(
        n1.hosts.iter().any(|x| x.host == addr
            && x.allowed
            && x.program
                .as_deref()
                .is_some_and(|p| p.starts_with("python3"))),
        "{:?}",
        n1.hosts
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_whose_own_ask_named_the_host_is_not_asked_again_by_the_proxy() {
    let addr = host_address();
    let port = http_host(&addr, "hello-from-the-host");
    let url = format!("http://{addr}:{port}/x");
    let steps = json!([
        curl("c1", json!({"last_message_contains": "fetch"}), &url),
        reply("c1", "done"),
    ]);
    let allow = json!({"permissions": [{"permission": "bash", "action": "allow"}]});
    let mut h = harness_outside_temp(steps, allow, interactive()).await;
    h.send("fetch it", None).await;
    // The engine reads curl's URL: its first fetch of the host asks.
    let events = h
        .until(|e| matches!(e, Event::PermissionAsked { .. }))
        .await;
    let Some(Event::PermissionAsked { request }) = events.last() else {
        panic!("{events:#?}")
    };
    assert_eq!(request.call_id.as_deref(), Some("c1"));
    h.answer(&request.id, PermissionReplyKind::Once).await;
    let events = h.until(|_| false).await;
    let asks = events
        .iter()
        .filter(|e| matches!(e, Event::PermissionAsked { .. }))
        .count();
    assert_eq!(asks, 0, "asked twice: {events:#?}");
    let results = h.results().await;
    assert!(
        results[0].1.contains("hello-from-the-host"),
        "{}",
        results[0].1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_run_refuses_a_new_host_and_a_fetch_rule_allows_it() {
    let addr = host_address();
    let port = http_host(&addr, "hello-from-the-host");
    let url = format!("http://{addr}:{port}/x");
    let steps = json!([
        py_fetch("h1", json!({"last_message_contains": "fetch"}), &url),
        reply("h1", "done"),
    ]);
    let headless = Setup {
        interactive: false,
        ..with_fetch_py()
    };
    let cfg = json!({"permissions": [{"permission": "bash", "action": "allow"}]});
    let mut h = harness_outside_temp(steps.clone(), cfg, headless).await;
    h.send("fetch it", None).await;
    let events = h.until(|_| false).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PermissionAsked { .. }))
    );
    let results = h.results().await;
    assert!(
        !results[0].1.contains("hello-from-the-host"),
        "{}",
        results[0].1
    );
    assert!(results[0].1.contains("headless"), "{}", results[0].1);
    // A fetch rule for the host: allowed without anyone asked.
    let cfg = json!({"permissions": [
        {"permission": "bash", "action": "allow"},
        {"permission": "fetch", "pattern": addr, "action": "allow"}
    ]});
    let headless = Setup {
        interactive: false,
        ..with_fetch_py()
    };
    let mut h = harness_outside_temp(steps, cfg, headless).await;
    h.send("fetch it", None).await;
    h.until(|_| false).await;
    let results = h.results().await;
    assert!(
        results[0].1.contains("hello-from-the-host"),
        "{}",
        results[0].1
    );
}

/// A directory for a listening socket that stays for the whole test run:
/// every sandbox started meanwhile (other tests run in parallel) masks the
/// sockets the kernel lists, and one whose directory vanished in the
/// instant a sandbox starts makes bubblewrap fail to set it up. The socket
/// closes with this process; the directory is swept after an hour.
fn lasting_socket_dir() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sockets");
    std::fs::create_dir_all(&root).unwrap();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|d| d.as_secs() > 3600));
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let dir = tempfile::Builder::new().tempdir_in(&root).unwrap().keep();
    dir.canonicalize().unwrap()
}

/// The session database as another process sees it (the runtime keeps
/// its store to itself).
fn database(rt: &mia_core::Runtime) -> mia_store::SessionDb {
    mia_store::SessionDb::open(rt.options().paths.data_db()).unwrap()
}

/// A protocol value as it goes over the wire (`"workspace-write"`).
fn wire<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
}
