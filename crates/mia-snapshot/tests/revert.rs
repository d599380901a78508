#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::Project;
use mia_protocol::{FileChangeKind, PartContent};
use mia_snapshot::{CaptureContext, FileAction, SnapshotError, SnapshotRepo, StepRecord};
use mia_testkit::repo as fixture;

fn ctx(msg: &str, call: &str) -> CaptureContext {
    CaptureContext {
        session_id: Some("ses-1".into()),
        message_id: Some(msg.into()),
        tool_call_id: Some(call.into()),
    }
}

/// Run one known-path step: snapshot, let `f` change files, record.
fn step(
    repo: &mut SnapshotRepo,
    msg: &str,
    call: &str,
    paths: &[&str],
    f: impl FnOnce(),
) -> StepRecord {
    let ps: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let pending = repo.begin_step(ctx(msg, call), Some(&ps)).unwrap();
    f();
    repo.finish_step(pending).unwrap()
}

fn bash_step(repo: &mut SnapshotRepo, msg: &str, call: &str, f: impl FnOnce()) -> StepRecord {
    let pending = repo.begin_step(ctx(msg, call), None).unwrap();
    f();
    repo.finish_step(pending).unwrap()
}

#[test]
fn undo_revert_and_redo_restore_exactly_the_changed_files() {
    let p = Project::new();
    p.write("src/auth.ts", "auth v1\n");
    p.write("src/old.ts", "old\n");
    p.write("notes.txt", "user notes\n");
    let mut repo = p.repo();
    let baseline = repo.capture(&ctx("msg-0", "baseline"), None).unwrap();
    let mut records = Vec::new();
    records.push(step(&mut repo, "msg-1", "tc-1", &["src/auth.ts"], || {
        p.write("src/auth.ts", "auth v2\nmore\n")
    }));
    assert_eq!(records[0].changes.len(), 1);
    assert_eq!(records[0].changes[0].kind, FileChangeKind::Modified);
    assert_eq!(
        (
            records[0].changes[0].additions,
            records[0].changes[0].deletions
        ),
        (2, 1)
    );
    records.push(step(&mut repo, "msg-2", "tc-2", &["src/types.ts"], || {
        p.write("src/types.ts", "types\n")
    }));
    records.push(step(&mut repo, "msg-2", "tc-3", &["src/old.ts"], || {
        std::fs::remove_file(p.path().join("src/old.ts")).unwrap()
    }));
    // The user edits an unrelated file meanwhile: never touched by undo.
    p.write("notes.txt", "user notes, edited\n");

    // Undo: only the last step (the deletion).
    let plan = repo.plan_undo(&records).unwrap();
    assert_eq!(plan.steps, vec!["tc-3".to_string()]);
    let out = repo.execute(&plan, false).unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("src/old.ts").as_deref(), Some("old\n"));
    assert_eq!(p.read("src/types.ts").as_deref(), Some("types\n"));
    records.push(out.record.clone().unwrap());

    // Revert msg-1: cumulative back to before it (tc-3 already undone).
    let plan = repo.plan_revert(&records, "msg-1").unwrap();
    assert_eq!(plan.steps, vec!["tc-1".to_string(), "tc-2".to_string()]);
    let out = repo.execute(&plan, false).unwrap();
    assert!(out.applied);
    assert_eq!(p.read("src/auth.ts").as_deref(), Some("auth v1\n"));
    assert_eq!(p.read("src/types.ts"), None);
    assert!(!p.path().join("src/types.ts").exists());
    assert_eq!(p.read("notes.txt").as_deref(), Some("user notes, edited\n"));
    let msg = &out.message;
    assert!(
        msg.starts_with(&format!(
            "Reverted to snapshot {} (before message msg-1):",
            &records[0].before[..9]
        )),
        "{msg}"
    );
    assert!(
        msg.contains("  - src/auth.ts: restored (was modified)"),
        "{msg}"
    );
    assert!(
        msg.contains("  - src/types.ts: removed (was created)"),
        "{msg}"
    );
    assert!(
        msg.contains("2 files affected, 3 additions restored, 1 deletion undone."),
        "{msg}"
    );
    match out.to_part() {
        PartContent::Revert {
            restored,
            removed,
            pre_revert_snapshot,
            ..
        } => {
            assert_eq!(restored, vec!["src/auth.ts".to_string()]);
            assert_eq!(removed, vec!["src/types.ts".to_string()]);
            assert!(pre_revert_snapshot.is_some());
        }
        other => panic!("{other:?}"),
    }
    records.push(out.record.clone().unwrap());

    // Redo brings back what the revert undid.
    let plan = repo.plan_redo(&records).unwrap();
    let out = repo.execute(&plan, false).unwrap();
    assert!(out.applied);
    assert_eq!(p.read("src/auth.ts").as_deref(), Some("auth v2\nmore\n"));
    assert_eq!(p.read("src/types.ts").as_deref(), Some("types\n"));
    records.push(out.record.clone().unwrap());
    // After a redo there is nothing to redo.
    assert!(matches!(
        repo.plan_redo(&records),
        Err(SnapshotError::NothingToRevert { .. })
    ));
    // And the session diff from baseline shows the session's net change.
    let d = repo.diff_worktree(&baseline.hash, None).unwrap();
    let files: Vec<&str> = d.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(files, vec!["notes.txt", "src/auth.ts", "src/types.ts"]);
}

