#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Plugins as a user has them: installed by real npm from a real local
//! registry (Verdaccio, started here on a free port with the fixture
//! packages published to it; the public registry is never used), loaded as
//! Node processes speaking protocol 1 through the SDK, called from a
//! mock-model turn. First install, the lock hit with the registry stopped,
//! a newer version only through `plugin update`, an integrity mismatch
//! reinstalled, a stalled registry (timeout, 3 attempts), `--offline`, a
//! malicious entry refused, a hook veto and a crashing plugin disabled while
//! the turn goes on.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

use mia_testkit::registry::{Registry, verdaccio_bin};

/// The SDK (built here if needed), the example plugin at `version`, and a
/// plugin whose tool crashes its process.
fn packages(work: &Path, example_version: &str) -> (PathBuf, PathBuf, PathBuf) {
    let sdk_src = repo().join("plugins/sdk");
    if !sdk_src.join("dist/index.js").exists() {
        let out = std::process::Command::new("node")
            .arg(repo().join("ui/node_modules/typescript/bin/tsc"))
            .args(["-p", "tsconfig.json"])
            .current_dir(&sdk_src)
            .output()
            .unwrap();
        assert!(out.status.success(), "building the SDK: {out:?}");
    }
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != "node_modules"
                    && e.file_name() != "src"
                    && e.file_name() != "test"
                {
                    let sub = to.join(e.file_name());
                    std::fs::create_dir_all(&sub).unwrap();
                    for f in std::fs::read_dir(&p).unwrap() {
                        let f = f.unwrap();
                        std::fs::copy(f.path(), sub.join(f.file_name())).unwrap();
                    }
                }
            } else {
                std::fs::copy(&p, to.join(e.file_name())).unwrap();
            }
        }
    };
    let sdk = work.join("sdk");
    copy(&sdk_src, &sdk);
    let example = work.join(format!("example-{example_version}"));
    copy(&repo().join("plugins/example"), &example);
    let pkg = example.join("package.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&pkg).unwrap()).unwrap();
    v["version"] = json!(example_version);
    std::fs::write(&pkg, v.to_string()).unwrap();
    let crashy = work.join("crashy");
    std::fs::create_dir_all(&crashy).unwrap();
    std::fs::write(
        crashy.join("package.json"),
        json!({
            "name": "mia-code-plugin-crashy", "version": "1.0.0",
            "mia-code": {"protocol": 1, "main": "index.js"},
            "dependencies": {"@mia-code/plugin-sdk": "^1.0.0"},
            // Never run: installs pass --ignore-scripts.
            "scripts": {"postinstall": "node -e \"require('fs').writeFileSync(require('os').homedir() + '/postinstall-ran', 'x')\""}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        crashy.join("index.js"),
        "const { definePlugin, serve } = require('@mia-code/plugin-sdk');\nserve(definePlugin({ name: 'crashy', tools: [{ name: 'crash', description: 'exits', run() { process.exit(7); } }] }));\n",
    )
    .unwrap();
    (sdk, example, crashy)
}

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    npmrc: PathBuf,
    cache: PathBuf,
}

impl Env {
    fn new(npmrc: PathBuf) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join("build")).unwrap();
        let cache = dir.path().join("npm-cache");
        Self {
            project: project.canonicalize().unwrap(),
            _dir: dir,
            home,
            npmrc,
            cache,
        }
    }

    fn config(&self, llm: &MockServer, plugin: Value) {
        std::fs::write(
            self.home.join(".mia-code.json"),
            json!({
                "model": "anthropic/claude-sonnet-4-5",
                "providers": {"anthropic": {"baseURL": llm.anthropic_base_url(), "apiKey": "test"}},
                "unifier": {"enabled": false},
                "permissions": [{"permission": "bash", "action": "allow"}],
                "plugin": plugin
            })
            .to_string(),
        )
        .unwrap();
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.home.join(".mia-code"))
            .env("npm_config_userconfig", &self.npmrc)
            .env("npm_config_cache", &self.cache)
            .current_dir(&self.project);
        c
    }

    async fn out(&self, args: &[&str]) -> std::process::Output {
        let mut c = self.cmd();
        c.args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }

    fn lock(&self) -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.home.join(".mia-code/plugin-lock.json")).unwrap(),
        )
        .unwrap()
    }

    fn installed(&self, name: &str) -> PathBuf {
        self.home.join(".mia-code/plugins/node_modules").join(name)
    }
}

