//! An attempt's working tree as a tree object, uncommitted and untracked
//! (not ignored) files included, without touching the attempt's own index.
//!
//! A private index per attempt lives in mia-code's part of the git
//! directory (seeded from the worktree's own the first time), so git hashes
//! only files whose stat data changed. Without a [`ChangeFeed`] every
//! comparison still `lstat`s every file (`git add -A`): the cost that grows
//! with the repository. With one (a long-lived process watching the
//! attempt), a comparison re-adds only the paths the feed names, and one
//! where nothing changed reuses the tree it computed last time.

use std::path::{Path, PathBuf};

use crate::error::{GitError, Result};
use crate::feed::{AttemptDir, AttemptRead, KnownChanges};
use crate::worktree::Worktrees;

/// Above this many changed paths a full `add -A` is as cheap.
const MAX_NARROWED: usize = 2000;

/// What the last computation of an attempt's tree left behind, valid only
/// while its private index is the very file it wrote (`stamp`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Saved {
    tree: String,
    stamp: Stamp,
    /// No tracked file hides where a watcher does not look (an ignored
    /// directory): a feed's list of changes can be trusted.
    narrowable: bool,
    /// No content filter applies (attributes `text`, `eol`, `filter`, …,
    /// `core.autocrlf`): a file's blob is its bytes, so the tree can be
    /// updated in-process instead of by `git add`.
    #[serde(default)]
    plain: bool,
    /// The index holds `tree` (false once the tree moved on in-process):
    /// only then can git update just some of its paths.
    #[serde(default)]
    index_holds_tree: bool,
}

/// Identity of an index file: git replaces it by renaming a new file in,
/// so any write changes the inode (and usually size and time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Stamp {
    len: u64,
    modified_ns: u128,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    let modified_ns = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let inode = 0;
    Some(Stamp {
        len: m.len(),
        modified_ns,
        inode,
    })
}

impl Worktrees {
    fn attempt_cache_dir(&self) -> PathBuf {
        self.repo.common_dir.join("mia-code").join("indexes")
    }

    /// The tree object of an attempt's working directory (see the module
    /// docs).
    pub fn working_tree(&self, name: &str, dir: &Path) -> Result<String> {
        Ok(self.read_working_tree(name, dir)?.0)
    }

