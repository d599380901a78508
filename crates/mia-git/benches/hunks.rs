//! Benchmark: listing the hunks of a 2,000-file change and staging one
//! hunk, against git in the same run (`git diff` for the list, `git add -p`
//! answering "y" then "q" for staging). `MIA_BENCH_FILES` sets how many
//! files change (default 2,000). Run: `cargo bench -p mia-git --bench hunks`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mia_git::hunks::{self, Side};

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn add_p(dir: &Path) {
    let mut child = Command::new("git")
        .args(["add", "-p"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"y\nq\n").unwrap();
    assert!(child.wait().unwrap().success());
}

fn main() {
    let n: usize = std::env::var("MIA_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let body: String = (0..60).map(|l| format!("fn line_{l}() {{}}\n")).collect();
    for i in 0..n {
        let dir = root.join(format!("src/m{}", i % 40));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.rs")), &body).unwrap();
    }
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "base"]);
    // Every file gets two hunks.
    let changed = body
        .replace("fn line_3() {}", "fn line_3() { 3; }")
        .replace("fn line_50() {}", "fn line_50() { 1; }");
    for i in 0..n {
        std::fs::write(root.join(format!("src/m{}/f{i}.rs", i % 40)), &changed).unwrap();
    }

    let runs = 7;
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut count = 0;
    for _ in 0..runs {
        let t = Instant::now();
        count = hunks::list(root, Side::Unstaged).unwrap().len();
        ours.push(t.elapsed());
        let t = Instant::now();
        let out = Command::new("git")
            .args(["diff", "--no-color"])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(out.status.success());
        theirs.push(t.elapsed());
    }
    let (o, g) = (median(ours), median(theirs));
    println!(
        "hunk list, {n} changed files ({count} hunks): {:.1} ms; git diff {:.1} ms; ratio {:.2}× (budget 200 ms)",
        ms(o),
        ms(g),
        ms(o) / ms(g)
    );

    // Staging one hunk: ours, then back, against `git add -p` (y, q).
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..runs {
        let id = hunks::list(root, Side::Unstaged).unwrap()[0].id.clone();
        let t = Instant::now();
        hunks::stage(root, &id).unwrap();
        ours.push(t.elapsed());
        git(root, &["reset", "-q"]);
        let t = Instant::now();
        add_p(root);
        theirs.push(t.elapsed());
        git(root, &["reset", "-q"]);
    }
    let (o, g) = (median(ours), median(theirs));
    println!(
        "stage one hunk of {n} changed files: {:.1} ms; git add -p {:.1} ms; ratio {:.2}× (budget 50 ms)",
        ms(o),
        ms(g),
        ms(o) / ms(g)
    );
}
