#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{Project, reference_tree};
use mia_snapshot::{CaptureContext, CaptureMode, OutsideChanges, ProjectWatcher};

#[test]
fn watcher_reports_outside_changes_and_narrows_captures() {
    let p = Project::new();
    p.write("src/a.rs", "a\n");
    p.write("node_modules/x/i.js", "x\n");
    let mut repo = p.repo();
    let w = ProjectWatcher::start(&p.path(), repo.config().excluded_dirs.clone()).unwrap();
    assert!(w.sync(Duration::from_secs(5)), "watcher never caught up");
    // What changed before it started is unknown: the first take says scan.
    assert!(matches!(w.take_changes(), OutsideChanges::Unknown { .. }));
    repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(w.take_changes(), OutsideChanges::Known(vec![]));

    p.write("src/a.rs", "changed outside\n");
    p.write("node_modules/x/i.js", "noise\n");
    std::fs::create_dir_all(p.path().join("new/deeper")).unwrap();
    p.write("new/deeper/b.rs", "b\n");
    mia_testkit::repo::init(&p.path()).unwrap();

    let snap = repo
        .capture_with_watcher(&CaptureContext::default(), &w)
        .unwrap();
    assert_eq!(
        snap.mode,
        CaptureMode::Paths,
        "a healthy watcher narrows the capture"
    );
    let missed: Vec<String> = repo
        .diff_worktree(&snap.hash, None)
        .unwrap()
        .iter()
        .map(|d| format!("{} {:?}", d.file, d.status))
        .collect();
    assert!(missed.is_empty(), "the narrowed capture missed {missed:?}");
    // Equal to git's own tree once our built-in excludes are removed.
    std::fs::remove_dir_all(p.path().join("node_modules")).unwrap();
    assert_eq!(snap.hash, reference_tree(&p.path()));

    p.write("src/a.rs", "again\n");
    assert!(w.sync(Duration::from_secs(5)));
    let peek = w.peek();
    assert!(peek.contains(&"src/a.rs".to_string()), "{peek:?}");
    assert!(
        peek.iter().all(|p| p == "src/a.rs" || p == "node_modules"),
        "only outside changes are reported, never .git or .mia-code: {peek:?}"
    );
}

#[test]
fn bash_steps_narrowed_by_the_watcher_record_exactly_what_changed() {
    let p = Project::new();
    p.write(".gitignore", "*.log\n");
    p.write("src/a.rs", "a\n");
    p.write("src/b.rs", "b\n");
    let mut repo = p.repo();
    let w = ProjectWatcher::start(&p.path(), repo.config().excluded_dirs.clone()).unwrap();
    assert!(w.sync(Duration::from_secs(5)));
    w.prime();
    repo.capture(&CaptureContext::default(), None).unwrap();
    // Outside change before the step: part of the "before" state.
    p.write("src/b.rs", "b edited by the user\n");
    let ctx = CaptureContext {
        session_id: Some("s".into()),
        message_id: Some("m".into()),
        tool_call_id: Some("bash-1".into()),
    };
    let pending = repo.begin_step_with_watcher(ctx, None, &w).unwrap();
    assert_eq!(pending.before.mode, CaptureMode::Paths);
    // What the "bash command" does.
    p.write("src/a.rs", "a changed by bash\n");
    p.write("gen/new.rs", "new\n");
    p.write("build.log", "ignored\n");
    let rec = repo.finish_step_with_watcher(pending, &w).unwrap();
    let mut changed: Vec<(String, mia_protocol::FileChangeKind)> = rec
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.kind))
        .collect();
    changed.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        changed,
        vec![
            (
                "gen/new.rs".to_string(),
                mia_protocol::FileChangeKind::Added
            ),
            (
                "src/a.rs".to_string(),
                mia_protocol::FileChangeKind::Modified
            ),
        ]
    );
    // The narrowed "after" tree is the real state.
    assert!(repo.diff_worktree(&rec.after, None).unwrap().is_empty());
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("src/a.rs").as_deref(), Some("a\n"));
    assert_eq!(
        p.read("src/b.rs").as_deref(),
        Some("b edited by the user\n")
    );
    assert!(!p.path().join("gen").exists());
    assert_eq!(p.read("build.log").as_deref(), Some("ignored\n"));
}