fn result_of(stdout: &str, call: &str) -> Value {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "tool_result" && e["call_id"] == call)
        .unwrap_or_else(|| panic!("no result for {call} in:\n{stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_use_lock_update_and_reinstall() {
    let Some(registry) = Registry::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (sdk, example, crashy) = packages(work.path(), "1.0.0");
    registry.publish(&sdk);
    registry.publish(&example);
    registry.publish(&crashy);

    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "count words"}, "response": {"events": [
            {"tool_call": {"id": "p1", "name": "word_count", "arguments": {"text": "one two three"}}},
            {"tool_call": {"id": "p2", "name": "bash", "arguments": {"command": "rm -rf build"}}},
            {"tool_call": {"id": "p3", "name": "crash", "arguments": {}}}
        ]}},
        {"match": {"has_tool_result": "p3"}, "response": {"events": [{"text": "Counted."}]}},
        {"match": {"last_message_contains": "again"}, "response": {"events": [
            {"tool_call": {"id": "q1", "name": "word_count", "arguments": {"text": "a b"}}}
        ]}},
        {"match": {"has_tool_result": "q1"}, "response": {"events": [{"text": "Again."}]}}
    ]}))
    .unwrap();
    let llm = MockServer::start(scenario).await.unwrap();
    let env = Env::new(registry.npmrc());
    env.config(
        &llm,
        json!([
            "mia-code-plugin-example@^1.0.0",
            "mia-code-plugin-crashy@^1.0.0"
        ]),
    );

    // First install, in the turn; the tool's result reaches the model.
    let out = env.out(&["run", "count words", "--format", "json"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Installing plugin mia-code-plugin-example@^1.0.0..."),
        "{stdout}"
    );
    let r = result_of(&stdout, "p1");
    assert_eq!(
        r["output"],
        "3 words, 1 lines, 13 characters (example plugin 1.0.0)"
    );
    // The hook vetoed the command: it did not run.
    let r = result_of(&stdout, "p2");
    assert_eq!(r["is_error"], true);
    assert!(r["output"].as_str().unwrap().contains("Vetoed by plugin mia-code-plugin-example: the example plugin does not let the agent run rm -rf"), "{r}");
    assert!(
        env.project.join("build").exists(),
        "rm -rf ran despite the veto"
    );
    // The crashing plugin is disabled, and the turn went on.
    let r = result_of(&stdout, "p3");
    assert_eq!(r["is_error"], true);
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("disabled for this session"),
        "{r}"
    );
    assert!(stdout.contains("Counted."), "{stdout}");
    let lock = env.lock();
    assert_eq!(lock["version"], 2);
    let example = &lock["plugins"]["mia-code-plugin-example"];
    assert_eq!(example["version"], "1.0.0");
    // The registry's integrity (what npm checked the tarball against), and
    // the installed files' hash, for the package and every dependency.
    assert!(
        example["integrity"]
            .as_str()
            .unwrap()
            .starts_with("sha512-"),
        "{example}"
    );
    assert!(example["files"].as_str().unwrap().starts_with("sha256-"));
    let sdk = &example["dependencies"]["node_modules/@mia-code/plugin-sdk"];
    assert!(
        sdk["integrity"].as_str().unwrap().starts_with("sha512-"),
        "{example}"
    );
    assert!(sdk["files"].as_str().unwrap().starts_with("sha256-"));
    assert!(
        lock["plugins"]["mia-code-plugin-example"]["resolved"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1")
    );
    // Installed without running install scripts, into ~/.mia-code/plugins.
    assert!(env.home.join(".mia-code/plugins/package.json").exists());
    assert!(
        env.installed("mia-code-plugin-crashy")
            .join("package.json")
            .exists()
    );
    assert!(
        !env.home.join("postinstall-ran").exists(),
        "an install script ran"
    );

    // A newer version is published; with the registry stopped the lock is
    // used as is: no request, the same version.
    let (_, example_11, _) = packages(work.path(), "1.1.0");
    registry.publish(&example_11);
    let mut registry = registry;
    registry.stop();
    let out = env.out(&["run", "again", "--format", "json"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("(example plugin 1.0.0)"), "{stdout}");
    assert!(!stdout.contains("Installing plugin"), "{stdout}");

    // Only `plugin update` moves to 1.1.0.
    registry.restart();
    let list: Value =
        serde_json::from_slice(&env.out(&["plugin", "list", "--json"]).await.stdout).unwrap();
    let ex = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mia-code-plugin-example")
        .unwrap();
    assert_eq!(ex["version"], "1.0.0", "{list}");
    assert_eq!(ex["state"], "loaded");
    assert_eq!(ex["tools"], json!(["word_count"]));
    let out = env.out(&["plugin", "update", "--json"]).await;
    let list: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"));
    let ex = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mia-code-plugin-example")
        .unwrap();
    assert_eq!(ex["version"], "1.1.0", "{list}");
    assert_eq!(
        env.lock()["plugins"]["mia-code-plugin-example"]["version"],
        "1.1.0"
    );

    // Installed files that do not match the lock are installed again.
    let index = env.installed("mia-code-plugin-example").join("index.js");
    let original = std::fs::read_to_string(&index).unwrap();
    std::fs::write(&index, format!("{original}\n// tampered\n")).unwrap();
    let out = env.out(&["plugin", "list", "--json"]).await;
    assert!(out.status.success() || !out.stdout.is_empty(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&index).unwrap(),
        original,
        "not reinstalled"
    );
    assert_eq!(
        env.lock()["plugins"]["mia-code-plugin-example"]["version"],
        "1.1.0"
    );

    // Remove.
    let out = env
        .out(&["plugin", "remove", "mia-code-plugin-crashy"])
        .await;
    assert!(out.status.success(), "{out:?}");
    assert!(!env.installed("mia-code-plugin-crashy").exists());
    assert!(
        env.lock()["plugins"]
            .get("mia-code-plugin-crashy")
            .is_none()
    );
    drop(registry);
    llm.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_registry_offline_mode_and_a_malicious_entry_never_block() {
    if verdaccio_bin().is_none() {
        return;
    }
    // A "registry" that accepts connections and never answers.
    let stall = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = stall.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in stall.incoming() {
            held.push(s);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let npmrc = dir.path().join("npmrc");
    std::fs::write(
        &npmrc,
        format!("registry=http://127.0.0.1:{port}/\nfetch-retries=0\n"),
    )
    .unwrap();
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "hello again"}, "response": {"events": [{"text": "Hi again."}]}},
        {"match": {"last_message_contains": "hello"}, "response": {"events": [{"text": "Hi."}]}}
    ]}))
    .unwrap();
    let llm = MockServer::start(scenario).await.unwrap();
    let env = Env::new(npmrc);
    env.config(
        &llm,
        json!({"packages": ["mia-code-plugin-nothere@^1.0.0"], "installTimeout": 2}),
    );
    let started = Instant::now();
    let out = env.out(&["plugin", "list", "--json"]).await;
    let took = started.elapsed();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(list[0]["state"], "failed", "{list}");
    let err = list[0]["error"].as_str().unwrap();
    assert!(
        err.contains("network timeout") && err.contains("after 3 attempts"),
        "{err}"
    );
    assert!(
        err.contains("Failed to install mia-code-plugin-nothere"),
        "{err}"
    );
    // 3 attempts of 2 s with 1 s and 2 s between them.
    assert!(took >= Duration::from_secs(9), "{took:?}");
    assert!(took < Duration::from_secs(40), "{took:?}");
    assert!(!out.status.success());

    // Offline: not cached, skipped, and the turn runs at once.
    let started = Instant::now();
    let out = env
        .out(&["run", "hello", "--offline", "--format", "json"])
        .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("Hi."), "{stdout}");
    assert!(
        stdout.contains("Plugin mia-code-plugin-nothere not cached, skipping (offline mode)"),
        "{stdout}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "offline waited for the registry"
    );

    // A malicious entry is refused with the reason, and nothing runs.
    env.config(&llm, json!(["x; touch pwned", "evil@$(id)"]));
    let out = env.out(&["plugin", "list", "--json"]).await;
    let list: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"));
    for p in list.as_array().unwrap() {
        assert_eq!(p["state"], "refused", "{p}");
        assert!(
            p["error"]
                .as_str()
                .unwrap()
                .contains("shell metacharacters"),
            "{p}"
        );
    }
    assert!(!env.project.join("pwned").exists());
    assert!(!env.home.join(".mia-code/plugins/node_modules").exists());
    let out = env.out(&["run", "hello again", "--format", "json"]).await;
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Hi again."),
        "{out:?}"
    );
}

