#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Several sessions and several processes on one project at once (issue 11),
//! with real `mia-code run` processes against the mock model and real git.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn env(server: &MockServer) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let config = json!({
        "model": "anthropic/claude-sonnet-4-5",
        "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
        "unifier": {"enabled": false}
    });
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        config.to_string(),
    )
    .unwrap();
    Env {
        _dir: dir,
        home,
        project: project.canonicalize().unwrap(),
    }
}

impl Env {
    fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mia-code"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.home.join(".mia-code"))
            .current_dir(&self.project)
            .stdin(Stdio::null());
        c
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn sessions(&self) -> Vec<Value> {
        let out = self
            .cmd()
            .args(["sessions", "list", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    fn session_titled(&self, title: &str) -> Option<Value> {
        self.sessions()
            .into_iter()
            .find(|s| s["title"].as_str() == Some(title))
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.project.join(rel)).ok()
    }
}

async fn server(steps: Value) -> MockServer {
    let scenario: Scenario = serde_json::from_value(json!({"steps": steps})).unwrap();
    MockServer::start(scenario).await.unwrap()
}

/// Wait for a condition (never a fixed sleep), failing after `secs`.
fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn finish(child: Child, what: &str) -> std::process::Output {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A shell step that starts, then waits for `release` to appear (bounded),
/// then creates `a.out`: the test decides exactly what happens meanwhile.
fn write_wait_script(project: &Path) {
    std::fs::write(
        project.join("wait.sh"),
        "touch started\nfor i in $(seq 600); do [ -f release ] && break; sleep 0.05; done\ntouch a.out\n",
    )
    .unwrap();
}

fn scenario() -> Value {
    json!([
        {"match": {"last_message_contains": "hello again"}, "response": {"events": [{"text": "Hello."}]}},
        {"match": {"last_message_contains": "run A"}, "response": {"events": [
            {"tool_call": {"id": "a1", "name": "bash", "arguments": {"command": "sh wait.sh"}}}
        ]}},
        {"match": {"has_tool_result": "a1"}, "response": {"events": [{"text": "A is done."}]}},
        {"match": {"last_message_contains": "edit B"}, "response": {"events": [
            {"tool_call": {"id": "b1", "name": "write", "arguments": {"path": "x.txt", "content": "new by B\n"}}}
        ]}},
        {"match": {"has_tool_result": "b1"}, "response": {"events": [{"text": "B is done."}]}}
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_in_one_session_never_reverts_another_processes_edit() {
    let server = server(scenario()).await;
    let env = env(&server);
    std::fs::write(env.project.join("x.txt"), "old\n").unwrap();
    write_wait_script(&env.project);
    // Session A in one process: a shell command that runs for a while.
    let a = env.spawn(&["run", "run A", "--allow", "bash", "--format", "json"]);
    wait_for("A's command to start", 60, || {
        env.project.join("started").exists()
    });
    let a_id = env.session_titled("run A").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The list shows A as running, from another process.
    assert_eq!(env.session_titled("run A").unwrap()["status"], "busy");

    // Meanwhile: a second process on the same running session is refused
    // with its own exit code, naming the holder...
    let out = env
        .cmd()
        .args(["run", "hello again", "--session", &a_id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is running a turn in mia-code, pid"),
        "the holder is named: {err}"
    );
    // ...and so is an undo of it.
    let out = env
        .cmd()
        .args(["undo", "--session", &a_id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    // ...and a delete.
    let out = env
        .cmd()
        .args(["sessions", "delete", &a_id, "--yes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");

    // Session B, a third process, edits x.txt while A's command runs.
    let b = env.spawn(&["run", "edit B", "--format", "json"]);
    finish(b, "session B");
    assert_eq!(env.read("x.txt").as_deref(), Some("new by B\n"));
    std::fs::write(env.project.join("release"), "").unwrap();
    finish(a, "session A");
    assert!(env.read("a.out").is_some());

    // Undo A: its own change goes, B's edit stays, and it says why.
    let out = env
        .cmd()
        .args(["undo", "--session", &a_id])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("x.txt: left as it is (changed by session"),
        "{text}"
    );
    assert!(env.read("a.out").is_none(), "{text}");
    assert_eq!(env.read("x.txt").as_deref(), Some("new by B\n"), "{text}");
    // B's timeline still shows its edit, and B can undo it.
    let b_id = env.session_titled("edit B").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = env
        .cmd()
        .args(["undo", "--session", &b_id])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(env.read("x.txt").as_deref(), Some("old\n"));
    server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_mid_turn_is_usable_again_at_once() {
    let server = server(scenario()).await;
    let env = env(&server);
    write_wait_script(&env.project);
    let mut a = env.spawn(&["run", "run A", "--allow", "bash", "--format", "json"]);
    wait_for("A's command to start", 60, || {
        env.project.join("started").exists()
    });
    let a_id = env.session_titled("run A").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // kill -9: no cleanup runs, the claim stays in the store.
    a.kill().unwrap();
    a.wait().unwrap();
    let started = Instant::now();
    let out = env
        .cmd()
        .args(["run", "hello again", "--session", &a_id])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Hello."));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the dead claim is taken over at once, not after it times out"
    );
    assert_eq!(env.session_titled("run A").unwrap()["status"], "idle");
    // The killed step's snapshot did not block anything either.
    std::fs::write(env.project.join("release"), "").unwrap();
}
