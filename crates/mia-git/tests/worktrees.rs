//! Worktrees and comparison against real temporary repositories.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use mia_git::{Cancel, CreateOptions, GitError, PromoteMode, Repo, Settings, Worktrees};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write(p: &Path, s: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

struct Fx {
    _dir: tempfile::TempDir,
    root: PathBuf,
    wt: Worktrees,
}

/// A repository on `main` with two commits, a dirty main tree, an ignored
/// `.env`, and a post-checkout hook that would fail (and leave a mark) if run.
fn fixture(settings: Settings) -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.name", "t"]);
    git(&root, &["config", "user.email", "t@t"]);
    write(&root.join("a.txt"), "a\n");
    write(&root.join("b.txt"), "b\n");
    write(&root.join("c.txt"), "c\n");
    write(&root.join("d.txt"), "d\n");
    write(&root.join(".gitignore"), ".env\nconfig/local.json\n*.log\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "one"]);
    write(&root.join("a.txt"), "a2\n");
    git(&root, &["commit", "-qam", "two"]);
    write(&root.join(".env"), "SECRET=1\n");
    write(&root.join("config/local.json"), "{}\n");
    write(&root.join("debug.log"), "noise\n");
    let hook = root.join(".git/hooks/post-checkout");
    write(
        &hook,
        &format!(
            "#!/bin/sh\ntouch {}\nexit 1\n",
            root.join("HOOK_RAN").display()
        ),
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The user's uncommitted work in the main tree.
    write(&root.join("b.txt"), "user's own edit\n");
    let repo = Repo::discover(&root).unwrap();
    let wt = Worktrees::new(repo, settings);
    Fx {
        _dir: dir,
        root: root.canonicalize().unwrap(),
        wt,
    }
}

fn no_cancel() -> Cancel {
    Cancel::default()
}

fn create(fx: &Fx, name: Option<&str>) -> mia_git::Created {
    fx.wt
        .create(
            &CreateOptions {
                name: name.map(str::to_string),
                base: None,
            },
            &no_cancel(),
            &mut |_| {},
        )
        .unwrap()
}

#[test]
fn create_leaves_the_main_tree_alone_runs_no_hooks_and_copies_included_files() {
    let fx = fixture(Settings::default());
    write(&fx.root.join(".worktreeinclude"), ".env\nconfig/\n");
    let status_before = git(&fx.root, &["status", "--porcelain"]);
    let c = create(&fx, None);
    // adjective-noun on mia-code/
    let (adj, noun) = c.name.split_once('-').unwrap();
    assert!(mia_git::names::ADJECTIVES.contains(&adj), "{}", c.name);
    assert!(mia_git::names::NOUNS.contains(&noun), "{}", c.name);
    assert_eq!(c.branch, format!("mia-code/{}", c.name));
    assert_eq!(c.path, fx.root.join(".mia-code/worktrees").join(&c.name));
    assert_eq!(c.base, git(&fx.root, &["rev-parse", "HEAD"]));
    assert_eq!(
        std::fs::read_to_string(c.path.join("a.txt")).unwrap(),
        "a2\n"
    );
    assert_eq!(
        std::fs::read_to_string(c.path.join("b.txt")).unwrap(),
        "b\n"
    );
    assert_eq!(c.included, vec![".env", "config/local.json"]);
    assert_eq!(
        std::fs::read_to_string(c.path.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert!(
        !c.path.join("debug.log").exists(),
        "only listed ignored files"
    );
    assert!(!fx.root.join("HOOK_RAN").exists(), "the project's hook ran");
    // The main tree: same status, the user's edit intact, the worktrees dir invisible.
    assert_eq!(git(&fx.root, &["status", "--porcelain"]), status_before);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("b.txt")).unwrap(),
        "user's own edit\n"
    );
    assert_eq!(
        git(&fx.root, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "main"
    );
}

#[test]
fn hooks_run_only_when_opted_in() {
    let fx = fixture(Settings {
        run_hooks: true,
        ..Settings::default()
    });
    let _ = fx
        .wt
        .create(&CreateOptions::default(), &no_cancel(), &mut |_| {});
    assert!(fx.root.join("HOOK_RAN").exists());
}

#[test]
fn collisions_and_bad_input_say_what_is_wrong() {
    let fx = fixture(Settings::default());
    create(&fx, Some("calm-brook"));
    let err = |name: &str, base: Option<&str>| {
        fx.wt
            .create(
                &CreateOptions {
                    name: Some(name.into()),
                    base: base.map(str::to_string),
                },
                &no_cancel(),
                &mut |_| {},
            )
            .unwrap_err()
            .to_string()
    };
    assert!(err("calm-brook", None).contains("branch mia-code/calm-brook already exists"));
    git(&fx.root, &["branch", "mia-code/taken"]);
    assert!(err("taken", None).contains("branch mia-code/taken already exists"));
    std::fs::create_dir_all(fx.root.join(".mia-code/worktrees/squat")).unwrap();
    assert!(err("squat", None).contains("directory"));
    assert!(err("Bad Name", None).contains("not valid"));
    assert!(err("ok-name", Some("no-such-ref")).contains("no branch, tag or commit"));
    assert!(err("ok-name", Some("--upload-pack=x")).contains("cannot start with"));
}

#[test]
fn base_can_be_any_ref() {
    let fx = fixture(Settings::default());
    let first = git(&fx.root, &["rev-parse", "HEAD~1"]);
    git(&fx.root, &["tag", "v1", &first]);
    let c = fx
        .wt
        .create(
            &CreateOptions {
                name: Some("from-tag".into()),
                base: Some("v1".into()),
            },
            &no_cancel(),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(c.base, first);
    assert_eq!(
        std::fs::read_to_string(c.path.join("a.txt")).unwrap(),
        "a\n"
    );
    let info = fx.wt.get("from-tag").unwrap();
    assert_eq!(info.base_ref, None, "a tag is not a branch to merge into");
}

#[test]
fn submodules_are_initialised() {
    let fx = fixture(Settings::default());
    let sub = fx.root.parent().unwrap().join("sub");
    std::fs::create_dir(&sub).unwrap();
    git(&sub, &["init", "-q", "-b", "main"]);
    write(&sub.join("lib.txt"), "lib\n");
    git(&sub, &["add", "-A"]);
    git(&sub, &["commit", "-qm", "lib"]);
    git(
        &fx.root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.to_str().unwrap(),
            "vendor/sub",
        ],
    );
    git(&fx.root, &["commit", "-qm", "sub"]);
    let c = create(&fx, Some("with-sub"));
    assert!(c.submodules);
    assert_eq!(
        std::fs::read_to_string(c.path.join("vendor/sub/lib.txt")).unwrap(),
        "lib\n"
    );
}

#[test]
fn start_scripts_stream_and_a_failure_keeps_the_worktree() {
    let fx = fixture(Settings {
        start_scripts: vec![
            "echo installing; echo warn >&2".into(),
            "exit 3".into(),
            "touch never".into(),
        ],
        ..Settings::default()
    });
    let mut lines = Vec::new();
    let c = fx
        .wt
        .create(&CreateOptions::default(), &no_cancel(), &mut |l| {
            lines.push((l.stderr, l.line.clone()))
        })
        .unwrap();
    assert!(
        lines.contains(&(false, "installing".to_string())),
        "{lines:?}"
    );
    assert!(lines.contains(&(true, "warn".to_string())), "{lines:?}");
    assert_eq!(c.scripts.len(), 2, "stops at the failing script");
    assert_eq!(c.scripts[0].exit_code, Some(0));
    assert_eq!(c.scripts[1].exit_code, Some(3));
    assert!(c.path.is_dir(), "the worktree stays");
    assert!(!c.path.join("never").exists());
    // Cancelled: the process group is killed.
    let cancel = Cancel::default();
    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    let r = mia_git::run_script("sleep 30", &c.path, None, &cancel, None, &mut |_| {}).unwrap();
    assert!(
        r.cancelled && r.exit_code.is_none() && r.duration_ms < 5000,
        "{r:?}"
    );
}

#[test]
fn list_remove_and_reset_know_what_would_be_lost() {
    let fx = fixture(Settings::default());
    let a = create(&fx, Some("clean-one"));
    let b = create(&fx, Some("dirty-one"));
    let c = create(&fx, Some("ahead-one"));
    write(&b.path.join("a.txt"), "changed\n");
    write(&c.path.join("new.txt"), "n\n");
    git(&c.path, &["add", "-A"]);
    git(&c.path, &["commit", "-qm", "work"]);
    let list = fx.wt.list().unwrap();
    let names: Vec<&str> = list.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["clean-one", "dirty-one", "ahead-one"]);
    assert!(list[0].merged && list[0].dirty.is_empty());
    assert_eq!(list[1].dirty, vec!["a.txt"]);
    assert!(!list[1].merged);
    assert_eq!(list[2].ahead, 1);
    assert!(list[0].size_bytes > 0);
    let e = fx.wt.remove("dirty-one", false).unwrap_err().to_string();
    assert!(
        e.contains("1 uncommitted change(s) (a.txt)") && e.contains("--force"),
        "{e}"
    );
    let e = fx.wt.remove("ahead-one", false).unwrap_err().to_string();
    assert!(
        e.contains("1 commit(s) only mia-code/ahead-one holds"),
        "{e}"
    );
    fx.wt.remove("clean-one", false).unwrap();
    assert!(!a.path.exists());
    assert!(git(&fx.root, &["branch", "--list", "mia-code/clean-one"]).is_empty());
    fx.wt.remove("dirty-one", true).unwrap();
    assert!(!b.path.exists());
    // reset: back to the base, own commit and files gone
    let (r, _) = fx.wt.reset("ahead-one").unwrap();
    assert_eq!(r.ahead, 0);
    assert!(!c.path.join("new.txt").exists());
    assert!(matches!(
        fx.wt.remove("nope", false),
        Err(GitError::NotFound(_))
    ));
}

#[test]
fn compare_classifies_every_path_and_take_copies_across() {
    let fx = fixture(Settings::default());
    let a = create(&fx, Some("attempt-a"));
    let b = create(&fx, Some("attempt-b"));
    // same in both (uncommitted in a, committed in b)
    write(&a.path.join("a.txt"), "same\n");
    write(&b.path.join("a.txt"), "same\n");
    git(&b.path, &["commit", "-qam", "b work"]);
    // only in a; only in b (a new untracked file)
    write(&a.path.join("b.txt"), "only a\n");
    write(&b.path.join("new.txt"), "only b\n");
    // both changed differently; deleted in a
    write(&a.path.join("c.txt"), "c from a\n");
    write(&b.path.join("c.txt"), "c from b\nsecond line\n");
    std::fs::remove_file(a.path.join("d.txt")).unwrap();
    let cmp = fx.wt.compare("attempt-a", "attempt-b").unwrap();
    assert_eq!(cmp.base, a.base);
    let between: Vec<(&str, &str)> = cmp
        .between
        .iter()
        .map(|x| (x.path.as_str(), x.status.as_str()))
        .collect();
    assert_eq!(
        between,
        [
            ("a.txt", "same"),
            ("b.txt", "only_a"),
            ("c.txt", "differ"),
            ("d.txt", "only_a"),
            ("new.txt", "only_b"),
        ]
    );
    let d = cmp.a.files.iter().find(|f| f.path == "d.txt").unwrap();
    assert_eq!(d.status.as_str(), "deleted");
    let c_b = cmp.b.files.iter().find(|f| f.path == "c.txt").unwrap();
    assert_eq!((c_b.additions, c_b.deletions), (2, 1));
    assert_eq!(cmp.b.stats.files, 3);
    // The worktrees' own indexes were not touched.
    assert!(git(&a.path, &["diff", "--cached", "--name-only"]).is_empty());
    // take: b's c.txt into a (a has its own version: refused, then
    // forced with a copy in the trash), a's deletion of d.txt into b, into main too
    let e = fx
        .wt
        .take("attempt-b", "c.txt", "attempt-a", false)
        .unwrap_err();
    assert!(e.to_string().contains("has its own version"), "{e}");
    assert_eq!(
        std::fs::read_to_string(a.path.join("c.txt")).unwrap(),
        "c from a\n"
    );
    let kept = fx
        .wt
        .take("attempt-b", "c.txt", "attempt-a", true)
        .unwrap()
        .unwrap();
    assert_eq!(kept.files, vec!["c.txt"]);
    assert_eq!(
        std::fs::read_to_string(a.path.join("c.txt")).unwrap(),
        "c from b\nsecond line\n"
    );
    fx.wt
        .take("attempt-a", "d.txt", "attempt-b", false)
        .unwrap();
    assert!(!b.path.join("d.txt").exists());
    fx.wt.take("attempt-b", "new.txt", "main", false).unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.root.join("new.txt")).unwrap(),
        "only b\n"
    );
    let cmp = fx.wt.compare("attempt-a", "attempt-b").unwrap();
    assert!(
        cmp.between
            .iter()
            .any(|x| x.path == "c.txt" && x.status.as_str() == "same")
    );
    assert!(fx.wt.take("attempt-a", "../escape", "main", false).is_err());
    // A symlinked folder in the target cannot lead outside the attempt.
    #[cfg(unix)]
    {
        let outside = fx.root.parent().unwrap().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, b.path.join("evil")).unwrap();
        write(&a.path.join("evil/x.txt"), "x\n");
        let e = fx
            .wt
            .take("attempt-a", "evil/x.txt", "attempt-b", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!outside.join("x.txt").exists());
    }
    // A base that is an option, not a commit, is refused before git sees it.
    assert!(
        fx.wt
            .file_diff("attempt-b", "--output=/tmp/x", "c.txt")
            .is_err()
    );
    assert!(
        fx.wt
            .take("attempt-a", ".git/config", "main", false)
            .is_err()
    );
    let diff = fx.wt.file_diff("attempt-b", &cmp.base, "c.txt").unwrap();
    assert!(diff.contains("+second line"), "{diff}");
    // The same file as bytes on both sides, for a structured diff.
    assert!(
        fx.wt
            .file_sides("attempt-b", "--output=/tmp/x", "c.txt")
            .is_err()
    );
    let sides = fx.wt.file_sides("attempt-b", &cmp.base, "c.txt").unwrap();
    let after = String::from_utf8(sides.after.unwrap().1).unwrap();
    assert!(after.contains("second line"), "{after}");
    let before = sides.before.map(|(_, b)| String::from_utf8(b).unwrap());
    assert_eq!(before.as_deref(), Some("c\n"));
    // A file on neither side has no sides.
    let none = fx
        .wt
        .file_sides("attempt-b", &cmp.base, "nowhere.txt")
        .unwrap();
    assert_eq!((none.before, none.after), (None, None));
}

