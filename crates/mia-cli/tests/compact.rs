#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `mia-code compact` as a user runs it: the JSON result, the archive in
//! `sessions show --all`, and a compaction killed mid-way (SIGKILL while the
//! compaction model answers) leaving the session exactly as it was.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use assert_cmd::Command;
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
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        json!({
            "model": "anthropic/claude-sonnet-4-5",
            "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
            "unifier": {"enabled": false},
            "compaction": {"retainCount": 2}
        })
        .to_string(),
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
    fn std_cmd(&self) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("mia-code"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.home.join(".mia-code"))
            .current_dir(&self.project);
        c
    }
    fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
    async fn run(&self, args: Vec<String>) -> std::process::Output {
        let mut c = self.cmd();
        c.args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }
}

fn steps(summary_delay_ms: u64) -> Scenario {
    serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "one"}, "response": {"events": [{"text": "r1"}]}},
        {"match": {"last_message_contains": "two"}, "response": {"events": [{"text": "r2"}]}},
        {"match": {"last_message_contains": "three"}, "response": {"events": [{"text": "r3"}]}},
        {"match": {"last_message_contains": "four"}, "response": {"events": [{"text": "r4"}]}},
        {"match": {"system_contains": "compaction agent"}, "response": {
            "headers_delay_ms": summary_delay_ms, "events": [{"text": "SUMMARY of one and two"}]}}
    ]}))
    .unwrap()
}