/// Dropping a `ProjectWatcher` stops the watch: its thread ends and the
/// OS watches go (on Windows every watched directory was held open, so
/// the project could not even be deleted). Run alone in a child process,
/// since other tests' watchers would be counted too.
#[cfg(target_os = "linux")]
#[test]
fn dropping_the_watcher_stops_its_thread() {
    if std::env::var_os("MIA_WATCH_ALONE").is_none() {
        common::rerun_alone(
            "dropping_the_watcher_stops_its_thread",
            &[("MIA_WATCH_ALONE", std::ffi::OsStr::new("1"))],
        );
        return;
    }
    // Thread names are cut to 15 bytes in /proc.
    let watch_threads = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.trim() == "mia-snapshot-wa")
            })
            .count()
    };
    let p = Project::new();
    p.write("src/a.rs", "a\n");
    for round in 0..3 {
        let w = ProjectWatcher::start(&p.path(), Vec::new()).unwrap();
        assert!(w.sync(Duration::from_secs(5)));
        assert_eq!(watch_threads(), 1, "round {round}");
        drop(w);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while watch_threads() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "round {round}: the watcher's thread outlived its ProjectWatcher"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A session in one of mia-code's worktrees (`.mia-code/worktrees/<name>`,
/// below a `.gitignore` of `*`): the watcher must still watch the whole
/// worktree, or a narrowed capture misses what a command changed.
#[test]
fn a_project_below_a_directory_that_ignores_everything_is_watched_whole() {
    let outer = tempfile::tempdir().unwrap();
    let outer_path = outer.path().canonicalize().unwrap();
    let main = mia_testkit::repo::init(&outer_path).unwrap();
    common::write(&outer_path, "tracked.txt", "t\n");
    mia_testkit::repo::add(&outer_path, &["tracked.txt"]).unwrap();
    mia_testkit::repo::commit(&outer_path, "one").unwrap();
    common::write(&outer_path, ".mia-code/.gitignore", "*\n");
    common::write(&outer_path, ".mia-code/worktrees/.gitignore", "*\n");
    let project = outer_path.join(".mia-code/worktrees/attempt");
    main.worktree("attempt", &project, None).unwrap();
    common::write(&project, "src/deep/a.rs", "a\n");
    let store = tempfile::tempdir().unwrap();
    let cfg = mia_snapshot::SnapshotConfig {
        store_root: Some(store.path().to_path_buf()),
        ..mia_snapshot::SnapshotConfig::default()
    };
    let mut repo = mia_snapshot::SnapshotRepo::open(&project, cfg).unwrap();
    let w = ProjectWatcher::start(&project, repo.config().excluded_dirs.clone()).unwrap();
    assert!(matches!(w.take_changes(), OutsideChanges::Unknown { .. }));
    repo.capture(&CaptureContext::default(), None).unwrap();
    common::write(&project, "src/deep/a.rs", "changed by a command\n");
    let snap = repo
        .capture_with_watcher(&CaptureContext::default(), &w)
        .unwrap();
    assert_eq!(snap.mode, CaptureMode::Paths);
    let missed: Vec<String> = repo
        .diff_worktree(&snap.hash, None)
        .unwrap()
        .iter()
        .map(|d| d.file.clone())
        .collect();
    assert!(missed.is_empty(), "the narrowed capture missed {missed:?}");
}

/// A directory moved into the project (`mv /tmp/x src/x`) is watched from
/// then on, and what it holds is reported: a later edit inside it is seen.
#[test]
fn a_directory_moved_in_is_watched_and_reported() {
    let p = Project::new();
    p.write("src/a.rs", "a\n");
    let mut repo = p.repo();
    let w = ProjectWatcher::start(&p.path(), repo.config().excluded_dirs.clone()).unwrap();
    assert!(matches!(w.take_changes(), OutsideChanges::Unknown { .. }));
    repo.capture(&CaptureContext::default(), None).unwrap();
    let outside = tempfile::tempdir().unwrap();
    common::write(outside.path(), "moved/deep/x.rs", "x\n");
    std::fs::rename(outside.path().join("moved"), p.path().join("src/moved")).unwrap();
    let OutsideChanges::Known(seen) = w.take_changes() else {
        panic!("the watcher should know");
    };
    assert!(
        seen.contains(&"src/moved/deep/x.rs".to_string()),
        "what the moved directory holds is reported: {seen:?}"
    );
    p.write("src/moved/deep/x.rs", "edited after the move\n");
    let OutsideChanges::Known(seen) = w.take_changes() else {
        panic!("the watcher should know");
    };
    assert_eq!(seen, vec!["src/moved/deep/x.rs".to_string()]);
}