#[test]
fn outside_change_is_a_conflict_and_force_keeps_a_backup() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let mut repo = p.repo();
    repo.capture(&ctx("m0", "base"), None).unwrap();
    let records = vec![step(&mut repo, "m1", "t1", &["a.txt"], || {
        p.write("a.txt", "two\n")
    })];
    // Someone edits the file after the step.
    p.write("a.txt", "three (user)\n");
    let plan = repo.plan_undo(&records).unwrap();
    let out = repo.execute(&plan, false).unwrap();
    assert!(!out.applied);
    assert_eq!(out.conflicts.len(), 1);
    assert_eq!(out.conflicts[0].path, "a.txt");
    assert!(out.message.contains("--force"), "{}", out.message);
    assert_eq!(
        p.read("a.txt").as_deref(),
        Some("three (user)\n"),
        "must not be overwritten"
    );
    let forced = repo.execute(&plan, true).unwrap();
    assert!(forced.applied);
    assert_eq!(p.read("a.txt").as_deref(), Some("one\n"));
    let backup = forced.conflicts[0].backup.clone().unwrap();
    assert_eq!(p.read(&backup).as_deref(), Some("three (user)\n"));
    // The pre-revert snapshot holds it too.
    let pre = forced.pre_revert_snapshot.clone().unwrap();
    let out = repo
        .restore(&pre, Some(&[PathBuf::from("a.txt")]), false)
        .unwrap();
    assert!(out.applied);
    assert_eq!(p.read("a.txt").as_deref(), Some("three (user)\n"));
}

#[test]
fn undo_never_touches_another_sessions_files() {
    let p = Project::new();
    p.write("shared.txt", "s0\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let a = vec![step(&mut repo, "ma", "ta", &["a.txt"], || {
        p.write("a.txt", "from A\n")
    })];
    // Session B works in between (its own records, not A's).
    let mut other = p.repo();
    let pending = other
        .begin_step(
            CaptureContext {
                session_id: Some("ses-B".into()),
                message_id: Some("mb".into()),
                tool_call_id: Some("tb".into()),
            },
            Some(&[PathBuf::from("b.txt"), PathBuf::from("shared.txt")]),
        )
        .unwrap();
    p.write("b.txt", "from B\n");
    p.write("shared.txt", "s1 by B\n");
    let b_rec = other.finish_step(pending).unwrap();
    assert_eq!(b_rec.changes.len(), 2);
    let out = repo.execute(&repo.plan_undo(&a).unwrap(), false).unwrap();
    assert!(out.applied);
    assert_eq!(out.removed, vec!["a.txt".to_string()]);
    assert_eq!(p.read("b.txt").as_deref(), Some("from B\n"));
    assert_eq!(p.read("shared.txt").as_deref(), Some("s1 by B\n"));
}

