#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(windows)]
//! The Windows half of "a command and everything it starts stop together":
//! a real process tree (this test binary re-run as a parent that starts a
//! grandchild, no shell involved) put in a [`Job`], then stopped by
//! `terminate` or by dropping the job (mia-code exiting). `alive` tells a
//! running process from a finished one. Runs under Wine in CI.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mia_sandbox::process::{Job, alive};

const ROLE: &str = "MIA_JOB_TEST_ROLE";

/// Entry point of the child processes; does nothing unless spawned below.
#[test]
#[ignore = "child process entry point, run by the tests in this file"]
fn job_child() {
    match std::env::var(ROLE).as_deref() {
        Ok("parent") => {
            // Start the grandchild only once told the parent is in the job.
            let mut go = String::new();
            std::io::stdin().read_line(&mut go).unwrap();
            let mut grandchild = spawn("sleeper");
            println!("GRANDCHILD {}", grandchild.id());
            // Lives as long as its grandchild (a minute, unless stopped).
            let _ = grandchild.wait();
        }
        Ok("sleeper") => std::thread::sleep(Duration::from_secs(60)),
        _ => {}
    }
}

fn spawn(role: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "job_child", "--nocapture"])
        .env(ROLE, role)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A parent in `job` with its grandchild started (the grandchild joins the
/// job because its parent is in it); their pids.
fn tree_in(job: &Job) -> (Child, u32) {
    let mut parent = spawn("parent");
    use std::os::windows::io::AsRawHandle;
    job.assign(parent.as_raw_handle()).unwrap();
    // Now the parent starts its grandchild (which joins the job with it)
    // and says which it is.
    use std::io::Write as _;
    parent.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let out = parent.stdout.take().unwrap();
    let mut grandchild = None;
    for line in BufReader::new(out).lines() {
        let line = line.unwrap();
        if let Some(pid) = line
            .split_whitespace()
            .skip_while(|w| *w != "GRANDCHILD")
            .nth(1)
        {
            grandchild = Some(pid.parse().unwrap());
            break;
        }
    }
    (parent, grandchild.expect("the parent named its grandchild"))
}

fn wait_dead(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "{what} ({pid}) still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn terminate_stops_the_command_and_what_it_started() {
    let job = Job::new().unwrap();
    let (mut parent, grandchild) = tree_in(&job);
    assert!(alive(parent.id()) && alive(grandchild));
    job.terminate();
    wait_dead(grandchild, "the grandchild");
    wait_dead(parent.id(), "the parent");
    assert!(!parent.wait().unwrap().success());
}

#[test]
fn dropping_the_job_stops_them_too() {
    let job = Job::new().unwrap();
    let (mut parent, grandchild) = tree_in(&job);
    assert!(alive(parent.id()) && alive(grandchild));
    drop(job);
    wait_dead(grandchild, "the grandchild");
    wait_dead(parent.id(), "the parent");
    let _ = parent.wait();
}

#[test]
fn alive_tells_running_from_finished() {
    assert!(alive(std::process::id()));
    let mut child = spawn("none");
    let pid = child.id();
    child.wait().unwrap();
    assert!(!alive(pid));
}
