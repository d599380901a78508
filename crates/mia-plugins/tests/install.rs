#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! An install that runs over its time ends with everything it started:
//! a package manager that leaves a child behind (a stand-in `npm` on PATH
//! that starts `sleep` and waits) is killed with its whole process group.

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_install_ends_its_whole_process_group() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pidfile = dir.path().join("child.pid");
    let npm = bin.join("npm");
    std::fs::write(
        &npm,
        "#!/bin/sh\nsleep 300 &\necho $! > \"$CHILD_PIDFILE\"\nwait\n",
    )
    .unwrap();
    std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut installer = mia_plugins::Installer::new(&dir.path().join("home"));
    installer.attempt_timeout = Duration::from_secs(1);
    installer.attempts = 1;
    installer.env = vec![
        (
            "PATH".into(),
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        ),
        ("CHILD_PIDFILE".into(), pidfile.display().to_string()),
    ];
    let e = installer
        .ensure("some-plugin", "^1.0.0", false, false, &|_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("network timeout"), "{e}");
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Gone (or a zombie nobody reaps here): not running.
    let running = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|r| r.trim().to_string()))
            .is_some_and(|r| !r.starts_with('Z'))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while running() {
        assert!(
            Instant::now() < deadline,
            "the install's child {pid} is still running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