#[test]
fn bash_steps_scan_and_undo_symlinks_modes_and_dirs() {
    let p = Project::new();
    p.write("keep.txt", "keep\n");
    p.write("gone/deep/file.txt", "deep\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = bash_step(&mut repo, "m1", "bash-1", || {
        std::fs::remove_dir_all(p.path().join("gone")).unwrap();
        p.write("made/by/bash.txt", "new\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::os::unix::fs::symlink("keep.txt", p.path().join("link")).unwrap();
            std::fs::set_permissions(
                p.path().join("keep.txt"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
        }
    });
    let kinds: Vec<(String, FileChangeKind)> = rec
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.kind))
        .collect();
    assert!(
        kinds.contains(&("gone/deep/file.txt".into(), FileChangeKind::Deleted)),
        "{kinds:?}"
    );
    assert!(kinds.contains(&("made/by/bash.txt".into(), FileChangeKind::Added)));
    let plan = repo.plan_undo(&[rec]).unwrap();
    assert!(plan.files.iter().any(|f| f.action == FileAction::Remove));
    let out = repo.execute(&plan, false).unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("gone/deep/file.txt").as_deref(), Some("deep\n"));
    assert!(
        !p.path().join("made").exists(),
        "emptied directories are removed"
    );
    assert!(!p.path().join("link").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(p.path().join("keep.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0);
    }
}

#[test]
fn binary_files_are_captured_and_undone_like_text() {
    let p = Project::new();
    let bin: Vec<u8> = (0u8..=255).cycle().take(5000).collect();
    std::fs::write(p.path().join("data.bin"), &bin).unwrap();
    std::fs::write(p.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    p.write("a.txt", "a\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = step(
        &mut repo,
        "m1",
        "t1",
        &["data.bin", "logo.png", "a.txt"],
        || {
            p.write("data.bin", "now text\n");
            std::fs::remove_file(p.path().join("logo.png")).unwrap();
            p.write("a.txt", "b\n");
        },
    );
    assert!(rec.uncaptured.is_empty(), "{rec:?}");
    assert_eq!(rec.changes.len(), 3);
    // The patch carries the binary content, and git applies it.
    let diffs = repo.diff_full(&rec.before, &rec.after).unwrap();
    let patch = repo.patch(&diffs);
    assert!(patch.contains("GIT binary patch"), "{patch}");
    let target = tempfile::tempdir().unwrap();
    std::fs::write(target.path().join("data.bin"), &bin).unwrap();
    std::fs::write(target.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    std::fs::write(target.path().join("a.txt"), "a\n").unwrap();
    common::apply_patch(target.path(), &patch);
    assert_eq!(
        std::fs::read_to_string(target.path().join("data.bin")).unwrap(),
        "now text\n"
    );
    assert!(!target.path().join("logo.png").exists());
    // Undo puts the binary content back byte for byte.
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(std::fs::read(p.path().join("data.bin")).unwrap(), bin);
    assert_eq!(
        std::fs::read(p.path().join("logo.png")).unwrap(),
        b"\x89PNG\r\n\x1a\n\0\0"
    );
    assert_eq!(p.read("a.txt").as_deref(), Some("a\n"));
}

#[test]
fn files_over_the_cap_touched_by_a_step_are_reported_not_silently_lost() {
    let p = Project::new();
    p.write("big.dat", &"x".repeat(500));
    p.write("a.txt", "a\n");
    let mut repo = SnapshotRepo::open(
        p.path(),
        mia_snapshot::SnapshotConfig {
            max_file_size: 100,
            ..p.cfg()
        },
    )
    .unwrap();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = step(&mut repo, "m1", "t1", &["big.dat", "a.txt"], || {
        p.write("big.dat", "now small\n");
        p.write("a.txt", "b\n");
    });
    assert!(rec.uncaptured.iter().any(|u| u.path == "big.dat"));
    let plan = repo.plan_undo(&[rec]).unwrap();
    assert_eq!(plan.unrestorable.len(), 1);
    let out = repo.execute(&plan, false).unwrap();
    assert!(
        out.message.contains(
            "big.dat: not captured before the step (over the snapshot size cap); left as it is"
        ),
        "{}",
        out.message
    );
    assert!(out.applied);
    assert_eq!(out.restored, vec!["a.txt".to_string()]);
    assert!(
        out.removed.is_empty(),
        "a file that existed before must not be deleted"
    );
    assert_eq!(p.read("big.dat").as_deref(), Some("now small\n"));
    assert_eq!(p.read("a.txt").as_deref(), Some("a\n"));
}

#[test]
fn restore_refuses_to_drop_uncaptured_content_without_force() {
    let p = Project::new();
    p.write("a.txt", "text\n");
    let mut repo = SnapshotRepo::open(
        p.path(),
        mia_snapshot::SnapshotConfig {
            max_file_size: 100,
            ..p.cfg()
        },
    )
    .unwrap();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    let big = "now too large to capture\n".repeat(10);
    p.write("a.txt", &big);
    let out = repo
        .restore(&snap.hash, Some(&[PathBuf::from("a.txt")]), false)
        .unwrap();
    assert!(!out.applied);
    assert!(out.conflicts[0].reason.contains("could not be captured"));
    let out = repo
        .restore(&snap.hash, Some(&[PathBuf::from("a.txt")]), true)
        .unwrap();
    assert!(out.applied);
    assert_eq!(p.read("a.txt").as_deref(), Some("text\n"));
    // The overwritten content is kept outside the work tree.
    let backup = out.conflicts[0].backup.clone().unwrap();
    assert!(!backup.starts_with(p.path().to_str().unwrap()), "{backup}");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), big);
}

#[test]
fn first_step_without_a_prior_snapshot_lists_only_its_own_exclusions() {
    let p = Project::new();
    p.write("node_modules/x/i.js", "x\n");
    std::fs::write(p.path().join("logo.png"), b"png").unwrap();
    p.write("a.txt", "a\n");
    let mut repo = p.repo();
    // No snapshot yet: begin_step falls back to a full scan.
    let rec = step(&mut repo, "m1", "t1", &["a.txt"], || {
        p.write("a.txt", "b\n")
    });
    assert!(rec.uncaptured.is_empty(), "{:?}", rec.uncaptured);
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    assert!(out.applied);
    assert!(!out.message.contains("not restored"), "{}", out.message);
    assert_eq!(p.read("a.txt").as_deref(), Some("a\n"));
}

fn session_ctx(session: &str, msg: &str, call: &str) -> CaptureContext {
    CaptureContext {
        session_id: Some(session.into()),
        message_id: Some(msg.into()),
        tool_call_id: Some(call.into()),
    }
}

#[test]
fn a_shell_step_never_claims_another_sessions_edit_made_while_it_ran() {
    let p = Project::new();
    p.write("x.txt", "old\n");
    let mut a = p.repo();
    a.capture(&CaptureContext::default(), None).unwrap();
    // Session A: `sleep 4; touch a.out` through bash. While it sleeps,
    // session B (another process: its own repo handle) edits x.txt.
    let pending = a.begin_step(session_ctx("A", "ma", "ta"), None).unwrap();
    let mut b = p.repo();
    let bp = b
        .begin_step(
            session_ctx("B", "mb", "tb"),
            Some(&[PathBuf::from("x.txt")]),
        )
        .unwrap();
    p.write("x.txt", "new by B\n");
    let b_rec = b.finish_step(bp).unwrap();
    p.write("a.out", "");
    let a_rec = a.finish_step(pending).unwrap();
    let paths: Vec<&str> = a_rec.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, vec!["a.out"], "{a_rec:?}");
    assert_eq!(a_rec.foreign.len(), 1);
    assert_eq!(a_rec.foreign[0].path, "x.txt");
    assert_eq!(a_rec.foreign[0].session.as_deref(), Some("B"));
    let plan = a.plan_undo(std::slice::from_ref(&a_rec)).unwrap();
    assert_eq!(plan.skipped.len(), 1);
    let out = a.execute(&plan, false).unwrap();
    assert!(out.applied, "{}", out.message);
    assert!(
        out.message
            .contains("x.txt: left as it is (changed by session B while the step ran)"),
        "{}",
        out.message
    );
    assert_eq!(p.read("x.txt").as_deref(), Some("new by B\n"));
    assert!(p.read("a.out").is_none());
    // B's own undo still works.
    let out = b.execute(&b.plan_undo(&[b_rec]).unwrap(), false).unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("x.txt").as_deref(), Some("old\n"));
}

