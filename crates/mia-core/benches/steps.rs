//! Per-step snapshot overhead with many sessions (issue 11). Not a test:
//! prints figures and ratios.
//!
//! A project with 20 sessions (19 with 30 steps each) and 1,000
//! file-changing steps in the 20th. Each measured step does what the runtime
//! does around a tool call: the "before" snapshot of the paths it names,
//! the write, the "after" snapshot, indexing the snapshot and the step in
//! SQLite, retention for the session (SQL, dropping only its own refs) and
//! the gc-due check. Baseline in the same run: OpenCode's per-step snapshot,
//! `git add -A` + `git write-tree` into a separate git dir, on the same tree.
//!
//! Run: `cargo bench -p mia-core --bench steps` (MIA_BENCH_STEPS=1000,
//! MIA_BENCH_FILES=2000 by default).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mia_protocol::SessionId;
use mia_snapshot::{CaptureContext, SnapshotConfig, SnapshotRepo, StepRecord};
use mia_store::{NewSession, NewSnapshot, NewStep, SessionDb, SnapshotKind};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn index(db: &mut SessionDb, sid: SessionId, before: &mia_snapshot::Snapshot, rec: &StepRecord) {
    db.add_snapshot(&NewSnapshot {
        session_id: sid,
        hash: before.hash.clone(),
        message_id: rec.tool_call_id.clone(),
        tool_call_id: rec.tool_call_id.clone(),
        kind: SnapshotKind::Step,
        files: before.files,
        excluded: serde_json::json!([]),
        excluded_total: 0,
        mode: "paths".into(),
        ms: before.ms,
        unavailable: None,
    })
    .unwrap();
    db.add_snapshot_step(&NewStep {
        id: rec.id.clone(),
        session_id: sid,
        message_id: rec.message_id.clone(),
        tool_call_id: rec.tool_call_id.clone(),
        kind: "tool".into(),
        before_hash: rec.before.clone(),
        after_hash: rec.after.clone(),
        record: serde_json::to_value(rec).unwrap(),
    })
    .unwrap();
}

struct StepCost {
    total: Duration,
    snapshot: Duration,
    record: Duration,
    retention: Duration,
    released: u64,
    gc_due: Option<String>,
}

