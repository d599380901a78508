//! The fallback where user namespaces are off (Ubuntu's AppArmor
//! restriction, some containers), forced for this test binary with
//! `MIA_CODE_SANDBOX_NO_USERNS`: Landlock and seccomp, capabilities dropped.
//! Weaker than bubblewrap, and it says so; what it does hold is checked with
//! code no engine reads (a Python script). Its own test binary: the
//! variable is process-wide.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(unsafe_code)]

use mia_sandbox::{Mechanism, NetworkAccess, PolicyInputs, SandboxMode, SandboxPolicy};

#[test]
fn without_user_namespaces_landlock_holds_what_it_can_and_names_what_it_cannot() {
    // SAFETY: the only test in this binary; no other thread reads the environment yet.
    unsafe { std::env::set_var(mia_sandbox::NO_USERNS_ENV, "1") };
    let s = mia_sandbox::support();
    assert_eq!(s.mechanism(), Some(Mechanism::Landlock), "{s:?}");
    let mia_sandbox::Support::Available { detail, .. } = &s else {
        panic!("{s:?}")
    };
    assert!(detail.contains(mia_sandbox::NO_USERNS_ENV), "{detail}");
    assert!(!Mechanism::Landlock.is_full());
    assert!(
        Mechanism::Landlock
            .limits()
            .iter()
            .any(|l| l.contains("protected paths"))
    );

    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = base.path().canonicalize().unwrap();
    let project = root.join("p");
    let vault = root.join("vault");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("secret"), "SECRET").unwrap();
    std::fs::write(root.join("outside.txt"), "v").unwrap();
    let sock = lasting_socket_dir().join("s.sock");
    let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            drop(s)
        }
    });
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let policy = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Ask,
        PolicyInputs {
            project_root: project.clone(),
            hidden: vec![vault.clone()],
            ..PolicyInputs::default()
        },
    );
    let code = format!(
        r#"
import os, socket, stat, fcntl, termios, tempfile
def t(name, fn):
    try:
        fn(); print(name, "DID")
    except OSError as e:
        print(name, "refused", e.errno)
t("project", lambda: open("made.txt", "w").write("ok"))
t("tmpdir", lambda: tempfile.mkstemp())
t("outside", lambda: open("{root}/outside.txt", "a").write("x"))
t("tmp", lambda: open("/tmp/mia-fallback-test", "w").write("x"))
t("secret", lambda: open("{vault}/secret").read())
t("unix", lambda: socket.socket(socket.AF_UNIX).connect("{sock}"))
t("tcp", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=3))
t("mknod", lambda: os.mknod("blk", 0o600 | stat.S_IFBLK, os.makedev(8, 0)))
m, s = os.openpty()
t("tiocsti", lambda: fcntl.ioctl(s, termios.TIOCSTI, b"x"))
print("caps", [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")])
"#,
        root = root.display(),
        vault = vault.display(),
        sock = sock.display(),
    );
    std::fs::write(project.join("x.py"), code).unwrap();
    let p = mia_sandbox::prepare(&policy, "python3", &["x.py"], false).unwrap();
    assert_eq!(p.guard.mechanism(), Some(Mechanism::Landlock));
    let mut cmd = p.command;
    let out = cmd.current_dir(&project).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for (name, want) in [
        ("project", "DID"),
        ("tmpdir", "DID"),
        ("outside", "refused"),
        ("tmp", "refused"),
        ("secret", "refused"),
        ("unix", "refused"),
        ("tcp", "refused"),
        ("mknod", "refused"),
        ("tiocsti", "refused"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(name) && l.contains(want)),
            "{name} should be {want}:\n{text}"
        );
    }
    assert!(text.contains("caps ['0000000000000000']"), "{text}");
    assert_eq!(
        std::fs::read_to_string(root.join("outside.txt")).unwrap(),
        "v"
    );
    assert!(!std::path::Path::new("/tmp/mia-fallback-test").exists());
    drop(p.guard);
    drop(tcp);
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