#[test]
fn a_step_begun_before_a_shell_step_and_writing_during_it_is_not_claimed() {
    let p = Project::new();
    p.write("x.txt", "old\n");
    let mut b = p.repo();
    b.capture(&CaptureContext::default(), None).unwrap();
    let bp = b
        .begin_step(
            session_ctx("B", "mb", "tb"),
            Some(&[PathBuf::from("x.txt")]),
        )
        .unwrap();
    let mut a = p.repo();
    let pending = a.begin_step(session_ctx("A", "ma", "ta"), None).unwrap();
    p.write("x.txt", "new by B\n");
    let a_rec = a.finish_step(pending).unwrap();
    b.finish_step(bp).unwrap();
    assert!(a_rec.changes.is_empty(), "{a_rec:?}");
    assert_eq!(a_rec.foreign[0].path, "x.txt");
}

#[test]
fn two_shell_steps_on_one_work_tree_never_overlap() {
    let p = Project::new();
    p.write("x.txt", "old\n");
    let mut a = p.repo();
    let pending = a.begin_step(session_ctx("A", "ma", "ta"), None).unwrap();
    let mut b = SnapshotRepo::open(
        p.path(),
        mia_snapshot::SnapshotConfig {
            step_wait: std::time::Duration::from_millis(100),
            ..p.cfg()
        },
    )
    .unwrap();
    let err = b
        .begin_step(session_ctx("B", "mb", "tb"), None)
        .unwrap_err();
    assert!(matches!(err, SnapshotError::StepBusy { .. }), "{err}");
    assert!(err.to_string().contains("session A"), "{err}");
    assert!(
        !err.is_unavailable(),
        "a busy step must not run without a record"
    );
    a.finish_step(pending).unwrap();
    // Free again: the next one proceeds (and a waiting one would have).
    let waiter = std::thread::spawn({
        let path = p.path();
        let cfg = p.cfg();
        move || {
            let mut c = SnapshotRepo::open(path, cfg).unwrap();
            let pc = c.begin_step(session_ctx("C", "mc", "tc"), None).unwrap();
            c.finish_step(pc).unwrap()
        }
    });
    waiter.join().unwrap();
    let pb = b.begin_step(session_ctx("B", "mb", "tb"), None).unwrap();
    b.finish_step(pb).unwrap();
}

