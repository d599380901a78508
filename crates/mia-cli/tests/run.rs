#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `mia-code run` as a script would use it, against the mock LLM server.

use std::path::PathBuf;

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn env(server: &MockServer, extra: Value) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let mut config = json!({
        "model": "anthropic/claude-sonnet-4-5",
        "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
        "unifier": {"enabled": false}
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        config.to_string(),
    )
    .unwrap();
    Env {
        _dir: dir,
        home,
        project: dunce::canonicalize(&project).unwrap(),
    }
}

impl Env {
    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.home.join(".mia-code"))
            .current_dir(&self.project);
        c
    }
}

async fn server(steps: Value) -> MockServer {
    let scenario: Scenario = serde_json::from_value(json!({"steps": steps})).unwrap();
    MockServer::start(scenario).await.unwrap()
}

fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_events_and_a_written_file() {
    let server = server(json!([
        {"match": {"last_message_contains": "create"}, "response": {"events": [
            {"tool_call": {"id": "c1", "name": "write", "arguments": {"path": "hello.txt", "content": "hi\n"}}}
        ]}},
        {"match": {"has_tool_result": "c1"}, "response": {"events": [{"text": "Created hello.txt."}]}}
    ]))
    .await;
    let env = env(&server, json!({}));
    let cmd_out = {
        let mut c = env.cmd();
        c.args(["run", "create hello.txt", "--format", "json"])
            .env("MIA_LOG", "debug");
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    };
    assert!(cmd_out.status.success(), "{cmd_out:?}");
    let events = lines(&cmd_out);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"session_updated"));
    assert_eq!(types.last(), Some(&"turn_finished"));
    assert!(
        types.contains(&"tool_call") && types.contains(&"snapshot"),
        "{types:?}"
    );
    assert_eq!(events.last().unwrap()["end"], "completed");
    assert_eq!(
        std::fs::read_to_string(env.project.join("hello.txt")).unwrap(),
        "hi\n"
    );
    server.assert_no_violations();

    // The log says what ran, for which session and how long it took: a
    // turn, its steps, the tool call and (at debug) the store requests.
    let session = events[0]["session"]["id"].as_str().unwrap().to_string();
    let log = std::fs::read_to_string(env.home.join(".mia-code/logs/mia-code.log")).unwrap();
    for span in [
        format!("turn{{session={session}}}: mia_core::turn: close"),
        format!("turn{{session={session}}}:step{{session={session} n=2}}: mia_core::turn: close"),
        format!(
            "step{{session={session} n=1}}:tool_call{{session={session} tool=write call=c1}}: mia_core::dispatch: close"
        ),
        format!(
            "tool_call{{session={session} tool=write call=c1}}:store_request: mia_core::store: close"
        ),
    ] {
        assert!(log.contains(&span), "no `{span}` in the log:\n{log}");
    }

    // The session is stored and can be continued.
    let out = env
        .cmd()
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sessions[0]["title"], "create hello.txt");
    assert_eq!(sessions[0]["message_count"], 3);

    // Undo from the shell removes the created file; redo brings it back.
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    let out = env.cmd().args(["undo", "--session", &id]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("hello.txt: removed (was created)"), "{text}");
    assert!(!env.project.join("hello.txt").exists());
    let out = env
        .cmd()
        .args(["undo", "--session", &id, "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "nothing left to undo: {out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no file-modifying step"));
    let out = env
        .cmd()
        .args(["redo", "--session", &id, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["applied"], true);
    assert_eq!(
        std::fs::read_to_string(env.project.join("hello.txt")).unwrap(),
        "hi\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_ask_is_denied_with_exit_3_unless_allowed() {
    let step = |id: &str| {
        json!([
            {"match": {"last_message_contains": "test"}, "response": {"events": [
                {"tool_call": {"id": id, "name": "bash", "arguments": {"command": "touch ran.txt"}}}
            ]}},
            {"match": {"has_tool_result": id}, "response": {"events": [{"text": "done"}]}}
        ])
    };
    let config = json!({"permissions": [{"permission": "bash", "action": "ask"}]});

    let server1 = server(step("c1")).await;
    let env1 = env(&server1, config.clone());
    let mut c = env1.cmd();
    c.args(["run", "run the test"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("denied:") && stderr.contains("headless"),
        "{stderr}"
    );
    assert!(!env1.project.join("ran.txt").exists());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");

    let server2 = server(step("c2")).await;
    let env2 = env(&server2, config);
    let mut c = env2.cmd();
    c.args(["run", "run the test", "--allow", "bash:touch *"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(env2.project.join("ran.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_usage_and_missing_model() {
    let server = server(json!([])).await;
    let env = env(&server, json!({}));
    let out = env
        .cmd()
        .args(["run", "x", "--allow", "has space:x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = env
        .cmd()
        .args(["run", "hi", "--model", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a model reference"));
    let out = env
        .cmd()
        .args(["run", "hi", "--continue"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session to continue"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_directories_and_credential_stores_are_never_projects() {
    let server = server(json!([])).await;
    let env = env(&server, json!({}));
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    let ssh = env.home.join(".ssh").display().to_string();
    // Each system's own system folders (Windows has no /etc).
    let system: &[&str] = if cfg!(windows) {
        &[r"C:\Windows", r"C:\Windows\System32", r"C:\Program Files"]
    } else {
        &["/usr/bin", "/etc", "/usr/lib"]
    };
    let cases = std::iter::once((ssh.as_str(), "a credential store"))
        .chain(system.iter().map(|d| (*d, "system directory")));
    for (project, why) in cases {
        let out = env
            .cmd()
            .args(["run", "hi", "--project", project])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{project}: {out:?}");
        assert!(
            err.contains("not a project") && err.contains(why),
            "{project}: {err}"
        );
    }
    // Nothing reached the model.
    assert!(server.requests().is_empty());
}
