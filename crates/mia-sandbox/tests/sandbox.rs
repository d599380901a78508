//! Real processes under the real sandbox of this machine (Linux:
//! bubblewrap). Every "cannot" is checked twice: the command fails, and the
//! file it aimed at is unchanged; and every refusal has a positive control
//! (the same script does succeed where it may). The commands are script
//! files (Python) or plain shell, never judged by a permission engine here:
//! only the OS stops them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use mia_sandbox::{Mechanism, NetworkAccess, PolicyInputs, SandboxMode, SandboxPolicy};

/// A base directory: under the system temp dir on purpose (a project under
/// /tmp must not reach its siblings).
fn base() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
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
    let prepared = mia_sandbox::prepare(policy, "bash", &["-c", script], false).unwrap();
    let mut cmd = prepared.command;
    let out = cmd.current_dir(dir).output().unwrap();
    drop(prepared.guard);
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Write `code` to `dir/name` and run it with python3: code the
/// permission engine could never read.
fn run_py(policy: &SandboxPolicy, dir: &Path, name: &str, code: &str) -> (bool, String) {
    std::fs::write(dir.join(name), code).unwrap();
    run(policy, dir, &format!("python3 {name}"))
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
fn the_machine_runs_the_full_sandbox() {
    // CI runs where bubblewrap and user namespaces work; a silent fallback
    // would make every other test here meaningless.
    let s = mia_sandbox::support();
    assert!(s.is_available(), "{s:?}");
    assert_eq!(s.mechanism(), Some(Mechanism::Bubblewrap), "{s:?}");
}

#[test]
fn workspace_write_confines_writes_to_the_project_and_its_private_tmp() {
    let b = base();
    let project = canon(b.path()).join("project");
    let sibling = canon(b.path()).join("sibling");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&sibling).unwrap();
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);

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

    // The private temp dir works; the project's siblings under /tmp are gone.
    let (ok, out) = run(
        &p,
        &project,
        "f=$(mktemp) && echo t > \"$f\" && rm \"$f\" && ls /tmp",
    );
    assert!(ok, "{out}");
    let (ok, out) = run(&p, &project, "echo x > ../sibling/x.txt");
    assert!(!ok, "{out}");
    assert!(!sibling.join("x.txt").exists());
    let (ok, _) = run(&p, &project, "ls ../sibling");
    assert!(!ok, "a sibling under /tmp is not even visible");

    // /etc (this test may run as root).
    let etc = PathBuf::from("/etc/mia-sandbox-test");
    let (ok, out) = run(&p, &project, "touch /etc/mia-sandbox-test");
    let created = etc.exists();
    let _ = std::fs::remove_file(&etc);
    assert!(!ok && !created, "{out}");

    // Reading outside the project still works; /dev/null is writable.
    let (ok, out) = run(
        &p,
        &project,
        "cat /etc/hostname > /dev/null && ls / > /dev/null && echo ok > /dev/null",
    );
    assert!(ok, "{out}");
}

#[test]
fn protected_files_cannot_be_changed_or_created_and_no_placeholder_stays() {
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    git(&project, &["init", "-q", "-b", "main"]);
    let config_before = std::fs::read(project.join(".git/config")).unwrap();
    std::fs::write(project.join(".mia-code.json"), "{}").unwrap();
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
    let code = r##"
import os, sys
results = {}
def attempt(name, fn):
    try:
        fn()
        results[name] = "WROTE"
    except OSError as e:
        results[name] = "refused %d" % e.errno
def append(path, text):
    with open(path, "a") as f:
        f.write(text)
def create(path, text):
    with open(path, "w") as f:
        f.write(text)
attempt(".git/config", lambda: append(".git/config", "[core]\n\tfsmonitor = touch pwned\n"))
attempt("hook", lambda: create(".git/hooks/pre-commit", "#!/bin/sh\ntouch pwned\n"))
attempt(".mcp.json", lambda: create(".mcp.json", '{"mcpServers": {"x": {"command": "touch"}}}'))
attempt(".mia-code.json", lambda: create(".mia-code.json", '{"x": 1}'))
attempt("mia-code.json", lambda: create("mia-code.json", "{}"))
attempt(".vscode", lambda: create(".vscode/settings.json", "{}"))
attempt(".envrc", lambda: create(".envrc", "touch pwned"))
attempt(".gitmodules", lambda: create(".gitmodules", "[submodule]"))
attempt(".claude", lambda: os.makedirs(".claude/commands"))
attempt("rename .git", lambda: os.rename(".git", "git-away"))
attempt("replace config", lambda: os.rename("other", ".git/config"))
attempt("positive control", lambda: create("a.txt", "fine"))
for k, v in results.items():
    print(k, v)
"##;
    std::fs::write(project.join("other"), "[core]\n").unwrap();
    let (_, out) = run_py(&p, &project, "x.py", code);
    assert!(out.contains("positive control WROTE"), "{out}");
    for name in [
        ".git/config",
        "hook",
        ".mcp.json",
        ".mia-code.json",
        "mia-code.json",
        ".vscode",
        ".envrc",
        ".gitmodules",
        ".claude",
        "rename .git",
        "replace config",
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.contains("refused")),
            "{name} was not refused:\n{out}"
        );
    }
    assert_eq!(
        std::fs::read(project.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!project.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(project.join(".mia-code.json")).unwrap(),
        "{}"
    );
    // No placeholder a mount needed is left behind.
    for name in [
        ".mcp.json",
        "mia-code.json",
        ".vscode",
        ".envrc",
        ".gitmodules",
        ".claude",
        ".idea",
        ".mia-code",
    ] {
        assert!(!project.join(name).exists(), "{name} was left behind");
    }
    // git itself still works for commits.
    let (ok, out) = run(
        &p,
        &project,
        "git add a.txt && git -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -qm x && git log --oneline",
    );
    assert!(ok, "{out}");
}

