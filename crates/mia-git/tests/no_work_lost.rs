//! Worktree commands never lose a person's work (real git, real files):
//! each case a finding of a hurried user's or an attacker's session, with
//! the repository's state compared before and after (`git status
//! --ignored`, `git log --all`, file contents, submodule objects).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use mia_git::{
    Cancel, CreateOptions, GitError, PromoteMode, Repo, Settings, WorktreeState, Worktrees,
};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "protocol.file.allow=always"])
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

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

struct Fx {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    wt: Worktrees,
}

/// A repository on `main`: tracked files, an ignored `.env` and logs, and
/// `.worktreeinclude` copying `.env` into new worktrees.
fn fixture() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.name", "t"]);
    git(&root, &["config", "user.email", "t@t"]);
    write(&root.join("a.txt"), "a\n");
    write(&root.join("b.txt"), "b\n");
    write(
        &root.join(".gitignore"),
        ".env\nlogs/\nnode_modules/\n.mia-code/\n",
    );
    write(&root.join(".worktreeinclude"), ".env\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "one"]);
    // A person's stash: shared by every worktree, never touched.
    write(&root.join("a.txt"), "stashed edit\n");
    git(&root, &["stash", "-q"]);
    write(&root.join(".env"), "KEY=main\n");
    let wt = Worktrees::new(Repo::discover(&root).unwrap(), Settings::default());
    Fx {
        _dir: dir,
        base,
        root,
        wt,
    }
}

fn create(fx: &Fx, name: &str) -> PathBuf {
    fx.wt
        .create(
            &CreateOptions {
                name: Some(name.into()),
                base: None,
            },
            &Cancel::default(),
            &mut |_| {},
        )
        .unwrap()
        .path
}

/// Everything a refusal must leave as it was: for the main checkout and
/// every worktree, `git status --ignored`, every file's bytes (`.git` aside);
/// and the repository's `git log --all`, `git stash list` and worktree list.
fn state(fx: &Fx) -> Vec<(String, String)> {
    fn files(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().to_string();
            if name == ".git" {
                continue;
            }
            let r = format!("{rel}/{name}");
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                files(&e.path(), &r, out);
            } else if ty.is_file() {
                out.push((
                    r,
                    String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into(),
                ));
            }
        }
    }
    let mut out = vec![
        (
            "log".into(),
            git(&fx.root, &["log", "--all", "--format=%H %D"]),
        ),
        ("stash".into(), git(&fx.root, &["stash", "list"])),
        (
            "worktrees".into(),
            git(&fx.root, &["worktree", "list", "--porcelain"]),
        ),
    ];
    let mut dirs = vec![fx.root.clone()];
    if let Ok(rd) = std::fs::read_dir(fx.root.join(".mia-code/worktrees")) {
        let mut more: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        more.sort();
        dirs.extend(more);
    }
    for d in dirs {
        if d.join(".git").exists() {
            out.push((
                format!("status {}", d.display()),
                git(&d, &["status", "--ignored", "--porcelain=v1", "-uall"]),
            ));
        }
    }
    files(&fx.root, "", &mut out);
    out
}

/// Runs an operation that must be refused because it would lose work:
/// the message, after checking that nothing at all changed.
fn refused<T: std::fmt::Debug>(fx: &Fx, op: impl FnOnce() -> mia_git::Result<T>) -> String {
    let before = state(fx);
    let m = would_lose(op().unwrap_err());
    let after = state(fx);
    for (b, a) in before.iter().zip(after.iter()) {
        assert_eq!(b, a, "a refusal changed something ({m})");
    }
    assert_eq!(
        before.len(),
        after.len(),
        "a refusal added or removed files ({m})"
    );
    m
}

fn would_lose(e: GitError) -> String {
    match e {
        GitError::WouldLose(m) => m,
        other => panic!("expected WouldLose, got {other:?}"),
    }
}

