#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(target_os = "linux")]
//! Bringing a setup: custom slash commands (precedence, arguments, `@`
//! includes, `` !`cmd` `` lines judged and sandboxed, `allowed-tools` for
//! one turn), hooks in Claude Code's contract (real bash and Python
//! scripts), and importing Claude Code / OpenCode settings — driven through
//! the `mia-code` binary against the mock LLM server.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn write(p: &Path, s: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

fn executable(p: &Path, s: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    write(p, s);
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
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
    write(
        &home.join(".config/mia-code/config.json"),
        &config.to_string(),
    );
    Env {
        _dir: dir,
        home,
        project: project.canonicalize().unwrap(),
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

    async fn run(&self, args: &[&str]) -> std::process::Output {
        let mut c = self.cmd();
        c.args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.project.join(rel)
    }
}

async fn server(steps: Value) -> MockServer {
    let scenario: Scenario = serde_json::from_value(json!({"steps": steps})).unwrap();
    MockServer::start(scenario).await.unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every request's conversation text, joined.
fn sent(server: &MockServer) -> String {
    server
        .requests()
        .iter()
        .map(|r| {
            r.conversation()
                .iter()
                .map(mia_testkit::request::Msg::text)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n----\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_precedence_arguments_includes_and_broken_files() {
    let server = server(json!([
        {"match": {"last_message_contains": "Review PR #12 touching src/x.rs"}, "response": {"events": [{"text": "Reviewed."}]}}
    ]))
    .await;
    let env = env(&server, json!({}));
    write(
        &env.p(".mia-code/commands/pr-review.md"),
        "---\ndescription: Review a pull request\nargument-hint: \"[pr] [file]\"\n---\nReview PR #$1 touching $2. All: $ARGUMENTS. Notes: @notes/a.txt\n",
    );
    write(&env.p("notes/a.txt"), "NOTE-CONTENT-42\n");
    write(
        &env.p(".claude/commands/pr-review.md"),
        "the Claude Code one\n",
    );
    write(
        &env.p(".claude/commands/git/commit.md"),
        "# Commit the staged work\nCommit.\n",
    );
    write(
        &env.p(".opencode/command/hello.md"),
        "---\ndescription: from opencode\n---\nHello\n",
    );
    write(
        &env.home.join(".config/mia-code/commands/hello.md"),
        "---\ndescription: mine\n---\nHi\n",
    );
    write(
        &env.home.join(".config/mia-code/commands/mine.md"),
        "Only mine\n",
    );
    write(
        &env.p(".mia-code/commands/compact.md"),
        "not the built-in\n",
    );
    write(
        &env.p(".mia-code/commands/review.md"),
        "not the built-in either\n",
    );
    write(
        &env.p(".mia-code/commands/broken.md"),
        "---\ndescription: x\nbogus-key: 1\n---\nBody\n",
    );
    write(
        &env.p(".mia-code/commands/badyaml.md"),
        "---\ndescription: [\n---\nBody\n",
    );

    let out = env.run(&["commands", "list", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = v["commands"].as_array().unwrap();
    let find = |name: &str, source: &str| -> &Value {
        list.iter()
            .find(|c| c["name"] == name && c["source"] == source)
            .unwrap_or_else(|| panic!("no {name} from {source} in {v}"))
    };
    let review = find("pr-review", "project");
    assert_eq!(review["description"], "Review a pull request");
    assert_eq!(review["argument_hint"], "[pr] [file]");
    assert!(review["error"].is_null());
    assert!(
        find("pr-review", "claude")["error"]
            .as_str()
            .unwrap()
            .contains("already defined")
    );
    assert!(find("git:commit", "claude")["error"].is_null());
    assert_eq!(
        find("git:commit", "claude")["description"],
        "Commit the staged work"
    );
    assert!(find("hello", "opencode")["error"].is_null());
    assert!(
        find("hello", "user")["error"]
            .as_str()
            .unwrap()
            .contains("already defined")
    );
    assert!(find("mine", "user")["error"].is_null());
    assert!(
        find("compact", "project")["error"]
            .as_str()
            .unwrap()
            .contains("built-in")
    );
    assert!(
        find("review", "project")["error"]
            .as_str()
            .unwrap()
            .contains("built-in")
    );
    assert!(
        find("broken", "project")["error"]
            .as_str()
            .unwrap()
            .contains("bogus-key")
    );
    assert!(
        find("badyaml", "project")["error"]
            .as_str()
            .unwrap()
            .contains("front matter")
    );
    // Precedence order: project, claude, opencode, user.
    let order: Vec<&str> = list.iter().map(|c| c["source"].as_str().unwrap()).collect();
    let mut sorted = order.clone();
    sorted.sort_by_key(|s| {
        ["project", "claude", "opencode", "user"]
            .iter()
            .position(|x| x == s)
    });
    assert_eq!(order, sorted);

    let out = env.run(&["run", "/pr-review 12 src/x.rs"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let sent = sent(&server);
    assert!(sent.contains("All: 12 src/x.rs."), "{sent}");
    assert!(sent.contains("NOTE-CONTENT-42"), "the @ include: {sent}");
    assert!(!sent.contains("the Claude Code one"), "{sent}");

    // A broken file is refused with its error, and nothing is sent.
    let before = server.request_count();
    let out = env.run(&["run", "/broken"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("bogus-key"), "{}", text(&out));
    assert_eq!(server.request_count(), before);
    server.assert_no_violations();
}

const PROBE: &str = r#"
import os, sys
open("inside.txt", "w").write("ok")
print("inside ok")
try:
    open(os.path.join(os.environ["HOME"], "outside.txt"), "w").write("x")
    print("outside WRITTEN")
except OSError as e:
    print("outside blocked")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_shell_line_is_judged_and_sandboxed() {
    let server = server(json!([
        {"match": {"last_message_contains": "outside blocked"}, "response": {"events": [{"text": "Saw the probe."}]}},
        {"match": {"last_message_contains": "denied"}, "response": {"events": [{"text": "It was denied."}]}}
    ]))
    .await;
    let env = env(&server, json!({}));
    write(&env.p("probe.py"), PROBE);
    write(
        &env.p(".mia-code/commands/probe.md"),
        "Here is the probe: !`python3 probe.py`\n",
    );
    let out = env.run(&["run", "/probe"]).await;
    assert!(out.status.success(), "{}", text(&out));
    // Python the engine cannot read: only the OS sandbox kept it in.
    assert_eq!(std::fs::read_to_string(env.p("inside.txt")).unwrap(), "ok");
    assert!(!env.home.join("outside.txt").exists(), "{}", text(&out));
    let sent = sent(&server);
    assert!(
        sent.contains("inside ok") && sent.contains("outside blocked"),
        "{sent}"
    );
    // The call is a card of the session like any other.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("▸ bash") && stderr.contains("python3 probe.py"),
        "{stderr}"
    );

    // Under a rule that asks, headless: the line is denied, nothing runs.
    std::fs::remove_file(env.p("inside.txt")).unwrap();
    write(
        &env.p(".mia-code.json"),
        r#"{"permissions": [{"permission": "bash", "pattern": "python3 *", "action": "ask"}]}"#,
    );
    let out = env.run(&["run", "/probe"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(!env.p("inside.txt").exists());
    server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_tools_hold_for_the_commands_turn_only_and_never_lift_the_floor() {
    let server = server(json!([
        {"match": {"last_message_contains": "the marker again"}, "response": {"events": [
            {"tool_call": {"id": "t2", "name": "bash", "arguments": {"command": "touch marker.txt"}}}
        ]}},
        {"match": {"has_tool_result": "t2", "last_message_contains": "denied"}, "response": {"events": [{"text": "refused"}]}},
        {"match": {"last_message_contains": "make the marker"}, "response": {"events": [
            {"tool_call": {"id": "t1", "name": "bash", "arguments": {"command": "touch marker.txt"}}}
        ]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [{"text": "done"}]}},
        {"match": {"last_message_contains": "write the plan"}, "response": {"events": [
            {"tool_call": {"id": "w1", "name": "write", "arguments": {"path": "plan.txt", "content": "x"}}}
        ]}},
        {"match": {"has_tool_result": "w1"}, "response": {"events": [{"text": "done"}]}}
    ]))
    .await;
    let env = env(
        &server,
        json!({"permissions": [{"permission": "bash", "pattern": "touch *", "action": "ask"}]}),
    );
    write(
        &env.p(".mia-code/commands/mark.md"),
        "---\nallowed-tools: Bash(touch:*), Write\n---\nmake the marker\n",
    );
    write(
        &env.p(".mia-code/commands/draft-plan.md"),
        "---\nallowed-tools: Write\nagent: plan\n---\nwrite the plan\n",
    );
    // Project commands' allowed-tools apply in a trusted workspace.
    let out = env.run(&["permissions", "trust"]).await;
    assert!(out.status.success(), "{}", text(&out));

    let out = env.run(&["run", "/mark"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(env.p("marker.txt").exists(), "{}", text(&out));
    std::fs::remove_file(env.p("marker.txt")).unwrap();

    // The next turn of the same session: the rule is gone, the ask denies.
    let out = env
        .run(&["run", "--continue", "make the marker again"])
        .await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(!env.p("marker.txt").exists());

    // The plan agent's floor holds whatever allowed-tools says.
    let out = env.run(&["run", "/draft-plan"]).await;
    assert!(!env.p("plan.txt").exists(), "{}", text(&out));

    server.assert_no_violations();
}

fn log_lines(env: &Env, name: &str) -> Vec<Value> {
    std::fs::read_to_string(env.p(&format!(".hooklog/{name}")))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

const PRE_PY: &str = r#"#!/usr/bin/env python3
import json, sys
event = json.load(sys.stdin)
cmd = event.get("tool_input", {}).get("command", "")
if "rm " in cmd:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "no rm here, use trash"}}))
elif cmd.startswith("touch"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "permissionDecisionReason": "touch is fine"}}))
"#;

const STOP_SH: &str = r#"#!/bin/sh
input=$(cat)
mkdir -p .hooklog
echo "$input" >> .hooklog/stop
case "$input" in
  *'"stop_hook_active":false'*) echo "run the tests first" >&2; exit 2 ;;
esac
exit 0
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_follow_claude_codes_contract() {
    let server = server(json!([
        {"match": {"last_message_contains": "clean up"}, "response": {"events": [
            {"tool_call": {"id": "r1", "name": "bash", "arguments": {"command": "rm -f old.txt"}}}
        ]}},
        {"match": {"has_tool_result": "r1", "last_message_contains": "no rm here, use trash"}, "response": {"events": [
            {"tool_call": {"id": "e1", "name": "write", "arguments": {"path": "new.txt", "content": "x\n"}}}
        ]}},
        {"match": {"has_tool_result": "e1", "last_message_contains": "formatter says no"}, "response": {"events": [{"text": "all done"}]}},
        {"match": {"last_message_contains": "run the tests first"}, "response": {"events": [{"text": "tests ran"}]}}
    ]))
    .await;
    let env = env(
        &server,
        json!({"hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": "echo SESSION-CONTEXT-7; cat > /dev/null"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./hooks/log.sh prompt"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 hooks/pre.py"}]}],
            "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "cat > /dev/null; echo 'formatter says no' >&2; exit 2"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "./hooks/stop.sh"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "./hooks/log.sh end"}]}]
        }}),
    );
    executable(
        &env.p("hooks/log.sh"),
        "#!/bin/sh\nmkdir -p .hooklog\ncat >> .hooklog/$1\necho >> .hooklog/$1\n",
    );
    executable(&env.p("hooks/pre.py"), PRE_PY);
    executable(&env.p("hooks/stop.sh"), STOP_SH);
    write(&env.p("old.txt"), "keep me\n");
    let out = env.run(&["run", "clean up"]).await;
    // Exit 3: the turn completed and a call was denied (by the hook).
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    // PreToolUse deny stopped a call the rules allow; the model saw why.
    assert_eq!(
        std::fs::read_to_string(env.p("old.txt")).unwrap(),
        "keep me\n"
    );
    assert!(stderr.contains("hook PreToolUse"), "{stderr}");
    // PostToolUse exit 2: the write happened, the model read the reason.
    assert!(env.p("new.txt").exists());
    // SessionStart's stdout is context of the first request.
    let first = server.requests()[0].conversation();
    assert!(
        first.iter().any(|m| m.text().contains("SESSION-CONTEXT-7")),
        "{first:?}"
    );
    // UserPromptSubmit got the prompt and Claude Code's common fields.
    let prompt = log_lines(&env, "prompt");
    assert_eq!(prompt.len(), 1);
    assert_eq!(prompt[0]["prompt"], "clean up");
    assert_eq!(prompt[0]["hook_event_name"], "UserPromptSubmit");
    assert_eq!(prompt[0]["cwd"], env.project.display().to_string());
    assert!(prompt[0]["session_id"].as_str().is_some());
    // Stop blocked once (exit 2: the model was told to go on), then let it end.
    let stops = log_lines(&env, "stop");
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[0]["stop_hook_active"], false);
    assert_eq!(stops[1]["stop_hook_active"], true);
    assert_eq!(server.request_count(), 4);
    // SessionEnd ran when `run` finished.
    let end = log_lines(&env, "end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["hook_event_name"], "SessionEnd");
    // Each run is in the tool card (the stored result) and the log.
    let out = env.run(&["sessions", "list", "--json"]).await;
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v[0]["id"].as_str().unwrap().to_string();
    let out = env.run(&["sessions", "show", &id, "--json"]).await;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("\"hooks\"") && shown.contains("no rm here, use trash"),
        "{shown}"
    );
    let log = std::fs::read_to_string(env.home.join(".mia-code/logs/mia-code.log")).unwrap();
    assert!(
        log.contains("hook ran") && log.contains("event=\"PreToolUse\"")
            || log.contains("event=PreToolUse"),
        "{log}"
    );
    server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_allow_answers_an_ask_but_not_the_floor_and_exit_2_blocks_a_prompt() {
    let server = server(json!([
        {"match": {"last_message_contains": "touch it"}, "response": {"events": [
            {"tool_call": {"id": "t1", "name": "bash", "arguments": {"command": "touch touched.txt"}}}
        ]}},
        {"match": {"has_tool_result": "t1"}, "response": {"events": [{"text": "ok"}]}},
        {"match": {"last_message_contains": "plan write"}, "response": {"events": [
            {"tool_call": {"id": "w1", "name": "write", "arguments": {"path": "p.txt", "content": "x"}}}
        ]}},
        {"match": {"has_tool_result": "w1"}, "response": {"events": [{"text": "ok"}]}}
    ]))
    .await;
    let env = env(
        &server,
        json!({
            "permissions": [{"permission": "bash", "pattern": "touch *", "action": "ask"}],
            "hooks": {
                "PreToolUse": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'"}]}],
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "if grep -q forbidden; then echo 'that word is not allowed' >&2; exit 2; fi"}]}]
            }
        }),
    );
    // Headless, the rule's ask would deny; the hook's allow answers it.
    let out = env.run(&["run", "touch it"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(env.p("touched.txt").exists());
    // The plan agent's floor: the hook's allow does not lift it.
    let out = env.run(&["run", "--agent", "plan", "plan write"]).await;
    assert!(!env.p("p.txt").exists(), "{}", text(&out));
    // Exit 2 on UserPromptSubmit blocks the prompt: the person sees why,
    // the model sees nothing.
    let before = server.request_count();
    let out = env.run(&["run", "say the forbidden word"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("that word is not allowed"),
        "{}",
        text(&out)
    );
    assert_eq!(server.request_count(), before);
    server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_hook_times_out() {
    let server = server(json!([
        {"match": {"last_message_contains": "hi"}, "response": {"events": [{"text": "hello"}]}}
    ]))
    .await;
    let env = env(
        &server,
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "sleep 60", "timeout": 1}]}]}}),
    );
    let start = std::time::Instant::now();
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("timeout"),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_hooks_run_once_trusted_and_a_changed_set_asks_again() {
    let server = server(json!([
        {"match": {"last_message_contains": "hi"}, "response": {"events": [{"text": "hello"}]}, "times": 10}
    ]))
    .await;
    let env = env(&server, json!({}));
    let project_hooks = |cmd: &str| {
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": cmd}]}]}})
            .to_string()
    };
    write(
        &env.p(".mia-code.json"),
        &project_hooks("cat > /dev/null; touch ran-a"),
    );
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(!env.p("ran-a").exists(), "an untrusted project's hook ran");
    assert!(text(&out).contains("hooks do not run"), "{}", text(&out));

    let out = env.run(&["permissions", "trust"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(env.p("ran-a").exists(), "{}", text(&out));

    // The repository changes its hook: it does not run until approved again.
    write(
        &env.p(".mia-code.json"),
        &project_hooks("cat > /dev/null; touch ran-b"),
    );
    let out = env.run(&["run", "hi"]).await;
    assert!(!env.p("ran-b").exists());
    assert!(
        text(&out).contains("changed since you approved"),
        "{}",
        text(&out)
    );
    env.run(&["permissions", "trust"]).await;
    let out = env.run(&["run", "hi"]).await;
    assert!(env.p("ran-b").exists(), "{}", text(&out));
}

fn check(env: &Env, args: &[&str]) -> String {
    let out = env
        .cmd()
        .args(["permissions", "check", "--json", "--headless"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["decision"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_claude_settings_round_trip_through_permissions_check() {
    let server = server(json!([])).await;
    let env = env(&server, json!({}));
    let settings = json!({
        "permissions": {
            "allow": ["Bash(npm test:*)", "Read(./docs/**)"],
            "deny": ["Read(./secrets/**)", "Bash(curl:*)"],
            "ask": ["WebFetch(domain:example.com)"],
            "defaultMode": "acceptEdits"
        },
        "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write ."}]}]},
        "env": {"FOO": "bar"},
        "apiKeyHelper": "/bin/gen-key"
    });
    write(&env.p(".claude/settings.json"), &settings.to_string());
    write(
        &env.p(".claude/settings.local.json"),
        &json!({"permissions": {"allow": ["mcp__github__create_issue", "WebSearch"]}}).to_string(),
    );
    write(
        &env.home.join(".claude/settings.json"),
        &json!({"env": {"MY_TOOLCHAIN": "stable"}, "permissions": {"deny": ["Bash(git push --force:*)"]}}).to_string(),
    );
    let global_before =
        std::fs::read_to_string(env.home.join(".config/mia-code/config.json")).unwrap();

    let out = env.run(&["import", "claude", "--dry-run"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("Bash(npm test:*) → allow bash npm test *"),
        "{t}"
    );
    assert!(t.contains("not translated: `apiKeyHelper`"), "{t}");
    assert!(t.contains("defaultMode"), "{t}");
    assert!(t.contains("WebSearch"), "{t}");
    assert!(
        t.contains("env.FOO"),
        "a project's env is named as not translated: {t}"
    );
    assert!(!env.p(".mia-code.json").exists(), "dry run wrote");
    assert_eq!(
        std::fs::read_to_string(env.home.join(".config/mia-code/config.json")).unwrap(),
        global_before
    );

    let out = env.run(&["import", "claude"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let project: Value =
        serde_json::from_str(&std::fs::read_to_string(env.p(".mia-code.json")).unwrap()).unwrap();
    assert!(project["hooks"]["PostToolUse"].is_array(), "{project}");
    let global: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home.join(".config/mia-code/config.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(global["sandbox"]["env"]["set"]["MY_TOOLCHAIN"], "stable");
    assert_eq!(
        global["model"], "anthropic/claude-sonnet-4-5",
        "the global config kept its keys"
    );

    // The rules decide as they did in Claude Code (project allows once trusted).
    env.run(&["permissions", "trust"]).await;
    assert_eq!(check(&env, &["--command", "npm test --watch"]), "allow");
    assert_eq!(check(&env, &["--command", "curl https://x.dev"]), "deny");
    assert_eq!(
        check(&env, &["--command", "git push --force origin main"]),
        "deny"
    );
    assert_eq!(
        check(
            &env,
            &["--permission", "read", "--pattern", "secrets/key.pem"]
        ),
        "deny"
    );
    assert_eq!(
        check(
            &env,
            &[
                "--permission",
                "mcp__github__create_issue",
                "--pattern",
                "x"
            ]
        ),
        "allow"
    );
    let out = env
        .cmd()
        .args([
            "permissions",
            "check",
            "--json",
            "--permission",
            "fetch",
            "--pattern",
            "https://example.com/a",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "ask", "{v}");

    // Importing again adds nothing twice.
    env.run(&["import", "claude"]).await;
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(env.p(".mia-code.json")).unwrap()).unwrap();
    assert_eq!(again["permissions"], project["permissions"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_opencode_permissions_agents_mcp_and_commands() {
    let server = server(json!([])).await;
    let env = env(&server, json!({}));
    let oc = json!({
        "$schema": "https://opencode.ai/config.json",
        "permission": {"edit": "ask", "bash": {"git push": "ask", "*": "allow"}, "webfetch": "deny"},
        "agent": {"reviewer": {"description": "Reviews code", "mode": "subagent", "prompt": "Review.", "tools": {"write": false, "edit": false}}},
        "mcp": {"docs": {"type": "local", "command": ["npx", "-y", "docs-mcp"], "environment": {"X": "1"}}},
        "command": {"test": {"template": "Run the tests for $ARGUMENTS", "description": "Run tests"}},
        "theme": "dark"
    });
    write(&env.p("opencode.json"), &oc.to_string());
    // A config with comments is never rewritten.
    write(&env.p(".mia-code.json"), "// mine\n{}\n");
    let out = env.run(&["import", "opencode"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("has comments"), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(env.p(".mia-code.json")).unwrap(),
        "// mine\n{}\n"
    );
    std::fs::remove_file(env.p(".mia-code.json")).unwrap();

    let out = env.run(&["import", "opencode"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("not translated: `theme`"),
        "{}",
        text(&out)
    );
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(env.p(".mia-code.json")).unwrap()).unwrap();
    assert_eq!(cfg["mcp"]["docs"]["command"], "npx");
    assert_eq!(cfg["agent"]["reviewer"]["mode"], "subagent");
    env.run(&["permissions", "trust"]).await;
    assert_eq!(
        check(&env, &["--command", "git push origin main"]),
        "deny",
        "ask, headless"
    );
    assert_eq!(check(&env, &["--command", "ls"]), "allow");
    assert_eq!(
        check(
            &env,
            &["--permission", "fetch", "--pattern", "https://docs.rs"]
        ),
        "deny"
    );
    assert_eq!(
        check(
            &env,
            &[
                "--permission",
                "write",
                "--pattern",
                "a.txt",
                "--agent",
                "reviewer"
            ]
        ),
        "deny"
    );
    // The command became a command file.
    let out = env.run(&["commands", "list", "--json"]).await;
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let test = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "test")
        .unwrap();
    assert_eq!(test["description"], "Run tests");
    assert!(test["error"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_subagents_are_agents_and_mia_codes_win() {
    let server = server(json!([])).await;
    let env = env(&server, json!({}));
    write(
        &env.p(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Claude's reviewer\ntools: Read, Grep, Glob\nmodel: sonnet\n---\nYou review.\n",
    );
    write(
        &env.p(".claude/agents/tester.md"),
        "---\nname: tester\ndescription: Runs tests\n---\nYou test.\n",
    );
    write(
        &env.p(".mia-code/agents/tester.md"),
        "---\ndescription: mia-code's tester\nmode: subagent\n---\nMine.\n",
    );
    let out = env.run(&["agent", "list", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = v
        .as_array()
        .cloned()
        .unwrap_or_else(|| v["agents"].as_array().cloned().unwrap_or_default());
    let get = |n: &str| {
        list.iter()
            .find(|a| a["name"] == n)
            .cloned()
            .unwrap_or_else(|| panic!("no {n}: {v}"))
    };
    assert_eq!(get("reviewer")["description"], "Claude's reviewer");
    assert_eq!(get("tester")["description"], "mia-code's tester");
    env.run(&["permissions", "trust"]).await;
    assert_eq!(
        check(
            &env,
            &[
                "--permission",
                "write",
                "--pattern",
                "a.txt",
                "--agent",
                "reviewer"
            ]
        ),
        "deny"
    );
    assert_eq!(
        check(
            &env,
            &[
                "--permission",
                "read",
                "--pattern",
                "a.txt",
                "--agent",
                "reviewer"
            ]
        ),
        "allow"
    );
}

const WALL_PY: &str = r#"#!/usr/bin/env python3
import os, sys, json
json.load(sys.stdin)
res = []
open("hook-inside.txt", "w").write("ok")
for target in [os.path.join(os.environ["HOME"], "hook-outside.txt"), ".mia-code.json"]:
    try:
        open(target, "w").write("written by a hook")
        res.append("WROTE " + target)
    except OSError:
        res.append("blocked")
open("hook-wall.txt", "w").write("\n".join(res))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_runs_inside_the_os_sandbox() {
    let server = server(json!([
        {"match": {"last_message_contains": "hi"}, "response": {"events": [{"text": "hello"}]}}
    ]))
    .await;
    let env = env(
        &server,
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "python3 wall.py"}]}]}}),
    );
    executable(&env.p("wall.py"), WALL_PY);
    write(&env.p(".mia-code.json"), "{}\n");
    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "{}", text(&out));
    // Python the engine never reads: only the OS kept it in the project.
    assert_eq!(
        std::fs::read_to_string(env.p("hook-inside.txt")).unwrap(),
        "ok"
    );
    assert_eq!(
        std::fs::read_to_string(env.p("hook-wall.txt")).unwrap(),
        "blocked\nblocked",
        "{}",
        text(&out)
    );
    assert!(!env.home.join("hook-outside.txt").exists());
    assert_eq!(
        std::fs::read_to_string(env.p(".mia-code.json")).unwrap(),
        "{}\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_stop_and_pre_compact_reach_their_hooks() {
    let server = server(json!([
        {"match": {"has_tool_result": "k1"}, "response": {"events": [{"text": "the explorer reported"}]}},
        {"match": {"last_message_contains": "look around please"}, "response": {"events": [{"text": "I looked: nothing odd."}]}},
        {"match": {"last_message_contains": "delegate it"}, "response": {"events": [
            {"tool_call": {"id": "k1", "name": "task", "arguments": {"agent": "explore", "prompt": "look around please", "description": "look"}}}
        ]}},
        {"match": {"last_message_contains": "second"}, "response": {"events": [{"text": "r2"}]}},
        {"match": {"last_message_contains": "third"}, "response": {"events": [{"text": "r3"}]}},
        {"match": {"system_contains": "compaction agent"}, "response": {"events": [{"text": "SUMMARY"}]}}
    ]))
    .await;
    let log = |name: &str| json!([{"hooks": [{"type": "command", "command": format!("./hooks/log.sh {name}")}]}]);
    let env = env(
        &server,
        json!({
            "compaction": {"retainCount": 2},
            "hooks": {"SubagentStop": log("subagent-stop"), "Stop": log("stop"), "PreCompact": log("pre-compact")}
        }),
    );
    executable(
        &env.p("hooks/log.sh"),
        "#!/bin/sh\nmkdir -p .hooklog\ncat >> .hooklog/$1\necho >> .hooklog/$1\n",
    );
    let out = env.run(&["run", "delegate it"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let sub = log_lines(&env, "subagent-stop");
    assert_eq!(sub.len(), 1, "{}", text(&out));
    assert_eq!(sub[0]["hook_event_name"], "SubagentStop");
    assert_eq!(sub[0]["stop_hook_active"], false);
    // The parent's own end is a Stop, not a SubagentStop.
    assert_eq!(log_lines(&env, "stop").len(), 1);
    let out = env.run(&["sessions", "list", "--json"]).await;
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["spawned_by"].is_null())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    for t in ["second", "third"] {
        let out = env.run(&["run", t, "--session", &id]).await;
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = env.run(&["compact", "--session", &id]).await;
    assert!(out.status.success(), "{}", text(&out));
    let pre = log_lines(&env, "pre-compact");
    assert_eq!(pre.len(), 1, "{}", text(&out));
    assert_eq!(pre[0]["trigger"], "manual");
    assert_eq!(pre[0]["session_id"], id);
}
