#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The built-in tools against real files and a real shell.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mia_tools::{Target, ToolContext, ToolError, ToolRegistry};
use serde_json::{Value, json};

fn project() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    (dir, ToolContext::new(root))
}

async fn call(
    ctx: &ToolContext,
    tool: &str,
    input: Value,
) -> Result<mia_tools::ToolOutput, ToolError> {
    let reg = ToolRegistry::builtin();
    reg.plan(tool, &input, ctx)?;
    reg.get(tool).unwrap().run(input, ctx).await
}

fn write(root: &Path, rel: &str, content: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

#[tokio::test]
async fn read_numbers_lines_pages_and_refuses_binary() {
    let (_d, ctx) = project();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    write(&ctx.project_root, "src/a.txt", text.as_bytes());
    let out = call(&ctx, "read", json!({"path": "src/a.txt"}))
        .await
        .unwrap();
    assert!(out.output.starts_with("     1\tline 1\n"), "{}", out.output);
    assert!(out.output.contains("    10\tline 10"));
    let out = call(
        &ctx,
        "read",
        json!({"path": "src/a.txt", "offset": 4, "limit": 2}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.output,
        "     4\tline 4\n     5\tline 5\n\n(showing lines 4-5 of 10; read again with offset 6 to continue)\n"
    );
    write(
        &ctx.project_root,
        "img.png",
        &[0x89, b'P', b'N', b'G', 0, 0, 1],
    );
    let err = call(&ctx, "read", json!({"path": "img.png"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("binary"), "{err}");
    let err = call(&ctx, "read", json!({"path": "src/b.txt"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("did you mean: src/a.txt"), "{err}");
    let err = call(&ctx, "read", json!({"path": "src"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    let err = call(&ctx, "read", json!({"path": "src/a.txt", "offset": 50}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("has 10 lines"), "{err}");
}

#[tokio::test]
async fn invalid_arguments_are_explained() {
    let (_d, ctx) = project();
    let err = call(&ctx, "read", json!({"file": "x"})).await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("invalid arguments for read"), "{msg}");
    assert!(msg.contains("unknown field `file`"), "{msg}");
    let err = call(
        &ctx,
        "bash",
        json!({"command": "ls", "timeout_ms": 9_999_999}),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("at most") || err.to_string().contains("between 1 and"),
        "{err}"
    );
    let err = ToolRegistry::builtin()
        .plan("frobnicate", &json!({}), &ctx)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("available tools: read, write, edit"),
        "{err}"
    );
}

#[tokio::test]
async fn plans_declare_permission_targets_and_modified_paths() {
    let (_d, ctx) = project();
    let reg = ToolRegistry::builtin();
    let root = ctx.project_root.clone();
    let p = reg
        .plan("write", &json!({"path": "a/../b.txt", "content": ""}), &ctx)
        .unwrap();
    assert_eq!(p.permission, "write");
    assert_eq!(p.modifies, Some(vec![root.join("b.txt")]));
    let p = reg
        .plan(
            "edit",
            &json!({"path": "/etc/hosts", "old_string": "a", "new_string": "b"}),
            &ctx,
        )
        .unwrap();
    #[cfg(not(windows))]
    assert_eq!(p.targets, vec![Target::Path("/etc/hosts".into())]);
    // Windows reads a path without a drive on the project's drive.
    #[cfg(windows)]
    assert!(
        matches!(&p.targets[..], [Target::Path(t)] if t.to_string_lossy().replace('\\', "/").ends_with(":/etc/hosts")),
        "{:?}",
        p.targets
    );
    let p = reg
        .plan("bash", &json!({"command": "cargo test"}), &ctx)
        .unwrap();
    assert_eq!(p.modifies, None, "bash may change anything: full scan");
    assert_eq!(p.targets, vec![Target::Command("cargo test".into())]);
    let p = reg.plan("read", &json!({"path": "x"}), &ctx).unwrap();
    assert_eq!(p.modifies, Some(vec![]));
    let p = reg
        .plan("todo", &json!({"action": "delete", "id": 1}), &ctx)
        .unwrap();
    assert_eq!(p.permission, "todo_delete");
    assert!(reg.plan("read", &json!({"path": "a\u{7}b"}), &ctx).is_err());
    // Every tool publishes an object schema.
    for spec in reg.specs() {
        assert!(spec.input_schema.is_object(), "{}", spec.name);
    }
}

#[tokio::test]
async fn write_then_edit_a_real_file() {
    let (_d, ctx) = project();
    let out = call(
        &ctx,
        "write",
        json!({"path": "deep/dir/f.rs", "content": "fn a() {}\nfn b() {}\n"}),
    )
    .await
    .unwrap();
    assert!(
        out.output.starts_with("Created deep/dir/f.rs"),
        "{}",
        out.output
    );
    let out = call(
        &ctx,
        "write",
        json!({"path": "deep/dir/f.rs", "content": "fn a() {}\nfn b() {}\nfn c() {}\n"}),
    )
    .await
    .unwrap();
    assert!(out.output.starts_with("Overwrote"), "{}", out.output);
    call(
        &ctx,
        "edit",
        json!({"path": "deep/dir/f.rs", "edits": [
            {"old_string": "fn a() {}", "new_string": "fn a() { 1 }"},
            {"old_string": "fn c() {}\n", "new_string": ""}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(ctx.project_root.join("deep/dir/f.rs")).unwrap(),
        "fn a() { 1 }\nfn b() {}\n"
    );
    // A failing edit leaves the file as it was.
    let err = call(
        &ctx,
        "edit",
        json!({"path": "deep/dir/f.rs", "edits": [
            {"old_string": "fn b() {}", "new_string": "fn b() { 2 }"},
            {"old_string": "missing", "new_string": "x"}
        ]}),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("edit 2 of 2"), "{err}");
    assert_eq!(
        std::fs::read_to_string(ctx.project_root.join("deep/dir/f.rs")).unwrap(),
        "fn a() { 1 }\nfn b() {}\n"
    );
}

#[tokio::test]
async fn glob_respects_gitignore_and_separators() {
    let (_d, ctx) = project();
    let r = &ctx.project_root;
    write(r, ".gitignore", b"target/\n*.log\n");
    write(r, "src/main.rs", b"");
    write(r, "src/util/mod.rs", b"");
    write(r, "target/debug/x.rs", b"");
    write(r, "build.log", b"");
    write(r, ".github/workflows/ci.yml", b"");
    let out = call(&ctx, "glob", json!({"pattern": "src/*.rs"}))
        .await
        .unwrap();
    assert_eq!(out.output, "src/main.rs");
    let out = call(&ctx, "glob", json!({"pattern": "**/*.rs"}))
        .await
        .unwrap();
    let mut got: Vec<&str> = out.output.lines().collect();
    got.sort();
    assert_eq!(got, vec!["src/main.rs", "src/util/mod.rs"]);
    let out = call(&ctx, "glob", json!({"pattern": "**/*.yml"}))
        .await
        .unwrap();
    assert_eq!(out.output, ".github/workflows/ci.yml");
    let out = call(&ctx, "glob", json!({"pattern": "*.log"}))
        .await
        .unwrap();
    assert!(out.output.starts_with("No files match"), "{}", out.output);
    let err = call(&ctx, "glob", json!({"pattern": "src/[z"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bad glob"), "{err}");
}

#[tokio::test]
async fn grep_finds_lines_skipping_ignored_and_binary() {
    let (_d, ctx) = project();
    let r = &ctx.project_root;
    write(r, ".gitignore", b"dist/\n");
    write(
        r,
        "src/a.ts",
        b"const token = 1;\nlet other = 2;\nTOKEN();\n",
    );
    write(r, "src/b.rs", b"// token here\n");
    write(r, "dist/bundle.js", b"token token\n");
    write(r, "blob.bin", b"token\0\0\0");
    let out = call(&ctx, "grep", json!({"pattern": "token"}))
        .await
        .unwrap();
    let mut got: Vec<&str> = out.output.lines().collect();
    got.sort();
    assert_eq!(
        got,
        vec!["src/a.ts:1: const token = 1;", "src/b.rs:1: // token here"]
    );
    let out = call(
        &ctx,
        "grep",
        json!({"pattern": "token", "ignore_case": true, "include": "**/*.ts"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.output,
        "src/a.ts:1: const token = 1;\nsrc/a.ts:3: TOKEN();"
    );
    assert_eq!(out.metadata["matches"], 2);
    let out = call(&ctx, "grep", json!({"pattern": "t", "max_results": 1}))
        .await
        .unwrap();
    assert!(
        out.output.contains("more matching lines not shown"),
        "{}",
        out.output
    );
    let err = call(&ctx, "grep", json!({"pattern": "(unclosed"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bad regular expression"), "{err}");
}

#[tokio::test]
async fn bash_runs_reports_exit_code_and_withholds_secrets() {
    let (_d, mut ctx) = project();
    let out = call(
        &ctx,
        "bash",
        json!({"command": "echo hi; echo err >&2; pwd; exit 3"}),
    )
    .await
    .unwrap();
    assert!(
        out.output.contains("hi") && out.output.contains("err"),
        "{}",
        out.output
    );
    assert!(out.output.contains(&ctx.project_root.display().to_string()));
    assert!(out.output.ends_with("(exit code 3)"), "{}", out.output);
    assert_eq!(out.metadata["exit_code"], 3);
    // The person's environment reaches the command (minus secrets, which
    // mia-sandbox's own tests check from a launching process that has them);
    // sandbox.env.set adds.
    assert_eq!(std::env::var("CARGO_PKG_NAME").unwrap(), "mia-tools");
    ctx.sandbox = mia_tools::ShellSandbox::Off {
        env: mia_sandbox::EnvRule {
            keep: vec![],
            set: vec![("MIA_TEST_SETTING".into(), "set".into())],
        },
    };
    let out = call(
        &ctx,
        "bash",
        json!({"command": "echo \"[$CARGO_PKG_NAME] [$MIA_TEST_SETTING]\""}),
    )
    .await
    .unwrap();
    assert_eq!(out.output.trim(), "[mia-tools] [set]");
}

#[tokio::test]
async fn bash_output_cap_keeps_the_tail() {
    let (_d, ctx) = project();
    let out = call(&ctx, "bash", json!({"command": "seq 1 20000"}))
        .await
        .unwrap();
    assert!(out.output.starts_with("(first "), "{}", &out.output[..80]);
    assert!(out.output.trim_end().ends_with("20000"));
    assert!(out.output.len() < 31_000);
    assert!(out.metadata["truncated_bytes"].as_u64().unwrap() > 0);
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'),
        Err(_) => false,
    }
}

fn wait_dead(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test]
async fn bash_leaves_no_background_process_behind() {
    let (_d, ctx) = project();
    let started = Instant::now();
    let out = call(
        &ctx,
        "bash",
        json!({"command": "sleep 30 & echo $! > bg.pid; echo started"}),
    )
    .await
    .unwrap();
    assert!(out.output.contains("started"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "did not wait for the background job"
    );
    let pid: u32 = std::fs::read_to_string(ctx.project_root.join("bg.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_dead(pid), "background sleep {pid} survived");
}

#[tokio::test]
async fn bash_timeout_kills_the_process_group() {
    let (_d, ctx) = project();
    let started = Instant::now();
    let out = call(
        &ctx,
        "bash",
        json!({"command": "echo $$ > sh.pid; (sleep 30; echo never) & sleep 30", "timeout_ms": 500}),
    )
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.metadata["timed_out"], true);
    assert!(
        out.output.contains("timed out after 0.5 s"),
        "{}",
        out.output
    );
    let pid: u32 = std::fs::read_to_string(ctx.project_root.join("sh.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_dead(pid));
}

#[tokio::test]
async fn bash_cancel_stops_the_command_and_keeps_output() {
    let (_d, ctx) = project();
    let cancel = ctx.cancel.clone();
    let marker = ctx.project_root.join("ready");
    let watcher = tokio::spawn(async move {
        // Cancel once the command has visibly started.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !marker.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cancel.cancel();
    });
    let started = Instant::now();
    let out = call(
        &ctx,
        "bash",
        json!({"command": "echo partial; touch ready; sleep 30"}),
    )
    .await
    .unwrap();
    watcher.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.metadata["cancelled"], true);
    assert!(
        out.output.contains("partial") && out.output.contains("cancelled"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn todo_list_flow() {
    let (_d, ctx) = project();
    let out = call(
        &ctx,
        "todo",
        json!({"action": "create", "items": ["write tests", "fix bug"]}),
    )
    .await
    .unwrap();
    assert_eq!(out.output, "[ ] #1 write tests\n[ ] #2 fix bug");
    let out = call(
        &ctx,
        "todo",
        json!({"action": "update", "id": 2, "status": "in_progress"}),
    )
    .await
    .unwrap();
    assert_eq!(out.output, "[ ] #1 write tests\n[~] #2 fix bug");
    let out = call(&ctx, "todo", json!({"action": "delete", "id": 1}))
        .await
        .unwrap();
    assert_eq!(out.output, "[~] #2 fix bug");
    let err = call(&ctx, "todo", json!({"action": "delete", "id": 9}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("no todo #9") && err.to_string().contains("#2"),
        "{err}"
    );
}

/// A one-shot HTTP/1.1 server on a loopback port answering every request with `response`.
fn http_server(responses: Vec<String>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Write};
        for (stream, response) in listener.incoming().zip(responses) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
                line.clear();
            }
            stream.write_all(response.as_bytes()).unwrap();
        }
    });
    format!("http://{addr}")
}

fn http(status: &str, content_type: &str, extra: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test]
async fn fetch_converts_html_reports_redirects_and_refuses_binary() {
    let (_d, ctx) = project();
    let base = http_server(vec![
        http(
            "200 OK",
            "text/html",
            "",
            "<html><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>",
        ),
        http(
            "301 Moved Permanently",
            "text/html",
            "Location: /new\r\n",
            "",
        ),
        http("200 OK", "image/png", "", "\u{1}\u{2}"),
    ]);
    let out = call(&ctx, "fetch", json!({"url": format!("{base}/page")}))
        .await
        .unwrap();
    assert!(out.output.contains("# Title"), "{}", out.output);
    assert!(out.output.contains("**bold**"), "{}", out.output);
    let out = call(&ctx, "fetch", json!({"url": format!("{base}/old")}))
        .await
        .unwrap();
    assert!(
        out.output
            .contains(&format!("redirects (301 Moved Permanently) to {base}/new")),
        "{}",
        out.output
    );
    let err = call(&ctx, "fetch", json!({"url": format!("{base}/img")}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not text"), "{err}");
    let err = call(&ctx, "fetch", json!({"url": "file:///etc/passwd"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("only http and https"), "{err}");
    let plan = ToolRegistry::builtin()
        .plan("fetch", &json!({"url": "https://docs.rs/x"}), &ctx)
        .unwrap();
    assert_eq!(plan.permission, "fetch");
    assert_eq!(plan.targets, vec![Target::Url("https://docs.rs/x".into())]);
}

#[tokio::test]
async fn write_and_edit_touch_nothing_once_stopped() {
    let (_d, ctx) = project();
    call(&ctx, "write", json!({"path": "f.txt", "content": "one\n"}))
        .await
        .unwrap();
    ctx.cancel.cancel();
    let err = call(&ctx, "write", json!({"path": "f.txt", "content": "two\n"}))
        .await
        .unwrap_err();
    assert!(matches!(err, mia_tools::ToolError::Cancelled), "{err}");
    let err = call(
        &ctx,
        "edit",
        json!({"path": "f.txt", "old_string": "one", "new_string": "three"}),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, mia_tools::ToolError::Cancelled), "{err}");
    assert_eq!(
        std::fs::read_to_string(ctx.project_root.join("f.txt")).unwrap(),
        "one\n"
    );
}

/// A read-only agent's shell: a bare-repository layout planted in the
/// project cannot bring its own configuration (here an alias that runs a
/// command; `diff.external`, hooks and filters the same way). The same command
/// in a writing agent's shell does run it (the test can fail).
#[tokio::test]
async fn read_only_shell_hardens_git() {
    let (_d, mut ctx) = project();
    let root = ctx.project_root.clone();
    let git = |dir: &Path, args: &[&str]| {
        let st = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(st.status.success(), "git {args:?}: {:?}", st);
    };
    let bare = root.join("evil");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare", "."]);
    let marker = root.join("PWNED");
    git(
        &bare,
        &[
            "config",
            "alias.st",
            &format!("!touch {}", marker.display()),
        ],
    );
    let cmd = json!({"command": "cd evil && git st 2>&1; git rev-parse --git-dir 2>&1; true"});
    ctx.read_only_shell = false;
    call(&ctx, "bash", cmd.clone()).await.unwrap();
    assert!(marker.exists(), "without hardening the planted alias runs");
    std::fs::remove_file(&marker).unwrap();
    ctx.read_only_shell = true;
    let out = call(&ctx, "bash", cmd).await.unwrap();
    assert!(!marker.exists(), "{}", out.output);
    assert!(out.output.contains("safe.bareRepository"), "{}", out.output);
}

/// A project in a temp dir (its siblings are out of the sandbox's reach).
#[cfg(target_os = "linux")]
fn sandboxed_project(
    mode: mia_sandbox::SandboxMode,
    escapable: bool,
) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    let root = dunce::canonicalize(&root).unwrap();
    let mut ctx = ToolContext::new(root.clone());
    let policy = mia_sandbox::SandboxPolicy::build(
        mode,
        mia_sandbox::NetworkAccess::Deny,
        mia_sandbox::PolicyInputs {
            project_root: root,
            ..Default::default()
        },
    );
    ctx.sandbox = mia_tools::ShellSandbox::Confined {
        policy,
        mechanism: mia_sandbox::support().mechanism().unwrap(),
        escapable,
    };
    (dir, ctx)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn bash_runs_in_the_sandbox_and_says_so_when_it_blocks_a_write() {
    let (d, ctx) = sandboxed_project(mia_sandbox::SandboxMode::WorkspaceWrite, true);
    let out = call(
        &ctx,
        "bash",
        json!({"command": "echo in > inside.txt && echo ok"}),
    )
    .await
    .unwrap();
    assert!(out.output.contains("ok"), "{}", out.output);
    assert_eq!(out.metadata["sandbox"]["mode"], "workspace-write");
    assert_eq!(out.metadata["sandbox"]["network"], "deny");
    assert!(ctx.project_root.join("inside.txt").exists());

    let outside = d.path().join("outside.txt");
    let cmd = json!({"command": format!("echo x > {}", outside.display())});
    let out = call(&ctx, "bash", cmd.clone()).await.unwrap();
    assert!(!outside.exists());
    assert_eq!(
        out.metadata["sandbox"]["blocked"], "write",
        "{}",
        out.metadata
    );
    assert!(
        out.output.contains("outside_sandbox: true"),
        "{}",
        out.output
    );
    let reg = ToolRegistry::builtin();
    assert_eq!(reg.unconfined("bash", &cmd, &ctx), None);

    // The escalation (the runtime asks first) runs unconfined.
    let mut esc = cmd.clone();
    esc["outside_sandbox"] = json!(true);
    assert_eq!(
        reg.unconfined("bash", &esc, &ctx),
        Some(mia_tools::Unconfined::Escalation)
    );
    let out = call(&ctx, "bash", esc).await.unwrap();
    assert!(outside.exists(), "{}", out.output);
    assert_eq!(out.metadata["sandbox"]["unconfined"], "escalated");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_read_only_agent_cannot_ask_to_leave_the_sandbox() {
    let (_d, ctx) = sandboxed_project(mia_sandbox::SandboxMode::ReadOnly, false);
    let err = call(
        &ctx,
        "bash",
        json!({"command": "touch x", "outside_sandbox": true}),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("read-only by construction"),
        "{err}"
    );
    let out = call(&ctx, "bash", json!({"command": "touch x"}))
        .await
        .unwrap();
    assert!(!ctx.project_root.join("x").exists(), "{}", out.output);
    assert!(out.output.contains("cannot write"), "{}", out.output);
}

#[tokio::test]
async fn an_unavailable_sandbox_is_reported_for_the_runtime_to_ask() {
    let (_d, mut ctx) = project();
    ctx.sandbox = mia_tools::ShellSandbox::Unavailable {
        policy: mia_sandbox::SandboxPolicy::off(),
        reason: "no Landlock".into(),
    };
    let reg = ToolRegistry::builtin();
    assert_eq!(
        reg.unconfined("bash", &json!({"command": "ls"}), &ctx),
        Some(mia_tools::Unconfined::Unavailable("no Landlock".into()))
    );
    assert_eq!(reg.unconfined("read", &json!({"path": "x"}), &ctx), None);
}

#[test]
fn write_and_edit_say_what_they_would_change_before_they_run() {
    let (_d, ctx) = project();
    write(&ctx.project_root, "a.txt", b"one\ntwo\n");
    let reg = ToolRegistry::builtin();
    let p = reg
        .proposed(
            "edit",
            &json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
            &ctx,
        )
        .unwrap();
    assert_eq!(p.path, "a.txt");
    assert_eq!(p.before.as_deref(), Some(&b"one\ntwo\n"[..]));
    assert_eq!(p.after, b"one\n2\n");
    // Nothing was written.
    assert_eq!(
        std::fs::read(ctx.project_root.join("a.txt")).unwrap(),
        b"one\ntwo\n"
    );
    // An edit that would not apply has no proposal (the run says why).
    assert!(
        reg.proposed(
            "edit",
            &json!({"path": "a.txt", "old_string": "zzz", "new_string": "y"}),
            &ctx
        )
        .is_none()
    );
    // A new file: nothing before.
    let p = reg
        .proposed(
            "write",
            &json!({"path": "new/b.txt", "content": "hi\n"}),
            &ctx,
        )
        .unwrap();
    assert_eq!(p.before, None);
    assert_eq!(p.after, b"hi\n");
    // Overwriting: the old content.
    let p = reg
        .proposed("write", &json!({"path": "a.txt", "content": "x\n"}), &ctx)
        .unwrap();
    assert_eq!(p.before.as_deref(), Some(&b"one\ntwo\n"[..]));
    // Over the cap: none.
    let big = "x".repeat(mia_tools::MAX_PROPOSED_BYTES as usize + 1);
    assert!(
        reg.proposed("write", &json!({"path": "c.txt", "content": big}), &ctx)
            .is_none()
    );
    // Other tools propose nothing.
    assert!(
        reg.proposed("bash", &json!({"command": "ls"}), &ctx)
            .is_none()
    );
}

#[tokio::test]
async fn bash_output_streams_while_the_command_runs() {
    let (_d, mut ctx) = project();
    let seen: Arc<std::sync::Mutex<Vec<(Instant, String)>>> = Arc::default();
    let s = seen.clone();
    ctx.progress = Some(mia_tools::Progress(Arc::new(move |t: &str| {
        s.lock().unwrap().push((Instant::now(), t.to_string()));
    })));
    let started = Instant::now();
    let out = call(
        &ctx,
        "bash",
        json!({"command": "echo first; sleep 1; echo second >&2; sleep 0.3; echo é"}),
    )
    .await
    .unwrap();
    let finished = Instant::now();
    let seen = seen.lock().unwrap();
    let all: String = seen.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        all, "first\nsecond\né\n",
        "stdout and stderr, whole characters"
    );
    // "first" was shown long before the command ended, not with its result.
    let (at, text) = &seen[0];
    assert_eq!(text, "first\n");
    assert!(
        finished.duration_since(*at) > Duration::from_millis(700),
        "first batch {:?} after the start, the command took {:?}",
        at.duration_since(started),
        finished.duration_since(started)
    );
    assert!(out.output.contains("first") && out.output.contains("second"));
}
