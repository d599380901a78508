//! Comparing attempts in a long-lived process, with a watcher per attempt:
//! after every kind of change a person or an agent makes, the watched
//! comparison gives exactly what a full scan gives, and it really is the
//! watcher's list that is used (a feed that lies shows up).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mia_git::{
    AttemptDir, AttemptRead, Cancel, ChangeFeed, CreateOptions, KnownChanges, Repo, Settings,
    WatchedAttempts, Worktrees,
};

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
}

fn fixture() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    for i in 0..40 {
        write(
            &root.join(format!("src/m{}/f{i}.txt", i % 4)),
            &format!("{i}\n"),
        );
    }
    write(&root.join("README.md"), "readme\n");
    write(&root.join(".gitignore"), ".env\n*.log\nbuild/\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "one"]);
    Fx {
        root: dunce::canonicalize(&root).unwrap(),
        _dir: dir,
    }
}

fn worktrees(root: &Path) -> Worktrees {
    Worktrees::new(Repo::discover(root).unwrap(), Settings::default())
}

fn create(wt: &Worktrees, name: &str) -> PathBuf {
    wt.create(
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

/// The tree git itself makes of a working directory (`add -A` into a
/// throw-away copy of its index): what a comparison must find.
fn truth(dir: &Path) -> String {
    let own = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index");
    std::fs::copy(own, &index).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    run(&["add", "-A"]);
    run(&["write-tree"])
}

/// The watched comparison finds what git finds; how it read each attempt.
fn agree(fed: &Worktrees, a: &Path, b: &Path, what: &str) -> (AttemptRead, AttemptRead) {
    let w = fed.compare("a", "b").unwrap();
    assert_eq!(w.a.tree, truth(a), "after {what}: attempt a differs");
    assert_eq!(w.b.tree, truth(b), "after {what}: attempt b differs");
    (w.a.read, w.b.read)
}

#[test]
fn a_watched_comparison_equals_a_scan_after_every_kind_of_change() {
    let fx = fixture();
    let plain = worktrees(&fx.root);
    let a = create(&plain, "a");
    let b = create(&plain, "b");
    let feed = Arc::new(WatchedAttempts::new());
    let fed = worktrees(&fx.root).with_changes(feed.clone());
    let scanned = (AttemptRead::Scanned, AttemptRead::Scanned);
    assert_eq!(agree(&fed, &a, &b, "nothing"), scanned);
    // The watchers start in the background; the comparison after that
    // starts their period and scans once more.
    assert!(feed.wait_started(Duration::from_secs(30)));
    assert_eq!(feed.watched(), 2, "both attempts are watched");
    assert_eq!(agree(&fed, &a, &b, "nothing"), scanned);
    let unchanged = (AttemptRead::Unchanged, AttemptRead::Unchanged);
    assert_eq!(agree(&fed, &a, &b, "nothing"), unchanged);
    let steps: Vec<(&str, Step)> = vec![
        (
            "an edit",
            Box::new(|| write(&a.join("src/m1/f1.txt"), "edited\n")),
        ),
        (
            "a new file in a new directory",
            Box::new(|| write(&b.join("new/deep/x.txt"), "x\n")),
        ),
        (
            "a removed file",
            Box::new(|| std::fs::remove_file(a.join("src/m2/f2.txt")).unwrap()),
        ),
        (
            "a removed top-level file",
            Box::new(|| std::fs::remove_file(b.join("README.md")).unwrap()),
        ),
        (
            "a removed directory",
            Box::new(|| std::fs::remove_dir_all(a.join("src/m3")).unwrap()),
        ),
        (
            "an ignored file",
            Box::new(|| write(&a.join(".env"), "SECRET=2\n")),
        ),
        (
            "an ignored directory",
            Box::new(|| write(&b.join("build/out/x.o"), "obj\n")),
        ),
        (
            "a file made then removed",
            Box::new(|| {
                write(&a.join("tmp.txt"), "t\n");
                std::fs::remove_file(a.join("tmp.txt")).unwrap();
            }),
        ),
        (
            "a rename across directories",
            Box::new(|| {
                std::fs::rename(b.join("src/m0/f0.txt"), b.join("src/m1/moved.txt")).unwrap()
            }),
        ),
        (
            "a directory moved in from outside",
            Box::new(|| {
                let outside = fx.root.parent().unwrap().join("outside");
                write(&outside.join("in/y.txt"), "y\n");
                std::fs::rename(&outside, a.join("src/arrived")).unwrap();
            }),
        ),
        (
            "a commit in the attempt",
            Box::new(|| {
                git(&b, &["add", "-A"]);
                git(&b, &["commit", "-qm", "b work"]);
            }),
        ),
        (
            "a symbolic link",
            Box::new(|| {
                #[cfg(unix)]
                std::os::unix::fs::symlink("../README.md", a.join("src/readme-link")).unwrap();
            }),
        ),
        (
            "a link retargeted",
            Box::new(|| {
                #[cfg(unix)]
                {
                    std::fs::remove_file(a.join("src/readme-link")).unwrap();
                    std::os::unix::fs::symlink("m1/f1.txt", a.join("src/readme-link")).unwrap();
                }
            }),
        ),
        (
            "a file replaced by a directory",
            Box::new(|| {
                std::fs::remove_file(b.join("src/m2/f6.txt")).unwrap();
                write(&b.join("src/m2/f6.txt/inner.txt"), "now a directory\n");
            }),
        ),
        (
            "a directory replaced by a file",
            Box::new(|| {
                std::fs::remove_dir_all(b.join("new")).unwrap();
                write(&b.join("new"), "now a file\n");
            }),
        ),
        (
            "a binary file",
            Box::new(|| {
                std::fs::write(a.join("src/blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
            }),
        ),
        (
            "a file made non-executable then executable",
            Box::new(|| {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(
                        a.join("src/m1/f5.txt"),
                        std::fs::Permissions::from_mode(0o755),
                    )
                    .unwrap();
                }
            }),
        ),
    ];
    let mut watched = 0;
    for (what, step) in &steps {
        step();
        let (ra, rb) = agree(&fed, &a, &b, what);
        // A file turned into a directory or back is left to a scan.
        let may_scan = what.contains("replaced by");
        assert!(
            may_scan || (ra != AttemptRead::Scanned && rb != AttemptRead::Scanned),
            "after {what} an attempt was scanned: {ra:?} {rb:?}"
        );
        watched +=
            usize::from(ra == AttemptRead::Watched) + usize::from(rb == AttemptRead::Watched);
    }
    // Every step but the commit (which changes no file) and the two
    // replacements is read from the watcher's list in at least one attempt.
    assert!(watched >= steps.len() - 3, "{watched} watched reads");
}

/// One change a person or an agent makes.
type Step<'a> = Box<dyn Fn() + 'a>;

/// A feed that says nothing changed, whatever happened.
#[derive(Default)]
struct Liar {
    takes: Mutex<u32>,
}

impl ChangeFeed for Liar {
    fn take(&self, _: &AttemptDir<'_>) -> KnownChanges {
        let mut n = self.takes.lock().unwrap();
        *n += 1;
        // The first take of each attempt cannot know: the scan seeds it.
        if *n <= 2 {
            KnownChanges::Primed
        } else {
            KnownChanges::Paths(Vec::new())
        }
    }
    fn forget(&self, _: &Path) {}
}

#[test]
fn the_feeds_list_is_what_is_read() {
    let fx = fixture();
    let plain = worktrees(&fx.root);
    let a = create(&plain, "a");
    create(&plain, "b");
    let fed = worktrees(&fx.root).with_changes(Arc::new(Liar::default()));
    let before = fed.compare("a", "b").unwrap();
    write(&a.join("src/m1/f1.txt"), "edited\n");
    // The lying feed hides the edit: proof the watched path reads only
    // what the feed names (and so that the test above tests it).
    let hidden = fed.compare("a", "b").unwrap();
    assert_eq!(hidden.a.tree, before.a.tree);
    // A scan sees it, and its new index ends the stale state: the next
    // fed comparison sees it too.
    let scanned = plain.compare("a", "b").unwrap();
    assert_ne!(scanned.a.tree, before.a.tree);
    let after = fed.compare("a", "b").unwrap();
    assert_eq!(after.a.tree, scanned.a.tree);
}

#[test]
fn a_tracked_file_in_an_ignored_directory_is_never_trusted_to_the_watcher() {
    let fx = fixture();
    write(&fx.root.join("vendor/lib.txt"), "v1\n");
    git(&fx.root, &["add", "-f", "vendor/lib.txt"]);
    write(&fx.root.join(".gitignore"), ".env\nvendor/\n");
    git(&fx.root, &["commit", "-qam", "vendored"]);
    let plain = worktrees(&fx.root);
    let a = create(&plain, "a");
    create(&plain, "b");
    let b = fx.root.join(".mia-code/worktrees/b");
    let feed = Arc::new(WatchedAttempts::new());
    let fed = worktrees(&fx.root).with_changes(feed.clone());
    agree(&fed, &a, &b, "nothing");
    assert!(feed.wait_started(Duration::from_secs(30)));
    agree(&fed, &a, &b, "nothing");
    // Never trusted to the watcher: scanned every time.
    assert_eq!(agree(&fed, &a, &b, "nothing again").0, AttemptRead::Scanned);
    write(&a.join("vendor/lib.txt"), "v2\n");
    agree(&fed, &a, &b, "an edit in the ignored directory");
}

#[test]
fn a_removed_and_recreated_attempt_is_scanned_again() {
    let fx = fixture();
    let plain = worktrees(&fx.root);
    let feed = Arc::new(WatchedAttempts::new());
    let fed = worktrees(&fx.root).with_changes(feed.clone());
    let a = create(&fed, "a");
    let b = create(&fed, "b");
    agree(&fed, &a, &b, "nothing");
    assert!(feed.wait_started(Duration::from_secs(30)));
    agree(&fed, &a, &b, "nothing");
    write(&a.join("src/m1/f1.txt"), "edited\n");
    assert_eq!(agree(&fed, &a, &b, "an edit").0, AttemptRead::Watched);
    assert_eq!(agree(&fed, &a, &b, "nothing").0, AttemptRead::Unchanged);
    // Removed by the person with plain git, then made again.
    git(
        &fx.root,
        &["worktree", "remove", "--force", a.to_str().unwrap()],
    );
    git(&fx.root, &["branch", "-D", "mia-code/a"]);
    create(&plain, "a");
    write(&a.join("src/m2/f2.txt"), "other\n");
    assert_eq!(
        agree(&fed, &a, &b, "the attempt was re-created").0,
        AttemptRead::Scanned
    );
}

#[test]
fn content_filters_are_left_to_git() {
    let fx = fixture();
    write(&fx.root.join(".gitattributes"), "* text=auto\n");
    git(&fx.root, &["add", ".gitattributes"]);
    git(&fx.root, &["commit", "-qm", "attributes"]);
    let plain = worktrees(&fx.root);
    let a = create(&plain, "a");
    let b = create(&plain, "b");
    let feed = Arc::new(WatchedAttempts::new());
    let fed = worktrees(&fx.root).with_changes(feed.clone());
    agree(&fed, &a, &b, "nothing");
    assert!(feed.wait_started(Duration::from_secs(30)));
    agree(&fed, &a, &b, "nothing");
    // CRLF in the work tree is stored as LF (text=auto): git does it.
    write(&a.join("src/m1/f1.txt"), "one\r\ntwo\r\n");
    let (ra, _) = agree(&fed, &a, &b, "a CRLF edit under text=auto");
    assert_eq!(ra, AttemptRead::Watched);
}