#[test]
fn take_copies_only_what_the_attempt_changed_and_never_deletes_the_targets_own_files() {
    let fx = fixture();
    let t1 = create(&fx, "t1");
    // The person's own work in main: an untracked note, an ignored .env
    // (its own value), an uncommitted edit.
    write(&fx.root.join("NOTES.md"), "my notes\n");
    write(&fx.root.join(".env"), "KEY=mine\n");
    write(&fx.root.join("a.txt"), "my edit\n");
    // t1 lacks NOTES.md (never had it): an error, nothing deleted.
    let e = fx.wt.take("t1", "NOTES.md", "main", false).unwrap_err();
    assert!(e.to_string().contains("does not exist in t1"), "{e}");
    assert_eq!(read(&fx.root.join("NOTES.md")), "my notes\n");
    // A mistyped path is an error, not a silent success.
    assert!(fx.wt.take("t1", "nope/typo.txt", "main", false).is_err());
    // t1 did not change .env (it is the copy .worktreeinclude made, equal
    // to what main had): nothing to take; main's own .env stays.
    let e = fx.wt.take("t1", ".env", "main", false).unwrap_err();
    assert!(!e.to_string().is_empty());
    assert_eq!(read(&fx.root.join(".env")), "KEY=mine\n");
    // t1 changed a.txt, main has its own edit: refused unless forced.
    write(&t1.join("a.txt"), "t1's a\n");
    let m = refused(&fx, || fx.wt.take("t1", "a.txt", "main", false));
    assert!(m.contains("a.txt") && m.contains("--force"), "{m}");
    assert_eq!(read(&fx.root.join("a.txt")), "my edit\n");
    // Forced: taken, and main's version is in the trash.
    let kept = fx.wt.take("t1", "a.txt", "main", true).unwrap().unwrap();
    assert_eq!(read(&fx.root.join("a.txt")), "t1's a\n");
    let (_, into) = fx
        .wt
        .trash_restore(&kept.id, Some(&fx.base.join("restored")))
        .unwrap();
    assert_eq!(read(&into.join("a.txt")), "my edit\n");
    // t1 deleted b.txt: deleted in main only while main's copy is the base's.
    std::fs::remove_file(t1.join("b.txt")).unwrap();
    write(&fx.root.join("b.txt"), "main changed b\n");
    refused(&fx, || fx.wt.take("t1", "b.txt", "main", false));
    assert!(fx.root.join("b.txt").exists());
    write(&fx.root.join("b.txt"), "b\n");
    fx.wt.take("t1", "b.txt", "main", false).unwrap();
    assert!(!fx.root.join("b.txt").exists());
    // The other way round: `take main X --into t1` keeps t1's own file.
    write(&t1.join("t1-notes.md"), "t1's notes\n");
    let e = fx.wt.take("main", "t1-notes.md", "t1", false).unwrap_err();
    assert!(e.to_string().contains("does not exist in main"), "{e}");
    assert_eq!(read(&t1.join("t1-notes.md")), "t1's notes\n");
}

#[test]
fn remove_keeps_ignored_work_and_force_puts_it_in_the_trash() {
    let fx = fixture();
    let t1 = create(&fx, "t1");
    // .worktreeinclude copied .env in; the attempt edited it and wrote logs.
    assert_eq!(read(&t1.join(".env")), "KEY=main\n");
    write(&t1.join(".env"), "KEY=edited-in-t1\n");
    write(&t1.join("logs/run.log"), "what happened\n");
    write(&t1.join("node_modules/x/index.js"), "regenerable\n");
    let m = refused(&fx, || fx.wt.remove("t1", false));
    assert!(m.contains(".env") && m.contains("logs/run.log"), "{m}");
    assert!(!m.contains("node_modules"), "build output is not work: {m}");
    assert!(t1.join(".env").exists());
    // An unchanged .env alone is not work lost.
    let t2 = create(&fx, "t2");
    assert!(t2.join(".env").exists());
    fx.wt.remove("t2", false).unwrap();
    assert!(!t2.exists());
    // Forced: gone, and kept.
    let stash = git(&fx.root, &["stash", "list", "--format=%H"]);
    let (_, trash) = fx.wt.remove("t1", true).unwrap();
    let trash = trash.unwrap();
    assert!(!t1.exists());
    assert_eq!(
        git(&fx.root, &["stash", "list", "--format=%H"]),
        stash,
        "stashes are the repository's"
    );
    assert!(!stash.is_empty());
    assert!(
        trash.files.contains(&".env".to_string())
            && trash.files.contains(&"logs/run.log".to_string()),
        "{trash:?}"
    );
    let list = fx.wt.trash_list().unwrap();
    assert_eq!(list[0].id, trash.id);
    let (_, into) = fx
        .wt
        .trash_restore(&trash.id, Some(&fx.base.join("back")))
        .unwrap();
    assert_eq!(read(&into.join(".env")), "KEY=edited-in-t1\n");
    assert_eq!(read(&into.join("logs/run.log")), "what happened\n");
    // A restore never overwrites a file that differs: nothing is restored.
    write(&into.join(".env"), "KEY=changed-since\n");
    std::fs::remove_file(into.join("logs/run.log")).unwrap();
    let e = fx
        .wt
        .trash_restore(&trash.id, Some(&into))
        .unwrap_err()
        .to_string();
    assert!(e.contains(".env") && e.contains("--into"), "{e}");
    assert_eq!(read(&into.join(".env")), "KEY=changed-since\n");
    assert!(!into.join("logs/run.log").exists());
}