#[test]
fn git_commit_works_in_the_project_and_a_worktree_but_not_in_another_worktree() {
    let b = base();
    let main = canon(b.path()).join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("f.txt"), "1\n").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "init"]);
    let wa = canon(b.path()).join("wt-a");
    let wb = canon(b.path()).join("wt-b");
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
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &main);
    let (ok, out) = run(&p, &main, &format!("echo 2 >> f.txt && {commit}"));
    assert!(ok, "{out}");

    // Worktree A: its own files plus the shared git dir (its config not).
    let pa = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Deny,
        PolicyInputs {
            project_root: wa.clone(),
            git_common_dir: Some(main.join(".git")),
            ..PolicyInputs::default()
        },
    );
    let (ok, out) = run(&pa, &wa, &format!("echo 3 >> f.txt && {commit}"));
    assert!(ok, "{out}");
    let (ok, out) = run(&pa, &wa, "git config core.fsmonitor 'touch pwned'");
    assert!(!ok, "{out}");
    let (ok, out) = run(&pa, &wa, "echo 'gitdir: /tmp/evil' > .git");
    assert!(!ok, "{out}");
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
fn read_only_writes_nothing_in_the_project_but_reads_everything() {
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "hello\n").unwrap();
    let p = policy(SandboxMode::ReadOnly, NetworkAccess::Deny, &project);
    let (ok, out) = run(&p, &project, "cat a.txt && ls -la > /dev/null");
    assert!(ok && out.contains("hello"), "{out}");
    for script in [
        "echo x > a.txt",
        "touch new.txt",
        "rm a.txt",
        "mkdir d",
        "truncate -s 0 a.txt",
    ] {
        let (ok, out) = run(&p, &project, script);
        assert!(!ok, "{script} succeeded: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "hello\n"
    );
    assert!(!project.join("new.txt").exists() && !project.join("d").exists());
    // A throwaway /tmp (tests and compilers need one); nothing of it stays.
    let (ok, out) = run(&p, &project, "echo t > /tmp/scratch && cat /tmp/scratch");
    assert!(ok && out.contains('t'), "{out}");
    let (ok, _) = run(&p, &project, "cat /tmp/scratch");
    assert!(!ok, "the throwaway /tmp is new for each command");
}

#[test]
fn a_session_tmp_is_private_and_kept_between_its_commands() {
    let b = base();
    let project = canon(b.path()).join("p");
    let tmp = canon(b.path()).join("session-tmp");
    std::fs::create_dir_all(&project).unwrap();
    let p = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Deny,
        PolicyInputs {
            project_root: project.clone(),
            tmp: Some(tmp.clone()),
            ..PolicyInputs::default()
        },
    );
    let (ok, out) = run(&p, &project, "echo kept > /tmp/note && echo $TMPDIR");
    assert!(ok && out.contains("/tmp"), "{out}");
    let (ok, out) = run(&p, &project, "cat /tmp/note");
    assert!(ok && out.contains("kept"), "{out}");
    assert_eq!(std::fs::read_to_string(tmp.join("note")).unwrap(), "kept\n");
}

