#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(target_os = "linux")]
//! A sandboxed command's network, as `mia-code run` gives it: the only way
//! out is mia-code's proxy, which applies the `fetch` rules to every
//! program. A real git remote (`git http-backend`) and a real npm registry
//! (Verdaccio) on this machine's own address: `git clone` and `npm install`
//! work through the proxy once a rule allows the host, and a headless run
//! refuses the host without one.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

/// This machine's first global IPv4 address (loopback is the host's own,
/// which the proxy refuses unless `sandbox.allowLocalhost`).
fn host_address() -> IpAddr {
    let out = std::process::Command::new("ip")
        .args(["-4", "-o", "addr", "show", "scope", "global"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split_whitespace()
        .skip_while(|w| *w != "inet")
        .nth(1)
        .and_then(|a| a.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no global IPv4 address to serve a test host on: {text}"))
}

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn env(server: &MockServer, permissions: Value) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let config = json!({
        "model": "anthropic/claude-sonnet-4-5",
        "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
        "unifier": {"enabled": false},
        "permissions": permissions,
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
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.home.join(".mia-code"))
            .current_dir(&self.project);
        c
    }

    /// `mia-code run` (headless) with the model running `command`; the tool's output.
    async fn run_bash(&self, server: &MockServer, command: &str) -> String {
        let _ = (server, command);
        let mut c = self.cmd();
        c.args(["run", "go", "--format", "json"]);
        let out = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == "tool_result")
            .filter_map(|e| e["output"].as_str().map(str::to_string))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

async fn server_running(command: &str) -> MockServer {
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "go"}, "response": {"events": [
            {"tool_call": {"id": "b1", "name": "bash", "arguments": {"command": command, "timeout_ms": 120000}}}
        ]}},
        {"match": {"has_tool_result": "b1"}, "response": {"events": [{"text": "done"}]}}
    ]}))
    .unwrap();
    MockServer::start(scenario).await.unwrap()
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

fn allow_bash_and(fetch: Option<String>) -> Value {
    let mut v = vec![json!({"permission": "bash", "action": "allow"})];
    if let Some(h) = fetch {
        v.push(json!({"permission": "fetch", "pattern": h, "action": "allow"}));
    }
    Value::Array(v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_clone_over_http_goes_through_the_proxy_when_a_rule_allows_the_host() {
    let addr = host_address();
    let remotes = tempfile::tempdir().unwrap();
    let work = remotes.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    std::fs::write(work.join("README"), "served over git http-backend\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "first"]);
    git(
        remotes.path(),
        &["clone", "-q", "--bare", "work", "repo.git"],
    );
    let remote = mia_testkit::git_http::GitHttp::start(remotes.path(), addr);
    let command = format!(
        "git clone -q {} cloned && cat cloned/README",
        remote.url("repo.git")
    );

    // Headless, no rule for the host: the proxy refuses it.
    let server = server_running(&command).await;
    let e = env(&server, allow_bash_and(None));
    let out = e.run_bash(&server, &command).await;
    assert!(!out.contains("served over git http-backend"), "{out}");
    assert!(out.contains("403") || out.contains("refused"), "{out}");
    assert!(!e.project.join("cloned/README").exists());

    // A fetch rule for the host: cloned through the proxy.
    let server = server_running(&command).await;
    let e = env(&server, allow_bash_and(Some(addr.to_string())));
    let out = e.run_bash(&server, &command).await;
    assert!(out.contains("served over git http-backend"), "{out}");
    assert!(e.project.join("cloned/README").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_install_from_a_local_registry_goes_through_the_proxy() {
    let addr = host_address();
    let Some(registry) = mia_testkit::registry::Registry::start_on(addr) else {
        return;
    };
    let pkg = registry.dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("package.json"),
        json!({"name": "mia-net-fixture", "version": "1.0.0", "main": "index.js"}).to_string(),
    )
    .unwrap();
    std::fs::write(
        pkg.join("index.js"),
        "module.exports = 'installed through the proxy';\n",
    )
    .unwrap();
    registry.publish(&pkg);
    let command = "npm install --no-audit --no-fund --loglevel=error mia-net-fixture && node -e \"console.log(require('mia-net-fixture'))\"";
    let server = server_running(command).await;
    let e = env(&server, allow_bash_and(Some(addr.to_string())));
    // npm's cache, as a person who uses npm has it (a cache that does not
    // exist yet cannot be made from inside the sandbox).
    std::fs::create_dir_all(e.home.join(".npm")).unwrap();
    std::fs::write(
        e.project.join(".npmrc"),
        format!(
            "registry={}\nfetch-retries=0\nupdate-notifier=false\n",
            registry.url()
        ),
    )
    .unwrap();
    let out = e.run_bash(&server, command).await;
    assert!(out.contains("installed through the proxy"), "{out}");
    assert!(
        e.project
            .join("node_modules/mia-net-fixture/index.js")
            .exists()
    );
}
