//! Capture benchmark (issue 7). Not a test: run with
//! `cargo bench -p mia-snapshot --bench capture` (MIA_BENCH_FILES=80000 by
//! default). Builds a synthetic tree in a temp dir and measures our captures
//! against OpenCode's baseline, `git --git-dir=<snap> --work-tree=<proj> add
//! -A` + `git write-tree`, in the same run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mia_snapshot::{CaptureContext, ProjectWatcher, SnapshotConfig, SnapshotRepo};

/// Every bench project's snapshot store lives under one temp dir.
static STORE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();

/// The store root, handed to child processes (fresh-process captures must
/// find the same store, as a CLI call would).
fn store_root() -> PathBuf {
    match std::env::var_os("MIA_BENCH_STORE") {
        Some(p) => PathBuf::from(p),
        None => STORE
            .get_or_init(|| tempfile::tempdir().unwrap())
            .path()
            .to_path_buf(),
    }
}

fn cfg() -> SnapshotConfig {
    cfg_at(&store_root())
}

fn cfg_at(store: &Path) -> SnapshotConfig {
    SnapshotConfig {
        time_budget: Duration::from_secs(600),
        store_root: Some(store.to_path_buf()),
        ..SnapshotConfig::default()
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.invalid")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `files` files in about files/16 directories (two levels).
fn generate(root: &Path, files: usize) -> Vec<String> {
    let dirs = (files / 16).max(1);
    let top = ((dirs as f64).sqrt() as usize).max(1);
    let mut paths = Vec::with_capacity(files);
    for i in 0..files {
        let d = i % dirs;
        let rel = format!("d{:03}/s{:04}/file{i}.txt", d % top, d);
        paths.push(rel);
    }
    for (i, rel) in paths.iter().enumerate() {
        let p = root.join(rel);
        if i % 16 == 0 || !p.parent().unwrap().exists() {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        }
        std::fs::write(
            &p,
            format!("file {i}\nline two of {rel}\n{}\n", "x".repeat(i % 200)),
        )
        .unwrap();
    }
    std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    paths
}

/// A Chromium-like tree: `files` files about 3 KB each (~1.5 GB at
/// 500,000), 6 to 9 directory levels deep, ~25 files per directory.
fn generate_deep(root: &Path, files: usize) -> Vec<String> {
    let mut paths = Vec::with_capacity(files);
    let body = "// some source line of a large project, about sixty bytes\n".repeat(50);
    for i in 0..files {
        let d = i / 25;
        let depth = 6 + d % 4;
        let mut rel = String::new();
        let mut k = d;
        for level in 0..depth {
            rel.push_str(&format!("l{level}_{}/", k % 12));
            k /= 12;
        }
        rel.push_str(&format!("src{i}.cc"));
        paths.push(rel);
    }
    for (i, rel) in paths.iter().enumerate() {
        let p = root.join(rel);
        if i % 25 == 0 {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        }
        std::fs::write(&p, format!("// {rel}\n{body}")).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "out/\n*.log\n").unwrap();
    paths
}

/// `MIA_BENCH_CHROMIUM=1`: the first snapshot of a large committed
/// checkout, and a step's snapshot there, against `git add -A` +
/// `write-tree` into a separate store.
fn chromium_like(n: usize) {
    let gtmp = tempfile::tempdir().unwrap();
    let gproj = gtmp.path().canonicalize().unwrap();
    let t = Instant::now();
    let paths = generate_deep(&gproj, n);
    let bytes: u64 = paths
        .iter()
        .take(1000)
        .map(|p| std::fs::metadata(gproj.join(p)).unwrap().len())
        .sum::<u64>()
        * (n as u64)
        / 1000;
    println!(
        "# Chromium-like checkout: {n} files, ~{:.2} GB, 6-9 levels; generated in {}",
        bytes as f64 / 1e9,
        ms(t.elapsed())
    );
    let t = Instant::now();
    git(&gproj, &["init", "-q"]);
    git(&gproj, &["add", "-A"]);
    git(&gproj, &["commit", "-qm", "checkout"]);
    println!("committed with its index in {}", ms(t.elapsed()));
    let base = Baseline::new(&gproj);
    let (cold, tree) = base.snapshot(&gproj);
    let stores = tempfile::tempdir().unwrap();
    let mut times = Vec::new();
    for i in 0..3 {
        let t = Instant::now();
        let mut repo =
            SnapshotRepo::open(&gproj, cfg_at(&stores.path().join(i.to_string()))).unwrap();
        let snap = repo.capture(&CaptureContext::default(), None).unwrap();
        times.push(t.elapsed());
        assert_eq!(snap.hash, tree, "seeded tree must equal git's");
    }
    let first = p50(times);
    println!(
        "first snapshot: baseline (git add -A + write-tree into a separate store, cold) {} vs ours seeded from the index (p50 of 3, store created) {} → {:.1}× faster; budget ≤ 5 s {}",
        ms(cold),
        ms(first),
        cold.as_secs_f64() / first.as_secs_f64(),
        if first <= Duration::from_secs(5) {
            "OK"
        } else {
            "MISSED"
        }
    );
    let mut repo = SnapshotRepo::open(&gproj, cfg_at(&stores.path().join("2"))).unwrap();
    let mut steps = Vec::new();
    let mut base_steps = Vec::new();
    for r in 0..7 {
        let ch = changed(&paths, 500 + r);
        touch(&gproj, &ch, 500 + r);
        let rel: Vec<PathBuf> = ch.iter().map(PathBuf::from).collect();
        let t = Instant::now();
        repo.capture(&CaptureContext::default(), Some(&rel))
            .unwrap();
        steps.push(t.elapsed());
        if r < 3 {
            base_steps.push(base.snapshot(&gproj).0);
        }
    }
    let step = p50(steps);
    let base_step = p50(base_steps);
    println!(
        "a step's snapshot there (10 known paths, in-process), p50 of 7: {} vs baseline warm {} (p50 of 3) → {:.0}× faster; budget ≤ 50 ms {}",
        ms(step),
        ms(base_step),
        base_step.as_secs_f64() / step.as_secs_f64(),
        if step <= Duration::from_millis(50) {
            "OK"
        } else {
            "MISSED"
        }
    );
}

fn touch(root: &Path, paths: &[String], round: usize) {
    for p in paths {
        let f = root.join(p);
        let mut s = std::fs::read_to_string(&f).unwrap_or_default();
        s.push_str(&format!("edit {round}\n"));
        std::fs::write(f, s).unwrap();
    }
}

fn changed(paths: &[String], round: usize) -> Vec<String> {
    (0..10)
        .map(|k| paths[(round * 7919 + k * 104_729) % paths.len()].clone())
        .collect()
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

struct Baseline {
    gd: tempfile::TempDir,
}

impl Baseline {
    fn new(proj: &Path) -> Self {
        let gd = tempfile::tempdir().unwrap();
        let b = Self { gd };
        b.run(proj, &["init", "-q"]);
        std::fs::write(b.gd.path().join("info/exclude"), ".mia-code/\n").unwrap();
        b
    }
    fn run(&self, proj: &Path, args: &[&str]) -> String {
        let mut a = vec![
            "--git-dir",
            self.gd.path().to_str().unwrap(),
            "--work-tree",
            proj.to_str().unwrap(),
        ];
        a.extend_from_slice(args);
        git(proj, &a)
    }
    fn snapshot(&self, proj: &Path) -> (Duration, String) {
        let t = Instant::now();
        self.run(proj, &["add", "-A"]);
        let tree = self.run(proj, &["write-tree"]).trim().to_string();
        (t.elapsed(), tree)
    }
}

/// One capture in a fresh process (what a CLI call or a cold start costs).
fn child_capture(proj: &Path, paths: Option<&[String]>) -> Duration {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.env("MIA_BENCH_STORE", store_root())
        .arg("--child-capture")
        .arg(proj);
    if let Some(ps) = paths {
        cmd.args(ps);
    }
    let t = Instant::now();
    let out = cmd.output().unwrap();
    let el = t.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    el
}

fn child_main(args: &[String]) {
    if std::env::var_os("MIA_BENCH_TRACE").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("mia_snapshot=debug")
            .with_writer(std::io::stderr)
            .try_init();
    }
    let proj = PathBuf::from(&args[0]);
    let paths: Vec<PathBuf> = args[1..].iter().map(PathBuf::from).collect();
    let mut repo = SnapshotRepo::open(&proj, cfg()).unwrap();
    let snap = repo
        .capture(
            &CaptureContext::default(),
            if paths.is_empty() { None } else { Some(&paths) },
        )
        .unwrap();
    println!("{}", snap.hash);
}

fn known_paths_in_process(proj: &Path, paths: &[String], rounds: usize, offset: usize) -> Duration {
    let mut repo = SnapshotRepo::open(proj, cfg()).unwrap();
    let mut times = Vec::new();
    for r in 0..rounds {
        let ch = changed(paths, offset + r);
        touch(proj, &ch, offset + r);
        let ps: Vec<PathBuf> = ch.iter().map(PathBuf::from).collect();
        let t = Instant::now();
        repo.capture(&CaptureContext::default(), Some(&ps)).unwrap();
        times.push(t.elapsed());
    }
    p50(times)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child-loop") {
        // --child-loop DIR N PATH...: N in-process captures of PATHs, each
        // after appending a line to them.
        let proj = PathBuf::from(&args[1]);
        let n: usize = args[2].parse().unwrap();
        let paths: Vec<PathBuf> = args[3..].iter().map(PathBuf::from).collect();
        let mut repo = SnapshotRepo::open(&proj, cfg()).unwrap();
        let mut times = Vec::new();
        for r in 0..n {
            for p in &paths {
                let f = proj.join(p);
                let mut s = std::fs::read_to_string(&f).unwrap_or_default();
                s.push_str(&format!("loop {r}\n"));
                std::fs::write(f, s).unwrap();
            }
            let t = Instant::now();
            repo.capture(&CaptureContext::default(), Some(&paths))
                .unwrap();
            times.push(t.elapsed());
        }
        println!("{:?}", times.iter().map(|t| ms(*t)).collect::<Vec<_>>());
        return;
    }
    if args.first().map(String::as_str) == Some("--child-capture") {
        child_main(&args[1..]);
        return;
    }
    let n: usize = std::env::var("MIA_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(80_000);
    if std::env::var_os("MIA_BENCH_CHROMIUM").is_some() {
        chromium_like(n);
        return;
    }
    let rounds = 7;
    println!(
        "# mia-snapshot capture benchmark: {n} files, ~{} dirs, 10 files changed per round",
        n / 16
    );

    // ---- A plain (non-git) project -------------------------------------
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().canonicalize().unwrap();
    let t = Instant::now();
    let paths = generate(&proj, n);
    println!("generated tree in {}", ms(t.elapsed()));

    let base = Baseline::new(&proj);
    let (cold_base, base_tree) = base.snapshot(&proj);
    println!(
        "baseline first snapshot (git add -A + write-tree, cold): {}",
        ms(cold_base)
    );

    let mut repo = SnapshotRepo::open(&proj, cfg()).unwrap();
    let t = Instant::now();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    let cold_ours = t.elapsed();
    assert_eq!(snap.hash, base_tree, "our tree must equal git's");
    println!(
        "ours first snapshot, not a git project (hash every file): {} ({:.2}x baseline)",
        ms(cold_ours),
        cold_base.as_secs_f64() / cold_ours.as_secs_f64()
    );
    drop(repo);

    let mut base_times = Vec::new();
    let mut scan_times = Vec::new();
    // The runtime keeps one SnapshotRepo per project open (stat cache in memory).
    let mut live = SnapshotRepo::open(&proj, cfg()).unwrap();
    let mut scan_child = Vec::new();
    let mut known_child = Vec::new();
    for r in 0..rounds {
        // Baseline: 10 changed files, add -A + write-tree.
        let ch = changed(&paths, 100 + r);
        touch(&proj, &ch, 100 + r);
        let (bt, btree) = base.snapshot(&proj);
        base_times.push(bt);
        // Ours, full scan (bash) in-process on the same state.
        let t = Instant::now();
        let s = live.capture(&CaptureContext::default(), None).unwrap();
        scan_times.push(t.elapsed());
        assert_eq!(s.hash, btree, "full scan tree must equal git's");
        // Full scan in a fresh process, after another 10 edits.
        let ch = changed(&paths, 200 + r);
        touch(&proj, &ch, 200 + r);
        scan_child.push(child_capture(&proj, None));
        // Known paths in a fresh process.
        let ch = changed(&paths, 300 + r);
        touch(&proj, &ch, 300 + r);
        known_child.push(child_capture(&proj, Some(&ch)));
    }
    // A long-lived session: the watcher narrows a full scan (bash) to what
    // changed.
    let watcher = ProjectWatcher::start(&proj, live.config().excluded_dirs.clone()).unwrap();
    let _ = watcher.take_changes();
    live.capture(&CaptureContext::default(), None).unwrap();
    let mut watched_times = Vec::new();
    let mut watched_base = Vec::new();
    for r in 0..rounds {
        let ch = changed(&paths, 600 + r);
        touch(&proj, &ch, 600 + r);
        let t = Instant::now();
        let s = live
            .capture_with_watcher(&CaptureContext::default(), &watcher)
            .unwrap();
        watched_times.push(t.elapsed());
        let (bt, btree) = base.snapshot(&proj);
        watched_base.push(bt);
        assert_eq!(s.hash, btree, "watched capture tree must equal git's");
    }
    drop(watcher);
    let watched = p50(watched_times);
    let watched_base = p50(watched_base);
    println!(
        "ours full scan narrowed by the watcher (long-lived session), p50: {} vs baseline {} ({:.1}x faster; target ≥ 5x)",
        ms(watched),
        ms(watched_base),
        watched_base.as_secs_f64() / watched.as_secs_f64()
    );
    let base_p50 = p50(base_times);
    let scan_p50 = p50(scan_times);
    let scan_child_p50 = p50(scan_child);
    let known_child_p50 = p50(known_child);
    let known_in = known_paths_in_process(&proj, &paths, 21, 400);
    let ratio = |ours: Duration| base_p50.as_secs_f64() / ours.as_secs_f64();
    println!(
        "baseline warm (git add -A + write-tree), p50: {}",
        ms(base_p50)
    );
    println!(
        "ours full scan in-process, p50: {} ({:.2}x faster than baseline)",
        ms(scan_p50),
        ratio(scan_p50)
    );
    println!(
        "ours full scan, fresh process, p50: {} ({:.2}x)",
        ms(scan_child_p50),
        ratio(scan_child_p50)
    );
    println!(
        "ours known paths, fresh process, p50: {} ({:.2}x)",
        ms(known_child_p50),
        ratio(known_child_p50)
    );
    println!(
        "ours known paths, in-process, p50: {} ({:.2}x)",
        ms(known_in),
        ratio(known_in)
    );

    // ---- Cost grows with changed files, not tree size --------------------
    let small = tempfile::tempdir().unwrap();
    let sproj = small.path().canonicalize().unwrap();
    let spaths = generate(&sproj, 1000);
    let mut srepo = SnapshotRepo::open(&sproj, cfg()).unwrap();
    srepo.capture(&CaptureContext::default(), None).unwrap();
    drop(srepo);
    let small_known = known_paths_in_process(&sproj, &spaths, 21, 500);
    println!(
        "known paths in-process, 1k-file tree: {} vs {n}-file tree: {} (ratio {:.2})",
        ms(small_known),
        ms(known_in),
        known_in.as_secs_f64() / small_known.as_secs_f64()
    );

    // ---- First snapshot of a git project (seeded from its index) --------
    let gtmp = tempfile::tempdir().unwrap();
    let gproj = gtmp.path().canonicalize().unwrap();
    generate(&gproj, n);
    git(&gproj, &["init", "-q"]);
    git(&gproj, &["add", "-A"]);
    git(&gproj, &["commit", "-qm", "bench"]);
    let gbase = Baseline::new(&gproj);
    let (gcold, gtree) = gbase.snapshot(&gproj);
    let mut seeded_times = Vec::new();
    let mut gs = None;
    let gstore = tempfile::tempdir().unwrap();
    for i in 0..3 {
        // A new, empty store each time: a first snapshot.
        let store = gstore.path().join(i.to_string());
        let t = Instant::now();
        let mut grepo = SnapshotRepo::open(&gproj, cfg_at(&store)).unwrap();
        let snap = grepo.capture(&CaptureContext::default(), None).unwrap();
        seeded_times.push(t.elapsed());
        assert_eq!(snap.hash, gtree, "seeded tree must equal git's");
        gs = Some(snap);
    }
    let gs = gs.unwrap();
    let seeded = p50(seeded_times);
    let mut grepo = SnapshotRepo::open(&gproj, cfg_at(&gstore.path().join("2"))).unwrap();
    println!(
        "first snapshot of a git project: baseline cold {} vs ours seeded (p50 of 3, incl. repo init) {} ({:.1}x), mode {:?}",
        ms(gcold),
        ms(seeded),
        gcold.as_secs_f64() / seeded.as_secs_f64(),
        gs.mode
    );
    let t = Instant::now();
    let report = grepo.gc().unwrap();
    println!(
        "gc after seeding (copies borrowed objects in): {} ({} -> {} bytes)",
        ms(t.elapsed()),
        report.bytes_before,
        report.bytes_after
    );
}