    /// [`working_tree`](Self::working_tree), and how it was read.
    pub(crate) fn read_working_tree(
        &self,
        name: &str,
        dir: &Path,
    ) -> Result<(String, AttemptRead)> {
        let cache_dir = self.attempt_cache_dir();
        std::fs::create_dir_all(&cache_dir).map_err(|e| GitError::io("create", &cache_dir, e))?;
        let index = cache_dir.join(format!("{name}.index"));
        // One comparison of an attempt at a time (two screens, or a reload
        // racing a compare, would otherwise meet git's index.lock and fail):
        // the others wait for this lock, across processes too.
        let lock_path = cache_dir.join(format!("{name}.index.mia-lock"));
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| GitError::io("open", &lock_path, e))?;
        lock.lock()
            .map_err(|e| GitError::io("lock", &lock_path, e))?;
        let state_path = cache_dir.join(format!("{name}.state"));
        let start = std::time::Instant::now();
        // Taken before the directory is read: what changes while it is
        // read is the next take's.
        let known = match &self.changes {
            Some(feed) => feed.take(&AttemptDir {
                name,
                dir,
                state_dir: &cache_dir.join("watch").join(name),
            }),
            None => KnownChanges::Unknown,
        };
        tracing::debug!(
            attempt = name,
            ms = start.elapsed().as_secs_f64() * 1e3,
            known = match &known {
                KnownChanges::Paths(p) => p.len() as i64,
                _ => -1,
            },
            "attempt changes taken"
        );
        let saved = std::fs::read(&state_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Saved>(&b).ok())
            .filter(|s| s.narrowable && stamp(&index) == Some(s.stamp));
        if let (KnownChanges::Paths(paths), Some(saved)) = (&known, &saved) {
            // (A saved tree is not reachable from any ref: after weeks a
            // `git gc` may have pruned it. Then the attempt is read again.)
            if paths.is_empty() && self.object_exists(&saved.tree) {
                return Ok((saved.tree.clone(), AttemptRead::Unchanged));
            }
            tracing::debug!(
                attempt = name,
                plain = saved.plain,
                index_holds_tree = saved.index_holds_tree,
                "attempt state"
            );
            // Past a few thousand changes (a reset, a branch switch) git's
            // scan is as quick and hashes in parallel.
            if saved.plain
                && paths.len() <= MAX_NARROWED
                && let Some(tree) = crate::attempt_update::updated_tree(dir, &saved.tree, paths)
                    .unwrap_or_else(|e| {
                        tracing::info!(error = %e, "in-process update failed; git adds instead");
                        None
                    })
            {
                // The index is left as it was: the saved tree moves on
                // from it, and a later scan re-reads what changed since.
                save(&state_path, &index, &tree, (true, true), false);
                return Ok((tree, AttemptRead::Watched));
            }
            if saved.index_holds_tree
                && let Some(specs) = narrowed_specs(dir, paths)
                && self.add_narrowed(dir, &index, &specs)?
            {
                let tree = self.write_tree(dir, &index)?;
                save(&state_path, &index, &tree, (true, saved.plain), true);
                return Ok((tree, AttemptRead::Watched));
            }
        }
        self.add_all(dir, &index)?;
        let tree = self.write_tree(dir, &index)?;
        if matches!(known, KnownChanges::Primed | KnownChanges::Paths(_)) {
            // Watched from now on: what the next comparisons may trust.
            let facts = (
                self.nothing_tracked_is_ignored(dir, &index)?,
                self.no_content_filters(dir, &index)?,
            );
            save(&state_path, &index, &tree, facts, true);
        } else {
            let _ = std::fs::remove_file(&state_path);
        }
        Ok((tree, AttemptRead::Scanned))
    }

    /// Forget what is kept for attempt `name` (it was removed).
    pub(crate) fn forget_attempt(&self, name: &str, dir: &Path) {
        let cache_dir = self.attempt_cache_dir();
        for f in [format!("{name}.index"), format!("{name}.state")] {
            let _ = std::fs::remove_file(cache_dir.join(f));
        }
        let _ = std::fs::remove_dir_all(cache_dir.join("watch").join(name));
        if let Some(feed) = &self.changes {
            feed.forget(dir);
        }
    }

    fn object_exists(&self, oid: &str) -> bool {
        let Ok(oid) = git2::Oid::from_str(oid) else {
            return false;
        };
        git2::Repository::open(&self.repo.root)
            .and_then(|r| r.odb().map(|odb| odb.exists(oid)))
            .unwrap_or(false)
    }

    fn index_env(index: &Path) -> String {
        index.to_string_lossy().to_string()
    }

    /// `git add -A` of the whole working tree into the private index.
    fn add_all(&self, dir: &Path, index: &Path) -> Result<()> {
        if !index.is_file() {
            let own = self.git(dir).ok(&[
                "rev-parse",
                "--path-format=absolute",
                "--git-path",
                "index",
            ])?;
            let own = own.trim();
            if Path::new(own).is_file() {
                std::fs::copy(own, index).map_err(|e| GitError::io("copy", own, e))?;
            }
        }
        // The untracked cache lives in that private index: unchanged
        // directories are not read again on the next comparison.
        self.git(dir)
            .with_env("GIT_INDEX_FILE", Self::index_env(index))
            .ok(&["-c", "core.untrackedCache=true", "add", "-A", "--", "."])?;
        Ok(())
    }

    /// `git add -A` of just what `specs` names, and `git rm --cached` of
    /// what is gone. False when git refused (a path in a submodule, through
    /// a symbolic link, …): the caller scans instead.
    fn add_narrowed(&self, dir: &Path, index: &Path, specs: &Specs) -> Result<bool> {
        let git = || {
            self.git(dir)
                .with_env("GIT_INDEX_FILE", Self::index_env(index))
        };
        if !specs.gone.is_empty() {
            let args = [
                "--literal-pathspecs",
                "rm",
                "--cached",
                "-r",
                "-f",
                "-q",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            let out = git().output_with_input(&args, &nul_list(&specs.gone))?;
            if !out.status.success() {
                let stderr = String::from_utf8_lossy(&out.stderr);
                tracing::info!(stderr = %stderr.trim(), "narrowed rm refused; scanning the attempt");
                return Ok(false);
            }
        }
        if specs.present.is_empty() {
            return Ok(true);
        }
        let args = [
            "--literal-pathspecs",
            "-c",
            "core.untrackedCache=true",
            "-c",
            "advice.addIgnoredFile=false",
            "add",
            "-A",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ];
        let out = git().output_with_input(&args, &nul_list(&specs.present))?;
        if out.status.success() {
            return Ok(true);
        }
        // A named path that is ignored (a changed `.env`): git says so,
        // exits 1, and has added all the others.
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(1)
            && stderr.starts_with("The following paths are ignored by one of your .gitignore files")
        {
            return Ok(true);
        }
        tracing::info!(stderr = %stderr.trim(), "narrowed add refused; scanning the attempt");
        Ok(false)
    }

    fn write_tree(&self, dir: &Path, index: &Path) -> Result<String> {
        let tree = self
            .git(dir)
            .with_env("GIT_INDEX_FILE", Self::index_env(index))
            .ok(&["write-tree"])?;
        Ok(tree.trim().to_string())
    }

    /// Whether no tracked file is ignored (a watcher does not look into
    /// ignored directories, so it could miss a change there).
    fn nothing_tracked_is_ignored(&self, dir: &Path, index: &Path) -> Result<bool> {
        let g = self
            .git(dir)
            .with_env("GIT_INDEX_FILE", Self::index_env(index));
        let ignored = g.ok(&["ls-files", "-z", "-c", "-i", "--exclude-standard"])?;
        Ok(ignored.is_empty())
    }

    /// Whether no content filter can apply in the attempt: no
    /// `core.autocrlf`, no attributes file (tracked, the repository's
    /// `info/attributes`, the person's global one) that names one.
    fn no_content_filters(&self, dir: &Path, index: &Path) -> Result<bool> {
        let repo = git2::Repository::open(dir)?;
        let config = repo.config()?;
        if config
            .get_string("core.autocrlf")
            .is_ok_and(|v| !v.eq_ignore_ascii_case("false"))
        {
            return Ok(false);
        }
        let mut files = vec![self.repo.common_dir.join("info").join("attributes")];
        if let Ok(global) = config.get_path("core.attributesFile") {
            files.push(global);
        } else if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        {
            files.push(xdg.join("git").join("attributes"));
        }
        let tracked = self
            .git(dir)
            .with_env("GIT_INDEX_FILE", Self::index_env(index))
            .ok(&["ls-files", "-z", "--", ".gitattributes", "*/.gitattributes"])?;
        files.extend(
            tracked
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(|p| dir.join(p)),
        );
        for f in files {
            match std::fs::read(&f) {
                Ok(bytes) if sets_filters(&String::from_utf8_lossy(&bytes)) => return Ok(false),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // Unreadable: assume the worst.
                Err(_) => return Ok(false),
            }
        }
        Ok(true)
    }
}