#[test]
fn commits_only_the_branch_holds_are_kept_and_restored_as_a_branch() {
    let fx = fixture();
    let t1 = create(&fx, "t1");
    write(&t1.join("c.txt"), "work\n");
    git(&t1, &["add", "-A"]);
    git(&t1, &["commit", "-qm", "attempt work"]);
    let tip = git(&t1, &["rev-parse", "HEAD"]);
    let m = refused(&fx, || fx.wt.remove("t1", false));
    assert!(m.contains("1 commit(s) only mia-code/t1 holds"), "{m}");
    let (_, trash) = fx.wt.remove("t1", true).unwrap();
    let trash = trash.unwrap();
    assert!(git(&fx.root, &["branch", "--list", "mia-code/t1"]).is_empty());
    fx.wt.trash_restore(&trash.id, None).unwrap();
    let restored = git(
        &fx.root,
        &["rev-parse", &format!("mia-code-restored/{}", trash.id)],
    );
    assert_eq!(restored, tip);
}

#[test]
fn reset_keeps_what_it_drops() {
    let fx = fixture();
    let t1 = create(&fx, "t1");
    write(&t1.join("a.txt"), "changed\n");
    write(&t1.join("new.txt"), "new\n");
    let (_, trash) = fx.wt.reset("t1").unwrap();
    assert_eq!(read(&t1.join("a.txt")), "a\n");
    assert!(!t1.join("new.txt").exists());
    let trash = trash.unwrap();
    let (_, into) = fx
        .wt
        .trash_restore(&trash.id, Some(&fx.base.join("r")))
        .unwrap();
    assert_eq!(read(&into.join("a.txt")), "changed\n");
    assert_eq!(read(&into.join("new.txt")), "new\n");
}

#[test]
fn commands_act_only_on_the_recorded_branch() {
    let fx = fixture();
    let t1 = create(&fx, "t1");
    // The person switches the worktree to a branch of their own.
    git(&t1, &["switch", "-q", "-c", "my-branch"]);
    write(&t1.join("mine.txt"), "mine\n");
    git(&t1, &["add", "-A"]);
    git(&t1, &["commit", "-qm", "mine"]);
    let info = fx.wt.get("t1").unwrap();
    assert_eq!(info.state, WorktreeState::BranchChanged);
    assert!(fx.wt.reset("t1").is_err());
    let m = refused(&fx, || fx.wt.remove("t1", false));
    assert!(m.contains("my-branch"), "{m}");
    let tip = git(&fx.root, &["rev-parse", "my-branch"]);
    // Forced: the worktree goes, the person's branch and its reflog stay.
    fx.wt.remove("t1", true).unwrap();
    assert_eq!(git(&fx.root, &["rev-parse", "my-branch"]), tip);
    assert!(!git(&fx.root, &["reflog", "show", "my-branch"]).is_empty());
    assert!(git(&fx.root, &["branch", "--list", "mia-code/t1"]).is_empty());
}

#[test]
fn a_moved_or_vanished_worktree_is_reported_and_others_records_are_not_pruned() {
    let fx = fixture();
    let t1 = create(&fx, "t1");
    let _t2 = create(&fx, "t2");
    // A person's own worktree, moved by hand (its record now stale).
    let own = fx.base.join("own-wt");
    git(
        &fx.root,
        &["worktree", "add", "-q", "-b", "own", own.to_str().unwrap()],
    );
    write(&own.join("staged.txt"), "staged\n");
    git(&own, &["add", "staged.txt"]);
    std::fs::rename(&own, fx.base.join("own-wt-moved")).unwrap();
    // t1's directory deleted by hand: listed as missing, the others still work.
    std::fs::remove_dir_all(&t1).unwrap();
    let list = fx.wt.list().unwrap();
    let t1_info = list.iter().find(|w| w.name == "t1").unwrap();
    assert_eq!(t1_info.state, WorktreeState::Missing);
    assert!(
        list.iter()
            .any(|w| w.name == "t2" && w.state == WorktreeState::Ok)
    );
    fx.wt.remove("t2", false).unwrap();
    // Gone by hand: maybe moved, so forgetting it takes --force.
    let m = refused(&fx, || fx.wt.remove("t1", false));
    assert!(
        m.contains("git worktree repair") && m.contains("--force"),
        "{m}"
    );
    assert!(git(&fx.root, &["branch", "--list", "mia-code/t1"]).contains("mia-code/t1"));
    fx.wt.remove("t1", true).unwrap();
    assert!(git(&fx.root, &["branch", "--list", "mia-code/t1"]).is_empty());
    // The person's moved worktree is still registered (no blanket prune).
    let listed = git(&fx.root, &["worktree", "list", "--porcelain"]);
    assert!(listed.contains("own-wt"), "{listed}");
}