fn step(
    repo: &mut SnapshotRepo,
    db: &mut SessionDb,
    sid: SessionId,
    project: &Path,
    n: usize,
    keep: usize,
) -> StepCost {
    let rel = format!("src/d{}/f{}.rs", n % 20, n % 100);
    let ctx = CaptureContext {
        session_id: Some(sid.to_string()),
        message_id: Some(format!("m{n}")),
        tool_call_id: Some(format!("c{n}-{sid}")),
    };
    let t0 = Instant::now();
    let pending = repo.begin_step(ctx, Some(&[PathBuf::from(&rel)])).unwrap();
    std::fs::write(project.join(&rel), format!("fn v{n}() {{}}\n")).unwrap();
    let before = pending.before.clone();
    let rec = repo.finish_step(pending).unwrap();
    let snapshot = t0.elapsed();
    let t1 = Instant::now();
    index(db, sid, &before, &rec);
    let record = t1.elapsed();
    let t2 = Instant::now();
    let pruned = db.prune_session_snapshots(&sid, keep).unwrap();
    let released = if pruned.released.is_empty() {
        0
    } else {
        repo.release(&sid.to_string(), &pruned.released, &pruned.unused)
            .unwrap()
    };
    let gc_due = repo.gc_due();
    let retention = t2.elapsed();
    StepCost {
        total: t0.elapsed(),
        snapshot,
        record,
        retention,
        released,
        gc_due,
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let steps = env_usize("MIA_BENCH_STEPS", 1000);
    let files = env_usize("MIA_BENCH_FILES", 2000);
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    for i in 0..files {
        let p = project.join(format!("src/d{}/f{}.rs", i % 20, i / 20));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("fn f{i}() {{}}\n")).unwrap();
    }
    let project = project.canonicalize().unwrap();
    let cfg = SnapshotConfig {
        store_root: Some(tmp.path().join("store")),
        time_budget: Duration::from_secs(60),
        ..SnapshotConfig::default()
    };
    let keep = cfg.keep_per_session;
    let mut db = SessionDb::open(tmp.path().join("data.db")).unwrap();
    let mut repo = SnapshotRepo::open(&project, cfg).unwrap();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let dir = project.display().to_string();
    let mut sessions = Vec::new();
    for _ in 0..20 {
        sessions.push(
            db.create_session(NewSession {
                directory: dir.clone(),
                ..Default::default()
            })
            .unwrap()
            .id,
        );
    }
    // 19 other sessions with 30 steps each.
    for (k, sid) in sessions.iter().take(19).enumerate() {
        for n in 0..30 {
            step(
                &mut repo,
                &mut db,
                *sid,
                &project,
                10_000 + k * 100 + n,
                keep,
            );
        }
    }
    let main = sessions[19];
    let mut costs = Vec::with_capacity(steps);
    for n in 0..steps {
        costs.push(step(&mut repo, &mut db, main, &project, n, keep));
    }
    let mut totals: Vec<Duration> = costs.iter().map(|c| c.total).collect();
    let p50 = pct(&mut totals, 0.5);
    let p99 = pct(&mut totals, 0.99);
    let worst = costs.iter().max_by_key(|c| c.total).unwrap();
    let mut snap: Vec<Duration> = costs.iter().map(|c| c.snapshot).collect();
    let mut rec: Vec<Duration> = costs.iter().map(|c| c.record).collect();
    let mut ret: Vec<Duration> = costs.iter().map(|c| c.retention).collect();
    // The runtime's own work around a step, the snapshot (and the tool)
    // left out: indexing it and retention.
    let mut overhead: Vec<Duration> = costs.iter().map(|c| c.record + c.retention).collect();
    let released: u64 = costs.iter().map(|c| c.released).sum();
    let gc_due = costs.iter().filter(|c| c.gc_due.is_some()).count();

    // Baseline: the per-step snapshot of a separate-git-dir approach.
    let gd = tmp.path().join("baseline.git");
    let gds = gd.to_str().unwrap().to_string();
    let wt = project.to_str().unwrap().to_string();
    git(
        &project,
        &["--git-dir", &gds, "--work-tree", &wt, "init", "-q"],
    );
    git(
        &project,
        &["--git-dir", &gds, "--work-tree", &wt, "add", "-A"],
    );
    let mut base = Vec::new();
    for n in 0..30 {
        std::fs::write(project.join("src/d0/f0.rs"), format!("fn b{n}() {{}}\n")).unwrap();
        let t = Instant::now();
        git(
            &project,
            &["--git-dir", &gds, "--work-tree", &wt, "add", "-A"],
        );
        git(
            &project,
            &["--git-dir", &gds, "--work-tree", &wt, "write-tree"],
        );
        base.push(t.elapsed());
    }
    let base_p50 = pct(&mut base, 0.5);

    println!(
        "{steps} file-changing steps in one of 20 sessions ({files} files, retention {keep}):"
    );
    println!(
        "  per step p50 {} (snapshot {}, record {}, retention {}), p99 {}",
        ms(p50),
        ms(pct(&mut snap, 0.5)),
        ms(pct(&mut rec, 0.5)),
        ms(pct(&mut ret, 0.5)),
        ms(p99)
    );
    println!(
        "  overhead without the snapshot (record + retention): p50 {}, p99 {} (budget p50 ≤ 2 ms, p99 ≤ 5 ms)",
        ms(pct(&mut overhead, 0.5)),
        ms(pct(&mut overhead, 0.99))
    );
    println!(
        "  worst step {}: snapshot {}, record {}, retention {} (released {} refs, gc due: {})",
        ms(worst.total),
        ms(worst.snapshot),
        ms(worst.record),
        ms(worst.retention),
        worst.released,
        worst.gc_due.as_deref().unwrap_or("no")
    );
    println!(
        "  refs released by retention: {released}; steps after which gc was due: {gc_due} (gc runs in the background, never inside a step)"
    );
    println!(
        "  baseline (git add -A + write-tree per step): p50 {} -> ours is {:.2}x of it",
        ms(base_p50),
        p50.as_secs_f64() / base_p50.as_secs_f64()
    );
}
