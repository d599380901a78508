#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `mia-code worktree ...` and `run --worktree` as a script would use them:
//! a real repository with commits, a dirty main tree, the mock model.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn env(config: Value) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        config.to_string(),
    )
    .unwrap();
    git(&project, &["init", "-q", "-b", "main"]);
    git(&project, &["config", "user.name", "t"]);
    git(&project, &["config", "user.email", "t@t"]);
    std::fs::write(project.join("a.txt"), "a\n").unwrap();
    std::fs::write(project.join("b.txt"), "b\n").unwrap();
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "init"]);
    // The user's own uncommitted edit: never touched.
    std::fs::write(project.join("b.txt"), "mine\n").unwrap();
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
    fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

#[test]
fn create_list_compare_take_promote_remove() {
    let env = env(json!({}));
    let a = env.json(&["worktree", "create", "--name", "try-a"]);
    for k in ["name", "path", "branch", "base", "head"] {
        assert!(a[k].is_string(), "{k} in {a}");
    }
    assert_eq!(a["branch"], "mia-code/try-a");
    let a_path = PathBuf::from(a["path"].as_str().unwrap());
    assert_eq!(a_path, env.project.join(".mia-code/worktrees/try-a"));
    let b = env.json(&["worktree", "create", "--name", "try-b"]);
    let b_path = PathBuf::from(b["path"].as_str().unwrap());
    // Two attempts.
    std::fs::write(a_path.join("a.txt"), "a by A\n").unwrap();
    std::fs::write(b_path.join("a.txt"), "a by B\n").unwrap();
    std::fs::write(a_path.join("new.txt"), "new\n").unwrap();
    std::fs::write(b_path.join("new.txt"), "new\n").unwrap();
    std::fs::write(b_path.join("only-b.txt"), "b\n").unwrap();
    let list = env.json(&["worktree", "list"]);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["try-a", "try-b"]);
    assert_eq!(list[0]["dirty"].as_array().unwrap().len(), 2);
    let cmp = env.json(&["worktree", "compare", "try-a", "try-b"]);
    assert_eq!(cmp["base"], a["base"]);
    let between: Vec<(String, String)> = cmp["between"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["path"].as_str().unwrap().into(),
                x["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        between,
        [
            ("a.txt".to_string(), "differ".to_string()),
            ("new.txt".into(), "same".into()),
            ("only-b.txt".into(), "only_b".into()),
        ]
    );
    assert_eq!(cmp["a"]["files"].as_array().unwrap().len(), 2);
    assert_eq!(cmp["b"]["stats"]["files"], 3);
    // Take B's a.txt into A: A has its own edit, so refused until forced;
    // forced, A's version goes to the trash and comes back from it.
    let out = env
        .cmd()
        .args(["worktree", "take", "try-b", "a.txt", "--into", "try-a"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a.txt") && err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read_to_string(a_path.join("a.txt")).unwrap(),
        "a by A\n"
    );
    let t = env.json(&[
        "worktree", "take", "try-b", "a.txt", "--into", "try-a", "--force",
    ]);
    let id = t["trash"]["id"]
        .as_str()
        .expect("a trash entry")
        .to_string();
    assert_eq!(
        std::fs::read_to_string(a_path.join("a.txt")).unwrap(),
        "a by B\n"
    );
    let trash = env.json(&["worktree", "trash"]);
    assert_eq!(trash[0]["id"], id.as_str(), "{trash}");
    assert_eq!(trash[0]["worktree"], "try-a", "{trash}");
    assert_eq!(trash[0]["files"], json!(["a.txt"]), "{trash}");
    let back = env.project.join("restored");
    let r = env.json(&[
        "worktree",
        "trash",
        "restore",
        &id,
        "--into",
        back.to_str().unwrap(),
    ]);
    assert_eq!(r["into"], back.to_str().unwrap(), "{r}");
    assert_eq!(
        std::fs::read_to_string(back.join("a.txt")).unwrap(),
        "a by A\n"
    );
    std::fs::remove_dir_all(&back).unwrap();
    // Removing B would lose its work: refused, says what.
    let out = env
        .cmd()
        .args(["worktree", "remove", "try-b"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("would lose 1 uncommitted change(s) (a.txt)")
            && err.contains("2 untracked file(s) (new.txt, only-b.txt)")
            && err.contains("--force"),
        "{err}"
    );
    let p = env.json(&["worktree", "promote", "try-a", "--merge"]);
    assert_eq!(p["merged_into"], "main");
    assert_eq!(p["fast_forward"], true);
    assert_eq!(
        p["removed"], true,
        "worktree.autoCleanup removes the promoted one"
    );
    assert_eq!(p["others"], json!(["try-b"]));
    assert_eq!(
        git(&env.project, &["log", "-1", "--format=%s", "main"]),
        "mia-code: attempt try-a"
    );
    assert_eq!(
        std::fs::read_to_string(env.project.join("a.txt")).unwrap(),
        "a by B\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.project.join("b.txt")).unwrap(),
        "mine\n",
        "the user's edit"
    );
    let out = env
        .cmd()
        .args(["worktree", "remove", "try-b", "--force"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!b_path.exists());
    assert!(git(&env.project, &["branch", "--list", "mia-code/*"]).is_empty());
    // Text output too.
    let out = env.cmd().args(["worktree", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("No mia-code worktrees"));
}

#[test]
fn scripts_from_an_untrusted_project_config_do_not_run() {
    let env = env(json!({"worktree": {"startScripts": ["echo global-script-ran"]}}));
    std::fs::write(
        env.project.join(".mia-code.json"),
        r#"{"worktree": {"startScripts": ["touch PWNED"]}}"#,
    )
    .unwrap();
    git(&env.project, &["add", ".mia-code.json"]);
    git(&env.project, &["commit", "-qm", "cfg"]);
    let c = env.json(&["worktree", "create", "--name", "untrusted"]);
    // The project's scripts are ignored; the global config's still run.
    assert_eq!(c["scripts"].as_array().unwrap().len(), 1, "{c}");
    assert_eq!(c["scripts"][0]["command"], "echo global-script-ran");
    assert!(
        !PathBuf::from(c["path"].as_str().unwrap())
            .join("PWNED")
            .exists()
    );
    // Once trusted, the project's scripts run, with their output streamed.
    let out = env.cmd().args(["permissions", "trust"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = env
        .cmd()
        .args(["worktree", "create", "--name", "trusted", "--json"])
        .output()
        .unwrap();
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["scripts"][0]["command"], "touch PWNED");
    assert_eq!(c["scripts"][0]["exit_code"], 0);
    assert!(
        PathBuf::from(c["path"].as_str().unwrap())
            .join("PWNED")
            .exists()
    );
}

/// Two promotes at once (two processes): one after the other, both whole.
#[test]
fn two_promotes_at_once_do_not_interleave() {
    let env = env(json!({"worktree": {"autoCleanup": false}}));
    let mut paths = Vec::new();
    for n in ["one", "two"] {
        let c = env.json(&["worktree", "create", "--name", n]);
        let p = PathBuf::from(c["path"].as_str().unwrap());
        std::fs::write(p.join(format!("{n}.txt")), format!("{n}\n")).unwrap();
        paths.push(p);
    }
    let start = |n: &str| {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("mia-code"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &env.home)
            .env("XDG_CONFIG_HOME", env.home.join(".config"))
            .env("MIA_CODE_HOME", env.home.join(".mia-code"))
            .current_dir(&env.project)
            .args(["worktree", "promote", n, "--merge", "--json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start("one"), start("two"));
    for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Both merged into main, main's checkout has both, nothing else changed.
    for n in ["one", "two"] {
        assert_eq!(git(&env.project, &["show", &format!("main:{n}.txt")]), n);
        assert_eq!(
            std::fs::read_to_string(env.project.join(format!("{n}.txt"))).unwrap(),
            format!("{n}\n")
        );
    }
    assert_eq!(git(&env.project, &["status", "--porcelain"]), "M b.txt");
    git(&env.project, &["fsck", "--no-progress"]);
}

#[test]
fn a_project_cannot_point_the_worktree_directory_outside_the_repository() {
    let env = env(json!({}));
    // The person's own worktree next to the project.
    let sibling = env.project.parent().unwrap().join("theirs");
    git(
        &env.project,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "theirs",
            sibling.to_str().unwrap(),
        ],
    );
    std::fs::write(
        env.project.join(".mia-code.json"),
        r#"{"worktree": {"directory": ".."}}"#,
    )
    .unwrap();
    // Untrusted: the project's value is not read; the default stands.
    let list = env.json(&["worktree", "list"]);
    assert_eq!(list, json!([]), "the sibling worktree is not listed");
    let c = env.json(&["worktree", "create", "--name", "t1"]);
    assert_eq!(
        PathBuf::from(c["path"].as_str().unwrap()),
        env.project.join(".mia-code/worktrees/t1")
    );
    let out = env
        .cmd()
        .args(["worktree", "remove", "theirs", "--force"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(sibling.exists());
    // Trusted: read, and refused with the way out.
    let out = env.cmd().args(["permissions", "trust"]).output().unwrap();
    assert!(out.status.success());
    let out = env.cmd().args(["worktree", "list"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("worktree.directory `..`") && err.contains("must stay inside the repository"),
        "{err}"
    );
    assert!(sibling.exists());
    assert!(git(&env.project, &["branch", "--list", "theirs"]).contains("theirs"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_in_a_new_worktree_leaves_the_main_tree_alone() {
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "write it"}, "response": {"events": [
            {"tool_call": {"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "from the agent\n"}}}
        ]}},
        {"match": {"has_tool_result": "w1"}, "response": {"events": [{"text": "done"}]}}
    ]}))
    .unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let env = env(json!({
        "model": "anthropic/claude-sonnet-4-5",
        "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
        "unifier": {"enabled": false}
    }));
    let mut c = env.cmd();
    c.args(["run", "write it", "--worktree", "new", "--allow", "write"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("worktree ") && err.contains("mia-code/"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(env.project.join("a.txt")).unwrap(),
        "a\n"
    );
    let list = env.json(&["worktree", "list"]);
    let w = &list[0];
    let path = PathBuf::from(w["path"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(path.join("a.txt")).unwrap(),
        "from the agent\n"
    );
    assert_eq!(w["sessions"].as_array().unwrap().len(), 1, "{w}");
    assert_eq!(w["dirty"], json!(["a.txt"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_fork_tree_and_promote_from_the_cli() {
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "write it"}, "response": {"events": [
            {"tool_call": {"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "from the agent\n"}}}
        ]}},
        {"match": {"has_tool_result": "w1"}, "response": {"events": [{"text": "done writing"}]}}
    ]}))
    .unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let env = env(json!({
        "model": "anthropic/claude-sonnet-4-5",
        "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
        "unifier": {"enabled": false}
    }));
    let mut c = env.cmd();
    c.args(["run", "write it", "--allow", "write"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = env.json(&["sessions", "list"]);
    let parent = list[0]["id"].as_str().unwrap().to_string();

    // A conversation-only fork: JSON is the new session with its fork metadata.
    let f1 = env.json(&["sessions", "fork", &parent]);
    assert_eq!(f1["parent_id"], json!(parent));
    assert_eq!(f1["fork"]["source_session_id"], json!(parent));
    assert_eq!(f1["fork"]["fork_depth"], json!(1));
    assert_eq!(f1["directory"], json!(env.project.display().to_string()));
    assert!(f1["title"].as_str().unwrap().ends_with("(fork)"), "{f1}");
    assert!(f1.get("files").is_none());

    // With files: a worktree holding the project at the fork point, the
    // user's uncommitted edit included; the main tree is untouched.
    let f2 = env.json(&["sessions", "fork", &parent, "--with-files"]);
    assert!(f2["title"].as_str().unwrap().ends_with("(fork 2)"), "{f2}");
    let wt = PathBuf::from(f2["files"]["path"].as_str().unwrap());
    assert_eq!(f2["directory"], json!(wt.display().to_string()));
    assert_eq!(
        std::fs::read_to_string(wt.join("a.txt")).unwrap(),
        "from the agent\n"
    );
    assert_eq!(std::fs::read_to_string(wt.join("b.txt")).unwrap(), "mine\n");
    assert_eq!(
        std::fs::read_to_string(env.project.join("b.txt")).unwrap(),
        "mine\n"
    );

    // Without --json: the id on stdout.
    let out = env
        .cmd()
        .args(["sessions", "fork", &parent])
        .output()
        .unwrap();
    assert!(out.status.success());
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(id.len(), 36, "{id}");

    // The tree, as JSON and drawn.
    let tree = env.json(&["sessions", "tree"]);
    assert_eq!(tree.as_array().unwrap().len(), 1, "{tree}");
    let kids = tree[0]["children"].as_array().unwrap();
    assert_eq!(kids.len(), 3);
    assert_eq!(
        kids[0]["fork"]["source_message_id"],
        f1["fork"]["source_message_id"]
    );
    assert_eq!(kids[1]["own_worktree"], json!(true));
    assert_eq!(kids[0]["fork_excerpt"], json!("done writing"));
    let out = env.cmd().args(["sessions", "tree"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("├─ ") && text.contains("└─ "), "{text}");
    assert!(
        text.contains("(fork 2)") && text.contains("— worktree "),
        "{text}"
    );
    let out = env
        .cmd()
        .args(["sessions", "forks", &parent])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Session forks:"), "{text}");
    assert_eq!(text.matches("(fork").count(), 3, "{text}");

    // Bad input: a clear error, nothing made.
    let out = env
        .cmd()
        .args(["sessions", "fork", &parent, "--message", "not-an-id"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a message id"));
    let out = env
        .cmd()
        .args([
            "sessions",
            "fork",
            &parent,
            "--message",
            "0190b1e2-7a7b-7c3d-8e9f-0a1b2c3d4e5f",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("InvalidForkPointError"));

    // Promote: top-level, fork metadata kept.
    let out = env
        .cmd()
        .args(["sessions", "promote", f1["id"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = env.json(&["sessions", "show", f1["id"].as_str().unwrap()]);
    assert_eq!(shown["session"]["parent_id"], Value::Null);
    assert_eq!(shown["session"]["fork"]["source_session_id"], json!(parent));
    let tree = env.json(&["sessions", "tree"]);
    assert_eq!(tree.as_array().unwrap().len(), 2);
}