#[test]
fn promote_refuses_a_base_checked_out_elsewhere_and_ignored_files_it_would_overwrite() {
    let fx = fixture();
    // main checked out in another worktree: git itself would refuse to move it there.
    let t1 = create(&fx, "t1");
    write(&t1.join("x.txt"), "x\n");
    git(&fx.root, &["switch", "-q", "-c", "elsewhere"]);
    let other = fx.base.join("main-elsewhere");
    git(
        &fx.root,
        &["worktree", "add", "-q", other.to_str().unwrap(), "main"],
    );
    let e = fx.wt.promote("t1", PromoteMode::Merge, false).unwrap_err();
    assert!(e.to_string().contains("checked out in the worktree"), "{e}");
    git(
        &fx.root,
        &["worktree", "remove", "--force", other.to_str().unwrap()],
    );
    git(&fx.root, &["switch", "-q", "main"]);
    // The attempt adds a file main has as an ignored file of its own.
    let t2 = create(&fx, "t2");
    write(&t2.join(".gitignore"), "logs/\n.mia-code/\n");
    write(&t2.join(".env"), "KEY=from-the-attempt\n");
    git(&t2, &["add", "-A"]);
    git(&t2, &["commit", "-qm", "track .env"]);
    write(&fx.root.join(".env"), "KEY=precious\n");
    let m = refused(&fx, || fx.wt.promote("t2", PromoteMode::Merge, false));
    assert!(m.contains(".env"), "{m}");
    assert_eq!(read(&fx.root.join(".env")), "KEY=precious\n");
    let p = fx.wt.promote("t2", PromoteMode::Merge, true).unwrap();
    let trash = p.trash.unwrap();
    assert_eq!(read(&fx.root.join(".env")), "KEY=from-the-attempt\n");
    let (_, into) = fx
        .wt
        .trash_restore(&trash.id, Some(&fx.base.join("kept")))
        .unwrap();
    assert_eq!(read(&into.join(".env")), "KEY=precious\n");
}

#[test]
fn a_conflict_says_the_uncommitted_changes_were_committed() {
    let fx = fixture();
    let t1 = create(&fx, "t1");
    write(&fx.root.join("a.txt"), "main's a\n");
    git(&fx.root, &["commit", "-qam", "main moves on"]);
    write(&t1.join("a.txt"), "t1's a\n");
    let e = fx.wt.promote("t1", PromoteMode::Merge, false).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("conflicts in a.txt"), "{text}");
    assert!(text.contains("were committed on mia-code/t1 as"), "{text}");
    assert!(!text.contains("nothing was changed"), "{text}");
}

#[test]
fn submodule_commits_made_in_a_worktree_are_not_lost() {
    let fx = fixture();
    // A submodule with a file:// remote.
    let sub_remote = fx.base.join("sub-remote");
    std::fs::create_dir(&sub_remote).unwrap();
    git(&sub_remote, &["init", "-q", "-b", "main"]);
    write(&sub_remote.join("s.txt"), "s\n");
    git(&sub_remote, &["add", "-A"]);
    git(&sub_remote, &["commit", "-qm", "sub one"]);
    let url = format!("file://{}", sub_remote.display());
    git(&fx.root, &["submodule", "add", "-q", &url, "sub"]);
    git(&fx.root, &["commit", "-qm", "add sub"]);
    let t1 = create(&fx, "t1");
    // A commit in the worktree's submodule: it exists only there.
    write(&t1.join("sub/s.txt"), "changed in the worktree\n");
    git(&t1.join("sub"), &["commit", "-qam", "sub work"]);
    let sub_commit = git(&t1.join("sub"), &["rev-parse", "HEAD"]);
    git(&t1, &["commit", "-qam", "bump sub"]);
    let m = refused(&fx, || fx.wt.remove("t1", false));
    assert!(m.contains("submodule commit"), "{m}");
    // With `ignore = all`, git status says nothing; `list` still says what
    // would be lost instead of "nothing to lose".
    git(&fx.root, &["config", "submodule.sub.ignore", "all"]);
    let t2 = create(&fx, "t2");
    write(&t2.join("sub/s.txt"), "only in t2's submodule\n");
    git(&t2.join("sub"), &["commit", "-qam", "t2 sub work"]);
    assert_eq!(git(&t2, &["status", "--porcelain"]), "");
    let listed = fx.wt.list().unwrap();
    let t2_info = listed.iter().find(|w| w.name == "t2").unwrap();
    assert!(!t2_info.merged, "{t2_info:?}");
    assert!(
        t2_info
            .would_lose
            .as_deref()
            .unwrap_or("")
            .contains("submodule commit"),
        "{t2_info:?}"
    );
    refused(&fx, || fx.wt.remove("t2", false));
    let (_, trash) = fx.wt.remove("t1", true).unwrap();
    assert!(
        trash
            .unwrap()
            .submodule_commits
            .iter()
            .any(|(_, c)| *c == sub_commit)
    );
    // The commit is still reachable in the main checkout's submodule.
    git(
        &fx.root.join("sub"),
        &["cat-file", "-e", &format!("{sub_commit}^{{commit}}")],
    );
}