#[test]
fn undo_never_deletes_a_file_it_did_not_capture_before() {
    let p = Project::new();
    let big = "line of a big text file\n".repeat(200);
    p.write("big.txt", &big);
    p.write("small.txt", "s\n");
    let mut repo = SnapshotRepo::open(
        p.path(),
        mia_snapshot::SnapshotConfig {
            max_file_size: 1000,
            ..p.cfg()
        },
    )
    .unwrap();
    repo.capture(&CaptureContext::default(), None).unwrap();
    // `truncate -s 100 big.txt; rm -f gone.bin` through bash.
    std::fs::write(p.path().join("gone.txt"), "y".repeat(2000)).unwrap();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = bash_step(&mut repo, "m1", "t1", || {
        std::fs::write(p.path().join("big.txt"), &big[..100]).unwrap();
        std::fs::remove_file(p.path().join("gone.txt")).unwrap();
        p.write("small.txt", "changed\n");
    });
    let unc: Vec<&str> = rec.uncaptured.iter().map(|u| u.path.as_str()).collect();
    assert_eq!(unc, vec!["big.txt", "gone.txt"], "{rec:?}");
    let plan = repo.plan_undo(std::slice::from_ref(&rec)).unwrap();
    assert!(plan.files.iter().all(|f| f.path == "small.txt"), "{plan:?}");
    let out = repo.execute(&plan, false).unwrap();
    assert!(out.applied, "{}", out.message);
    assert!(out.removed.is_empty());
    assert_eq!(p.read("big.txt").as_deref(), Some(&big[..100]));
    assert_eq!(p.read("small.txt").as_deref(), Some("s\n"));
    assert!(
        out.message.contains(
            "big.txt: not captured before the step (over the snapshot size cap); left as it is"
        ),
        "{}",
        out.message
    );
    assert!(
        out.message
            .contains("gone.txt: not captured before the step")
    );
}