#[test]
fn hidden_paths_are_empty_and_mia_codes_own_files_unreadable() {
    // Outside the system temp dir when the target dir is (a clone under
    // /tmp puts it there too, and then the private /tmp hides it instead).
    let b = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let under_tmp = canon(b.path()).starts_with(canon(&std::env::temp_dir()));
    let root = canon(b.path());
    let project = root.join("p");
    let mia_home = root.join("mia-home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(mia_home.join("plugins/x")).unwrap();
    std::fs::write(mia_home.join("data.db"), "TRANSCRIPTS").unwrap();
    std::fs::write(mia_home.join("plugins/x/index.js"), "plugin").unwrap();
    let config = root.join("config.json");
    std::fs::write(&config, "{\"apiKey\": \"sk-SECRET\"}").unwrap();
    std::os::unix::fs::symlink(&mia_home, root.join("link")).unwrap();
    let p = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Deny,
        PolicyInputs {
            project_root: project.clone(),
            hidden: vec![mia_home.clone(), config.clone()],
            visible: vec![mia_home.join("plugins")],
            ..PolicyInputs::default()
        },
    );
    let code = format!(
        r#"
import os
for path in ["{db}", "{cfg}", "{link}"]:
    try:
        print(path, "READ", open(path).read())
    except OSError as e:
        print(path, "refused", e.errno)
try:
    print("listing", os.listdir("{home}"))
except OSError as e:
    print("listing", e)
print("plugin", open("{plugin}").read())
try:
    open("{home}/planted", "w").write("x")
    print("planted WROTE")
except OSError as e:
    print("planted refused", e.errno)
"#,
        db = mia_home.join("data.db").display(),
        cfg = config.display(),
        link = root.join("link/data.db").display(),
        home = mia_home.display(),
        plugin = mia_home.join("plugins/x/index.js").display(),
    );
    let (ok, out) = run_py(&p, &project, "h.py", &code);
    assert!(ok, "{out}");
    assert!(
        !out.contains("TRANSCRIPTS") && !out.contains("sk-SECRET"),
        "{out}"
    );
    assert!(!out.contains("READ"), "{out}");
    // Hidden: an empty directory with only the visible folder, or (under a
    // private /tmp) not there at all.
    assert!(
        out.contains("listing ['plugins']") || out.contains("No such file or directory"),
        "{out}"
    );
    assert!(out.contains("plugin plugin"), "{out}");
    if !under_tmp {
        assert!(out.contains("planted refused"), "{out}");
    }
    assert!(!mia_home.join("planted").exists());
}

#[test]
fn proc_shows_only_the_sandboxes_own_processes() {
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    let script = r#"
import os
env = dict(os.environ)
print("own", sorted(k for k in env if "KEY" in k or "TOKEN" in k))
print("kept", env.get("VISIBLE_SETTING"))
ppid = os.getppid()
print("ppid", ppid)
try:
    print("parent", open("/proc/%d/environ" % ppid, "rb").read().count(b"sk-test"))
except OSError as e:
    print("parent refused", e.errno)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("pids", len(pids), max(pids))
"#;
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
    std::fs::write(project.join("e.py"), script).unwrap();
    let prepared = mia_sandbox::prepare(&p, "python3", &["e.py"], false).unwrap();
    let mut cmd = prepared.command;
    // A variable the caller adds after the sandbox set the environment.
    let out = cmd
        .current_dir(&project)
        .env("VISIBLE_SETTING", "yes")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("kept yes"), "{text}");
    // A handful of processes at most: bwrap's init, python.
    let pids_line = text.lines().find(|l| l.starts_with("pids")).unwrap();
    let n: usize = pids_line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(n <= 4, "{text}");
    assert!(
        !text.contains(&format!(" {} ", std::process::id())),
        "{text}"
    );
}

