//! Real processes under the real sandbox of this machine (Linux: Landlock
//! and seccomp). Every "cannot" is checked twice: the command fails, and the
//! file it aimed at is unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use mia_sandbox::{NetworkAccess, PolicyInputs, SandboxMode, SandboxPolicy};

/// A base directory outside every temp dir (temp dirs are writable roots).
fn base() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn policy(mode: SandboxMode, network: NetworkAccess, project: &Path) -> SandboxPolicy {
    SandboxPolicy::build(
        mode,
        network,
        PolicyInputs {
            project_root: project.to_path_buf(),
            ..PolicyInputs::default()
        },
    )
}

/// Run `script` with bash under `policy` in `dir`; (success, output).
fn run(policy: &SandboxPolicy, dir: &Path, script: &str) -> (bool, String) {
    let mut cmd = mia_sandbox::command(policy, "bash", &["-c", script]).unwrap();
    let out = cmd.current_dir(dir).output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
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
    assert!(st.status.success(), "git {args:?}: {st:?}");
}

#[test]
fn the_machine_supports_the_sandbox() {
    // CI runs on machines with Landlock ABI >= 3; a silent fallback would
    // make every other test here meaningless.
    let s = mia_sandbox::support();
    assert!(s.is_available(), "{s:?}");
    assert_eq!(s.mechanism(), Some("landlock+seccomp"));
}

#[test]
fn workspace_write_confines_writes_to_the_project_and_temp() {
    let b = base();
    let project = b.path().join("project");
    let sibling = b.path().join("sibling");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&sibling).unwrap();
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Allow, &project);

    // Inside the project: create, change, rename, remove.
    let (ok, out) = run(
        &p,
        &project,
        "echo one > a.txt && echo two >> a.txt && mkdir d && mv a.txt d/b.txt && rm d/b.txt && echo kept > c.txt",
    );
    assert!(ok, "{out}");
    assert_eq!(
        std::fs::read_to_string(project.join("c.txt")).unwrap(),
        "kept\n"
    );

    // The temp dir.
    let (ok, out) = run(&p, &project, "f=$(mktemp) && echo t > \"$f\" && rm \"$f\"");
    assert!(ok, "{out}");

    // A sibling of the project.
    let (ok, out) = run(&p, &project, "echo x > ../sibling/x.txt");
    assert!(!ok, "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert!(!sibling.join("x.txt").exists());

    // /etc (this test may run as root: Landlock binds root too).
    let etc = PathBuf::from("/etc/mia-sandbox-test");
    let (ok, out) = run(&p, &project, "touch /etc/mia-sandbox-test");
    let created = etc.exists();
    let _ = std::fs::remove_file(&etc);
    assert!(!ok && !created, "{out}");

    // ~/.bashrc: opened for append, nothing written either way.
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let rc = home.join(".bashrc");
    let before = std::fs::read(&rc).ok();
    let (ok, out) = run(&p, &project, "printf '' >> ~/.bashrc");
    assert!(!ok, "{out}");
    assert_eq!(std::fs::read(&rc).ok(), before);

    // Reading outside the project still works; /dev/null is writable.
    let (ok, out) = run(
        &p,
        &project,
        "cat /etc/hostname > /dev/null && ls / > /dev/null",
    );
    assert!(ok, "{out}");
}

#[test]
fn git_commit_works_in_the_project_and_a_worktree_but_not_in_another_worktree() {
    let b = base();
    let main = b.path().join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("f.txt"), "1\n").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "init"]);
    let wa = b.path().join("wt-a");
    let wb = b.path().join("wt-b");
    git(
        &main,
        &["worktree", "add", "-q", "-b", "a", wa.to_str().unwrap()],
    );
    git(
        &main,
        &["worktree", "add", "-q", "-b", "b", wb.to_str().unwrap()],
    );

    let commit =
        "git -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -q -am change";
    // The main checkout.
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Allow, &main);
    let (ok, out) = run(&p, &main, &format!("echo 2 >> f.txt && {commit}"));
    assert!(ok, "{out}");

    // Worktree A: its own files plus the shared git dir.
    let pa = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Allow,
        PolicyInputs {
            project_root: wa.clone(),
            git_common_dir: Some(main.join(".git")),
            ..PolicyInputs::default()
        },
    );
    let (ok, out) = run(&pa, &wa, &format!("echo 3 >> f.txt && {commit}"));
    assert!(ok, "{out}");
    // ... but not worktree B, nor the main checkout's files.
    let (ok, out) = run(&pa, &wa, "echo 4 >> ../wt-b/f.txt");
    assert!(!ok, "{out}");
    assert_eq!(std::fs::read_to_string(wb.join("f.txt")).unwrap(), "1\n");
    let (ok, out) = run(&pa, &wa, "echo 4 >> ../main/f.txt");
    assert!(!ok, "{out}");
    assert_eq!(
        std::fs::read_to_string(main.join("f.txt")).unwrap(),
        "1\n2\n"
    );
}

