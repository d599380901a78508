//! Store growth over a simulated month (issue 53). Not a test: prints the
//! sizes `mia-code doctor` reports, after the month and after retention.
//!
//! 50 sessions a day for 30 days, 30 file-changing steps each, in one
//! project of 2,000 files. Each step does what the runtime writes for a
//! `write` call: its "before" and "after" snapshots in the snapshot store,
//! their index rows, the assistant message that made the call (~1.2 KB of
//! text) and the tool result (~0.6 KB). A day's sessions are then dated
//! that day (their `updated_at`), as if the month had passed. Then
//! `sessions.retentionDays: 7` and what `mia-code snapshot gc` does:
//! session retention, snapshot retention and `git gc`, the database's free
//! space given back. Snapshot objects are dated an hour back first (gc
//! never prunes objects younger than an hour; in a real month they are
//! days old).
//!
//! Run: `cargo bench -p mia-core --bench growth` (`MIA_BENCH_DAYS=30`,
//! `MIA_BENCH_PER_DAY=50`, `MIA_BENCH_STEPS=30`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use mia_core::{Runtime, RuntimeOptions};
use mia_protocol::{NewMessage, PartContent, Role, SessionId};
use mia_snapshot::{CaptureContext, SnapshotRepo};
use mia_store::{NewSession, NewSnapshot, NewStep, SessionDb, SnapshotKind};

const DAY_MS: i64 = 24 * 3600 * 1000;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn size_of(path: &Path) -> u64 {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !m.is_dir() {
        return m.len();
    }
    std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| size_of(&e.path()))
        .sum()
}

fn db_size(home: &Path) -> u64 {
    size_of(&home.join("data.db")) + size_of(&home.join("data.db-wal"))
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

/// Date every file under `dir` an hour and a minute back.
fn age(dir: &Path) {
    let then = SystemTime::now() - Duration::from_secs(3660);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(f) = std::fs::File::options().write(true).open(&p) {
                let _ = f.set_modified(then);
            }
        }
    }
}

fn one_step(repo: &mut SnapshotRepo, db: &mut SessionDb, sid: SessionId, project: &Path, n: usize) {
    let rel = format!("src/d{}/f{}.rs", n % 20, n % 100);
    let ctx = CaptureContext {
        session_id: Some(sid.to_string()),
        message_id: Some(format!("m{n}")),
        tool_call_id: Some(format!("c{n}")),
    };
    let text = format!("Step {n}: I will change {rel} so that it does the next thing. ").repeat(18);
    db.add_message(
        &sid,
        NewMessage::new(Role::Assistant, vec![PartContent::text(text)]),
    )
    .unwrap();
    let pending = repo.begin_step(ctx, Some(&[PathBuf::from(&rel)])).unwrap();
    std::fs::write(
        project.join(&rel),
        format!("fn v{n}() {{ /* step {n} */ }}\n"),
    )
    .unwrap();
    let before = pending.before.clone();
    let rec = repo.finish_step(pending).unwrap();
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
        record: serde_json::to_value(&rec).unwrap(),
    })
    .unwrap();
    let result = format!("Wrote {rel}: 1 line. ").repeat(30);
    db.add_message(
        &sid,
        NewMessage::new(Role::User, vec![PartContent::text(result)]),
    )
    .unwrap();
}