#[test]
fn secret_variables_of_the_launching_process_never_arrive() {
    // A child process of this test with the secrets in its environment
    // launches the sandboxed command (the environment is read from the
    // launching process, as mia-code's would be).
    if std::env::var_os("MIA_SANDBOX_ENV_CHILD").is_some() {
        let project = PathBuf::from(std::env::var("MIA_SANDBOX_PROJECT").unwrap());
        let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
        let code = "import os\nprint(sorted(os.environ))\nprint(open('/proc/%d/environ' % os.getppid(), 'rb').read().count(b'sk-test'), 'in parent')\n";
        let (ok, out) = run_py(&p, &project, "env.py", code);
        println!("CHILD-OUT {ok} {out}");
        return;
    }
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "secret_variables_of_the_launching_process_never_arrive",
            "--exact",
            "--nocapture",
        ])
        .env("MIA_SANDBOX_ENV_CHILD", "1")
        .env("MIA_SANDBOX_PROJECT", &project)
        .env("ANTHROPIC_API_KEY", "sk-test-anthropic")
        .env("GITHUB_TOKEN", "sk-test-github")
        .env("MY_SERVICE_PASSWORD", "sk-test-pw")
        .env("PLAIN_SETTING", "visible")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains("CHILD-OUT"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("CHILD-OUT true"), "{text}");
    assert!(
        !text.contains("ANTHROPIC_API_KEY") && !text.contains("GITHUB_TOKEN"),
        "{text}"
    );
    assert!(!text.contains("MY_SERVICE_PASSWORD"), "{text}");
    assert!(text.contains("PLAIN_SETTING"), "{text}");
    assert!(text.contains("0 in parent"), "{text}");
}

#[test]
fn unix_sockets_outside_the_project_are_unreachable_unless_allowed() {
    let b = base();
    let root = canon(b.path());
    let project = root.join("p");
    let outside = root.join("outside");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // Sockets this test listens on: one outside the project (a tmux or
    // docker socket's stand-in), one inside.
    let serve = |path: PathBuf| {
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let mut s = s;
                let _ = s.write_all(b"hello from outside\n");
            }
        });
    };
    // Outside the temp dirs, so the private /tmp is not what hides it.
    let far = lasting_socket_dir().join("tmux.sock");
    serve(far.clone());
    serve(project.join("inside.sock"));
    let code = format!(
        r#"
import socket
for path in ["{far}", "inside.sock"]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print(path, "CONNECTED", s.recv(100))
    except OSError as e:
        print(path, "refused", e.errno)
"#,
        far = far.display()
    );
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
    let (ok, out) = run_py(&p, &project, "s.py", &code);
    assert!(ok, "{out}");
    assert!(out.contains(&format!("{} refused", far.display())), "{out}");
    assert!(out.contains("inside.sock CONNECTED"), "{out}");
    let _ = outside;

    // sandbox.unixSockets lets one through.
    let allowed = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Deny,
        PolicyInputs {
            project_root: project.clone(),
            unix_sockets: vec![far.clone()],
            ..PolicyInputs::default()
        },
    );
    let (ok, out) = run_py(&allowed, &project, "s.py", &code);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("{} CONNECTED", far.display())),
        "{out}"
    );
}

#[test]
fn metadata_changes_and_devices_outside_fail_also_as_root() {
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    let outside_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = canon(outside_dir.path()).join("victim.txt");
    std::fs::write(&outside, "v").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).unwrap();
    let code = format!(
        r#"
import os, stat
def attempt(name, fn):
    try:
        fn(); print(name, "DONE")
    except OSError as e:
        print(name, "refused", e.errno)
attempt("chmod", lambda: os.chmod("{victim}", 0o777))
attempt("utime", lambda: os.utime("{victim}", (0, 0)))
attempt("mknod", lambda: os.mknod("blk", 0o600 | stat.S_IFBLK, os.makedev(8, 0)))
attempt("chmod-inside", lambda: (open("mine", "w").close(), os.chmod("mine", 0o600)))
print("caps", [l for l in open("/proc/self/status") if l.startswith("CapEff")])
"#,
        victim = outside.display()
    );
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
    let (ok, out) = run_py(&p, &project, "m.py", &code);
    assert!(ok, "{out}");
    assert!(out.contains("chmod refused"), "{out}");
    assert!(out.contains("utime refused"), "{out}");
    assert!(out.contains("mknod refused"), "{out}");
    assert!(out.contains("chmod-inside DONE"), "{out}");
    assert!(out.contains("CapEff:\\t0000000000000000"), "{out}");
    let mode = std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    assert!(!project.join("blk").exists());
}

/// A loopback listener on the host that answers one line to every connection.
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
fn the_hosts_loopback_is_unreachable_and_the_sandboxes_own_works() {
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    let port = listener();
    let code = format!(
        r#"
import socket, threading
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("127.0.0.1", {port}))
    print("host", "CONNECTED", s.recv(10))
except OSError as e:
    print("host refused", e)
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
def serve():
    c, _ = srv.accept(); c.send(b"own"); c.close()
threading.Thread(target=serve).start()
c = socket.create_connection(srv.getsockname(), timeout=3)
print("own", c.recv(10))
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b"x", ("8.8.8.8", 53)); print("udp SENT")
except OSError as e:
    print("udp refused", e.errno)
