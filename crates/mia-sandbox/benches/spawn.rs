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

fn main() {
    #[cfg(target_os = "linux")]
    bench::main();
    #[cfg(not(target_os = "linux"))]
    println!("the sandbox benchmark runs on Linux (bubblewrap)");
}

#[cfg(target_os = "linux")]
mod bench {
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
    fn once(
        policy: &SandboxPolicy,
        dir: &Path,
        program: &str,
        args: &[&str],
        trace: bool,
    ) -> Duration {
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

    pub fn main() {
        if !mia_sandbox::support().is_available() {
            println!("sandbox unavailable here: {:?}", mia_sandbox::support());
            return;
        }
        println!("mechanism: {:?}", mia_sandbox::support());
        if std::env::var_os("BENCH_PROFILE").is_some() {
            let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
            let dir = tempfile::tempdir().unwrap();
            let project = dir.path().canonicalize().unwrap();
            let p = policy(&project, &home, NetworkAccess::Ask);
            for _ in 0..3 {
                let t = Instant::now();
                let mut prep = mia_sandbox::prepare(&p, "true", &[], false).unwrap();
                let t1 = t.elapsed();
                if std::env::var_os("BENCH_ARGS").is_some() {
                    println!("{:?}", prep.command.get_args().collect::<Vec<_>>());
                }
                let mut child = prep.command.current_dir(&project).spawn().unwrap();
                let t2 = t.elapsed();
                let _l = prep.guard.take_listener();
                child.wait().unwrap();
                let t3 = t.elapsed();
                drop(prep.guard);
                let t4 = t.elapsed();
                println!(
                    "prepare {:.2} spawn {:.2} wait {:.2} drop {:.2}",
                    ms(t1),
                    ms(t2 - t1),
                    ms(t3 - t2),
                    ms(t4 - t3)
                );
            }
            return;
        }
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
        // bubblewrap's own floor on this machine: its namespaces and the
        // minimal mounts, none of the policy's (a second baseline).
        let floor: Vec<Duration> = (0..n)
            .map(|_| {
                let t = Instant::now();
                let st = std::process::Command::new("bwrap")
                    .args([
                        "--unshare-user",
                        "--unshare-pid",
                        "--unshare-ipc",
                        "--unshare-net",
                        "--die-with-parent",
                        "--new-session",
                        "--ro-bind",
                        "/",
                        "/",
                        "--dev",
                        "/dev",
                        "--proc",
                        "/proc",
                        "--",
                        "true",
                    ])
                    .status()
                    .unwrap();
                assert!(st.success());
                t.elapsed()
            })
            .collect();
        println!(
            "bwrap's floor (namespaces, /, /proc, /dev; no policy), {n} runs: p50 {:.2} ms, +{:.2} ms over unconfined",
            ms(median(floor.clone())),
            ms(median(floor)) - ms(b50)
        );
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

    /// 100 MB over loopback, as curl itself measures its transfer (spawn and
    /// sandbox set-up excluded): direct against in the sandbox through the
    /// proxy (plain HTTP forwarded, the gate allowing).
    fn proxy_throughput(sandboxed: &SandboxPolicy, project: &Path) {
        const SIZE: usize = 100 * 1024 * 1024;
        let port = serve(SIZE);
        let url = format!("http://127.0.0.1:{port}/big");
        let rt = tokio::runtime::Runtime::new().unwrap();
        let curl = [
            "-s",
            "-o",
            "/dev/null",
            "--fail",
            "-w",
            "%{speed_download}",
            url.as_str(),
        ];
        let speed = |out: std::process::Output| -> f64 {
            assert!(out.status.success(), "{out:?}");
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<f64>()
                .unwrap()
        };
        let mut direct = Vec::new();
        let mut proxied = Vec::new();
        for _ in 0..5 {
            direct.push(speed(
                std::process::Command::new("curl")
                    .args(curl)
                    .output()
                    .unwrap(),
            ));
            let mut p = mia_sandbox::prepare(sandboxed, "curl", &curl, false).unwrap();
            p.command
                .current_dir(project)
                .stdout(std::process::Stdio::piped());
            let child = p.command.spawn().unwrap();
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
            proxied.push(speed(child.wait_with_output().unwrap()));
            let _g = rt.enter();
            proxy.finish();
        }
        direct.sort_by(f64::total_cmp);
        proxied.sort_by(f64::total_cmp);
        let (d, p) = (direct[2], proxied[2]);
        println!(
            "100 MB over loopback, curl's own measure, median of 5: direct {:.0} MB/s, sandboxed through the proxy {:.0} MB/s; {:.0}% of direct",
            d / 1e6,
            p / 1e6,
            100.0 * p / d
        );
    }
}