#[test]
fn names_that_would_be_taken_for_something_else_are_refused() {
    let fx = fixture();
    let e = fx
        .wt
        .create(
            &CreateOptions {
                name: Some("main".into()),
                base: None,
            },
            &Cancel::default(),
            &mut |_| {},
        )
        .unwrap_err();
    assert!(e.to_string().contains("main"), "{e}");
    git(&fx.root, &["branch", "develop"]);
    let e = fx
        .wt
        .create(
            &CreateOptions {
                name: Some("develop".into()),
                base: None,
            },
            &Cancel::default(),
            &mut |_| {},
        )
        .unwrap_err();
    assert!(e.to_string().contains("existing branch"), "{e}");
}

#[test]
fn one_operation_per_repository_at_a_time() {
    let fx = fixture();
    let held = fx.wt.lock().unwrap();
    let wt = fx.wt.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _l = wt.lock().unwrap();
        tx.send(()).unwrap();
    });
    // The second one waits while the first is held...
    assert!(
        rx.recv_timeout(std::time::Duration::from_millis(300))
            .is_err()
    );
    drop(held);
    // ... and gets it once it is released.
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    waiter.join().unwrap();
}

#[test]
fn the_worktree_directory_stays_inside_the_repository_and_only_ours_are_listed() {
    let fx = fixture();
    // A person's own worktree next to the repository.
    let sibling = fx.base.join("mine");
    git(
        &fx.root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            sibling.to_str().unwrap(),
        ],
    );
    let repo = || Repo::discover(&fx.root).unwrap();
    // `..` (from a project's config) is refused, naming the fix.
    let out = Worktrees::new(
        repo(),
        Settings {
            directory: "..".into(),
            ..Settings::default()
        },
    );
    let e = out.list().unwrap_err().to_string();
    assert!(e.contains("must stay inside the repository"), "{e}");
    assert!(out.remove("mine", true).is_err());
    assert!(sibling.exists());
    // A committed symlink leading out is refused too.
    #[cfg(unix)]
    symlink_leading_out_is_refused(&fx);
    // The person's own choice (global config) may be anywhere; even there,
    // only worktrees mia-code made are listed: their own stays theirs.
    let chosen = Worktrees::new(
        repo(),
        Settings {
            directory: fx.base.clone(),
            contained: false,
            ..Settings::default()
        },
    );
    assert!(chosen.list().unwrap().is_empty());
    assert!(matches!(
        chosen.remove("mine", true),
        Err(GitError::NotFound(_))
    ));
    assert!(sibling.exists());
    assert!(git(&fx.root, &["branch", "--list", "mine"]).contains("mine"));
}

#[cfg(unix)]
fn symlink_leading_out_is_refused(fx: &Fx) {
    std::os::unix::fs::symlink("..", fx.root.join("wt-link")).unwrap();
    let linked = Worktrees::new(
        Repo::discover(&fx.root).unwrap(),
        Settings {
            directory: "wt-link".into(),
            ..Settings::default()
        },
    );
    let e = linked.list().unwrap_err().to_string();
    assert!(e.contains("through a symlink"), "{e}");
    let e = linked
        .create(
            &CreateOptions {
                name: Some("x".into()),
                base: None,
            },
            &Cancel::default(),
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("through a symlink"), "{e}");
}
