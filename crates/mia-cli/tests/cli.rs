#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The `mia-code` binary as a user runs it: real process, real files.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mia_protocol::{ForkInfo, MessageMetadata, NewMessage, PartContent, Role, TokenUsage};
use mia_store::{NewSession, SessionDb};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        // `dunce`: the plain form on Windows (`C:\...`), as mia-code stores it.
        let project = dunce::canonicalize(&project).unwrap();
        Self {
            _dir: dir,
            home,
            project,
        }
    }

    fn mia_home(&self) -> PathBuf {
        self.home.join(".mia-code")
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.mia_home())
            .env("TZ", "UTC")
            .current_dir(&self.project);
        c
    }

    fn db(&self) -> SessionDb {
        SessionDb::open(self.mia_home().join("data.db")).unwrap()
    }
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn seed(env: &Env) -> (mia_protocol::Session, mia_protocol::Session) {
    let mut db = env.db();
    let dir = env.project.display().to_string();
    let main = db
        .create_session(NewSession {
            directory: dir.clone(),
            title: "main-session".into(),
            created_at: Some(1_737_626_400_000), // 2025-01-23 10:00 UTC
            ..Default::default()
        })
        .unwrap();
    let m = db
        .add_message(
            &main.id,
            NewMessage::new(Role::User, vec![PartContent::text("add a login form")]),
        )
        .unwrap();
    db.add_message(
        &main.id,
        NewMessage {
            role: Some(Role::Assistant),
            metadata: MessageMetadata {
                model: Some("anthropic/claude-sonnet-4-5".into()),
                tokens: Some(TokenUsage {
                    input: 120,
                    output: 45,
                    ..Default::default()
                }),
                cost_usd: Some(0.0021),
                ..Default::default()
            },
            parts: vec![
                PartContent::text("Reading the form."),
                PartContent::ToolCall {
                    call_id: "c1".into(),
                    tool: "read".into(),
                    input: serde_json::json!({"path": "src/form.tsx"}),
                    signature: None,
                },
            ],
            ..Default::default()
        },
    )
    .unwrap();
    let fork = |db: &mut SessionDb, title: &str, parent: &mia_protocol::Session, at: i64, depth| {
        db.create_session(NewSession {
            directory: dir.clone(),
            title: title.into(),
            parent_id: Some(parent.id),
            fork: Some(ForkInfo {
                source_session_id: parent.id,
                source_message_id: m.id,
                forked_at: at,
                fork_depth: depth,
            }),
            created_at: Some(at),
            ..Default::default()
        })
        .unwrap()
    };
    let a = fork(&mut db, "approach-a", &main, 1_737_642_600_000, 1); // 14:30
    let b = fork(&mut db, "approach-b", &main, 1_737_644_400_000, 1); // 15:00
    fork(&mut db, "approach-b2", &b, 1_737_646_200_000, 2); // 15:30
    db.create_session(NewSession {
        directory: "/somewhere/else".into(),
        title: "other project".into(),
        ..Default::default()
    })
    .unwrap();
    (main, a)
}

#[test]
fn version() {
    let env = Env::new();
    let out = env.cmd().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        stdout(&out).trim(),
        format!("mia-code {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn sessions_list_filters_and_json() {
    let env = Env::new();
    seed(&env);
    let out = env
        .cmd()
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 5);

    let out = env
        .cmd()
        .args(["sessions", "list", "--json", "--project", "."])
        .output()
        .unwrap();
    let mine: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(mine.as_array().unwrap().len(), 4);
    let main = mine
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == "main-session")
        .unwrap();
    assert_eq!(main["message_count"], 2);

    let out = env
        .cmd()
        .args([
            "sessions",
            "list",
            "--json",
            "--since",
            "2025-01-23",
            "--project",
            ".",
        ])
        .output()
        .unwrap();
    let since: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(since.as_array().unwrap().len(), 4);
    let out = env
        .cmd()
        .args([
            "sessions",
            "list",
            "--json",
            "--since",
            "2025-01-24",
            "--project",
            ".",
        ])
        .output()
        .unwrap();
    let since: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(since.as_array().unwrap().len(), 0);

    let out = env
        .cmd()
        .args(["sessions", "list", "--status", "busy", "--json"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), "[]");

    let out = env.cmd().args(["sessions", "list"]).output().unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("main-session") && text.contains("STATUS"),
        "{text}"
    );
}

