#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(unix)]
//! `mia-code acp` driven by a client written with the official ACP
//! TypeScript SDK (`tests/acp/drive.mjs`): a full turn with a plan, a
//! permission request and an edit through the editor's buffer, a prompt
//! cancelled mid-stream, malformed input, and `session/load` in a second
//! process. Then the session is an ordinary one: listed, and its edit
//! undone from the CLI.

use std::path::PathBuf;

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

fn driver_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp");
    let ok = dir.join("node_modules/@agentclientprotocol/sdk").is_dir()
        && std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if ok {
        return Some(dir.canonicalize().unwrap());
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the ACP SDK is not installed in tests/acp (scripts/setup --test installs it)"
    );
    eprintln!("skipped: run `npm ci` in tests/acp (or scripts/setup --test)");
    None
}

/// A Python with the MCP SDK, for the editor's own MCP server (the fixture).
fn python() -> Option<String> {
    let py = std::env::var("MIA_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args(["-c", "import mcp.server.fastmcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(py);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "no Python with the MCP SDK ({py}); scripts/test sets MIA_TEST_PYTHON"
    );
    eprintln!(
        "the editor's MCP server is left out: no Python with the `mcp` package (set MIA_TEST_PYTHON)"
    );
    None
}

fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/mcp/server.py")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_drives_a_session_over_acp() {
    let Some(driver) = driver_dir() else { return };
    let python = python();
    let slow: Vec<Value> = (0..40)
        .map(|i| json!({"text": format!("word{i} ")}))
        .collect();
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"has_tool_result": "e1"}, "response": {"events": [{"text": "Edited a.txt."}]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [
            {"tool_call": {"id": "e1", "name": "edit", "arguments": {"path": "a.txt", "old_string": "hello", "new_string": "hello world"}}}
        ]}},
        {"match": {"last_message_contains": "please edit a.txt"}, "response": {"events": [
            {"reasoning": "The file needs a change."},
            {"tool_call": {"id": "t1", "name": "todo", "arguments": {"action": "create", "items": ["edit a.txt"]}}}
        ]}},
        {"match": {"has_tool_result": "x1"}, "response": {"events": [{"text": "The editor's server answered."}]}},
        {"match": {"last_message_contains": "use the editor's tool"}, "response": {"events": [
            {"tool_call": {"id": "x1", "name": "mcp__editor__echo", "arguments": {"text": "hi from the editor"}}}
        ]}},
        {"match": {"last_message_contains": "talk slowly"}, "response": {"chunk_delay_ms": 150, "events": slow}}
    ]}))
    .unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let project = project.canonicalize().unwrap();
    std::fs::write(project.join("a.txt"), "hello\n").unwrap();
    // The Notification hook's log is not part of any step.
    std::fs::write(project.join(".gitignore"), ".hooklog/\n").unwrap();
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        json!({
            "model": "anthropic/claude-sonnet-4-5",
            "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
            "unifier": {"enabled": false},
            "permissions": [{"permission": "edit", "action": "ask"}],
            "hooks": {"Notification": [{"hooks": [{"type": "command", "command": "mkdir -p .hooklog && cat >> .hooklog/notification"}]}]}
        })
        .to_string(),
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("mia-code");
    let out = {
        let mut c = std::process::Command::new("node");
        c.arg(driver.join("drive.mjs"))
            .current_dir(&driver)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("MIA_CODE_HOME", home.join(".mia-code"))
            .env("MIA_BIN", &bin)
            .env("PROJECT", &project);
        if let Some(py) = &python {
            c.env("MCP_PY", py).env("MCP_SERVER", fixture());
        }
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    };
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let session = result["session"].as_str().unwrap().to_string();

    // The edit went through the editor's buffer (its unsaved text), which
    // the editor saved.
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "hello world from the buffer\n"
    );
    let cmd = || {
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("MIA_CODE_HOME", home.join(".mia-code"))
            .current_dir(&project);
        c
    };
    // The permission ask reached the Notification hook.
    let notes = std::fs::read_to_string(project.join(".hooklog/notification")).unwrap();
    assert!(
        notes.contains("\"hook_event_name\":\"Notification\""),
        "{notes}"
    );
    assert!(
        notes.contains("needs your permission to use Edit"),
        "{notes}"
    );
    // An ordinary session: listed, and its edit undone (the step was
    // snapshotted before the editor wrote).
    let out = cmd().args(["sessions", "list", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == session),
        "{listed}"
    );
    // Undo walks back the session's file-changing steps until the edit's.
    let mut undone = Vec::new();
    for _ in 0..3 {
        let out = cmd()
            .args(["undo", "--session", &session, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        undone.push(String::from_utf8_lossy(&out.stdout).to_string());
        if std::fs::read_to_string(project.join("a.txt")).unwrap() == "hello\n" {
            break;
        }
    }
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "hello\n",
        "{undone:?}"
    );
    if undone.len() > 1 {
        eprintln!("the edit was not the last file-changing step: {undone:?}");
    }
    server.assert_no_violations();
}