#[test]
fn promote_fast_forwards_merges_and_refuses_conflicts_without_changing_anything() {
    let fx = fixture(Settings {
        auto_cleanup: false,
        ..Settings::default()
    });
    // The user's edit in the main tree must survive promotions.
    let a = create(&fx, Some("winner"));
    write(&a.path.join("new.txt"), "from the winner\n");
    let p = fx.wt.promote("winner", PromoteMode::Merge, false).unwrap();
    assert!(p.fast_forward);
    assert_eq!(p.merged_into.as_deref(), Some("main"));
    assert_eq!(git(&fx.root, &["rev-parse", "main"]), p.head);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("new.txt")).unwrap(),
        "from the winner\n"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("b.txt")).unwrap(),
        "user's own edit\n"
    );

    // A merge commit: main moved on meanwhile (not touching the same file).
    let b = create(&fx, Some("second"));
    write(&b.path.join("c.txt"), "c by second\n");
    git(&fx.root, &["add", "d.txt"]);
    write(&fx.root.join("d.txt"), "d on main\n");
    git(&fx.root, &["commit", "-qm", "main moves", "--", "d.txt"]);
    let p = fx.wt.promote("second", PromoteMode::Merge, false).unwrap();
    assert!(!p.fast_forward);
    let parents = git(&fx.root, &["rev-list", "--parents", "-n1", "main"]);
    assert_eq!(parents.split_whitespace().count(), 3, "a merge commit");
    assert_eq!(
        std::fs::read_to_string(fx.root.join("c.txt")).unwrap(),
        "c by second\n"
    );

    // A conflict: nothing changes anywhere.
    let c = create(&fx, Some("clash"));
    write(&c.path.join("c.txt"), "c by clash\n");
    write(&fx.root.join("c.txt"), "c on main again\n");
    git(&fx.root, &["commit", "-qm", "main edits c", "--", "c.txt"]);
    let main_before = git(&fx.root, &["rev-parse", "main"]);
    let e = fx
        .wt
        .promote("clash", PromoteMode::Merge, false)
        .unwrap_err();
    assert!(
        matches!(&e, GitError::MergeConflict { files, .. } if files == &vec!["c.txt".to_string()]),
        "{e}"
    );
    assert_eq!(git(&fx.root, &["rev-parse", "main"]), main_before);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("c.txt")).unwrap(),
        "c on main again\n"
    );
    assert!(git(&fx.root, &["status", "--porcelain", "--", "c.txt"]).is_empty());
    // Keep the branch for a pull request instead.
    let k = fx
        .wt
        .promote("clash", PromoteMode::KeepBranch, false)
        .unwrap();
    assert_eq!(k.merged_into, None);
    assert_eq!(git(&fx.root, &["rev-parse", "mia-code/clash"]), k.head);
}

#[test]
fn promote_cleans_up_when_asked() {
    let fx = fixture(Settings::default());
    let a = create(&fx, Some("done"));
    let other = create(&fx, Some("loser"));
    write(&a.path.join("x.txt"), "x\n");
    let p = fx.wt.promote("done", PromoteMode::Merge, false).unwrap();
    assert!(p.removed);
    assert!(!a.path.exists());
    assert_eq!(p.others, vec!["loser"]);
    assert!(other.path.exists());
}

#[test]
fn concurrent_comparisons_of_one_attempt_wait_for_each_other() {
    let fx = fixture(Settings::default());
    let c = create(&fx, Some("alpha"));
    write(&c.path.join("new.txt"), "new\n");
    let wt = std::sync::Arc::new(fx.wt.clone());
    let trees: Vec<String> = (0..6)
        .map(|_| {
            let wt = wt.clone();
            let path = c.path.clone();
            std::thread::spawn(move || wt.working_tree("alpha", &path))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap()
                .expect("no comparison fails on another's index lock")
        })
        .collect();
    assert!(trees.windows(2).all(|w| w[0] == w[1]), "{trees:?}");
}