#[test]
fn bad_input_is_a_clear_error_with_nonzero_exit() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["sessions", "list", "--since", "23/01/2025"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use YYYY-MM-DD"));

    let out = env
        .cmd()
        .args(["sessions", "show", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no session matches `nope`"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn sessions_show_human_and_json() {
    let env = Env::new();
    let (main, _) = seed(&env);
    let out = env
        .cmd()
        .args(["sessions", "show", &main.id.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("add a login form"), "{text}");
    assert!(text.contains("120 in / 45 out tokens"), "{text}");
    assert!(
        text.contains("▸ read {\"path\":\"src/form.tsx\"}"),
        "{text}"
    );

    // By slug and by id prefix.
    for reference in [main.slug.clone(), main.id.to_string()[..13].to_string()] {
        let out = env
            .cmd()
            .args(["sessions", "show", &reference, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{reference}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["session"]["id"], main.id.to_string());
        assert_eq!(v["messages"].as_array().unwrap().len(), 2);
        assert_eq!(v["messages"][1]["parts"][1]["content"]["type"], "tool_call");
    }
}

#[test]
fn sessions_tree_draws_the_fork_hierarchy() {
    let env = Env::new();
    seed(&env);
    let out = env.cmd().args(["sessions", "tree"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let want = format!(
        "Sessions for {}:\n  main-session — 2025-01-23 10:00 — 2 messages\n    ├─ approach-a — 2025-01-23 14:30 — 0 messages\n    └─ approach-b — 2025-01-23 15:00 — 0 messages\n        └─ approach-b2 — 2025-01-23 15:30 — 0 messages\n",
        env.project.display()
    );
    assert_eq!(stdout(&out), want);
}

#[test]
fn archive_and_delete() {
    let env = Env::new();
    let (_, a) = seed(&env);
    let id = a.id.to_string();
    assert!(
        env.cmd()
            .args(["sessions", "archive", &id])
            .output()
            .unwrap()
            .status
            .success()
    );
    assert!(env.db().get_session(&a.id).unwrap().archived_at.is_some());
    let out = env
        .cmd()
        .args(["sessions", "delete", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert!(
        env.db().get_session(&a.id).is_ok(),
        "nothing deleted without --yes"
    );
    assert!(
        env.cmd()
            .args(["sessions", "delete", &id, "--yes"])
            .output()
            .unwrap()
            .status
            .success()
    );
    assert!(env.db().get_session(&a.id).is_err());
}

#[test]
fn config_show_names_sources() {
    let env = Env::new();
    std::fs::write(
        env.project.join("mia-code.json"),
        "{\n  // comment\n  \"model\": \"openai/gpt-5\",\n  \"permissions\": [{\"permission\": \"write\", \"pattern\": \"*.lock\", \"action\": \"deny\"},],\n}",
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["config"]["model"], "openai/gpt-5");
    let file = env.project.join("mia-code.json").display().to_string();
    assert_eq!(v["origins"]["model"], file);
    assert_eq!(v["origins"]["defaultAgent"], "built-in");
    assert_eq!(v["layers"][1]["permissions"][0]["pattern"], "*.lock");

    let out = env.cmd().args(["config", "show"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("model") && text.contains(&file), "{text}");
    assert!(text.contains("deny write *.lock"), "{text}");
    assert!(!text.contains("not used yet"), "{text}");

    // `smallModel` is read now (commit messages, pull request drafts): it
    // is no longer listed as accepted but unused.
    std::fs::write(
        env.project.join("mia-code.json"),
        r#"{"share": {"mode": "disabled"}, "smallModel": "openai/gpt-5-mini"}"#,
    )
    .unwrap();
    let out = env.cmd().args(["config", "show"]).output().unwrap();
    let text = stdout(&out);
    assert!(
        !text.contains("not used yet") && text.contains("smallModel"),
        "{text}"
    );
    let out = env
        .cmd()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unused"], serde_json::json!([]));
    assert_eq!(v["config"]["smallModel"], "openai/gpt-5-mini");
}

/// A project's plugin options never apply, and its worktree commands only
/// once trusted: `config show` says so and shows what applies instead.
#[test]
fn config_show_does_not_list_a_projects_values_that_do_not_apply() {
    let env = Env::new();
    std::fs::write(
        env.home.join(".mia-code.json"),
        r#"{"plugin": {"packages": [], "allowScripts": ["mine"]}}"#,
    )
    .unwrap();
    std::fs::write(
        env.project.join(".mia-code.json"),
        r#"{"plugin": {"allowScripts": ["evil"], "allowGit": true}, "worktree": {"startScripts": ["make"]}}"#,
    )
    .unwrap();
    let show = || {
        let out = env
            .cmd()
            .args(["config", "show", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let v = show();
    let global = env.home.join(".mia-code.json").display().to_string();
    assert_eq!(
        v["config"]["plugin"]["allowScripts"],
        serde_json::json!(["mine"]),
        "{v}"
    );
    assert_eq!(v["origins"]["plugin.allowScripts"], global.as_str());
    assert!(v["config"]["plugin"].get("allowGit").is_none(), "{v}");
    assert!(v["config"]["worktree"].get("startScripts").is_none(), "{v}");
    let keys: Vec<&str> = v["not_applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "plugin.allowGit",
            "plugin.allowScripts",
            "worktree.startScripts"
        ],
        "{v}"
    );
    let text = stdout(&env.cmd().args(["config", "show"]).output().unwrap());
    assert!(
        text.contains("Set by the project but not applied")
            && text.contains("worktree.startScripts")
            && text.contains("permissions trust"),
        "{text}"
    );
    // Trusted: its worktree commands apply; its plugin options still not.
    assert!(
        env.cmd()
            .args(["permissions", "trust"])
            .output()
            .unwrap()
            .status
            .success()
    );
    let v = show();
    assert_eq!(
        v["config"]["worktree"]["startScripts"],
        serde_json::json!(["make"])
    );
    assert_eq!(v["not_applied"].as_array().unwrap().len(), 2, "{v}");
}

#[test]
fn doctor_passes_then_fails_on_broken_config() {
    let env = Env::new();
    let out = env.cmd().args(["doctor", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    // What mia-code keeps on disk: the database (opened above) has bytes.
    let db = std::fs::metadata(env.home.join(".mia-code/data.db"))
        .unwrap()
        .len();
    assert!(v["storage"]["database"].as_u64().unwrap() >= db, "{v}");
    assert!(v["storage"]["snapshots"].is_u64(), "{v}");
    let out = env
        .cmd()
        .env("OPENAI_API_KEY", "sk-test-not-printed")
        .args(["doctor"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("key present (environment variable OPENAI_API_KEY)"),
        "{text}"
    );
    assert!(!text.contains("sk-test-not-printed"), "never prints a key");
    assert!(
        text.contains("storage") && text.contains("database "),
        "{text}"
    );

    std::fs::write(env.project.join(".mia-code.json"), "{\n \"modle\": 1\n}").unwrap();
    let out = env.cmd().args(["doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("✗ config") && text.contains(".mia-code.json:2:"),
        "{text}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn doctor_names_the_sandbox_mechanism_and_what_the_fallback_cannot_hold() {
    let env = Env::new();
    let out = env.cmd().args(["doctor"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("workspace-write via bubblewrap"), "{text}");
    assert!(
        text.contains("sandbox network") && text.contains("proxy"),
        "{text}"
    );
    assert!(
        text.contains("sandbox environment") && text.contains("TOKEN"),
        "{text}"
    );
    // User namespaces off (forced): the Landlock fallback, and what it cannot hold.
    let out = env
        .cmd()
        .env("MIA_CODE_SANDBOX_NO_USERNS", "1")
        .args(["doctor"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("via landlock+seccomp, the fallback"),
        "{text}"
    );
    assert!(
        text.contains("cannot hold") && text.contains("protected paths"),
        "{text}"
    );
    assert!(
        out.status.success(),
        "a fallback is a warning, not a failure: {text}"
    );
}

#[test]
fn corrupt_database_is_recovered_with_a_message() {
    let env = Env::new();
    std::fs::create_dir_all(env.mia_home()).unwrap();
    std::fs::write(env.mia_home().join("data.db"), vec![7u8; 8192]).unwrap();
    let out = env.cmd().args(["sessions", "list"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("was moved to") && err.contains("data.db.corrupt-"),
        "{err}"
    );
    let backups: Vec<_> = std::fs::read_dir(env.mia_home())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("corrupt-"))
        .collect();
    assert_eq!(backups.len(), 1);
}

#[test]
fn legacy_sessions_are_imported_on_first_run() {
    let env = Env::new();
    let legacy = env.home.join(".mia-code-sessions.json");
    // Built with serde_json: a Windows path's backslashes must be escaped.
    let sessions = serde_json::json!({"sessions": [{
        "id": "s1",
        "startedAt": 1_706_000_000_000i64,
        "model": "gpt-4",
        "projectRoot": env.project,
        "initialized": true,
    }]});
    std::fs::write(&legacy, sessions.to_string()).unwrap();
    let out = env
        .cmd()
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Migrated 1 sessions"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["model"], "gpt-4");
    assert_eq!(v[0]["created_at"], 1_706_000_000_000i64);
    assert!(!legacy.exists());
    assert!(
        Path::new(&format!(
            "{}.migrated",
            env.home.join(".mia-code-sessions.json").display()
        ))
        .exists()
    );
}

#[test]
fn logs_are_private() {
    let env = Env::new();
    env.cmd().args(["sessions", "list"]).output().unwrap();
    let log = env.mia_home().join("logs/mia-code.log");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(&log).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("applied migration")
    );
}

#[test]
fn completions_are_generated() {
    let env = Env::new();
    let out = env.cmd().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    assert!(stdout(&out).contains("mia-code"));
}

#[test]
fn serve_prints_its_address_and_writes_a_private_token_file() {
    use std::io::BufRead;
    let env = Env::new();
    let bin = assert_cmd::cargo::cargo_bin("mia-code");
    let mut child = std::process::Command::new(bin)
        .args(["serve", "--port", "0"])
        .env("HOME", &env.home)
        .env("XDG_CONFIG_HOME", env.home.join(".config"))
        .env("MIA_CODE_HOME", env.mia_home())
        .current_dir(&env.project)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.strip_prefix("listening on ").unwrap().to_string();
    let token = lines
        .next()
        .unwrap()
        .unwrap()
        .strip_prefix("token: ")
        .unwrap()
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let info = env.mia_home().join("server.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
    assert_eq!(saved["token"], token.as_str());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&info).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // A plain HTTP/1.1 request over a real socket.
    let addr = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    use std::io::{Read, Write};
    write!(
        stream,
        "GET /api/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"ok\":true"));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `MIA_CODE_SERVE_TOKEN` keeps the token across restarts (open pages go on
/// working); a short or unsafe one is refused with what to do.
#[test]
fn serve_takes_its_token_from_the_environment_or_refuses_a_weak_one() {
    use std::io::BufRead;
    let env = Env::new();
    let bin = assert_cmd::cargo::cargo_bin("mia-code");
    let token = "0123456789abcdef0123456789abcdef";
    let mut child = std::process::Command::new(&bin)
        .args(["serve", "--port", "0", "--no-ui"])
        .env("HOME", &env.home)
        .env("XDG_CONFIG_HOME", env.home.join(".config"))
        .env("MIA_CODE_HOME", env.mia_home())
        .env("MIA_CODE_SERVE_TOKEN", token)
        .current_dir(&env.project)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let _ = lines.next().unwrap().unwrap();
    assert_eq!(lines.next().unwrap().unwrap(), format!("token: {token}"));
    child.kill().unwrap();
    child.wait().unwrap();
    for weak in ["short", "0123456789abcdef0123456789abcdef; rm -rf /"] {
        let out = std::process::Command::new(&bin)
            .args(["serve", "--port", "0", "--no-ui"])
            .env("HOME", &env.home)
            .env("XDG_CONFIG_HOME", env.home.join(".config"))
            .env("MIA_CODE_HOME", env.mia_home())
            .env("MIA_CODE_SERVE_TOKEN", weak)
            .current_dir(&env.project)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("MIA_CODE_SERVE_TOKEN must be at least 32"),
            "{err}"
        );
    }
}
