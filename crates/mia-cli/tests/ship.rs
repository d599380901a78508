#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Review and ship as a person at a terminal (or a script) would use them:
//! `review`, `hunk`, `commit`, `push`, `pr` and `worktree take --hunk`,
//! with real git, a bare remote over smart HTTP (`git http-backend`) and
//! over `file://`, the mock model, and the GitHub and GitLab REST
//! stand-ins (the only services that cannot be reached from here).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mia_testkit::forge::ForgeStandIn;
use mia_testkit::git_http::GitHttp;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

struct Env {
    dir: tempfile::TempDir,
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

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
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
    std::fs::write(project.join("a.txt"), numbered(40)).unwrap();
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "Add a.txt"]);
    Env {
        dir,
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
    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn json(&self, args: &[&str]) -> Value {
        let text = self.ok(args);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
    }
    fn fails(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

#[test]
fn hunks_stage_unstage_and_revert_from_the_cli() {
    let env = env(json!({}));
    let p = &env.project;
    std::fs::write(
        p.join("a.txt"),
        numbered(40)
            .replace("line 2\n", "two\n")
            .replace("line 30\n", "thirty\n"),
    )
    .unwrap();
    let list = env.json(&["hunk", "list", "--json"]);
    let hunks = list["hunks"].as_array().unwrap();
    assert_eq!(hunks.len(), 2);
    for k in [
        "id",
        "file",
        "old_start",
        "old_lines",
        "new_start",
        "new_lines",
        "staged",
        "lines",
    ] {
        assert!(!hunks[0][k].is_null(), "{k} in {}", hunks[0]);
    }
    let first = hunks[0]["id"].as_str().unwrap().to_string();
    let second = hunks[1]["id"].as_str().unwrap().to_string();
    env.ok(&["hunk", "stage", &first]);
    let cached = git(p, &["diff", "--cached"]);
    assert!(
        cached.contains("+two") && !cached.contains("thirty"),
        "{cached}"
    );
    let staged = env.json(&["hunk", "list", "--staged", "--json"]);
    assert_eq!(staged["hunks"][0]["id"], first.as_str());
    assert_eq!(staged["hunks"][0]["staged"], true);
    // A stale id says so and changes nothing.
    let err = env.fails(&["hunk", "stage", &first]);
    assert!(
        err.contains(&first) && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(git(p, &["diff", "--cached"]), cached);
    env.ok(&["hunk", "unstage", &first]);
    assert_eq!(git(p, &["diff", "--cached"]), "");

    // Discard the second hunk: snapshotted first, and the printed command
    // brings it back.
    let r = env.json(&["hunk", "revert", &second, "--json"]);
    assert!(
        !std::fs::read_to_string(p.join("a.txt"))
            .unwrap()
            .contains("thirty")
    );
    let restore = r["restore_command"].as_str().unwrap();
    assert!(
        restore.starts_with("mia-code snapshot restore "),
        "{restore}"
    );
    let words: Vec<&str> = restore.split_whitespace().skip(1).collect();
    env.ok(&words);
    let text = std::fs::read_to_string(p.join("a.txt")).unwrap();
    assert!(text.contains("thirty") && text.contains("two"), "{text}");
    // Another project directory works with --project.
    let other = env.dir.path();
    let out = Command::cargo_bin("mia-code")
        .unwrap()
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("XDG_CONFIG_HOME", env.home.join(".config"))
        .env("MIA_CODE_HOME", env.home.join(".mia-code"))
        .current_dir(other)
        .args(["hunk", "list", "--json", "--project"])
        .arg(p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hunks"].as_array().unwrap().len(), 2);
}

async fn mock(steps: Value) -> MockServer {
    let scenario: Scenario = serde_json::from_value(json!({ "steps": steps })).unwrap();
    MockServer::start(scenario).await.unwrap()
}

fn model_config(server: &MockServer) -> Value {
    json!({
        "model": "anthropic/claude-sonnet-4-5",
        "smallModel": "anthropic/claude-haiku-4-5",
        "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
        "unifier": {"enabled": false}
    })
}

async fn blocking(mut c: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_comments_reach_the_model_and_a_discard_is_an_undoable_step() {
    let server = mock(json!([
        {"match": {"last_message_contains": "start"}, "response": {"events": [{"text": "Ready."}]}},
        {"match": {"last_message_contains": "Review comments"}, "response": {"events": [{"text": "Fixed both."}]}}
    ]))
    .await;
    let env = env(model_config(&server));
    let out = blocking({
        let mut c = env.cmd();
        c.args(["run", "start", "--format", "json"]);
        c
    })
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sid = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            v["session_id"].as_str().map(str::to_string)
        })
        .unwrap();
    let c1 = env.json(&[
        "review",
        "add",
        "--session",
        &sid,
        "--file",
        "a.txt",
        "--line",
        "3",
        "--end-line",
        "4",
        "use a constant here",
        "--json",
    ]);
    assert_eq!(c1["end_line"], 4);
    env.ok(&[
        "review",
        "add",
        "--session",
        &sid,
        "--file",
        "a.txt",
        "--line",
        "20",
        "rename this",
    ]);
    // Bad input says what was wrong and stores nothing.
    let err = env.fails(&[
        "review",
        "add",
        "--session",
        &sid,
        "--file",
        "a.txt",
        "--line",
        "99",
        "x",
    ]);
    assert!(err.contains("has 40 lines"), "{err}");
    let err = env.fails(&[
        "review",
        "add",
        "--session",
        &sid,
        "--file",
        "../x",
        "--line",
        "1",
        "x",
    ]);
    assert!(err.contains("relative to the folder"), "{err}");
    // Line 20 changes: that comment is outdated, not lost; two lines added
    // on top move the other one with its lines.
    let text = format!(
        "top\ntop2\n{}",
        numbered(40).replace("line 20\n", "twenty\n")
    );
    std::fs::write(env.project.join("a.txt"), text).unwrap();
    let list = env.json(&["review", "list", "--session", &sid, "--json"]);
    let comments = list["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 2);
    for k in ["id", "file", "line", "end_line", "text", "outdated"] {
        assert!(!comments[0][k].is_null(), "{k}");
    }
    assert_eq!(
        (comments[0]["line"].clone(), comments[0]["outdated"].clone()),
        (json!(5), json!(false))
    );
    assert_eq!(comments[1]["outdated"], true);

    let out = blocking({
        let mut c = env.cmd();
        c.args(["review", "send", "--session", &sid, "--format", "json"]);
        c
    })
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = server.requests().last().unwrap().clone();
    let sent = last.conversation().last().unwrap().text();
    for want in [
        "a.txt, lines 5-6",
        "5 | line 3",
        "6 | line 4",
        "> use a constant here",
        "a.txt, line 20 (outdated",
        "20 | line 20",
        "> rename this",
    ] {
        assert!(sent.contains(want), "{want:?} not in {sent}");
    }
    // Sent comments are gone; clearing an empty list is fine.
    let list = env.json(&["review", "list", "--session", &sid, "--json"]);
    assert_eq!(list["comments"], json!([]));
    let err = env.fails(&["review", "send", "--session", &sid]);
    assert!(err.contains("no review comments"), "{err}");
    env.ok(&[
        "review",
        "add",
        "--session",
        &sid,
        "--file",
        "a.txt",
        "--line",
        "1",
        "x",
    ]);
    assert!(
        env.ok(&["review", "clear", "--session", &sid])
            .contains("1 review comment")
    );

    // A discarded hunk recorded in the session: undo brings it back.
    let before = std::fs::read_to_string(env.project.join("a.txt")).unwrap();
    let hunks = env.json(&["hunk", "list", "--json"]);
    let id = hunks["hunks"][0]["id"].as_str().unwrap().to_string();
    let r = env.json(&["hunk", "revert", &id, "--session", &sid, "--json"]);
    assert_eq!(r["session_id"], sid.as_str());
    assert_ne!(
        std::fs::read_to_string(env.project.join("a.txt")).unwrap(),
        before
    );
    let out = blocking({
        let mut c = env.cmd();
        c.args(["undo", "--session", &sid]);
        c
    })
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(env.project.join("a.txt")).unwrap(),
        before
    );
}

/// A bare repository `acme/widgets.git` served over smart HTTP, as the
/// project's `origin`.
fn remote(env: &Env) -> (GitHttp, PathBuf) {
    let root = env.dir.path().join("srv");
    let bare = root.join("acme/widgets.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare", "-b", "main"]);
    git(&bare, &["config", "http.receivepack", "true"]);
    let server = GitHttp::start(&root, "127.0.0.1".parse().unwrap());
    git(
        &env.project,
        &["remote", "add", "origin", &server.url("acme/widgets.git")],
    );
    git(&env.project, &["push", "-q", "origin", "main"]);
    (server, bare)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_with_hooks_draft_push_and_pull_requests() {
    let server = mock(json!([
        {"match": {"last_message_contains": "commit message"}, "response": {"events": [{"text": "Count lines from one\n\nThe parser skipped the first line."}]}},
        {"match": {"last_message_contains": "Draft a pull request"}, "response": {"events": [{"text": "Count lines from one, not zero\n\n## Summary\nThe counter starts at one."}]}}
    ]))
    .await;
    let forge = ForgeStandIn::start("ghp_secret", None);
    let mut config = model_config(&server);
    config["github"] = json!({"apiURL": forge.github_api()});
    let env = env(config);
    let p = &env.project;
    let (_http, bare) = remote(&env);
    git(p, &["checkout", "-q", "-b", "fix-count"]);
    // The repository's hook runs (the person's action).
    let hook = p.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho hook ran > \"$(git rev-parse --show-toplevel)/.git/hook-ran\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let err = env.fails(&["commit", "-m", "nothing"]);
    assert!(err.contains("nothing is staged"), "{err}");
    std::fs::write(p.join("a.txt"), numbered(40).replace("line 1\n", "one\n")).unwrap();
    let id = env.json(&["hunk", "list", "--json"])["hunks"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    env.ok(&["hunk", "stage", &id]);
    // --draft without a terminal prints the drafted message and writes nothing.
    let head = git(p, &["rev-parse", "HEAD"]);
    let out = blocking({
        let mut c = env.cmd();
        c.args(["commit", "--draft"]);
        c
    })
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let draft = String::from_utf8_lossy(&out.stdout);
    assert!(draft.starts_with("Count lines from one"), "{draft}");
    assert_eq!(git(p, &["rev-parse", "HEAD"]), head);
    let asked = server
        .requests()
        .last()
        .unwrap()
        .conversation()
        .last()
        .unwrap()
        .text();
    assert!(
        asked.contains("Add a.txt") && asked.contains("+one"),
        "{asked}"
    );
    let c = env.json(&["commit", "-m", "Count lines from one", "--json"]);
    assert_eq!(c["branch"], "fix-count");
    assert_eq!(
        git(p, &["log", "-1", "--format=%s"]),
        "Count lines from one"
    );
    assert!(
        p.join(".git/hook-ran").exists(),
        "the pre-commit hook did not run"
    );

    // Not pushed yet: the pull request waits.
    let err = env.fails(&["pr", "create", "--title", "T"]);
    assert!(err.contains("push first"), "{err}");
    let err = env.fails(&["push"]);
    assert!(
        err.contains("no upstream") && err.contains("--remote"),
        "{err}"
    );
    let pushed = env.json(&["push", "--remote", "origin", "--json"]);
    assert_eq!(pushed["upstream_set"], true);
    let remote_head = git(&bare, &["rev-parse", "refs/heads/fix-count"]);
    assert_eq!(remote_head, git(p, &["rev-parse", "HEAD"]));

    // No token: says where one comes from.
    let err = env.fails(&["pr", "create", "--title", "T"]);
    assert!(
        err.contains("no GitHub token") && err.contains("GH_TOKEN"),
        "{err}"
    );
    let out = env
        .cmd()
        .env("GH_TOKEN", "ghp_secret")
        .args(["pr", "create", "--draft", "--generate", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pr: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(pr["number"], 1);
    assert_eq!(pr["url"], "https://github.example/acme/widgets/pull/1");
    assert_eq!(pr["state"], "open");
    let post = forge
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.target, "/api/v3/repos/acme/widgets/pulls");
    assert_eq!(post.header("authorization"), Some("Bearer ghp_secret"));
    assert_eq!(post.header("x-github-api-version"), Some("2022-11-28"));
    // Drafted by the small model from the branch's commits.
    assert_eq!(post.body["title"], "Count lines from one, not zero");
    assert_eq!(post.body["body"], "## Summary\nThe counter starts at one.");
    let asked = server
        .requests()
        .last()
        .unwrap()
        .conversation()
        .last()
        .unwrap()
        .text();
    assert!(asked.contains("- Count lines from one"), "{asked}");
    assert!(
        server
            .requests()
            .last()
            .unwrap()
            .model
            .starts_with("claude-haiku-4-5")
    );
    assert_eq!(post.body["head"], "fix-count");
    assert_eq!(post.body["base"], "main");
    assert_eq!(post.body["draft"], true);
    // A second: exists, with its link.
    let out = env
        .cmd()
        .env("GH_TOKEN", "ghp_secret")
        .args(["pr", "create", "--title", "again"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already exists: https://github.example/acme/widgets/pull/1"),
        "{err}"
    );
    let out = env
        .cmd()
        .env("GITHUB_TOKEN", "ghp_secret")
        .args(["pr", "status", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(st["review_decision"], "approved");
    assert_eq!(st["checks"]["state"], "pending");
    // GitLab, named explicitly: its own token is needed.
    let err = env.fails(&["pr", "create", "--provider", "gitlab", "--title", "MR"]);
    assert!(
        err.contains("no GitLab token") && err.contains("GITLAB_TOKEN"),
        "{err}"
    );
}

#[test]
fn a_file_remote_and_a_gitlab_merge_request() {
    let forge = ForgeStandIn::start("glpat", None);
    let env = env(json!({"gitlab": {"apiURL": forge.gitlab_api()}}));
    let p = &env.project;
    let bare = env.dir.path().join("plain.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare", "-b", "main"]);
    git(
        p,
        &[
            "remote",
            "add",
            "backup",
            &format!("file://{}", bare.display()),
        ],
    );
    std::fs::write(p.join("b.txt"), "b\n").unwrap();
    git(p, &["add", "b.txt"]);
    git(p, &["commit", "-qm", "Add b"]);
    env.ok(&["push", "--remote", "backup"]);
    let ls = git(p, &["ls-remote", "backup"]);
    assert!(ls.contains(&git(p, &["rev-parse", "HEAD"])), "{ls}");
    // An unknown forge host: the person must name the provider.
    let err = env.fails(&["pr", "create", "--remote", "backup", "--title", "x"]);
    assert!(
        err.contains("does not name a repository on a forge"),
        "{err}"
    );
    // A remote on the GitLab API's host opens a merge request there.
    let root = env.dir.path().join("srv");
    let repo = root.join("group/sub/repo.git");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "--bare", "-b", "main"]);
    git(&repo, &["config", "http.receivepack", "true"]);
    let http = GitHttp::start(&root, "127.0.0.1".parse().unwrap());
    git(
        p,
        &["remote", "add", "origin", &http.url("group/sub/repo.git")],
    );
    git(p, &["checkout", "-q", "-b", "feature"]);
    env.ok(&["push", "--remote", "origin"]);
    let out = env
        .cmd()
        .env("GITLAB_TOKEN", "glpat")
        .args([
            "pr",
            "create",
            "--title",
            "Add b",
            "--body",
            "Why: tests.",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pr: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        pr["url"],
        "https://gitlab.example/group/sub/repo/-/merge_requests/1"
    );
    let post = forge
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(
        post.target,
        "/api/v4/projects/group%2Fsub%2Frepo/merge_requests"
    );
    assert_eq!(post.header("private-token"), Some("glpat"));
    assert_eq!(post.body["description"], "Why: tests.");
    assert_eq!(post.body["source_branch"], "feature");
}

#[test]
fn a_hunk_taken_between_attempts() {
    let env = env(json!({}));
    let a = env.json(&["worktree", "create", "--name", "try-a", "--json"]);
    let b = env.json(&["worktree", "create", "--name", "try-b", "--json"]);
    let (ap, bp) = (
        PathBuf::from(a["path"].as_str().unwrap()),
        PathBuf::from(b["path"].as_str().unwrap()),
    );
    std::fs::write(
        ap.join("a.txt"),
        numbered(40)
            .replace("line 3\n", "A3\n")
            .replace("line 30\n", "A30\n"),
    )
    .unwrap();
    std::fs::write(bp.join("a.txt"), numbered(40).replace("line 10\n", "B10\n")).unwrap();
    let cmp = env.json(&["worktree", "compare", "try-a", "try-b", "--json"]);
    let file = &cmp["a"]["files"][0];
    assert_eq!(file["path"], "a.txt");
    let hunks = file["hunks"].as_array().unwrap();
    assert_eq!(hunks.len(), 2);
    let second = hunks[1]["id"].as_str().unwrap();
    // The direct A↔B diff of the file both changed.
    let out = env.ok(&[
        "worktree", "take", "try-a", "a.txt", "--hunk", second, "--into", "try-b",
    ]);
    assert!(out.contains("hunk"), "{out}");
    assert_eq!(
        std::fs::read_to_string(bp.join("a.txt")).unwrap(),
        numbered(40)
            .replace("line 10\n", "B10\n")
            .replace("line 30\n", "A30\n")
    );
    let err = env.fails(&[
        "worktree",
        "take",
        "try-a",
        "a.txt",
        "--hunk",
        "feedbeef0000",
        "--into",
        "try-b",
    ]);
    assert!(
        err.contains("feedbeef0000") && err.contains("worktree compare --json"),
        "{err}"
    );
}