#[test]
fn the_same_holds_with_a_watcher_narrowing_the_capture() {
    let p = Project::new();
    let big = "x".repeat(3000);
    p.write("big.txt", &big);
    let mut repo = SnapshotRepo::open(
        p.path(),
        mia_snapshot::SnapshotConfig {
            max_file_size: 1000,
            ..p.cfg()
        },
    )
    .unwrap();
    let w = mia_snapshot::ProjectWatcher::start(&p.path(), Vec::new()).unwrap();
    assert!(w.sync(std::time::Duration::from_secs(5)));
    w.prime();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let pending = repo
        .begin_step_with_watcher(ctx("m1", "t1"), None, &w)
        .unwrap();
    std::fs::write(p.path().join("big.txt"), &big[..10]).unwrap();
    assert!(w.sync(std::time::Duration::from_secs(5)));
    let rec = repo.finish_step_with_watcher(pending, &w).unwrap();
    assert!(
        rec.uncaptured.iter().any(|u| u.path == "big.txt"),
        "{rec:?}"
    );
    let plan = repo.plan_undo(std::slice::from_ref(&rec));
    // Nothing to undo but a file that must be left alone.
    if let Ok(plan) = plan {
        let out = repo.execute(&plan, false).unwrap();
        assert!(out.removed.is_empty(), "{}", out.message);
    }
    assert_eq!(p.read("big.txt").as_deref(), Some(&big[..10]));
}

#[cfg(unix)]
#[test]
fn restores_keep_exact_permission_bits() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    p.write(".env", "KEY=1\n");
    p.write("run.sh", "echo\n");
    let set = |rel: &str, m: u32| {
        std::fs::set_permissions(p.path().join(rel), std::fs::Permissions::from_mode(m)).unwrap()
    };
    let mode = |rel: &str| {
        std::fs::metadata(p.path().join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    set(".env", 0o600);
    set("run.sh", 0o750);
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    // Edited, then undone: the bits stay.
    let r1 = step(&mut repo, "m1", "t1", &[".env"], || {
        p.write(".env", "KEY=2\n")
    });
    repo.execute(&repo.plan_undo(std::slice::from_ref(&r1)).unwrap(), false)
        .unwrap();
    assert_eq!(p.read(".env").as_deref(), Some("KEY=1\n"));
    assert_eq!(mode(".env"), 0o600);
    // Deleted by a known-path step, then undone: recorded bits come back.
    let r2 = step(&mut repo, "m2", "t2", &[".env", "run.sh"], || {
        std::fs::remove_file(p.path().join(".env")).unwrap();
        std::fs::remove_file(p.path().join("run.sh")).unwrap();
    });
    assert_eq!(r2.modes.get(".env"), Some(&0o600));
    let undo = repo.plan_undo(&[r1.clone(), r2.clone()]);
    let out = repo.execute(&undo.unwrap(), false).unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(mode(".env"), 0o600);
    assert_eq!(mode("run.sh"), 0o750);
    // Deleted by a shell command (`rm .env`), then undone: the same.
    let r3 = bash_step(&mut repo, "m3", "t3", || {
        std::fs::remove_file(p.path().join(".env")).unwrap();
    });
    assert_eq!(r3.modes.get(".env"), Some(&0o600), "{r3:?}");
    assert!(
        !r3.modes.contains_key("run.sh"),
        "only what the step changed"
    );
    let out = repo
        .execute(&repo.plan_undo(&[r1, r2, r3]).unwrap(), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read(".env").as_deref(), Some("KEY=1\n"));
    assert_eq!(mode(".env"), 0o600);
}

#[test]
fn history_survives_git_clean_and_removing_the_projects_own_dir() {
    let p = Project::new();
    fixture::init(&p.path()).unwrap();
    p.write("a.txt", "committed\n");
    fixture::add(&p.path(), &["a.txt"]).unwrap();
    fixture::commit(&p.path(), "init").unwrap();
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = step(&mut repo, "m1", "t1", &["a.txt", "new.txt"], || {
        p.write("a.txt", "edited\n");
        p.write("new.txt", "new\n");
    });
    // new.txt is staged, so `git clean -fdx` keeps it and removes every
    // ignored and untracked thing, `.mia-code/` included.
    fixture::add(&p.path(), &["new.txt"]).unwrap();
    p.write("scratch.tmp", "untracked\n");
    fixture::clean(&p.path()).unwrap();
    let _ = std::fs::remove_dir_all(p.path().join(".mia-code"));
    assert!(p.read("scratch.tmp").is_none());
    // A fresh process opens the store again.
    let mut repo = p.repo();
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("a.txt").as_deref(), Some("committed\n"));
    assert!(p.read("new.txt").is_none());
}

