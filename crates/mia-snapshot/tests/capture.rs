#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::{Project, reference_tree};
use mia_snapshot::{
    CaptureContext, CaptureMode, ExcludeReason, SnapshotConfig, SnapshotError, SnapshotRepo,
};
use mia_testkit::repo as fixture;

fn sample(p: &Project) {
    p.write("README.md", "# hi\n");
    p.write("src/main.rs", "fn main() {}\n");
    p.write("src/a.txt", "a\n");
    p.write("src/a/b.txt", "nested\n");
    p.write("src/a0", "zero\n");
    p.write(".hidden/x", "dot\n");
    p.write(".gitignore", "*.log\nsecret/\n");
    p.write("debug.log", "ignored\n");
    p.write("secret/key", "ignored\n");
    p.write("deep/er/and/deeper/file.txt", "deep\n");
    p.write("src/.gitignore", "*.tmp\n!keep.tmp\n/only-here\n");
    p.write("src/x.tmp", "ignored\n");
    p.write("src/keep.tmp", "kept\n");
    p.write("src/only-here", "ignored\n");
    p.write("src/a/only-here", "kept: pattern is anchored\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.write("run.sh", "#!/bin/sh\n");
        std::fs::set_permissions(
            p.path().join("run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::os::unix::fs::symlink("src/main.rs", p.path().join("link")).unwrap();
    }
}

#[test]
fn full_scan_matches_git_add_all_write_tree() {
    let p = Project::new();
    sample(&p);
    let mut repo = p.repo();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(snap.hash, reference_tree(&p.path()));
    assert_eq!(snap.mode, CaptureMode::FullScan);
    // ignored files are not counted: README, main.rs, a.txt, b.txt, a0, x, .gitignore, file.txt, run.sh, link
    assert_eq!(snap.files, if cfg!(unix) { 13 } else { 11 });
    // A second scan with nothing changed gives the same tree.
    let again = repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(again.hash, snap.hash);
}

#[test]
fn known_paths_capture_equals_full_scan() {
    let p = Project::new();
    sample(&p);
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    p.write("src/main.rs", "fn main() { println!(); }\n");
    p.write("src/new/dir/file.rs", "new\n");
    std::fs::remove_file(p.path().join("src/a/b.txt")).unwrap();
    let paths: Vec<PathBuf> = vec![
        "src/main.rs".into(),
        p.path().join("src/new/dir/file.rs"),
        "src/a/b.txt".into(),
    ];
    let snap = repo
        .capture(&CaptureContext::default(), Some(&paths))
        .unwrap();
    assert_eq!(snap.mode, CaptureMode::Paths);
    assert_eq!(snap.hash, reference_tree(&p.path()));
    let full = p.repo().capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(full.hash, snap.hash);
    assert_eq!(full.files, snap.files);
    // A fresh repo object (as a CLI process would) reuses the stat cache.
    p.write("README.md", "# changed\n");
    let full2 = p.repo().capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(full2.hash, reference_tree(&p.path()));
}

#[test]
fn large_files_and_heavy_dirs_are_noted_not_stored_binaries_are_stored() {
    let p = Project::new();
    p.write("a.txt", "text\n");
    std::fs::write(p.path().join("blob.dat"), b"abc\0def").unwrap();
    std::fs::write(p.path().join("pic.png"), b"not really png").unwrap();
    p.write("node_modules/x/index.js", "module\n");
    p.write("big.txt", &"x".repeat(3000));
    p.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    p.write("vendor/lib/x.txt", "inside a nested repo\n");
    let cfg = SnapshotConfig {
        max_file_size: 1000,
        ..p.cfg()
    };
    let mut repo = SnapshotRepo::open(p.path(), cfg).unwrap();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    // Binary files are stored (undo needs them); the cap, heavy
    // directories and nested repositories keep content out.
    assert_eq!(snap.files, 3);
    let reasons: Vec<(String, ExcludeReason)> = snap
        .excluded
        .iter()
        .map(|e| (e.path.clone(), e.reason))
        .collect();
    assert!(reasons.contains(&("big.txt".into(), ExcludeReason::TooLarge)));
    assert!(reasons.contains(&("node_modules/".into(), ExcludeReason::ExcludedDir)));
    assert!(
        reasons.contains(&("vendor/lib/".into(), ExcludeReason::NestedRepo)),
        "{reasons:?}"
    );
    assert_eq!(snap.excluded_total, 3, "{reasons:?}");
    // Named paths obey the same rules.
    p.write("a.txt", &"y".repeat(2000));
    let s2 = repo
        .capture(&CaptureContext::default(), Some(&[PathBuf::from("a.txt")]))
        .unwrap();
    assert_eq!(s2.files, 2);
    assert_eq!(s2.excluded[0].reason, ExcludeReason::TooLarge);
}

#[test]
fn refuses_home_and_root() {
    let err = SnapshotRepo::open("/", SnapshotConfig::default()).unwrap_err();
    assert!(
        matches!(err, SnapshotError::UnsafeProjectRoot { .. }),
        "{err}"
    );
    if let Some(home) = std::env::var_os("HOME")
        && std::path::Path::new(&home).is_dir()
    {
        let err = SnapshotRepo::open(&home, SnapshotConfig::default()).unwrap_err();
        assert!(err.to_string().contains("home directory"), "{err}");
    }
}

#[test]
fn project_git_is_untouched_and_excludes_our_dir() {
    let p = Project::new();
    fixture::init(&p.path()).unwrap();
    sample(&p);
    let head = fixture::commit_all(&p.path(), "init").unwrap();
    let mut repo = p.repo();
    p.write("src/main.rs", "changed\n");
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(snap.mode, CaptureMode::Seeded);
    assert_eq!(snap.hash, reference_tree(&p.path()));
    let status = fixture::status(&p.path()).unwrap();
    assert_eq!(
        status,
        [("src/main.rs".to_string(), git2::Status::WT_MODIFIED)],
        "our dir must not show up"
    );
    assert_eq!(fixture::head(&p.path()).unwrap(), head);
    let exclude = std::fs::read_to_string(p.path().join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("/.mia-code/"));
    // The history is outside the work tree.
    assert!(!p.path().join(".mia-code/snapshots").exists());
    assert!(repo.git_dir().starts_with(p.store.path()));
}

#[test]
fn time_budget_makes_capture_unavailable_and_keeps_progress() {
    let p = Project::new();
    for i in 0..300 {
        p.write(&format!("d{}/f{i}.txt", i % 7), &format!("{i}\n"));
    }
    let cfg = SnapshotConfig {
        time_budget: std::time::Duration::from_nanos(1),
        ..p.cfg()
    };
    let mut repo = SnapshotRepo::open(p.path(), cfg).unwrap();
    let err = repo.capture(&CaptureContext::default(), None).unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    assert!(err.to_string().contains("time budget"));
    // Unbounded capture still works and equals git's tree.
    let snap = repo
        .capture_unbounded(&CaptureContext::default(), None)
        .unwrap();
    assert_eq!(snap.hash, reference_tree(&p.path()));
}

#[test]
fn stale_locks_are_recovered() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    let mut repo = p.repo();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let dir = repo.git_dir().to_path_buf();
    // What a crash mid-write leaves behind: git's own lock files and lock
    // files naming a dead process.
    std::fs::write(repo.state_dir().join("lock"), "999999").unwrap();
    std::fs::write(repo.state_dir().join("scan.lock"), "999999").unwrap();
    std::fs::create_dir_all(dir.join("refs/mia")).unwrap();
    std::fs::write(dir.join("refs/mia/latest.lock"), "").unwrap();
    std::fs::write(dir.join("packed-refs.lock"), "").unwrap();
    p.write("a.txt", "b\n");
    let snap = repo
        .capture(&CaptureContext::default(), Some(&["a.txt".into()]))
        .unwrap();
    assert_eq!(snap.hash, reference_tree(&p.path()));
    // A step with unknown paths is not blocked by a dead holder's file.
    let pending = repo.begin_step(CaptureContext::default(), None).unwrap();
    repo.finish_step(pending).unwrap();
    // git's own lock files go once gc holds the store exclusively.
    repo.gc().unwrap();
    assert!(!dir.join("refs/mia/latest.lock").exists());
    assert!(!dir.join("packed-refs.lock").exists());
}

#[test]
fn live_lock_blocks_until_released() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    let mut repo = p.repo();
    let other = p.repo();
    let held = other.lock_until(None).unwrap();
    let cfg_err = {
        let mut r = SnapshotRepo::open(
            p.path(),
            SnapshotConfig {
                time_budget: std::time::Duration::from_millis(50),
                ..p.cfg()
            },
        )
        .unwrap();
        r.capture(&CaptureContext::default(), None).unwrap_err()
    };
    assert!(matches!(cfg_err, SnapshotError::Locked { .. }), "{cfg_err}");
    drop(held);
    repo.capture(&CaptureContext::default(), None).unwrap();
}