/// `git+https:` plugins only with `plugin.allowGit`; installed by npm
/// (which clones with git: the URL is rewritten to a local repository with
/// git's own `url.<base>.insteadOf`, so no network is used), locked under
/// the package name with the URL as its range. The plugin speaks the
/// protocol by hand (no SDK), which is all a plugin has to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_plugin_needs_allow_git_and_speaks_the_protocol_by_hand() {
    if verdaccio_bin().is_none() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let repo_dir = work.path().join("mia-git-plugin");
    std::fs::create_dir_all(&repo_dir).unwrap();
    std::fs::write(
        repo_dir.join("package.json"),
        json!({"name": "mia-git-plugin", "version": "0.3.0", "mia-code": {"protocol": 1, "main": "main.js"}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        repo_dir.join("main.js"),
        r#"const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
let project = "";
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize") project = m.params.project;
  if (m.method === "initialize") send({ id: m.id, result: { protocol: 1, name: "git-plugin", tools: [{ name: "git_hello", description: "says hello", input_schema: { type: "object", properties: {} } }], hooks: ["permission.ask", "chat.params"] } });
  else if (m.method === "tool.call") send({ id: m.id, result: { output: "hello from git; key=" + (process.env.ANTHROPIC_API_KEY ? "LEAKED" : "none") + "; cwd=" + process.cwd() + "; project=" + project } });
  else if (m.method === "permission.ask") send({ id: m.id, result: m.params.tool === "bash" ? { action: "deny", reason: "no shell here" } : { action: "allow" } });
  else if (m.method === "chat.params") send({ id: m.id, result: { temperature: 0.25 } });
  else send({ id: m.id, error: { code: -32601, message: "unknown" } });
});
"#,
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo_dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", work.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=t",
        "add",
        "-A",
    ]);
    git(&[
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "-m",
        "plugin",
    ]);
    let url = "git+https://git.example.invalid/acme/mia-git-plugin.git";

    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "greet"}, "response": {"events": [
            {"tool_call": {"id": "g1", "name": "git_hello", "arguments": {}}},
            {"tool_call": {"id": "g2", "name": "bash", "arguments": {"command": "echo hi > shell-ran"}}}
        ]}},
        {"match": {"has_tool_result": "g2"}, "response": {"events": [{"text": "Greeted."}]}}
    ]}))
    .unwrap();
    let llm = MockServer::start(scenario).await.unwrap();
    let npmrc = work.path().join("npmrc");
    std::fs::write(&npmrc, "fetch-retries=0\n").unwrap();
    let env = Env::new(npmrc);

    // Without allowGit: refused, with the way to allow it.
    env.config(&llm, json!([url]));
    let list: Value =
        serde_json::from_slice(&env.out(&["plugin", "list", "--json"]).await.stdout).unwrap();
    assert_eq!(list[0]["state"], "refused", "{list}");
    assert!(
        list[0]["error"]
            .as_str()
            .unwrap()
            .contains("plugin.allowGit"),
        "{list}"
    );

    env.config(&llm, json!({"packages": [url], "allowGit": true}));
    let mut cmd = env.cmd();
    cmd.env("GIT_CONFIG_COUNT", "1")
        .env(
            "GIT_CONFIG_KEY_0",
            format!("url.file://{}.insteadOf", repo_dir.display()),
        )
        .env(
            "GIT_CONFIG_VALUE_0",
            "https://git.example.invalid/acme/mia-git-plugin.git",
        )
        // Not passed to plugins (their environment is scrubbed).
        .env("ANTHROPIC_API_KEY", "sk-ant-api03-not-for-plugins")
        .args(["run", "greet", "--format", "json"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        result_of(&stdout, "g1")["output"],
        format!(
            "hello from git; key=none; cwd={}; project={}",
            env.home
                .join(
                    ".mia-code/plugin-data/git_https___git.example.invalid_acme_mia-git-plugin.git"
                )
                .display(),
            env.project.display()
        ),
        "{stdout}"
    );
    // permission.ask only tightens: bash (allowed by the config) is denied.
    let r = result_of(&stdout, "g2");
    assert_eq!(r["is_error"], true);
    assert_eq!(
        r["output"], "Permission denied by plugin mia-git-plugin: no shell here",
        "{r}"
    );
    assert!(!env.project.join("shell-ran").exists());
    // chat.params set the request's temperature.
    let temps: Vec<Value> = llm
        .requests()
        .iter()
        .map(|r| r.body["temperature"].clone())
        .collect();
    assert!(temps.iter().all(|t| *t == json!(0.25)), "{temps:?}");
    let lock = env.lock();
    assert_eq!(
        lock["plugins"]["mia-git-plugin"]["version"], "0.3.0",
        "{lock}"
    );
    assert_eq!(lock["plugins"]["mia-git-plugin"]["range"], url);
    llm.assert_no_violations();
}

