#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;

use common::Project;
use mia_snapshot::{CaptureContext, CaptureMode, gc_in_background};
use mia_testkit::repo as fixture;

fn ctx(session: &str) -> CaptureContext {
    CaptureContext {
        session_id: Some(session.into()),
        ..Default::default()
    }
}

fn refs(repo: &mia_snapshot::SnapshotRepo) -> String {
    fixture::refs(repo.git_dir(), "refs/mia/")
        .unwrap()
        .join("\n")
}

#[test]
fn release_drops_only_the_sessions_own_refs() {
    let p = Project::new();
    let mut repo = p.repo();
    let mut hashes = Vec::new();
    for i in 0..3 {
        p.write("a.txt", &format!("v{i}\n"));
        hashes.push(repo.capture(&ctx("s1"), None).unwrap().hash);
    }
    // Another session and a CLI capture hold the first state too.
    p.write("a.txt", "v0\n");
    assert_eq!(repo.capture(&ctx("s2"), None).unwrap().hash, hashes[0]);
    assert_eq!(
        repo.capture(&CaptureContext::default(), None).unwrap().hash,
        hashes[0]
    );
    let n = repo.release("s1", &hashes[..2], &HashSet::new()).unwrap();
    assert_eq!(n, 2);
    let listed = refs(&repo);
    assert!(
        listed.contains(&format!("refs/mia/s/s2/{}", hashes[0])),
        "{listed}"
    );
    assert!(
        listed.contains(&format!("refs/mia/cli/{}", hashes[0])),
        "{listed}"
    );
    assert!(
        !listed.contains(&format!("refs/mia/s/s1/{}", hashes[1])),
        "{listed}"
    );
    let report = repo.gc().unwrap();
    assert!(report.bytes_after > 0);
    // Kept snapshots still diff; the released one is unreachable.
    p.write("a.txt", "later\n");
    assert_eq!(repo.diff_worktree(&hashes[0], None).unwrap().len(), 1);
    assert_eq!(repo.diff_worktree(&hashes[2], None).unwrap().len(), 1);
    common::fsck(repo.git_dir());
    assert_eq!(repo.release_session("s2").unwrap(), 1);
    assert!(!refs(&repo).contains("refs/mia/s/s2/"));
}

#[test]
fn gc_never_drops_a_snapshot_taken_while_it_ran() {
    // Another session's running step: its "before" snapshot exists only
    // as its own ref (not indexed anywhere yet). gc must keep it.
    let p = Project::new();
    p.write("a.txt", "one\n");
    let mut running = p.repo();
    let pending = running.begin_step(ctx("other"), None).unwrap();
    let mut gcing = p.repo();
    gcing.gc().unwrap();
    p.write("a.txt", "two\n");
    let record = running.finish_step(pending).unwrap();
    assert_eq!(record.changes.len(), 1);
    let plan = running.plan_undo(&[record]).unwrap();
    let out = running.execute(&plan, false).unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("a.txt").as_deref(), Some("one\n"));
}

#[test]
fn seeded_snapshots_survive_the_project_losing_its_git_objects() {
    let p = Project::new();
    fixture::init(&p.path()).unwrap();
    for i in 0..20 {
        p.write(&format!("src/f{i}.txt"), &format!("file {i}\n"));
    }
    fixture::commit_all(&p.path(), "init").unwrap();
    let mut repo = p.repo();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(snap.mode, CaptureMode::Seeded);
    assert!(repo.git_dir().join("objects/info/alternates").exists());
    let handle = gc_in_background(p.path(), p.cfg());
    let report = handle
        .join()
        .unwrap()
        .unwrap()
        .expect("borrowed objects make gc due");
    assert!(report.internalized, "{report:?}");
    if !common::git_program() {
        // Copied in with libgit2; packing waits for a git program.
        let why = report.skipped.as_deref().unwrap_or_default();
        assert!(why.contains("no git program found"), "{report:?}");
    }
    assert!(!repo.git_dir().join("objects/info/alternates").exists());
    // The project's own objects disappear (history rewritten, gc'd, ...),
    // even the whole .git: the work tree keeps its store.
    common::remove_tree(&p.path().join(".git"));
    let mut repo = p.repo();
    assert_eq!(repo.git_dir(), handle_dir(&p));
    std::fs::remove_file(p.path().join("src/f3.txt")).unwrap();
    let out = repo
        .restore(&snap.hash, Some(&["src/f3.txt".into()]), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("src/f3.txt").as_deref(), Some("file 3\n"));
}

/// The same where no git program runs (as on Windows without Git for
/// Windows): this test binary re-runs the test above with an empty PATH.
#[test]
fn without_a_git_program_borrowed_objects_are_still_copied_in() {
    let empty = tempfile::tempdir().unwrap();
    common::rerun_alone(
        "seeded_snapshots_survive_the_project_losing_its_git_objects",
        &[("PATH", empty.path().as_os_str())],
    );
}

fn handle_dir(p: &Project) -> std::path::PathBuf {
    std::fs::read_dir(p.store.path())
        .unwrap()
        .flatten()
        .find(|e| e.path().join("repo").is_dir())
        .unwrap()
        .path()
        .join("repo")
}

#[test]
fn forced_undo_backups_are_bounded() {
    let p = Project::new();
    let repo = p.repo();
    for i in 0..5 {
        let d = repo.backups_dir().join(format!("stamp-{i}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f"), "x").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Keep the newest 3; none is old enough to expire.
    let n = repo.expire_backups(std::time::Duration::from_secs(3600), 3);
    assert_eq!(n, 2);
    let mut left: Vec<String> = std::fs::read_dir(repo.backups_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["stamp-2", "stamp-3", "stamp-4"]);
    assert_eq!(repo.expire_backups(std::time::Duration::ZERO, 10), 3);
}