#[test]
fn fresh_processes_with_a_stale_cache_file_still_match_git() {
    let p = Project::new();
    sample(&p);
    let first = p.repo().capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(first.hash, reference_tree(&p.path()));
    for round in 0..4 {
        // A few edits, a deletion and a new file per round, each captured
        // by a new SnapshotRepo (as separate CLI processes would).
        p.write("src/main.rs", &format!("fn main() {{ {round} }}\n"));
        p.write(&format!("new{round}/f.txt"), "n\n");
        if round == 2 {
            std::fs::remove_file(p.path().join("README.md")).unwrap();
        }
        let s = p.repo().capture(&CaptureContext::default(), None).unwrap();
        assert_eq!(s.hash, reference_tree(&p.path()), "round {round}");
    }
}

#[test]
fn bulk_first_snapshot_goes_to_a_pack_and_restores() {
    let p = Project::new();
    for i in 0..1500 {
        p.write(&format!("d{}/f{i}.txt", i % 37), &format!("content {i}\n"));
    }
    // The subject is the pack, not the time budget (which has its own
    // test): under Wine on a busy machine 1,500 files take over 2 s.
    let cfg = mia_snapshot::SnapshotConfig {
        time_budget: std::time::Duration::from_secs(120),
        ..p.cfg()
    };
    let mut repo = mia_snapshot::SnapshotRepo::open(p.path(), cfg).unwrap();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(snap.hash, reference_tree(&p.path()));
    let packs: Vec<_> = std::fs::read_dir(repo.git_dir().join("objects/pack"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .collect();
    assert_eq!(packs.len(), 1, "objects were written as one pack");
    std::fs::remove_file(p.path().join("d5/f5.txt")).unwrap();
    let out = repo
        .restore(&snap.hash, Some(&[PathBuf::from("d5/f5.txt")]), false)
        .unwrap();
    assert!(out.applied);
    assert_eq!(p.read("d5/f5.txt").as_deref(), Some("content 5\n"));
    // git itself can read everything.
    common::fsck(repo.git_dir());
}

/// The OS sandbox's mount points for missing protected paths (an empty
/// file with the sticky bit, made while an MCP server or a command runs)
/// are never captured: a step would "create" them and its undo would find
/// them gone.
#[cfg(unix)]
#[test]
fn the_sandboxs_placeholders_are_not_captured() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    sample(&p);
    let mut repo = p.repo();
    let before = repo.capture(&CaptureContext::default(), None).unwrap();
    for name in [".mcp.json", ".envrc"] {
        p.write(name, "");
        std::fs::set_permissions(p.path().join(name), std::fs::Permissions::from_mode(0o1644))
            .unwrap();
    }
    // A person's empty file (no sticky bit) is captured as ever.
    p.write("empty.txt", "");
    let after = p.repo().capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(after.files, before.files + 1);
    std::fs::remove_file(p.path().join("empty.txt")).unwrap();
    let again = p.repo().capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(again.hash, before.hash);
}

/// A session in one of mia-code's worktrees: the project sits under
/// `.mia-code/worktrees/`, whose `.gitignore` (and the main repository's
/// `info/exclude`) ignore everything. Ignore files above the project's
/// own repository must not hide its files (git does not read them either).
#[test]
fn a_project_below_a_directory_that_ignores_everything_is_captured_whole() {
    let outer = tempfile::tempdir().unwrap();
    let outer_path = outer.path().canonicalize().unwrap();
    common::write(&outer_path, ".gitignore", "*\n");
    common::write(&outer_path, ".mia-code/.gitignore", "*\n");
    let main = fixture::init(&outer_path).unwrap();
    common::write(&outer_path, "tracked.txt", "t\n");
    fixture::add(&outer_path, &["tracked.txt"]).unwrap();
    fixture::commit(&outer_path, "one").unwrap();
    common::write(
        &outer_path,
        ".mia-code/worktrees/.gitignore",
        "# mia-code experiment worktrees\n*\n",
    );
    let project = outer_path.join(".mia-code/worktrees/attempt");
    // A linked worktree: its `.git` is a file.
    main.worktree("attempt", &project, None).unwrap();
    std::fs::remove_file(project.join("tracked.txt")).unwrap();
    common::write(&project, "src/main.rs", "fn main() {}\n");
    common::write(&project, "README.md", "# hi\n");
    common::write(&project, ".gitignore", "*.log\n");
    common::write(&project, "debug.log", "ignored by its own rules\n");
    let store = tempfile::tempdir().unwrap();
    let cfg = SnapshotConfig {
        store_root: Some(store.path().to_path_buf()),
        ..SnapshotConfig::default()
    };
    let mut repo = SnapshotRepo::open(&project, cfg).unwrap();
    let snap = repo.capture(&CaptureContext::default(), None).unwrap();
    assert_eq!(snap.files, 3, "src/main.rs, README.md and .gitignore");
    assert_eq!(snap.hash, reference_tree(&project));
}