#[test]
fn read_only_writes_nothing_but_reads_everything() {
    let b = base();
    let project = b.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "hello\n").unwrap();
    let p = policy(SandboxMode::ReadOnly, NetworkAccess::Allow, &project);
    let (ok, out) = run(&p, &project, "cat a.txt && ls -la > /dev/null");
    assert!(ok && out.contains("hello"), "{out}");
    for script in [
        "echo x > a.txt",
        "touch new.txt",
        "rm a.txt",
        "mkdir d",
        "truncate -s 0 a.txt",
        "f=$(mktemp)",
    ] {
        let (ok, out) = run(&p, &project, script);
        assert!(!ok, "{script} succeeded: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "hello\n"
    );
    assert!(!project.join("new.txt").exists() && !project.join("d").exists());
}

/// A loopback listener that answers one line to every connection.
fn listener() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut s = s;
            let _ = s.write_all(b"pong\n");
            let mut sink = [0u8; 16];
            let _ = s.read(&mut sink);
        }
    });
    port
}

#[test]
fn network_deny_blocks_a_loopback_listener_and_allow_reaches_it() {
    let b = base();
    let project = b.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let port = listener();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && head -n1 <&3");

    let allow = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Allow, &project);
    let (ok, out) = run(&allow, &project, &script);
    assert!(ok && out.contains("pong"), "{out}");

    let deny = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
    let (ok, out) = run(&deny, &project, &script);
    assert!(!ok && !out.contains("pong"), "{out}");
    assert_eq!(
        mia_sandbox::blocked(&deny, &out),
        Some(mia_sandbox::Blocked::Network),
        "{out}"
    );

    // UDP too (seccomp refuses the socket, not only TCP connects).
    let (ok, out) = run(&deny, &project, "exec 3<>/dev/udp/127.0.0.1/9");
    assert!(!ok, "{out}");
    // Unix sockets stay usable (build tools talk to local daemons through them).
    let (ok, out) = run(
        &deny,
        &project,
        "python3 -c 'import socket; a,b = socket.socketpair(); a.send(b\"u\"); print(b.recv(1).decode())' 2>&1 || echo no-python",
    );
    assert!(
        ok && (out.contains('u') || out.contains("no-python")),
        "{out}"
    );
}

#[test]
fn hidden_paths_cannot_be_read_but_can_be_listed() {
    let b = base();
    let project = b.path().join("p");
    let vault = b.path().join("vault");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("id_rsa"), "SECRET").unwrap();
    std::fs::write(b.path().join("open.txt"), "open").unwrap();
    // A link to the hidden directory does not reopen it.
    std::os::unix::fs::symlink(&vault, b.path().join("link")).unwrap();
    let p = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Allow,
        PolicyInputs {
            project_root: project.clone(),
            hidden: vec![vault.clone()],
            ..PolicyInputs::default()
        },
    );
    let (ok, out) = run(&p, &project, "cat ../vault/id_rsa");
    assert!(!ok && !out.contains("SECRET"), "{out}");
    let (ok, out) = run(&p, &project, "cat ../link/id_rsa");
    assert!(!ok && !out.contains("SECRET"), "{out}");
    let (ok, out) = run(&p, &project, "ls ../vault && cat ../open.txt");
    assert!(
        ok && out.contains("id_rsa") && out.contains("open"),
        "{out}"
    );
}