fn plugin_of<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

/// The lock means something: a version-1 lock is migrated without asking;
/// an edited dependency is noticed offline (skipped, said why) and
/// reinstalled online; a version already installed that a registry serves
/// with other bytes is refused and nothing of it runs; `plugin remove`
/// runs no one's install scripts (npm reinstalls a missing package on the
/// way, and would run its `postinstall`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lock_covers_every_dependency_and_refuses_changed_bytes() {
    let Some(registry) = Registry::start() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Verdaccio (tests/registry): scripts/setup installs it"
        );
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (sdk, example, crashy) = packages(work.path(), "1.0.0");
    registry.publish(&sdk);
    registry.publish(&example);
    registry.publish(&crashy);
    let llm = MockServer::start(serde_json::from_value(json!({"steps": []})).unwrap())
        .await
        .unwrap();
    // The person's npmrc: pointed at one registry, then another.
    let npmrc = work.path().join("npmrc");
    std::fs::copy(registry.npmrc(), &npmrc).unwrap();
    let env = Env::new(npmrc);
    let plugins = json!([
        "mia-code-plugin-example@1.0.0",
        "mia-code-plugin-crashy@^1.0.0"
    ]);
    env.config(&llm, plugins.clone());
    let list = |offline: bool| {
        let env = &env;
        async move {
            let args: &[&str] = if offline {
                &["plugin", "list", "--offline", "--json"]
            } else {
                &["plugin", "list", "--json"]
            };
            let out = env.out(args).await;
            serde_json::from_slice::<Value>(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"))
        }
    };
    let l = list(false).await;
    assert_eq!(
        plugin_of(&l, "mia-code-plugin-example")["state"],
        "loaded",
        "{l}"
    );
    let v2 = env.lock();

    // A version-1 lock (a hash of the package's files only): migrated
    // offline, with the registry's integrity from npm's records.
    let mut v1 = json!({"version": 1, "plugins": {}});
    for (name, e) in v2["plugins"].as_object().unwrap() {
        v1["plugins"][name] = json!({
            "version": e["version"], "resolved": e["resolved"], "integrity": e["files"],
            "installedAt": e["installedAt"], "range": e["range"]
        });
    }
    let lock_path = env.home.join(".mia-code/plugin-lock.json");
    std::fs::write(&lock_path, v1.to_string()).unwrap();
    let l = list(true).await;
    assert_eq!(
        plugin_of(&l, "mia-code-plugin-example")["state"],
        "loaded",
        "{l}"
    );
    let migrated = env.lock();
    assert_eq!(migrated["version"], 2);
    assert_eq!(
        migrated["plugins"]["mia-code-plugin-example"]["integrity"],
        v2["plugins"]["mia-code-plugin-example"]["integrity"]
    );
    assert_eq!(
        migrated["plugins"]["mia-code-plugin-example"]["dependencies"],
        v2["plugins"]["mia-code-plugin-example"]["dependencies"]
    );

    // An edited dependency: offline, skipped and said why (it does not run).
    let sdk_index = env.installed("@mia-code/plugin-sdk").join("dist/index.js");
    let original = std::fs::read_to_string(&sdk_index).unwrap();
    std::fs::write(&sdk_index, format!("{original}\n// edited by someone\n")).unwrap();
    let l = list(true).await;
    let ex = plugin_of(&l, "mia-code-plugin-example");
    assert_eq!(ex["state"], "skipped", "{l}");
    assert!(
        ex["error"]
            .as_str()
            .unwrap()
            .contains("node_modules/@mia-code/plugin-sdk (a dependency of mia-code-plugin-example) was changed"),
        "{ex}"
    );
    // Online: installed again, as the registry has it.
    let l = list(false).await;
    assert_eq!(
        plugin_of(&l, "mia-code-plugin-example")["state"],
        "loaded",
        "{l}"
    );
    assert_eq!(std::fs::read_to_string(&sdk_index).unwrap(), original);

    // Another registry serves other bytes for example@1.0.0. With npm's
    // own records and cache gone, only mia-code's lock knows: refused.
    let other = Registry::start().unwrap();
    let changed = work.path().join("changed");
    let (_, ex2, _) = packages(&changed, "1.0.0");
    std::fs::write(ex2.join("extra.js"), "// not what was installed before\n").unwrap();
    other.publish(&sdk);
    other.publish(&ex2);
    std::fs::copy(other.npmrc(), &env.npmrc).unwrap();
    let plugins_dir = env.home.join(".mia-code/plugins");
    let _ = std::fs::remove_file(plugins_dir.join("package-lock.json"));
    let _ = std::fs::remove_file(plugins_dir.join("node_modules/.package-lock.json"));
    let _ = std::fs::remove_dir_all(&env.cache);
    let before = env.lock();
    std::fs::remove_dir_all(env.installed("mia-code-plugin-example")).unwrap();
    let l = list(false).await;
    let ex = plugin_of(&l, "mia-code-plugin-example");
    assert_eq!(ex["state"], "failed", "{l}");
    let err = ex["error"].as_str().unwrap();
    assert!(
        err.contains("Refused plugin mia-code-plugin-example") && err.contains("other contents"),
        "{err}"
    );
    assert!(
        !env.installed("mia-code-plugin-example")
            .join("extra.js")
            .exists()
    );
    assert_eq!(
        env.lock()["plugins"]["mia-code-plugin-example"],
        before["plugins"]["mia-code-plugin-example"],
        "the lock keeps what was first installed"
    );

    // Back on the first registry: the bytes the lock has, so installed.
    std::fs::copy(registry.npmrc(), &env.npmrc).unwrap();
    let l = list(false).await;
    assert_eq!(
        plugin_of(&l, "mia-code-plugin-example")["state"],
        "loaded",
        "{l}"
    );

    // `plugin remove` runs no scripts, not even of a package npm
    // reinstalls on the way (crashy has a postinstall).
    std::fs::remove_dir_all(env.installed("mia-code-plugin-crashy")).unwrap();
    let out = env
        .out(&["plugin", "remove", "mia-code-plugin-example"])
        .await;
    assert!(out.status.success(), "{out:?}");
    assert!(!env.installed("mia-code-plugin-example").exists());
    assert!(
        env.installed("mia-code-plugin-crashy").exists(),
        "npm put the missing package back on the way"
    );
    assert!(
        !env.home.join("postinstall-ran").exists(),
        "an install script ran during remove"
    );
    drop(other);
    drop(registry);
}

