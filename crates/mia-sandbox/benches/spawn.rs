//! What the sandbox costs a shell command, with baselines measured in the
//! same run:
//! - `true` spawned and waited for: unconfined (the baseline) and under
//!   workspace-write (the full policy mia-code builds: credential stores and
//!   mia-code's home hidden, protected paths, sockets masked, private /tmp,
//!   network namespace with the proxy's socket);
//! - 200 file writes and removes, sandboxed and traced against sandboxed;
//! - a 100 MB download over loopback through mia-code's proxy against the
//!   same download direct.
//!
//! `cargo bench -p mia-sandbox --bench spawn` (`BENCH_RUNS` sets the runs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mia_sandbox::{NetRules, NetworkAccess, PolicyInputs, SandboxMode, SandboxPolicy};

fn runs() -> usize {
    std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p) as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One spawn-and-wait of `program args` under `policy` (the proxy's socket
/// taken and dropped, as a command without network traffic would).
fn once(policy: &SandboxPolicy, dir: &Path, program: &str, args: &[&str], trace: bool) -> Duration {
    let t = Instant::now();
    let mut p = mia_sandbox::prepare(policy, program, args, trace).unwrap();
    let tracer = p.guard.take_tracer();
    let mut child = p.command.current_dir(dir).spawn().unwrap();
    let writes = tracer.map(mia_sandbox::Tracer::start);
    let _listener = p.guard.take_listener();
    assert!(child.wait().unwrap().success());
    if let Some(w) = writes {
        assert!(w.finish().complete);
    }
    drop(p.guard);
    t.elapsed()
}

fn series(
    policy: &SandboxPolicy,
    dir: &Path,
    program: &str,
    args: &[&str],
    trace: bool,
) -> Vec<Duration> {
    (0..runs())
        .map(|_| once(policy, dir, program, args, trace))
        .collect()
}

fn policy(project: &Path, home: &Path, network: NetworkAccess) -> SandboxPolicy {
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
        ".mia-code",
        ".config/mia-code",
        ".mia-code.json",
    ]
    .iter()
    .map(|p| home.join(p))
    .collect();
    SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        network,
        PolicyInputs {
            project_root: project.to_path_buf(),
            caches: mia_sandbox::package_caches(home),
            hidden,
            homes: vec![home.to_path_buf()],
            net_rules: NetRules {
                allow_localhost: true,
                registries: true,
            },
            ..PolicyInputs::default()
        },
    )
}

fn main() {
    if !mia_sandbox::support().is_available() {
        println!("sandbox unavailable here: {:?}", mia_sandbox::support());
        return;
    }
    println!("mechanism: {:?}", mia_sandbox::support());
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap();
    let sandboxed = policy(&project, &home, NetworkAccess::Ask);
    let n = runs();
    // Warm up both paths (bwrap's probe, page cache).
    for _ in 0..5 {
        once(&SandboxPolicy::off(), &project, "true", &[], false);
        once(&sandboxed, &project, "true", &[], false);
    }
    let base = series(&SandboxPolicy::off(), &project, "true", &[], false);
    let confined = series(&sandboxed, &project, "true", &[], false);
    let (b50, c50) = (median(base.clone()), median(confined.clone()));
    println!(
        "true, {n} runs: unconfined p50 {:.2} ms (p90 {:.2}), sandboxed p50 {:.2} ms (p90 {:.2}); ratio {:.2}x, +{:.2} ms p50 per command",
        ms(b50),
        ms(percentile(base, 0.9)),
        ms(c50),
        ms(percentile(confined, 0.9)),
        c50.as_secs_f64() / b50.as_secs_f64(),
        ms(c50) - ms(b50)
    );
    // Tracing: every file-changing call is a round trip to mia-code.
    let script = "for i in $(seq 1 200); do echo $i > f$i; done; rm -f f*";
    let plain = median(series(&sandboxed, &project, "bash", &["-c", script], false));
    let traced = median(series(&sandboxed, &project, "bash", &["-c", script], true));
    println!(
        "200 file writes + removes, {n} runs: sandboxed p50 {:.2} ms, sandboxed and traced {:.2} ms, ratio {:.2}x ({:.1} µs per traced call)",
        ms(plain),
        ms(traced),
        traced.as_secs_f64() / plain.as_secs_f64(),
        (traced.as_secs_f64() - plain.as_secs_f64()) * 1e6 / 400.0
    );
    proxy_throughput(&sandboxed, &project);
}

/// A server that sends `size` bytes to each connection after its request head.
fn serve(size: usize) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let chunk = vec![b'x'; 256 * 1024];
        for s in l.incoming().flatten() {
            let chunk = chunk.clone();
            std::thread::spawn(move || {
                let mut s = s;
                let mut head = [0u8; 4096];
                let _ = s.read(&mut head);
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
                );
                let mut left = size;
                while left > 0 {
                    let n = left.min(chunk.len());
                    if s.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n;
                }
            });
        }
    });
    port
}

/// 100 MB over loopback: curl direct against curl in the sandbox through
/// the proxy (CONNECT-less plain HTTP forwarding, allowed by the gate).
fn proxy_throughput(sandboxed: &SandboxPolicy, project: &Path) {
    const SIZE: usize = 100 * 1024 * 1024;
    let port = serve(SIZE);
    let url = format!("http://127.0.0.1:{port}/big");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let curl = ["-s", "-o", "/dev/null", "--fail", url.as_str()];
    let mut direct = Vec::new();
    let mut proxied = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let st = std::process::Command::new("curl")
            .args(curl)
            .status()
            .unwrap();
        assert!(st.success());
        direct.push(t.elapsed());
        let t = Instant::now();
        let mut p = mia_sandbox::prepare(sandboxed, "curl", &curl, false).unwrap();
        let mut child = p.command.current_dir(project).spawn().unwrap();
        let listener = p.guard.take_listener().unwrap();
        let proxy = {
            let _g = rt.enter();
            mia_sandbox::proxy::Proxy::start(
                listener,
                mia_sandbox::proxy::ProxyConfig {
                    rules: sandboxed.net_rules.clone(),
                    gate: std::sync::Arc::new(mia_sandbox::proxy::FixedGate(
                        mia_sandbox::proxy::Verdict::Allow,
                    )),
                    peer: None,
                },
            )
            .unwrap()
        };
        assert!(child.wait().unwrap().success());
        proxied.push(t.elapsed());
        let _g = rt.enter();
        proxy.finish();
    }
    let (d, p) = (median(direct), median(proxied));
    let mbs = |t: Duration| SIZE as f64 / 1e6 / t.as_secs_f64();
    println!(
        "100 MB over loopback, median of 5: direct {:.0} ms ({:.0} MB/s), sandboxed through the proxy {:.0} ms ({:.0} MB/s); {:.0}% of direct",
        ms(d),
        mbs(d),
        ms(p),
        mbs(p),
        100.0 * mbs(p) / mbs(d)
    );
}
