#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::Project;
use mia_protocol::{FileChangeKind, PartContent};
use mia_snapshot::{CaptureContext, FileAction, SnapshotError, SnapshotRepo, StepRecord};

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
fn binary_files_touched_by_a_step_are_reported_not_silently_lost() {
    let p = Project::new();
    std::fs::write(p.path().join("data.bin"), b"\0\x01\x02").unwrap();
    p.write("a.txt", "a\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let rec = step(&mut repo, "m1", "t1", &["data.bin", "a.txt"], || {
        p.write("data.bin", "now text\n");
        p.write("a.txt", "b\n");
    });
    assert!(rec.uncaptured.iter().any(|u| u.path == "data.bin"));
    let plan = repo.plan_undo(&[rec]).unwrap();
    assert_eq!(plan.unrestorable.len(), 1);
    let out = repo.execute(&plan, false).unwrap();
    assert!(
        out.message
            .contains("data.bin: not restored (binary file, never captured)"),
        "{}",
        out.message
    );
    assert!(out.applied);
    assert_eq!(out.restored, vec!["a.txt".to_string()]);
    assert!(
        out.removed.is_empty(),
        "a file that existed before must not be deleted"
    );
    assert_eq!(p.read("data.bin").as_deref(), Some("now text\n"));
    assert_eq!(p.read("a.txt").as_deref(), Some("a\n"));
}

#[test]
fn restore_refuses_to_drop_uncaptured_content_without_force() {
    let p = Project::new();
    p.write("a.txt", "text\n");
    let mut repo = p.repo();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    std::fs::write(p.path().join("a.txt"), b"binary\0now").unwrap();
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
    let backup = out.conflicts[0].backup.clone().unwrap();
    assert_eq!(
        std::fs::read(p.path().join(backup)).unwrap(),
        b"binary\0now"
    );
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