fn main() {
    let days = env_usize("MIA_BENCH_DAYS", 30);
    let per_day = env_usize("MIA_BENCH_PER_DAY", 50);
    let steps = env_usize("MIA_BENCH_STEPS", 30);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let config_dir = tmp.path().join("config");
    std::fs::create_dir_all(config_dir.join("mia-code")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let project = tmp.path().join("project");
    for i in 0..2000 {
        let p = project.join(format!("src/d{}/f{}.rs", i % 20, i / 20));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("fn f{i}() {{}}\n")).unwrap();
    }
    let project = project.canonicalize().unwrap();
    let paths = mia_config::Paths::new(home.clone(), tmp.path().to_path_buf(), &config_dir);
    let snap_cfg = mia_core::store_config(&paths);
    let snap_root = snap_cfg
        .store_root
        .clone()
        .unwrap_or_else(|| home.join("snapshots"));
    let mut db = SessionDb::open(paths.data_db()).unwrap();
    let mut repo = SnapshotRepo::open(&project, snap_cfg).unwrap();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let dir = project.display().to_string();
    let started = Instant::now();
    let now = mia_protocol::now_ms();
    for day in 0..days {
        let mut ids = Vec::new();
        for s in 0..per_day {
            let sid = db
                .create_session(NewSession {
                    directory: dir.clone(),
                    ..Default::default()
                })
                .unwrap()
                .id;
            for n in 0..steps {
                one_step(
                    &mut repo,
                    &mut db,
                    sid,
                    &project,
                    (day * per_day + s) * steps + n,
                );
            }
            ids.push(sid);
        }
        // The day passes: its sessions were last touched `days - day` ago.
        let conn = rusqlite::Connection::open(paths.data_db()).unwrap();
        let when = now - (days - day) as i64 * DAY_MS;
        for sid in &ids {
            conn.execute(
                "UPDATE sessions SET created_at = ?1, updated_at = ?1 WHERE id = ?2",
                rusqlite::params![when, sid.to_string()],
            )
            .unwrap();
        }
        if day % 10 == 9 {
            println!(
                "  day {}: data.db {}, snapshot store {} ({:.0} s)",
                day + 1,
                mb(db_size(&home)),
                mb(size_of(&snap_root)),
                started.elapsed().as_secs_f64()
            );
        }
    }
    drop(repo);
    drop(db);
    let (db_month, snaps_month) = (db_size(&home), size_of(&snap_root));
    let sessions = days * per_day;
    println!(
        "after {days} days ({sessions} sessions, {} steps): data.db {}, snapshot store {} — {:.1} KB and {:.1} KB per session",
        sessions * steps,
        mb(db_month),
        mb(snaps_month),
        db_month as f64 / sessions as f64 / 1e3,
        snaps_month as f64 / sessions as f64 / 1e3,
    );

    // `sessions.retentionDays: 7`, then what `mia-code snapshot gc` does.
    std::fs::write(
        config_dir.join("mia-code/config.json"),
        r#"{"sessions": {"retentionDays": 7}}"#,
    )
    .unwrap();
    age(&snap_root);
    let rt_tokio = tokio::runtime::Runtime::new().unwrap();
    let (rt, _) = Runtime::open(RuntimeOptions::new(paths.clone())).unwrap();
    let t = Instant::now();
    let pruned = rt_tokio.block_on(rt.prune_sessions()).unwrap();
    let prune_ms = t.elapsed();
    let t = Instant::now();
    let gc = rt_tokio
        .block_on(rt.snapshot_gc(project.clone(), 100))
        .unwrap();
    let gc_ms = t.elapsed();
    let t = Instant::now();
    let compacted = rt_tokio.block_on(rt.compact_store()).unwrap();
    let vacuum_ms = t.elapsed();
    let (db_after, snaps_after) = (db_size(&home), size_of(&snap_root));
    println!(
        "sessions.retentionDays 7: {} sessions deleted in {:.1} s ({} kept), snapshot gc {:.1} s ({} refs removed), VACUUM {:.1} s",
        pruned.deleted.len(),
        prune_ms.as_secs_f64(),
        sessions - pruned.deleted.len(),
        gc_ms.as_secs_f64(),
        gc.report.refs_removed,
        vacuum_ms.as_secs_f64()
    );
    println!(
        "after retention and gc: data.db {} -> {} ({:.2}x), snapshot store {} -> {} ({:.2}x)",
        mb(db_month),
        mb(db_after),
        db_after as f64 / db_month as f64,
        mb(snaps_month),
        mb(snaps_after),
        snaps_after as f64 / snaps_month as f64
    );
    assert!(compacted.vacuumed, "the database gave its space back");
}
