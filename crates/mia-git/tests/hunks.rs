#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Hunks against real git: what `stage` writes to the index is what
//! `git add -p` writes (the same `git diff --cached`), with CRLF, files
//! without a final newline, renames, binary files, mode changes and
//! untracked files; `unstage`, `revert`, stale ids, and a hunk applied to a
//! third version of a file.

use std::path::Path;
use std::process::{Command, Stdio};

use mia_git::hunks::{self, Side};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    git(d.path(), &["init", "-q", "-b", "main"]);
    git(d.path(), &["config", "user.email", "t@example.com"]);
    git(d.path(), &["config", "user.name", "T"]);
    git(d.path(), &["config", "core.autocrlf", "false"]);
    d
}

fn commit_all(d: &Path) {
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
}

fn numbered(n: usize, eol: &str) -> String {
    (1..=n).map(|i| format!("line {i}{eol}")).collect()
}

/// A copy of the repository in which `git add -p` answers `answers`.
fn git_add_p(src: &Path, answers: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("tempdir");
    let status = Command::new("cp")
        .args([
            "-a",
            &format!("{}/.", src.display()),
            &copy.path().display().to_string(),
        ])
        .status()
        .expect("cp");
    assert!(status.success());
    let mut child = Command::new("git")
        .args(["add", "-p"])
        .current_dir(copy.path())
        .env("HOME", copy.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("git add -p");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(answers.as_bytes())
        .expect("answers");
    assert!(child.wait().expect("wait").success());
    copy
}

fn cached(d: &Path) -> String {
    git(d, &["diff", "--cached", "--no-color"])
}

#[test]
fn staging_one_hunk_matches_git_add_p_and_keeps_the_other_ids() {
    let d = repo();
    let p = d.path();
    std::fs::write(p.join("a.txt"), numbered(40, "\n")).unwrap();
    commit_all(p);
    let text = numbered(40, "\n")
        .replace("line 3\n", "line three\n")
        .replace("line 30\n", "line thirty\nadded\n");
    std::fs::write(p.join("a.txt"), text).unwrap();

    let before = hunks::list(p, Side::Unstaged).unwrap();
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(before[0].file, "a.txt");
    assert_eq!((before[0].old_start, before[0].old_lines), (1, 6));
    assert!(before[0].lines.contains(&"-line 3".to_string()));
    assert!(before[0].lines.contains(&"+line three".to_string()));
    // Listing again gives the same ids.
    assert_eq!(before, hunks::list(p, Side::Unstaged).unwrap());

    let reference = git_add_p(p, "y\nn\n");
    let staged = hunks::stage(p, &before[0].id).unwrap();
    assert_eq!(staged.id, before[0].id);
    assert_eq!(cached(p), cached(reference.path()));
    assert!(cached(p).contains("+line three") && !cached(p).contains("thirty"));

    // The other hunk kept its id; the staged one is listed as staged with
    // the same id, and unstaging it empties the index's change.
    let after = hunks::list(p, Side::Unstaged).unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].id, before[1].id);
    let staged_list = hunks::list(p, Side::Staged).unwrap();
    assert_eq!(staged_list.len(), 1);
    assert_eq!(staged_list[0].id, before[0].id);
    assert!(staged_list[0].staged);
    hunks::unstage(p, &before[0].id).unwrap();
    assert_eq!(cached(p), "");
    assert_eq!(hunks::list(p, Side::Unstaged).unwrap(), before);
}

