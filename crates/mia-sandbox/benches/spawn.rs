//! What the sandbox costs a shell command: `bash -c true` spawned and
//! waited for, unconfined (the baseline, measured in the same run) and under
//! workspace-write with the network denied and the credential stores of the
//! real home hidden (the grant list walked from `/` for every command, as the
//! bash tool does). Reported as medians and their ratio.
//!
//! `cargo bench -p mia-sandbox --bench spawn`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mia_sandbox::{NetworkAccess, PolicyInputs, SandboxMode, SandboxPolicy};

const RUNS: usize = 200;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(policy: &SandboxPolicy) -> Duration {
    let mut v = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let st = mia_sandbox::command(policy, "bash", &["-c", "true"])
            .unwrap()
            .status()
            .unwrap();
        assert!(st.success());
        v.push(t.elapsed());
    }
    median(v)
}

#[cfg(target_os = "linux")]
fn time_traced(policy: &SandboxPolicy, script: &str) -> Duration {
    let mut v = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let (mut cmd, tracer) =
            mia_sandbox::command_traced(policy, "bash", &["-c", script]).unwrap();
        let mut child = cmd.spawn().unwrap();
        let writes = tracer.map(mia_sandbox::Tracer::start);
        assert!(child.wait().unwrap().success());
        if let Some(w) = writes {
            assert!(w.finish().complete);
        }
        v.push(t.elapsed());
    }
    median(v)
}

#[cfg(target_os = "linux")]
fn time_script(policy: &SandboxPolicy, script: &str) -> Duration {
    let mut v = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let st = mia_sandbox::command(policy, "bash", &["-c", script])
            .unwrap()
            .status()
            .unwrap();
        assert!(st.success());
        v.push(t.elapsed());
    }
    median(v)
}

fn main() {
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let project = std::env::current_dir().unwrap();
    // Credential-store paths as mia-core passes them (a representative set).
    let hidden: Vec<PathBuf> = [
        ".ssh",
        ".aws",
        ".azure",
        ".config/gcloud",
        ".config/gh",
        ".netrc",
        ".git-credentials",
        ".docker/config.json",
        ".kube",
        ".gnupg",
        ".password-store",
        ".npmrc",
        ".pypirc",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".local/share/keyrings",
        ".mozilla",
        ".config/google-chrome",
        ".config/chromium",
        ".mia-code/credentials.json",
        ".mia-code/server.json",
    ]
    .iter()
    .map(|p| home.join(p))
    .collect();
    let sandboxed = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Deny,
        PolicyInputs {
            project_root: project,
            caches: mia_sandbox::package_caches(&home),
            hidden,
            ..PolicyInputs::default()
        },
    );
    if !mia_sandbox::support().is_available() {
        println!("sandbox unavailable here: {:?}", mia_sandbox::support());
        return;
    }
    // Warm up both paths.
    let _ = time(&SandboxPolicy::off());
    let base = time(&SandboxPolicy::off());
    let confined = time(&sandboxed);
    println!(
        "bash -c true, median of {RUNS}: unconfined {:.2} ms, sandboxed {:.2} ms, ratio {:.2}x (+{:.2} ms per command)",
        base.as_secs_f64() * 1e3,
        confined.as_secs_f64() * 1e3,
        confined.as_secs_f64() / base.as_secs_f64(),
        (confined.as_secs_f64() - base.as_secs_f64()) * 1e3
    );
    #[cfg(target_os = "linux")]
    traced(&sandboxed);
}

/// Tracing (Linux only): every file-changing call is a round trip to mia-code.
#[cfg(target_os = "linux")]
fn traced(sandboxed: &SandboxPolicy) {
    // On tmpfs when there is one: disk writes would drown the difference.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let script = format!(
        "cd {} && for i in $(seq 1 200); do echo $i > f$i; done; rm -f f*",
        dir.path().display()
    );
    let plain = time_script(sandboxed, &script);
    let traced = time_traced(sandboxed, &script);
    println!(
        "200 file writes + removes, median of {RUNS}: sandboxed {:.2} ms, sandboxed and traced {:.2} ms, ratio {:.2}x ({:.1} µs per traced call)",
        plain.as_secs_f64() * 1e3,
        traced.as_secs_f64() * 1e3,
        traced.as_secs_f64() / plain.as_secs_f64(),
        (traced.as_secs_f64() - plain.as_secs_f64()) * 1e6 / 400.0
    );
}