#[test]
fn off_runs_unconfined() {
    let b = base();
    let project = b.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let (ok, out) = run(&SandboxPolicy::off(), &project, "echo x > ../outside.txt");
    assert!(ok, "{out}");
    assert!(b.path().join("outside.txt").exists());
}

/// Runs `script` traced; (success, output, what it changed).
fn run_traced(
    policy: &SandboxPolicy,
    dir: &Path,
    script: &str,
) -> (bool, String, mia_sandbox::WriteSet) {
    let (mut cmd, tracer) = mia_sandbox::command_traced(policy, "bash", &["-c", script]).unwrap();
    cmd.current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let writes = tracer.expect("a tracer").start();
    let out = child.wait_with_output().unwrap();
    let set = writes.finish();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text, set)
}

#[test]
fn the_tracer_records_what_the_command_changed_and_not_what_a_person_did_meanwhile() {
    let b = base();
    let project = b.path().join("p");
    std::fs::create_dir_all(project.join("d")).unwrap();
    std::fs::write(project.join("old.txt"), "o").unwrap();
    std::fs::write(project.join("gone.txt"), "g").unwrap();
    std::fs::write(project.join("person.txt"), "1").unwrap();
    std::fs::write(project.join("read.txt"), "r").unwrap();
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Allow, &project);
    // A person edits person.txt while the command sleeps (the command waits
    // for the marker the person's edit leaves, so the order is certain).
    let person = project.join("person.txt");
    let marker = project.join("d/.edited");
    let editor = {
        let marker = marker.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            std::fs::write(&person, "2").unwrap();
            std::fs::write(&marker, "").unwrap();
        })
    };
    let script = "cat read.txt > /dev/null; \
        echo new > made.txt; echo more >> made.txt; mv old.txt d/moved.txt; rm gone.txt; \
        mkdir -p sub/deeper; ln -s made.txt link; chmod 600 made.txt; : > truncated.txt; \
        (cd sub && echo child > from-child.txt) & wait; \
        python3 -c \"open('py.txt','w').write('x')\" 2>/dev/null || echo x > py.txt; \
        for i in $(seq 1 100); do [ -e d/.edited ] && break; sleep 0.02; done";
    let (ok, out, set) = run_traced(&p, &project, script);
    editor.join().unwrap();
    assert!(ok, "{out}");
    assert!(set.complete, "{set:?}");
    let rel: Vec<String> = set
        .paths
        .iter()
        .filter_map(|x| x.strip_prefix(&project).ok())
        .map(|x| x.display().to_string())
        .collect();
    for want in [
        "made.txt",
        "old.txt",
        "d/moved.txt",
        "gone.txt",
        "sub",
        "sub/deeper",
        "link",
        "truncated.txt",
        "sub/from-child.txt",
        "py.txt",
    ] {
        assert!(rel.iter().any(|r| r == want), "{want} missing from {rel:?}");
    }
    // Read, or changed by someone else: not the command's.
    assert!(!rel.iter().any(|r| r == "read.txt"), "{rel:?}");
    assert!(
        !rel.iter().any(|r| r == "person.txt" || r == "d/.edited"),
        "{rel:?}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("person.txt")).unwrap(),
        "2"
    );
}

#[test]
fn a_traced_command_inside_a_traced_command_runs_untraced_instead_of_failing() {
    // The inner one is this test binary itself, re-run under the outer trace.
    if std::env::var_os("MIA_SANDBOX_NESTED").is_some() {
        let b = base();
        let project = b.path().join("p");
        std::fs::create_dir_all(&project).unwrap();
        let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Allow, &project);
        let (ok, out, set) = run_traced(&p, &project, "echo x > inner.txt");
        assert!(ok, "{out}");
        assert!(project.join("inner.txt").exists());
        assert!(!set.complete, "{set:?}");
        return;
    }
    let b = base();
    let outer = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Allow,
        PolicyInputs {
            project_root: PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
            ..PolicyInputs::default()
        },
    );
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "MIA_SANDBOX_NESTED=1 {} a_traced_command_inside_a_traced_command_runs_untraced_instead_of_failing --exact --nocapture",
        exe.display()
    );
    let (ok, out, set) = run_traced(&outer, b.path(), &script);
    assert!(ok && out.contains("1 passed"), "{out}");
    assert!(set.complete);
}