/// Install scripts run only for a package the person's own config allows
/// (`plugin.allowScripts`), and only that package's: a project's config
/// listing it does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_scripts_run_only_where_your_own_config_allows() {
    let Some(registry) = Registry::start() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Verdaccio (tests/registry): scripts/setup installs it"
        );
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (sdk, _, crashy) = packages(work.path(), "1.0.0");
    registry.publish(&sdk);
    registry.publish(&crashy);
    let llm = MockServer::start(serde_json::from_value(json!({"steps": []})).unwrap())
        .await
        .unwrap();
    let env = Env::new(registry.npmrc());
    env.config(&llm, json!(["mia-code-plugin-crashy@^1.0.0"]));
    // The project's config asks for the scripts: not the person's say.
    std::fs::write(
        env.project.join(".mia-code.json"),
        json!({"plugin": {"allowScripts": ["mia-code-plugin-crashy"]}}).to_string(),
    )
    .unwrap();
    env.out(&["permissions", "trust"]).await;
    let out = env.out(&["plugin", "list", "--json"]).await;
    assert!(out.status.success(), "{out:?}");
    assert!(env.installed("mia-code-plugin-crashy").exists());
    assert!(!env.home.join("postinstall-ran").exists());
    // The person's own config allows them: its postinstall runs (and the
    // lock records the files as they are after it).
    std::fs::remove_dir_all(env.home.join(".mia-code/plugins")).unwrap();
    std::fs::remove_file(env.home.join(".mia-code/plugin-lock.json")).unwrap();
    env.config(
        &llm,
        json!({"packages": ["mia-code-plugin-crashy@^1.0.0"], "allowScripts": ["mia-code-plugin-crashy"]}),
    );
    let out = env.out(&["plugin", "list", "--json"]).await;
    assert!(out.status.success(), "{out:?}");
    assert!(env.home.join("postinstall-ran").exists());
    let again = env.out(&["plugin", "list", "--offline", "--json"]).await;
    let list: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(list[0]["state"], "loaded", "{list}");
}