#[test]
fn an_old_in_project_store_is_migrated_with_nothing_lost() {
    let p = Project::new();
    p.write("a.txt", "v1\n");
    // The layout of earlier versions: a bare repo in .mia-code/snapshots
    // with one ref per snapshot and a latest pointer.
    let old = p.path().join(".mia-code/snapshots");
    std::fs::create_dir_all(&old).unwrap();
    let old_s = old.to_str().unwrap().to_string();
    let old_repo = fixture::init_bare(&old).unwrap();
    old_repo.set_workdir(&p.path(), false).unwrap();
    let mut index = old_repo.index().unwrap();
    index.add_path(std::path::Path::new("a.txt")).unwrap();
    let tree = index.write_tree().unwrap().to_string();
    fixture::update_ref(&old, &format!("refs/mia/snapshots/{tree}"), &tree).unwrap();
    fixture::update_ref(&old, "refs/mia/latest", &tree).unwrap();
    if common::git_program() {
        // Packed, as an old store that had been collected would be.
        common::git(&p.path(), &["--git-dir", &old_s, "gc", "-q"]);
    }
    drop(index);
    drop(old_repo);
    std::fs::write(old.join("mia-latest"), format!("{tree} 1\n")).unwrap();
    let repo = p.repo();
    assert!(old.join("MIGRATED").exists());
    assert_eq!(repo.resolve(&tree).unwrap().to_string(), tree);
    assert_eq!(repo.latest().unwrap().0.to_string(), tree);
    // Old rows keep resolving after the old directory is gone.
    common::remove_tree(&p.path().join(".mia-code"));
    p.write("a.txt", "v2\n");
    let mut repo2 = p.repo();
    let out = repo2
        .restore(&tree, Some(&[PathBuf::from("a.txt")]), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("a.txt").as_deref(), Some("v1\n"));
    drop(repo);
}

#[cfg(unix)]
#[test]
fn non_utf8_names_and_case_only_renames_round_trip() {
    use std::os::unix::ffi::OsStrExt;
    let p = Project::new();
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(p.path().join(odd), "latin-1 name\n").unwrap();
    p.write("Readme.md", "readme\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = bash_step(&mut repo, "m1", "t1", || {
        std::fs::write(p.path().join(odd), "changed\n").unwrap();
        std::fs::rename(p.path().join("Readme.md"), p.path().join("README.md")).unwrap();
        std::fs::write(
            p.path().join(std::ffi::OsStr::from_bytes(b"new\xff.txt")),
            "new\n",
        )
        .unwrap();
    });
    assert_eq!(rec.changes.len(), 4, "{:?}", rec.changes);
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(
        std::fs::read_to_string(p.path().join(odd)).unwrap(),
        "latin-1 name\n"
    );
    assert_eq!(p.read("Readme.md").as_deref(), Some("readme\n"));
    assert!(p.read("README.md").is_none());
    assert!(
        !p.path()
            .join(std::ffi::OsStr::from_bytes(b"new\xff.txt"))
            .exists()
    );
}