/// Attributes that change what `git add` stores for a file's bytes.
const FILTER_ATTRIBUTES: [&str; 6] = [
    "text",
    "eol",
    "crlf",
    "filter",
    "ident",
    "working-tree-encoding",
];

/// Whether an attributes file's text sets (or unsets) any of
/// [`FILTER_ATTRIBUTES`] (conservative: unsetting counts too).
fn sets_filters(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .flat_map(|l| l.split_whitespace().skip(1))
        .any(|attr| {
            let key = attr.trim_start_matches(['-', '!']);
            let key = key.split('=').next().unwrap_or(key);
            FILTER_ATTRIBUTES.contains(&key)
        })
}

fn save(
    state_path: &Path,
    index: &Path,
    tree: &str,
    (narrowable, plain): (bool, bool),
    index_holds_tree: bool,
) {
    let Some(stamp) = stamp(index) else {
        let _ = std::fs::remove_file(state_path);
        return;
    };
    let saved = Saved {
        tree: tree.to_string(),
        stamp,
        narrowable,
        plain,
        index_holds_tree,
    };
    let Ok(bytes) = serde_json::to_vec(&saved) else {
        return;
    };
    // Written whole then renamed in: a reader never sees half of it.
    let tmp = state_path.with_extension("state.tmp");
    if std::fs::write(&tmp, bytes).is_err() || std::fs::rename(&tmp, state_path).is_err() {
        let _ = std::fs::remove_file(state_path);
    }
}

/// The changed paths split into those that exist (`git add -A` them) and
/// those that are gone (`git rm --cached -r` them: a removed file or a
/// whole removed directory). `None` when there are so many that a full
/// scan is as cheap.
fn narrowed_specs(dir: &Path, paths: &[String]) -> Option<Specs> {
    if paths.len() > MAX_NARROWED {
        return None;
    }
    let mut specs = Specs::default();
    for p in paths {
        let p = p.trim_matches('/');
        if p.is_empty() {
            return None;
        }
        if std::fs::symlink_metadata(dir.join(p)).is_ok() {
            specs.present.push(p.to_string());
        } else {
            specs.gone.push(p.to_string());
        }
    }
    Some(specs)
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Specs {
    present: Vec<String>,
    gone: Vec<String>,
}

fn nul_list(specs: &[String]) -> Vec<u8> {
    let mut input = Vec::new();
    for s in specs {
        input.extend_from_slice(s.as_bytes());
        input.push(0);
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_that_filter_content_are_recognised() {
        assert!(sets_filters("* text=auto\n"));
        assert!(sets_filters("*.sh eol=lf\n"));
        assert!(sets_filters("*.psd filter=lfs diff=lfs merge=lfs -text\n"));
        assert!(sets_filters("*.bin -text\n"));
        assert!(!sets_filters(
            "# text\n*.png binary\n*.rs diff=rust linguist-language=Rust\n"
        ));
        assert!(!sets_filters(""));
    }

    #[test]
    fn changed_paths_split_into_present_and_gone() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(t.path().join("a/b")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(t.path().join("a/b/f"), "x").unwrap_or_else(|e| panic!("{e}"));
        let specs = narrowed_specs(
            t.path(),
            &[
                "a/b/f".into(),
                "a/b".into(),
                "a/c/gone".into(),
                "gone".into(),
            ],
        );
        assert_eq!(
            specs,
            Some(Specs {
                present: vec!["a/b/f".into(), "a/b".into()],
                gone: vec!["a/c/gone".into(), "gone".into()],
            })
        );
        assert_eq!(narrowed_specs(t.path(), &["/".into()]), None);
    }
}