#[test]
fn a_stale_id_says_so_and_changes_nothing() {
    let d = repo();
    let p = d.path();
    std::fs::write(p.join("a.txt"), numbered(10, "\n")).unwrap();
    commit_all(p);
    std::fs::write(
        p.join("a.txt"),
        numbered(10, "\n").replace("line 5", "five"),
    )
    .unwrap();
    let h = hunks::list(p, Side::Unstaged).unwrap().remove(0);
    hunks::stage(p, &h.id).unwrap();
    let index = cached(p);
    let err = hunks::stage(p, &h.id).unwrap_err().to_string();
    assert!(
        err.contains(&h.id) && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(cached(p), index);
    let err = hunks::revert(p, "0123456789ab").unwrap_err().to_string();
    assert!(err.contains("0123456789ab"), "{err}");
    let err = hunks::unstage(p, "0123456789ab").unwrap_err().to_string();
    assert!(err.contains("not among the staged hunks"), "{err}");
    // Discarding a staged hunk asks to unstage it first.
    let err = hunks::prepare_revert(p, &h.id).unwrap_err().to_string();
    assert!(err.contains("unstage it first"), "{err}");
}

#[test]
fn crlf_and_no_final_newline_stage_as_git_add_p_does() {
    let d = repo();
    let p = d.path();
    std::fs::write(p.join("crlf.txt"), numbered(30, "\r\n")).unwrap();
    let mut last = numbered(20, "\n");
    last.push_str("the end");
    std::fs::write(p.join("nonl.txt"), &last).unwrap();
    commit_all(p);
    std::fs::write(
        p.join("crlf.txt"),
        numbered(30, "\r\n")
            .replace("line 2\r\n", "two\r\n")
            .replace("line 25\r\n", "twenty-five\r\n"),
    )
    .unwrap();
    std::fs::write(
        p.join("nonl.txt"),
        last.replace("line 2\n", "two\n")
            .replace("the end", "the real end"),
    )
    .unwrap();
    let list = hunks::list(p, Side::Unstaged).unwrap();
    assert_eq!(list.len(), 4, "{list:#?}");
    let crlf = &list[0];
    assert!(crlf.lines.iter().any(|l| l == "+two\r"), "{:?}", crlf.lines);
    let nonl_end = &list[3];
    assert!(
        nonl_end
            .lines
            .iter()
            .any(|l| l == "\\ No newline at end of file"),
        "{:?}",
        nonl_end.lines
    );
    // git add -p: no to both crlf hunks... yes to the second; no, yes for nonl.
    let reference = git_add_p(p, "n\ny\nn\ny\n");
    hunks::stage(p, &list[1].id).unwrap();
    hunks::stage(p, &list[3].id).unwrap();
    assert_eq!(cached(p), cached(reference.path()));
    // Discard the CRLF file's first hunk: the work tree keeps its CRLFs.
    hunks::revert(p, &list[0].id).unwrap();
    let now = std::fs::read(p.join("crlf.txt")).unwrap();
    assert_eq!(
        String::from_utf8(now).unwrap(),
        numbered(30, "\r\n").replace("line 25\r\n", "twenty-five\r\n")
    );
}

#[test]
fn binary_mode_untracked_and_renamed_files_are_whole_file_hunks() {
    let d = repo();
    let p = d.path();
    std::fs::write(p.join("img.bin"), [0u8, 1, 2, 3, 255, 0, 7]).unwrap();
    std::fs::write(p.join("run.sh"), "echo hi\n").unwrap();
    std::fs::write(p.join("old.txt"), numbered(30, "\n")).unwrap();
    commit_all(p);
    std::fs::write(p.join("img.bin"), [0u8, 9, 9, 9, 255, 0, 7, 8]).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(p.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(p.join("new.txt"), "brand new\n").unwrap();
    git(p, &["mv", "old.txt", "renamed.txt"]);

    let list = hunks::list(p, Side::Unstaged).unwrap();
    let by = |f: &str| list.iter().find(|h| h.file == f).cloned().unwrap();
    let bin = by("img.bin");
    assert!(bin.binary && bin.whole_file);
    let new = by("new.txt");
    assert!(new.whole_file && new.lines == vec!["+brand new".to_string()]);
    hunks::stage(p, &bin.id).unwrap();
    hunks::stage(p, &new.id).unwrap();
    let names = git(p, &["diff", "--cached", "--name-status", "-M"]);
    assert!(names.contains("M\timg.bin"), "{names}");
    assert!(names.contains("A\tnew.txt"), "{names}");
    #[cfg(unix)]
    {
        let mode = by("run.sh");
        assert!(mode.whole_file && mode.lines.is_empty(), "{mode:?}");
        hunks::stage(p, &mode.id).unwrap();
        assert!(cached(p).contains("new mode 100755"));
    }
    // The rename is one staged hunk; unstaging it puts old.txt back in the
    // index and leaves renamed.txt untracked.
    let staged = hunks::list(p, Side::Staged).unwrap();
    let ren = staged
        .iter()
        .find(|h| h.file == "renamed.txt")
        .cloned()
        .unwrap();
    assert_eq!(ren.old_file.as_deref(), Some("old.txt"));
    assert!(ren.whole_file);
    hunks::unstage(p, &ren.id).unwrap();
    let names = git(p, &["diff", "--cached", "--name-status", "-M"]);
    assert!(
        !names.contains("renamed.txt") && !names.contains("old.txt"),
        "{names}"
    );
    let status = git(p, &["status", "--porcelain"]);
    assert!(
        status.contains("?? renamed.txt") && status.contains(" D old.txt"),
        "{status}"
    );

    // Discarding an untracked file deletes it.
    std::fs::write(p.join("scratch.txt"), "x\n").unwrap();
    let s = hunks::list(p, Side::Unstaged)
        .unwrap()
        .into_iter()
        .find(|h| h.file == "scratch.txt")
        .unwrap();
    hunks::revert(p, &s.id).unwrap();
    assert!(!p.join("scratch.txt").exists());
}

#[test]
fn revert_discards_one_hunk_of_the_work_tree() {
    let d = repo();
    let p = d.path();
    std::fs::write(p.join("a.txt"), numbered(40, "\n")).unwrap();
    commit_all(p);
    std::fs::write(
        p.join("a.txt"),
        numbered(40, "\n")
            .replace("line 3\n", "three\n")
            .replace("line 33\n", "thirty-three\n"),
    )
    .unwrap();
    let list = hunks::list(p, Side::Unstaged).unwrap();
    hunks::revert(p, &list[1].id).unwrap();
    let diff = git(p, &["diff", "--no-color"]);
    assert!(
        diff.contains("+three") && !diff.contains("thirty-three"),
        "{diff}"
    );
    assert_eq!(
        hunks::list(p, Side::Unstaged).unwrap(),
        vec![list[0].clone()]
    );
}

#[test]
fn a_hunk_between_versions_applies_to_a_third_version() {
    let base = numbered(40, "\n");
    let from = base
        .replace("line 10\n", "ten\n")
        .replace("line 30\n", "thirty\n");
    // The target moved everything down by two lines and changed line 35.
    let into = format!("top\ntop 2\n{}", base.replace("line 35\n", "mine\n"));
    let list = hunks::between("f.txt", Some(base.as_bytes()), Some(from.as_bytes())).unwrap();
    assert_eq!(list.len(), 2);
    let out = hunks::apply_to(into.as_bytes(), &list[1]).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!(
            "top\ntop 2\n{}",
            base.replace("line 35\n", "mine\n")
                .replace("line 30\n", "thirty\n")
        )
    );
    // A target without the hunk's lines refuses it.
    let other = base.replace("line 29\n", "changed\n");
    let err = hunks::apply_to(other.as_bytes(), &list[1])
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not apply"), "{err}");
    // Ids are the same whichever way they are computed.
    let again = hunks::between("f.txt", Some(base.as_bytes()), Some(from.as_bytes())).unwrap();
    assert_eq!(list, again);
    // New or binary files are one whole-file hunk.
    let added = hunks::between("n.txt", None, Some(b"x\n")).unwrap();
    assert!(added.len() == 1 && added[0].whole_file);
    let bin = hunks::between("b.bin", Some(b"\0a"), Some(b"\0b")).unwrap();
    assert!(bin.len() == 1 && bin[0].whole_file && bin[0].binary);
}
