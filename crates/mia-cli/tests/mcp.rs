#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! MCP servers as a user has them, with the fixture server written with the
//! official Python SDK (tests/fixtures/mcp/server.py): a stdio server from
//! the global config and a streamable-HTTP one from the project's
//! `.mcp.json` (Claude Code's format, a header from the environment). Tool
//! calls through each from a mock-model turn reach the model; a rule on
//! `mcp__fixture__*` denies one tool; `build` asks by default (denied
//! headless); a project's servers wait for workspace trust; `mcp list`.

use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

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
    eprintln!("skipped: no Python with the `mcp` package (set MIA_TEST_PYTHON)");
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

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    mark: PathBuf,
    extra_env: Vec<(String, String)>,
}

impl Env {
    fn new(config: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(home.join(".mia-code.json"), config.to_string()).unwrap();
        let mark = dir.path().join("mark.txt");
        Self {
            _dir: dir,
            home,
            project: project.canonicalize().unwrap(),
            mark,
            extra_env: Vec::new(),
        }
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.home.join(".mia-code"))
            .current_dir(&self.project);
        for (k, v) in &self.extra_env {
            c.env(k, v);
        }
        c
    }

    async fn out(&self, args: &[&str]) -> std::process::Output {
        let mut c = self.cmd();
        c.args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }

    async fn ok(&self, args: &[&str]) -> String {
        let out = self.out(args).await;
        assert!(
            out.status.success(),
            "{args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

fn base_config(llm: &MockServer) -> serde_json::Map<String, Value> {
    json!({
        "model": "anthropic/claude-sonnet-4-5",
        "providers": {"anthropic": {"baseURL": llm.anthropic_base_url(), "apiKey": "test"}},
        "unifier": {"enabled": false}
    })
    .as_object()
    .unwrap()
    .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_from_the_config_serves_a_turn_and_a_rule_denies_one_tool() {
    let Some(py) = python() else { return };
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "use the fixture"}, "response": {"events": [
            {"tool_call": {"id": "m1", "name": "mcp__fixture__echo", "arguments": {"text": "hello"}}},
            {"tool_call": {"id": "m2", "name": "mcp__fixture__danger_delete", "arguments": {"path": "/etc"}}},
            {"tool_call": {"id": "m3", "name": "mcp__fixture__picture", "arguments": {}}}
        ]}},
        {"match": {"last_message_contains": "echo from cfg-fixture: hello"}, "response": {"events": [
            {"text": "The fixture answered."}
        ]}}
    ]}))
    .unwrap();
    let llm = MockServer::start(scenario).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark.txt");
    let mut config = base_config(&llm);
    config.insert(
        "mcp".into(),
        json!({"fixture": {
            "command": py, "args": [fixture(), "stdio"],
            "env": {"FIXTURE_NAME": "cfg-fixture", "FIXTURE_MARK": mark.display().to_string()}
        }}),
    );
    config.insert(
        "permissions".into(),
        json!([
            {"permission": "mcp__fixture__danger*", "action": "deny"},
            {"permission": "mcp__fixture__*", "action": "allow"}
        ]),
    );
    let env = Env::new(Value::Object(config));

    let list: Value = serde_json::from_str(&env.ok(&["mcp", "list", "--json"]).await).unwrap();
    assert_eq!(list[0]["name"], "fixture");
    assert_eq!(list[0]["state"], "ready", "{list}");
    assert!(
        list[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("echo"))
    );
    assert!(
        list[0]["transport"]
            .as_str()
            .unwrap()
            .starts_with("stdio: ")
    );

    let out = env
        .out(&["run", "use the fixture", "--format", "json"])
        .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("The fixture answered."),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The denied tool never ran.
    assert!(!mark.exists(), "danger_delete ran");
    let sessions: Value =
        serde_json::from_str(&env.ok(&["sessions", "list", "--json"]).await).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    let shown: Value =
        serde_json::from_str(&env.ok(&["sessions", "show", &id, "--json"]).await).unwrap();
    let parts: Vec<&Value> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["parts"].as_array().unwrap())
        .map(|p| &p["content"])
        .collect();
    let result = |call: &str| {
        parts
            .iter()
            .find(|p| p["type"] == "tool_result" && p["call_id"] == call)
            .copied()
            .unwrap_or_else(|| panic!("no result for {call}: {parts:?}"))
    };
    assert_eq!(result("m1")["output"], "echo from cfg-fixture: hello");
    assert_eq!(result("m2")["is_error"], true);
    assert_eq!(result("m2")["permission"]["decision"], "deny");
    // The image is kept for the UI, the model got a line about it.
    assert!(
        result("m3")["output"]
            .as_str()
            .unwrap()
            .contains("[image image/png")
    );
    let content = parts
        .iter()
        .find(|p| p["type"] == "tool_content" && p["call_id"] == "m3")
        .unwrap_or_else(|| panic!("no tool_content: {parts:?}"));
    assert_eq!(content["items"][0]["type"], "image");
    assert_eq!(content["items"][0]["media_type"], "image/png");
    llm.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_http_server_waits_for_trust_and_build_asks_by_default() {
    let Some(py) = python() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new(&py)
        .arg(fixture())
        .args(["http", &port.to_string()])
        .env("FIXTURE_TOKEN", "t0ken")
        .env("FIXTURE_NAME", "web-fixture")
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP fixture did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "not yet"}, "response": {"events": [{"text": "Nothing to call."}]}},
        {"match": {"last_message_contains": "add them"}, "response": {"events": [
            {"tool_call": {"id": "w1", "name": "mcp__web__add", "arguments": {"a": 40, "b": 2}}}
        ]}},
        {"match": {"has_tool_result": "w1"}, "response": {"events": [{"text": "Added."}]}}
    ]}))
    .unwrap();
    let llm = MockServer::start(scenario).await.unwrap();
    let mut env = Env::new(Value::Object(base_config(&llm)));
    env.extra_env.push(("WEB_TOKEN".into(), "t0ken".into()));
    std::fs::write(
        env.project.join(".mcp.json"),
        json!({"mcpServers": {"web": {
            "type": "http",
            "url": format!("http://127.0.0.1:{port}/mcp"),
            "headers": {"X-Fixture-Token": "${WEB_TOKEN}"}
        }}})
        .to_string(),
    )
    .unwrap();

    // Untrusted: listed, not started, and the way out said.
    let list: Value = serde_json::from_str(&env.ok(&["mcp", "list", "--json"]).await).unwrap();
    assert_eq!(list[0]["name"], "web");
    assert_eq!(list[0]["state"], "untrusted", "{list}");
    assert!(
        list[0]["error"]
            .as_str()
            .unwrap()
            .contains("permissions trust")
    );
    assert!(list[0]["source"].as_str().unwrap().ends_with(".mcp.json"));

    env.ok(&["permissions", "trust"]).await;
    let list: Value = serde_json::from_str(&env.ok(&["mcp", "list", "--json"]).await).unwrap();
    assert_eq!(list[0]["state"], "ready", "{list}");
    assert!(list[0]["tools"].as_array().unwrap().contains(&json!("add")));

    // build asks about MCP tools by default; a headless run cannot ask, so
    // the tool is not even offered.
    let tool_names = |i: usize| -> Vec<String> {
        llm.requests()[i].body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| t["name"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let out = env.out(&["run", "not yet", "--format", "json"]).await;
    assert!(String::from_utf8_lossy(&out.stdout).contains("Nothing to call."));
    let offered = tool_names(llm.requests().len() - 1);
    assert!(offered.contains(&"read".to_string()), "{offered:?}");
    assert!(
        !offered.iter().any(|t| t.starts_with("mcp__")),
        "{offered:?}"
    );

    // Allowed by a rule: the result reaches the model.
    let mut config = base_config(&llm);
    config.insert(
        "permissions".into(),
        json!([{"permission": "mcp__web__*", "action": "allow"}]),
    );
    std::fs::write(
        env.home.join(".mia-code.json"),
        Value::Object(config).to_string(),
    )
    .unwrap();
    let out = env.out(&["run", "add them", "--format", "json"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"output\":\"42\""), "{stdout}");
    assert!(stdout.contains("Added."), "{stdout}");
    let first = llm
        .requests()
        .iter()
        .position(|r| r.step == Some(1))
        .unwrap();
    let tools = llm.requests()[first].body["tools"].clone();
    let add = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__web__add")
        .unwrap()
        .clone();
    assert!(
        add["description"]
            .as_str()
            .unwrap()
            .ends_with("(MCP server web)"),
        "{add}"
    );
    assert_eq!(add["input_schema"]["properties"]["a"]["type"], "integer");
    let _ = server.kill().await;
    llm.assert_no_violations();
    let _ = &env.mark;
}