async fn three_turns(env: &Env) -> String {
    let out = env.run(vec!["run".into(), "one".into()]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = env.json(&["sessions", "list"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for t in ["two", "three"] {
        let out = env
            .run(vec!["run".into(), t.into(), "--session".into(), id.clone()])
            .await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_reports_counts_and_the_archive_stays_readable() {
    let server = MockServer::start(steps(0)).await.unwrap();
    let env = env(&server);
    let id = three_turns(&env).await;
    // Human output first: spec 019's sentence.
    let out = env
        .cmd()
        .args(["compact", "--session", &id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Compacted 4 messages into summary. 2 recent messages retained."),
        "{text}"
    );
    let shown = env.json(&["sessions", "show", &id]);
    let summary = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["type"] == json!("compaction_summary"))
        .unwrap()
        .clone();
    let meta = &summary["metadata"];
    let r = json!({
        "compacted": meta["original_message_count"],
        "retained": meta["retained"],
        "tokens_before": meta["tokens_before"],
        "tokens_after": meta["tokens_after"],
        "message_id": summary["id"],
    });
    assert_eq!(r["compacted"], json!(4));
    assert_eq!(r["retained"], json!(2));
    assert!(r["tokens_before"].as_u64().unwrap() > 0);
    assert!(r["tokens_after"].as_u64().unwrap() > 0);
    assert!(r["message_id"].is_string());

    // Default view: the summary and the kept tail; --all: the archive, marked.
    let shown = env.json(&["sessions", "show", &id]);
    assert_eq!(shown["messages"].as_array().unwrap().len(), 3);
    let all = env.json(&["sessions", "show", &id, "--all"]);
    let msgs = all["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 7);
    assert_eq!(
        msgs.iter()
            .filter(|m| m["compacted_by"] == r["message_id"])
            .count(),
        4
    );
    let out = env
        .cmd()
        .args(["sessions", "show", &id, "--all"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("· compacted").count(), 4, "{text}");
    assert!(
        text.contains("summary of 4 messages") && text.contains("SUMMARY of one and two"),
        "{text}"
    );

    // `mia-code cost`: the three turns and the compaction call, per agent.
    let cost = env.json(&["cost", "--session", &id]);
    assert_eq!(cost["total"]["requests"], json!(4), "{cost}");
    let agents: Vec<&str> = cost["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["agent"].as_str().unwrap())
        .collect();
    assert!(
        agents.contains(&"compaction") && agents.contains(&"build"),
        "{cost}"
    );
    server.take_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_killed_mid_way_leaves_the_session_as_it_was() {
    // The compaction model takes 30 s to answer: the process is killed meanwhile.
    let server = MockServer::start(steps(30_000)).await.unwrap();
    let env = env(&server);
    let id = three_turns(&env).await;
    let before = env.json(&["sessions", "show", &id, "--all"]);

    let mut child = env
        .std_cmd()
        .args(["compact", "--session", &id])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the compaction request reached the model (or the session shows compacting).
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.request_count() < 4 {
        assert!(
            Instant::now() < deadline,
            "the compaction never reached the model"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let during = env.json(&["sessions", "show", &id]);
    assert_eq!(during["session"]["status"], json!("compacting"));
    child.kill().unwrap();
    child.wait().unwrap();

    let after = env.json(&["sessions", "show", &id, "--all"]);
    assert_eq!(
        after["messages"], before["messages"],
        "nothing archived, nothing added"
    );
    // The dead process's claim does not keep the session busy or compacting.
    assert_eq!(
        after["session"]["status"],
        json!("idle"),
        "{}",
        after["session"]
    );
    // And it is usable at once: a turn runs.
    let out = env
        .run(vec![
            "run".into(),
            "four".into(),
            "--session".into(),
            id.clone(),
        ])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_list_shows_mode_model_source_and_access() {
    let server = MockServer::start(steps(0)).await.unwrap();
    let env = env(&server);
    let cfg = env.home.join(".config/mia-code/config.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    v["agent"] = json!({
        "reviewer": {"mode": "subagent", "description": "Reviews changes.", "model": "anthropic/claude-haiku-4-5",
                     "timeout": 120, "permissions": [{"permission": "edit", "action": "deny"}, {"permission": "write", "action": "deny"}]}
    });
    std::fs::write(&cfg, v.to_string()).unwrap();
    let list = env.json(&["agent", "list"]);
    let agents = list.as_array().unwrap();
    let find = |n: &str| {
        agents
            .iter()
            .find(|a| a["name"] == json!(n))
            .unwrap()
            .clone()
    };
    let reviewer = find("reviewer");
    assert_eq!(reviewer["mode"], json!("subagent"));
    assert_eq!(reviewer["model"], json!("anthropic/claude-haiku-4-5"));
    assert_eq!(reviewer["read_only"], json!(true));
    assert_eq!(reviewer["timeout_secs"], json!(120));
    assert!(
        reviewer["source"]
            .as_str()
            .unwrap()
            .ends_with("config.json"),
        "{reviewer}"
    );
    let plan = find("plan");
    assert_eq!(plan["read_only"], json!(true));
    assert_eq!(plan["source"], json!("built-in"));
    assert_eq!(find("build")["read_only"], json!(false));
    assert!(
        agents.iter().all(|a| a["name"] != json!("compaction")),
        "hidden agents are not listed"
    );
    let out = env.cmd().args(["agent", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reviewer") && text.contains("read-only"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_create_validates_saves_round_trips_and_refines_one_field() {
    let proposal = json!({
        "key": "security-reviewer", "name": "Security Reviewer",
        "description": "Reviews Python code for security issues; never modifies files.",
        "mode": "subagent", "model": "anthropic/claude-haiku-4-5", "model_reason": "reading and judging, fast",
        "prompt": "You review Python code for security issues.\nReport findings with file and line.",
        "permissions": [
            {"permission": "read", "action": "allow", "reason": "it reads code"},
            {"permission": "grep", "action": "allow", "reason": "it searches"},
            {"permission": "write", "action": "deny", "reason": "never modifies files"},
            {"permission": "edit", "action": "deny", "reason": "never modifies files"}
        ]
    });
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "review python code"}, "response": {"events": [
            {"text": format!("Here it is:\n```json\n{proposal}\n```")}]}},
        {"match": {"last_message_contains": "also allow running the tests"}, "response": {"events": [
            {"text": json!({"permissions": [
                {"permission": "read", "action": "allow", "reason": "it reads code"},
                {"permission": "grep", "action": "allow", "reason": "it searches"},
                {"permission": "bash", "pattern": "pytest *", "action": "allow", "reason": "runs the tests"},
                {"permission": "write", "action": "deny", "reason": "never modifies files"},
                {"permission": "edit", "action": "deny", "reason": "never modifies files"}
            ]}).to_string()}]}},
        {"match": {"last_message_contains": "an agent that writes files"}, "response": {"events": [
            {"text": json!({"key": "plan", "name": "Writer", "description": "Writes.", "mode": "subagent",
                "prompt": "Write files.", "permissions": [{"permission": "write", "action": "allow", "reason": "writes"}]}).to_string()}]}}
    ]}))
    .unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let env = env(&server);
    let run = |args: Vec<&str>| {
        let mut c = env.cmd();
        c.args(args);
        c
    };

    // Proposed, not saved.
    let mut c = run(vec![
        "agent",
        "create",
        "--description",
        "review python code for security issues",
        "--json",
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(p["key"], json!("security-reviewer"));
    assert!(p.get("saved").is_none());
    assert!(
        !env.project
            .join(".mia-code/agents/security-reviewer.md")
            .exists()
    );
    let file = env.project.join("proposal.json");
    std::fs::write(&file, serde_json::to_string(&p).unwrap()).unwrap();

    // A refinement changes only the part it names.
    let mut c = run(vec![
        "agent",
        "create",
        "--from",
        file.to_str().unwrap(),
        "--refine",
        "also allow running the tests",
        "--json",
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["changed"], json!(["permissions"]));
    for same in ["key", "name", "description", "mode", "model", "prompt"] {
        assert_eq!(r[same], p[same], "{same} changed");
    }
    assert!(
        r["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["pattern"] == json!("pytest *"))
    );

    // Saved from the reviewed file: usable at once, and what loads is what was approved.
    std::fs::write(&file, serde_json::to_string(&r).unwrap()).unwrap();
    let mut c = run(vec![
        "agent",
        "create",
        "--from",
        file.to_str().unwrap(),
        "--yes",
        "--json",
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let saved: Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = PathBuf::from(saved["saved"].as_str().unwrap());
    assert_eq!(
        path,
        env.project.join(".mia-code/agents/security-reviewer.md")
    );
    let list = env.json(&["agent", "list"]);
    let a = list
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == json!("security-reviewer"))
        .unwrap()
        .clone();
    assert_eq!(a["description"], r["description"]);
    assert_eq!(a["model"], r["model"]);
    assert_eq!(a["mode"], json!("subagent"));
    assert_eq!(a["read_only"], json!(true));
    assert!(
        a["source"]
            .as_str()
            .unwrap()
            .ends_with("security-reviewer.md")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("pattern: pytest *")
            && text.ends_with("Report findings with file and line.\n"),
        "{text}"
    );
    // The key is unique: saving the same proposal again makes a second agent, renamed, never an overwrite.
    let mut c = run(vec![
        "agent",
        "create",
        "--from",
        file.to_str().unwrap(),
        "--yes",
        "--json",
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(again["key"], json!("security-reviewer-2"));
    assert!(
        again["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("taken")),
        "{again}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "the first file is untouched"
    );

    // Broader than the creating agent (plan may not write): rejected; a taken key is renamed.
    let mut c = run(vec![
        "agent",
        "create",
        "--description",
        "an agent that writes files",
        "--agent",
        "plan",
    ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("broader than the agent creating it") && err.contains("allow write"),
        "{err}"
    );
    server.assert_no_violations();
}
