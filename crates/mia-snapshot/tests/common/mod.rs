#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod rgen;

use std::path::{Path, PathBuf};
use std::process::Command;

use mia_snapshot::{SnapshotConfig, SnapshotRepo};

/// Run git with no user/system config, failing the test on error.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir, args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn git_cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    c
}

pub fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

pub fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

pub struct Project {
    pub dir: tempfile::TempDir,
    /// Where the snapshot store lives (outside the project, as in use).
    pub store: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            store: tempfile::tempdir().unwrap(),
        }
    }
    pub fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }
    /// The default configuration with this project's store root.
    pub fn cfg(&self) -> SnapshotConfig {
        SnapshotConfig {
            store_root: Some(self.store.path().to_path_buf()),
            ..SnapshotConfig::default()
        }
    }
    pub fn repo(&self) -> SnapshotRepo {
        SnapshotRepo::open(self.path(), self.cfg()).unwrap()
    }
    pub fn write(&self, rel: &str, content: &str) {
        write(&self.path(), rel, content)
    }
    pub fn read(&self, rel: &str) -> Option<String> {
        read(&self.path(), rel)
    }
}

/// `git add -A` + `git write-tree` into a separate git dir (what OpenCode
/// does): the reference tree hash for a project. The git program where it
/// exists; libgit2 where it does not (Windows under Wine).
pub fn reference_tree(project: &Path) -> String {
    if !git_program() {
        return mia_testkit::repo::worktree_tree(project, ".mia-code/\n").unwrap();
    }
    let gd = tempfile::tempdir().unwrap();
    let gdp = gd.path().to_str().unwrap().to_string();
    let proj = project.to_str().unwrap().to_string();
    git(
        project,
        &["--git-dir", &gdp, "--work-tree", &proj, "init", "-q"],
    );
    std::fs::write(gd.path().join("info/exclude"), ".mia-code/\n").unwrap();
    git(
        project,
        &["--git-dir", &gdp, "--work-tree", &proj, "add", "-A"],
    );
    git(
        project,
        &["--git-dir", &gdp, "--work-tree", &proj, "write-tree"],
    )
    .trim()
    .to_string()
}

/// Whether the git program runs here (asked once).
pub fn git_program() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(mia_testkit::repo::has_git_program)
}

/// `git fsck --no-dangling` of a store where git runs; elsewhere every
/// object reachable from its refs is read back with libgit2.
pub fn fsck(git_dir: &Path) {
    if git_program() {
        let gd = git_dir.to_str().unwrap();
        git(git_dir, &["--git-dir", gd, "fsck", "--no-dangling"]);
    } else {
        assert!(mia_testkit::repo::check_reachable(git_dir).unwrap() > 0);
    }
}

/// `git init` + `git apply` of `patch` in `dir`: the git program where it
/// exists, libgit2 where it does not (Windows under Wine).
pub fn apply_patch(dir: &Path, patch: &str) {
    mia_testkit::repo::init(dir).unwrap();
    if !git_program() {
        mia_testkit::repo::apply(dir, patch.as_bytes()).unwrap();
        return;
    }
    let mut apply = git_cmd(dir, &["apply", "-"]);
    apply.stdin(std::process::Stdio::piped());
    let mut child = apply.spawn().unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(patch.as_bytes())
        .unwrap();
    assert!(
        child.wait().unwrap().success(),
        "git apply refused:\n{patch:?}"
    );
}

/// Re-run one test of this binary alone in a child process with `env`
/// set, and assert it passed.
pub fn rerun_alone(test: &str, env: &[(&str, &std::ffi::OsStr)]) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
}

/// Remove a directory as a person would, read-only files (git's objects)
/// included: Rust's `remove_dir_all` deletes those on Windows 10 and later
/// through `FILE_DISPOSITION_FLAG_IGNORE_READONLY_ATTRIBUTE`, which Wine 8
/// does not honour, so the attribute is cleared first there.
pub fn remove_tree(dir: &Path) {
    if cfg!(windows) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let meta = e.metadata().unwrap();
                if meta.is_dir() {
                    stack.push(e.path());
                } else if meta.permissions().readonly() {
                    let mut perm = meta.permissions();
                    #[allow(clippy::permissions_set_readonly_false)]
                    perm.set_readonly(false);
                    std::fs::set_permissions(e.path(), perm).unwrap();
                }
            }
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Files (recursively, excluding .mia-code and .git) with their bytes.
pub fn tree_state(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            // `/`-separated on every system, as snapshots name files.
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == ".mia-code" || rel == ".git" {
                continue;
            }
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                let mut v = b"symlink:".to_vec();
                v.extend_from_slice(t.to_string_lossy().as_bytes());
                out.insert(rel, v);
            } else if ft.is_dir() {
                stack.push(p);
            } else {
                #[cfg_attr(not(unix), allow(unused_mut))]
                let mut v = std::fs::read(&p).unwrap();
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    if e.metadata().unwrap().permissions().mode() & 0o111 != 0 {
                        v.extend_from_slice(b"\n<exec>");
                    }
                }
                out.insert(rel, v);
            }
        }
    }
    out
}