"#
    );
    for network in [NetworkAccess::Deny, NetworkAccess::Ask] {
        let p = policy(SandboxMode::WorkspaceWrite, network, &project);
        let (ok, out) = run_py(&p, &project, "n.py", &code);
        assert!(ok, "{out}");
        assert!(
            out.contains("host refused") && !out.contains("pong"),
            "{network:?}: {out}"
        );
        assert!(out.contains("own b'own'"), "{network:?}: {out}");
        assert!(out.contains("udp refused"), "{network:?}: {out}");
    }
}

#[test]
fn the_command_has_no_controlling_terminal_and_cannot_type_into_one() {
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    let code = r#"
import os, fcntl, termios
try:
    os.open("/dev/tty", os.O_RDWR); print("tty OPENED")
except OSError as e:
    print("tty refused", e.errno)
print("sid", os.getsid(0) == os.getpid() or os.getsid(0) != os.getpgrp() or "leader")
m, s = os.openpty()
try:
    fcntl.ioctl(s, termios.TIOCSTI, b"x"); print("tiocsti DONE")
except OSError as e:
    print("tiocsti refused", e.errno)
"#;
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
    let (ok, out) = run_py(&p, &project, "t.py", code);
    assert!(ok, "{out}");
    assert!(out.contains("tty refused"), "{out}");
    assert!(out.contains("tiocsti refused"), "{out}");
}

#[test]
fn off_runs_unconfined() {
    let b = base();
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(&project).unwrap();
    let (ok, out) = run(&SandboxPolicy::off(), &project, "echo x > ../outside.txt");
    assert!(ok, "{out}");
    assert!(canon(b.path()).join("outside.txt").exists());
}

/// Runs `script` traced; (success, output, what it changed).
fn run_traced(
    policy: &SandboxPolicy,
    dir: &Path,
    script: &str,
) -> (bool, String, mia_sandbox::WriteSet) {
    let mut prepared = mia_sandbox::prepare(policy, "bash", &["-c", script], true).unwrap();
    let tracer = prepared.guard.take_tracer();
    let mut cmd = prepared.command;
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
    let project = canon(b.path()).join("p");
    std::fs::create_dir_all(project.join("d")).unwrap();
    std::fs::write(project.join("old.txt"), "o").unwrap();
    std::fs::write(project.join("gone.txt"), "g").unwrap();
    std::fs::write(project.join("person.txt"), "1").unwrap();
    std::fs::write(project.join("read.txt"), "r").unwrap();
    let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
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
        let project = canon(b.path()).join("p");
        std::fs::create_dir_all(&project).unwrap();
        let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny, &project);
        let (ok, out, set) = run_traced(&p, &project, "echo x > inner.txt");
        assert!(ok, "{out}");
        assert!(project.join("inner.txt").exists());
        assert!(!set.complete, "{set:?}");
        return;
    }
    let b = base();
    let exe = std::env::current_exe().unwrap();
    let outer = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Deny,
        PolicyInputs {
            project_root: canon(b.path()),
            // The test binary itself runs inside (its folder may be under /tmp).
            writable: vec![exe.parent().unwrap().to_path_buf()],
            ..PolicyInputs::default()
        },
    );
    let script = format!(
        "MIA_SANDBOX_NESTED=1 {} a_traced_command_inside_a_traced_command_runs_untraced_instead_of_failing --exact --nocapture",
        exe.display()
    );
    let (ok, out, set) = run_traced(&outer, &canon(b.path()), &script);
    assert!(ok && out.contains("1 passed"), "{out}");
    assert!(set.complete);
}

/// A directory for a listening socket that stays for the whole test run:
/// every sandbox started meanwhile (other tests run in parallel) masks the
/// sockets the kernel lists, and one whose directory vanished in the
/// instant a sandbox starts makes bubblewrap fail to set it up. The socket
/// closes with this process; the directory is swept after an hour.
fn lasting_socket_dir() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sockets");
    std::fs::create_dir_all(&root).unwrap();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|d| d.as_secs() > 3600));
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let dir = tempfile::Builder::new().tempdir_in(&root).unwrap().keep();
    dir.canonicalize().unwrap()
}
