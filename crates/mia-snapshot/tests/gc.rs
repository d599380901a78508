#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;

use common::{Project, git};
use mia_snapshot::{CaptureContext, CaptureMode, gc_in_background};

#[test]
fn gc_drops_unlisted_refs_and_keeps_listed_snapshots() {
    let p = Project::new();
    let mut repo = p.repo();
    let mut hashes = Vec::new();
    for i in 0..3 {
        p.write("a.txt", &format!("v{i}\n"));
        hashes.push(repo.capture(&CaptureContext::default(), None).unwrap().hash);
    }
    let live: HashSet<String> = [hashes[2].clone()].into();
    let report = repo.gc(Some(&live)).unwrap();
    assert_eq!(report.refs_removed, 2, "{report:?}");
    assert_eq!(report.refs_kept, 1);
    assert!(report.bytes_after > 0);
    let refs = git(
        repo.git_dir(),
        &[
            "--git-dir",
            repo.git_dir().to_str().unwrap(),
            "for-each-ref",
            "refs/mia/snapshots/",
        ],
    );
    assert!(
        refs.contains(&hashes[2]) && !refs.contains(&hashes[0]),
        "{refs}"
    );
    // The kept snapshot still diffs and restores.
    p.write("a.txt", "later\n");
    let d = repo.diff_worktree(&hashes[2], None).unwrap();
    assert_eq!(d.len(), 1);
    // fsck: nothing reachable is missing.
    git(
        repo.git_dir(),
        &[
            "--git-dir",
            repo.git_dir().to_str().unwrap(),
            "fsck",
            "--no-dangling",
        ],
    );
}

#[test]
fn seeded_snapshots_survive_the_project_losing_its_git_objects() {
    let p = Project::new();
    git(&p.path(), &["init", "-q"]);
    for i in 0..20 {
        p.write(&format!("src/f{i}.txt"), &format!("file {i}\n"));
    }
    git(&p.path(), &["add", "-A"]);
    git(&p.path(), &["commit", "-qm", "init"]);
    let mut repo = p.repo();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(snap.mode, CaptureMode::Seeded);
    assert!(repo.git_dir().join("objects/info/alternates").exists());
    let handle = gc_in_background(p.path(), Default::default(), None);
    let report = handle.join().unwrap().unwrap();
    assert!(report.internalized, "{report:?}");
    assert!(!repo.git_dir().join("objects/info/alternates").exists());
    // The project's own objects disappear (history rewritten, gc'd, ...).
    std::fs::remove_dir_all(p.path().join(".git")).unwrap();
    let mut repo = p.repo();
    std::fs::remove_file(p.path().join("src/f3.txt")).unwrap();
    let out = repo
        .restore(&snap.hash, Some(&["src/f3.txt".into()]), false)
        .unwrap();
    assert!(out.applied, "{}", out.message);
    assert_eq!(p.read("src/f3.txt").as_deref(), Some("file 3\n"));
}
