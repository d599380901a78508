//! Benchmark: creating a worktree of a large repository against plain
//! `git worktree add` in the same run, and comparing two attempts that each
//! changed 50 files. `MIA_BENCH_FILES` sets the size (default 80,000).
//! Run: `cargo bench -p mia-git --bench worktrees`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mia_git::{Cancel, CreateOptions, Repo, Settings, WatchedAttempts, Worktrees};

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@b")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@b")
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    if std::env::var_os("MIA_BENCH_TRACE").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("mia_git=debug")
            .with_writer(std::io::stderr)
            .try_init();
    }
    let n: usize = std::env::var("MIA_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(80_000);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    let t = Instant::now();
    for i in 0..n {
        let dir = root.join(format!("d{}/e{}", i % 100, (i / 100) % 40));
        if i < 4000 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            format!("line one {i}\nline two\n"),
        )
        .unwrap();
    }
    std::fs::write(root.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(root.join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(root.join(".worktreeinclude"), ".env\n").unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "big"]);
    println!(
        "== mia-git benchmark: a repository of {n} files (made in {:.1} s)",
        t.elapsed().as_secs_f64()
    );

    let wt = Worktrees::new(Repo::discover(&root).unwrap(), Settings::default());
    // `MIA_BENCH_CREATE_ROUNDS` (default 3): fewer at 500,000 files.
    let rounds: usize = std::env::var("MIA_BENCH_CREATE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(2);
    let mut plain = Vec::new();
    let mut ours = Vec::new();
    for r in 0..rounds {
        // Baseline: plain `git worktree add` of the same commit.
        let p = tmp.path().join(format!("plain{r}"));
        let t = Instant::now();
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("plain{r}"),
                p.to_str().unwrap(),
                "HEAD",
            ],
        );
        plain.push(t.elapsed());
        let t = Instant::now();
        let c = wt
            .create(
                &CreateOptions {
                    name: Some(format!("bench-{r}")),
                    base: None,
                },
                &Cancel::default(),
                &mut |_| {},
            )
            .unwrap();
        ours.push(t.elapsed());
        assert_eq!(c.included, vec![".env"]);
    }
    let (p, o) = (median(plain), median(ours));
    println!(
        "create: plain `git worktree add` {:.0} ms, mia-code create (metadata, .worktreeinclude copy, checks) {:.0} ms → {:.2}× (median of {rounds})",
        p.as_secs_f64() * 1e3,
        o.as_secs_f64() * 1e3,
        o.as_secs_f64() / p.as_secs_f64()
    );

    // Two attempts that each changed 50 files (25 of them the same files).
    let a = wt.get("bench-0").unwrap().path;
    let b = wt.get("bench-1").unwrap().path;
    for i in 0..50 {
        let rel = |k: usize| format!("d{}/e{}/f{k}.txt", k % 100, (k / 100) % 40);
        std::fs::write(a.join(rel(i * 7)), format!("A changed {i}\n")).unwrap();
        let k = if i < 25 { i * 7 } else { i * 7 + 3 };
        std::fs::write(b.join(rel(k)), format!("B changed {i}\n")).unwrap();
    }
    let mut times = Vec::new();
    let mut between = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let cmp = wt.compare("bench-0", "bench-1").unwrap();
        times.push(t.elapsed());
        between = cmp.between.len();
    }
    let scan = median(times);
    println!(
        "compare, no watcher (a fresh process: the CLI): two attempts with 50 changed files each ({between} paths between them): {:.0} ms median of 5",
        scan.as_secs_f64() * 1e3,
    );

    // A long-lived process (the app, `serve`): watchers on the attempts.
    let feed = std::sync::Arc::new(WatchedAttempts::new());
    let fed = Worktrees::new(Repo::discover(&root).unwrap(), Settings::default())
        .with_changes(feed.clone());
    let t = Instant::now();
    fed.compare("bench-0", "bench-1").unwrap();
    let first = t.elapsed();
    let t = Instant::now();
    assert!(feed.wait_started(Duration::from_secs(120)));
    let starting = t.elapsed();
    let t = Instant::now();
    fed.compare("bench-0", "bench-1").unwrap();
    let second = t.elapsed();
    println!(
        "compare with watchers: first {:.0} ms (scans; the watchers start in the background, {:.0} ms more), second {:.0} ms (scans: the reference the watchers count from)",
        first.as_secs_f64() * 1e3,
        starting.as_secs_f64() * 1e3,
        second.as_secs_f64() * 1e3
    );
    let mut times = Vec::new();
    let mut last = None;
    for round in 0..7 {
        // Each round the person (or agent) edits 10 more files in each
        // attempt, adds one and removes one.
        for i in 0..10 {
            let k = 1000 + round * 10 + i;
            let rel = format!("d{}/e{}/f{k}.txt", k % 100, (k / 100) % 40);
            std::fs::write(a.join(&rel), format!("A round {round}\n")).unwrap();
            std::fs::write(b.join(&rel), format!("B round {round}\n")).unwrap();
        }
        std::fs::write(a.join(format!("d1/new-{round}.txt")), "new\n").unwrap();
        std::fs::remove_file(b.join(format!("d2/e{round}/f{}.txt", 2 + round * 100))).unwrap();
        let t = Instant::now();
        let cmp = fed.compare("bench-0", "bench-1").unwrap();
        times.push(t.elapsed());
        last = Some(cmp);
    }
    let warm = median(times);
    let last = last.unwrap();
    // Same answer as a full scan of the same state.
    let full = wt.compare("bench-0", "bench-1").unwrap();
    assert_eq!(
        last.a.tree, full.a.tree,
        "the watched compare of A differs from a scan"
    );
    assert_eq!(
        last.b.tree, full.b.tree,
        "the watched compare of B differs from a scan"
    );
    assert_eq!(last.between, full.between);
    println!(
        "compare with watchers, after 12 more changes per attempt ({} paths between them): {:.0} ms median of 7{} — {:.1}× faster than scanning; same trees as a scan",
        last.between.len(),
        warm.as_secs_f64() * 1e3,
        if warm <= Duration::from_millis(200) {
            "  ≤ 200 ms OK"
        } else {
            "  OVER 200 ms"
        },
        scan.as_secs_f64() / warm.as_secs_f64()
    );

    // Both attempts committed (clean work trees): against git's own
    // `diff --name-status A B` plus the two attempts' `diff --numstat`.
    for (dir, _) in [(&a, "a"), (&b, "b")] {
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "attempt"]);
    }
    fed.compare("bench-0", "bench-1").unwrap();
    let base = full.base.clone();
    let (ba, bb) = ("mia-code/bench-0", "mia-code/bench-1");
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        let cmp = fed.compare("bench-0", "bench-1").unwrap();
        ours.push(t.elapsed());
        assert_eq!(cmp.between.len(), last.between.len());
        let t = Instant::now();
        git(&root, &["diff", "--name-status", ba, bb]);
        git(&root, &["diff", "--numstat", &base, ba]);
        git(&root, &["diff", "--numstat", &base, bb]);
        theirs.push(t.elapsed());
    }
    let (o, g) = (median(ours), median(theirs));
    println!(
        "compare with watchers, both attempts committed and clean: {:.1} ms vs git diff --name-status A B + two diff --numstat {:.1} ms → {:.2}× (median of 9; budget ≤ 2×)",
        o.as_secs_f64() * 1e3,
        g.as_secs_f64() * 1e3,
        o.as_secs_f64() / g.as_secs_f64()
    );
}