/// Windows: a file another program has open without sharing delete access
/// (an editor, an indexer, a dev server) cannot be replaced. The undo waits
/// a moment for it, then fails naming it, with what it changed before put
/// back; a holder that lets go within that moment is simply waited for.
#[cfg(windows)]
#[test]
fn a_file_another_program_holds_open_is_waited_for_then_reported() {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_SHARE_READ: u32 = 1;
    let p = Project::new();
    p.write("a.txt", "a1\n");
    p.write("b.txt", "b1\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = step(&mut repo, "m1", "t1", &["a.txt", "b.txt"], || {
        p.write("a.txt", "a2\n");
        p.write("b.txt", "b2\n");
    });
    let hold = || {
        std::fs::OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ)
            .open(p.path().join("b.txt"))
            .unwrap()
    };
    let held = hold();
    let err = repo
        .execute(&repo.plan_undo(std::slice::from_ref(&rec)).unwrap(), false)
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("b.txt") && msg.contains("another program has it open"),
        "{msg}"
    );
    assert!(msg.contains("were put back"), "{msg}");
    assert_eq!(p.read("a.txt").as_deref(), Some("a2\n"));
    assert_eq!(p.read("b.txt").as_deref(), Some("b2\n"));
    drop(held);

    let held = hold();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held);
    });
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    releaser.join().unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("a.txt").as_deref(), Some("a1\n"));
    assert_eq!(p.read("b.txt").as_deref(), Some("b1\n"));
}

/// CRLF files (as Windows editors write them) keep every `\r` through a
/// step, its patch and its undo: no line-ending conversion anywhere.
#[test]
fn crlf_files_round_trip_byte_for_byte() {
    let p = Project::new();
    let before = "one\r\ntwo\r\nmixed\nthree\r\n";
    let after = "one\r\nTWO\r\nmixed\nthree\r\nfour\r\n";
    p.write("win.txt", before);
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = step(&mut repo, "m1", "t1", &["win.txt"], || {
        p.write("win.txt", after)
    });
    let diffs = repo.diff_full(&rec.before, &rec.after).unwrap();
    let patch = repo.patch(&diffs);
    assert!(patch.contains("-two\r\n+TWO\r\n"), "{patch:?}");
    // The patch reproduces the edit on a copy of the old file.
    let target = tempfile::tempdir().unwrap();
    std::fs::write(target.path().join("win.txt"), before).unwrap();
    common::apply_patch(target.path(), &patch);
    assert_eq!(
        std::fs::read(target.path().join("win.txt")).unwrap(),
        after.as_bytes()
    );
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(
        std::fs::read(p.path().join("win.txt")).unwrap(),
        before.as_bytes()
    );
}

/// A file whose full path is longer than Windows' classic 260-character
/// limit is captured, changed and undone like any other.
#[test]
fn paths_longer_than_260_characters_are_undone() {
    let p = Project::new();
    let dir = (0..12)
        .map(|i| format!("a-fairly-long-directory-name-{i:02}"))
        .collect::<Vec<_>>()
        .join("/");
    let rel = format!("{dir}/the-file-at-the-bottom.txt");
    assert!(p.path().join(&rel).as_os_str().len() > 300);
    p.write(&rel, "v1\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = step(&mut repo, "m1", "t1", &[rel.as_str()], || {
        p.write(&rel, "v2\n")
    });
    assert_eq!(rec.changes.len(), 1, "{rec:?}");
    let out = repo
        .execute(&repo.plan_undo(&[rec]).unwrap(), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read(&rel).as_deref(), Some("v1\n"));
}
