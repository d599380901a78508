//! Comparing attempts: each one's working tree (committed or not) against
//! their common base, the diff between the two, taking a file from one into
//! another, and promoting the winner.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{GitError, Result};
use crate::safety::TrashOperation;
use crate::worktree::Worktrees;
use mia_protocol::{AttemptFileStatus, BetweenStatus};

/// One changed file of an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub status: AttemptFileStatus,
    pub additions: u32,
    pub deletions: u32,
    /// Binary content (no line counts).
    pub binary: bool,
    #[serde(skip)]
    pub(crate) oid: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub files: u32,
    pub additions: u32,
    pub deletions: u32,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// A worktree name, or `main`.
    pub name: String,
    pub path: PathBuf,
    /// The tree of its working directory (uncommitted changes included).
    pub tree: String,
    pub files: Vec<FileChange>,
    pub stats: Stats,
    /// How its working tree was read this time.
    #[serde(default)]
    pub read: crate::AttemptRead,
}

/// How a path compares between the two attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Between {
    pub path: String,
    pub status: BetweenStatus,
}

/// One file of an attempt and of its base: `(git mode, bytes)`, `None`
/// where the file is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSides {
    pub before: Option<(u32, Vec<u8>)>,
    pub after: Option<(u32, Vec<u8>)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    pub base: String,
    pub a: Attempt,
    pub b: Attempt,
    pub between: Vec<Between>,
}

/// How `promote` hands the winner over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromoteMode {
    /// Merge its branch into the base branch (fast-forward when possible).
    Merge,
    /// Commit what is uncommitted and keep the branch (for a pull request).
    KeepBranch,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Promoted {
    pub name: String,
    pub branch: String,
    /// The branch's head after committing the worktree's changes.
    pub head: String,
    /// The branch merged into (`merge` mode).
    pub merged_into: Option<String>,
    /// The base branch's new tip (`merge` mode).
    pub commit: Option<String>,
    pub fast_forward: bool,
    /// The worktree was removed afterwards (`worktree.autoCleanup`).
    pub removed: bool,
    /// Other mia-code worktrees the user may now remove.
    pub others: Vec<String>,
    /// The worktree's uncommitted changes were committed on its branch as this.
    #[serde(default)]
    pub committed: Option<String>,
    /// What went to the trash first (ignored files the merge overwrote, forced).
    #[serde(default)]
    pub trash: Option<crate::TrashEntry>,
    /// Why auto-cleanup kept the worktree.
    #[serde(default)]
    pub kept: Option<String>,
}

impl Worktrees {
    /// What differs between commit `base` and `tree`, with line counts:
    /// one `git diff-tree --raw --numstat` (git reads the objects faster
    /// than libgit2 here: libgit2 looks in the packs, then re-scans them,
    /// for every loose object).
    fn changes(&self, base: &str, tree: &str) -> Result<Vec<FileChange>> {
        // Two trees need no index, but git reads the main tree's whole
        // index at start (tens of MB in a large repository) unless pointed
        // at one that does not exist; attributes still come from the work
        // tree's `.gitattributes`.
        let no_index = self.repo.common_dir.join("mia-code").join("no-index");
        let git = self
            .git(&self.repo.root)
            .with_env("GIT_INDEX_FILE", no_index.to_string_lossy().to_string());
        let raw = git.ok(&[
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            "--numstat",
            base,
            tree,
        ])?;
        let mut files: BTreeMap<String, FileChange> = BTreeMap::new();
        let mut it = raw.split('\0').peekable();
        // First the raw records (`:meta\0path\0`), then the numstat ones
        // (`added\tdeleted\tpath\0`).
        while let Some(meta) = it.next_if(|t| t.starts_with(':')) {
            let Some(path) = it.next() else { break };
            let parts: Vec<&str> = meta[1..].split(' ').collect();
            let status = match parts.get(4).copied().unwrap_or("M") {
                "A" => AttemptFileStatus::Added,
                "D" => AttemptFileStatus::Deleted,
                "T" => AttemptFileStatus::TypeChanged,
                _ => AttemptFileStatus::Modified,
            };
            files.insert(
                path.to_string(),
                FileChange {
                    path: path.to_string(),
                    status,
                    additions: 0,
                    deletions: 0,
                    binary: false,
                    oid: parts.get(3).copied().unwrap_or_default().to_string(),
                },
            );
        }
        for rec in it.filter(|r| !r.is_empty()) {
            let mut f = rec.splitn(3, '\t');
            let (Some(a), Some(d), Some(path)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if let Some(c) = files.get_mut(path) {
                if a == "-" {
                    c.binary = true;
                } else {
                    c.additions = a.parse().unwrap_or(0);
                    c.deletions = d.parse().unwrap_or(0);
                }
            }
        }
        Ok(files.into_values().collect())
    }

    fn attempt(&self, name: &str, path: PathBuf, base: &str) -> Result<Attempt> {
        let start = std::time::Instant::now();
        let (tree, read) = self.read_working_tree(name, &path)?;
        let read_ms = start.elapsed().as_secs_f64() * 1e3;
        let files = self.changes(base, &tree)?;
        tracing::debug!(
            attempt = name,
            ?read,
            read_ms,
            diff_ms = start.elapsed().as_secs_f64() * 1e3 - read_ms,
            "attempt compared"
        );
        let stats = Stats {
            files: files.len() as u32,
            additions: files.iter().map(|f| f.additions).sum(),
            deletions: files.iter().map(|f| f.deletions).sum(),
        };
        Ok(Attempt {
            name: name.to_string(),
            path,
            tree,
            files,
            stats,
            read,
        })
    }

    /// An attempt's directory, head and recorded base (empty when none),
    /// from one listing of the registered worktrees.
    fn side(
        &self,
        registered: &[(PathBuf, String, Option<String>)],
        name: &str,
    ) -> Result<(PathBuf, String, String)> {
        if name == "main" {
            let root = dunce::canonicalize(&self.repo.root).unwrap_or(self.repo.root.clone());
            let head = match registered.iter().find(|(p, _, _)| *p == root) {
                Some((_, head, _)) if !head.is_empty() => head.clone(),
                _ => self
                    .git(&self.repo.root)
                    .ok(&["rev-parse", "HEAD"])?
                    .trim()
                    .to_string(),
            };
            return Ok((self.repo.root.clone(), head.clone(), head));
        }
        let (path, head, meta) = self.locate_in(registered, name)?;
        Ok((path, head, meta.map(|m| m.base).unwrap_or_default()))
    }

    /// The base two attempts are compared against: their recorded base
    /// when they share one, else the merge base of their heads.
    fn common_base(
        &self,
        (head_a, base_a): (&str, &str),
        (head_b, base_b): (&str, &str),
    ) -> Result<String> {
        if !base_a.is_empty() && base_a == base_b {
            return Ok(base_a.to_string());
        }
        Ok(self
            .git(&self.repo.root)
            .ok(&["merge-base", head_a, head_b])?
            .trim()
            .to_string())
    }

    /// Compare two attempts (worktree names, or `main`).
    pub fn compare(&self, a: &str, b: &str) -> Result<Comparison> {
        if a == b {
            return Err(GitError::Invalid(format!(
                "compare needs two different attempts (both are {a})"
            )));
        }
        let start = std::time::Instant::now();
        let registered = self.registered()?;
        let (path_a, head_a, base_a) = self.side(&registered, a)?;
        let (path_b, head_b, base_b) = self.side(&registered, b)?;
        let base = self.common_base((&head_a, &base_a), (&head_b, &base_b))?;
        tracing::debug!(ms = start.elapsed().as_secs_f64() * 1e3, "attempts located");
        // Both working trees at once (each is a scan of its files).
        let (a, b) = std::thread::scope(|sc| {
            let ha = sc.spawn(|| self.attempt(a, path_a, &base));
            let rb = self.attempt(b, path_b, &base);
            let ra = ha.join().unwrap_or_else(|_| {
                Err(GitError::Invalid(
                    "comparing the first attempt failed".into(),
                ))
            });
            (ra, rb)
        });
        let (a, b) = (a?, b?);
        let mut paths: BTreeMap<&str, (Option<&FileChange>, Option<&FileChange>)> = BTreeMap::new();
        for f in &a.files {
            paths.entry(&f.path).or_default().0 = Some(f);
        }
        for f in &b.files {
            paths.entry(&f.path).or_default().1 = Some(f);
        }
        let between = paths
            .into_iter()
            .map(|(path, (fa, fb))| Between {
                path: path.to_string(),
                status: match (fa, fb) {
                    (Some(x), Some(y)) if x.oid == y.oid && x.status == y.status => {
                        BetweenStatus::Same
                    }
                    (Some(_), Some(_)) => BetweenStatus::Differ,
                    (Some(_), None) => BetweenStatus::OnlyA,
                    _ => BetweenStatus::OnlyB,
                },
            })
            .collect();
        Ok(Comparison {
            base,
            a,
            b,
            between,
        })
    }

    /// The unified diff of one file of an attempt against `base`.
    pub fn file_diff(&self, name: &str, base: &str, path: &str) -> Result<String> {
        let tree = self.diff_tree(name, base, path)?;
        self.git(&self.repo.root).ok(&[
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            base,
            &tree,
            "--",
            path,
        ])
    }

    /// One file of an attempt and of `base`, each as its git mode and bytes
    /// (`None`: not there), for a structured diff.
    pub fn file_sides(&self, name: &str, base: &str, path: &str) -> Result<FileSides> {
        let tree = self.diff_tree(name, base, path)?;
        Ok(FileSides {
            before: self.blob_at(base, path)?,
            after: self.blob_at(&tree, path)?,
        })
    }

    /// The hunks of one file of an attempt against `base` (ids for
    /// [`take_hunk`](Self::take_hunk)).
    pub fn attempt_hunks(
        &self,
        name: &str,
        base: &str,
        path: &str,
    ) -> Result<Vec<crate::HunkEntry>> {
        let sides = self.file_sides(name, base, path)?;
        crate::hunks::between(
            path,
            sides.before.as_ref().map(|(_, b)| b.as_slice()),
            sides.after.as_ref().map(|(_, b)| b.as_slice()),
        )
    }

    /// One file as attempt `a` has it (before) and as `b` has it (after):
    /// the direct A↔B diff of a file both changed.
    pub fn between_sides(&self, a: &str, b: &str, path: &str) -> Result<FileSides> {
        check_rel(path)?;
        let ta = self.working_tree(a, &self.attempt_path(a)?)?;
        let tb = self.working_tree(b, &self.attempt_path(b)?)?;
        Ok(FileSides {
            before: self.blob_at(&ta, path)?,
            after: self.blob_at(&tb, path)?,
        })
    }

    /// Take one hunk of what attempt `from` changed at `path` (its id from
    /// [`attempt_hunks`](Self::attempt_hunks) against the base) into
    /// attempt `into`: only those lines change there, so nothing of
    /// `into`'s own is replaced. A whole-file hunk is taken as a file.
    pub fn take_hunk(
        &self,
        from: &str,
        path: &str,
        id: &str,
        into: &str,
        force: bool,
    ) -> Result<Option<crate::TrashEntry>> {
        check_rel(path)?;
        if from == into {
            return Err(GitError::Invalid(
                "take needs two different attempts".into(),
            ));
        }
        let base = self.take_base(from, into)?;
        let hunk = self
            .attempt_hunks(from, &base, path)?
            .into_iter()
            .find(|h| h.id == id.trim())
            .ok_or_else(|| GitError::HunkGone {
                id: id.to_string(),
                why: format!("is not among the hunks {from} changed in {path} (`worktree compare --json` lists them)"),
            })?;
        if hunk.whole_file {
            return self.take(from, path, into, force);
        }
        let _lock = self.lock()?;
        let into_root = self.attempt_path(into)?;
        inside_without_links(&into_root, path)?;
        let dst = into_root.join(path);
        let meta = match std::fs::symlink_metadata(&dst) {
            Ok(m) if m.is_file() => m,
            _ => {
                return Err(GitError::Conflict(format!(
                    "{path} is not a file in {into}: take the whole file instead"
                )));
            }
        };
        let current = std::fs::read(&dst).map_err(|e| GitError::io("read", &dst, e))?;
        let next = crate::hunks::apply_to(&current, &hunk)?;
        let dir = dst.parent().unwrap_or(Path::new("."));
        let tmp =
            tempfile::NamedTempFile::new_in(dir).map_err(|e| GitError::io("write", &dst, e))?;
        std::fs::write(tmp.path(), &next).map_err(|e| GitError::io("write", &dst, e))?;
        std::fs::set_permissions(tmp.path(), meta.permissions())
            .map_err(|e| GitError::io("write", &dst, e))?;
        tmp.persist(&dst)
            .map_err(|e| GitError::io("replace", &dst, e.error))?;
        Ok(None)
    }

    /// The attempt's working tree as a tree object, once `path` and
    /// `base` are known to be safe to name.
    fn diff_tree(&self, name: &str, base: &str, path: &str) -> Result<String> {
        check_rel(path)?;
        if base.starts_with('-')
            || !self.git(&self.repo.root).yes(&[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &format!("{base}^{{commit}}"),
            ])?
        {
            return Err(GitError::BadRef {
                reference: base.to_string(),
                why: "not a commit of this repository".into(),
            });
        }
        let dir = self.attempt_path(name)?;
        self.working_tree(name, &dir)
    }

    /// The mode and bytes of `path` in tree-ish `at`; `None` when it is
    /// not there (or is not a file: a directory, a submodule).
    fn blob_at(&self, at: &str, path: &str) -> Result<Option<(u32, Vec<u8>)>> {
        let git = self.git(&self.repo.root);
        // `at` is a verified commit or a tree id, never an option.
        let listed = git.ok(&["ls-tree", "-z", at, "--", path])?;
        // `MODE blob OID\tPATH\0`
        let Some((meta, _)) = listed.split_once('\t') else {
            return Ok(None);
        };
        let mut parts = meta.split(' ');
        let (Some(mode), Some("blob"), Some(oid)) = (parts.next(), parts.next(), parts.next())
        else {
            return Ok(None);
        };
        let mode = u32::from_str_radix(mode, 8).unwrap_or(0o100644);
        let out = git.output(&["cat-file", "blob", oid])?;
        if !out.status.success() {
            return Err(crate::git::fail(&["cat-file", "blob", oid], &out));
        }
        Ok(Some((mode, out.stdout)))
    }

    /// The base commit `take` judges changes against: the worktree's (of
    /// the two, the one that is not `main`; `from`'s when both are).
    fn take_base(&self, from: &str, into: &str) -> Result<String> {
        let name = if from == "main" { into } else { from };
        self.read_meta(name)
            .map(|m| m.base)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| {
                GitError::Invalid(format!(
                    "worktree {name} has no recorded base (it was not made by mia-code), so what it changed is unknown"
                ))
            })
    }

    /// The bytes of `path` at commit `base` (`None`: not there).
    fn base_bytes(&self, base: &str, path: &str) -> Result<Option<Vec<u8>>> {
        let out =
            self.git(&self.repo.root)
                .output(&["cat-file", "blob", &format!("{base}:{path}")])?;
        Ok(out.status.success().then_some(out.stdout))
    }

    /// Copy what attempt `from` changed at `path` (relative to the base)
    /// into attempt `into` (a worktree or `main`); a file `from` deleted is
    /// deleted there. Only what `from` changed is taken: a path it never
    /// had, or left as the base has it, is an error. A file in `into` that
    /// differs from the base (a person's edit, an untracked or ignored
    /// file) is never overwritten or deleted, unless `force`, which first
    /// puts it in the trash.
    pub fn take(
        &self,
        from: &str,
        path: &str,
        into: &str,
        force: bool,
    ) -> Result<Option<crate::TrashEntry>> {
        check_rel(path)?;
        if from == into {
            return Err(GitError::Invalid(
                "take needs two different attempts".into(),
            ));
        }
        let _lock = self.lock()?;
        let from_root = self.attempt_path(from)?;
        let into_root = self.attempt_path(into)?;
        // No symlinked folder on the way: `evil -> ~` must not make
        // `evil/.bashrc` a path outside the attempt.
        inside_without_links(&from_root, path)?;
        inside_without_links(&into_root, path)?;
        let base = self.take_base(from, into)?;
        let base_bytes = self.base_bytes(&base, path)?;
        let src = from_root.join(path);
        let dst = into_root.join(path);
        let src_meta = match std::fs::symlink_metadata(&src) {
            Ok(m) if m.is_file() => Some(m),
            Ok(_) => {
                return Err(GitError::Invalid(format!(
                    "{path} in {from} is not a regular file; only files can be taken"
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(GitError::io("read", &src, e)),
        };
        let from_bytes = match &src_meta {
            Some(_) => Some(std::fs::read(&src).map_err(|e| GitError::io("read", &src, e))?),
            None => None,
        };
        match (&from_bytes, &base_bytes) {
            (None, None) => {
                return Err(GitError::Invalid(format!(
                    "{path} does not exist in {from} (nor in its base): nothing to take; check the path"
                )));
            }
            (Some(f), Some(b)) if f == b => {
                return Err(GitError::Invalid(format!(
                    "{from} did not change {path} (it is as the base has it): nothing to take"
                )));
            }
            _ => {}
        }
        let into_bytes = match std::fs::symlink_metadata(&dst) {
            Ok(m) if m.is_file() => {
                Some(std::fs::read(&dst).map_err(|e| GitError::io("read", &dst, e))?)
            }
            Ok(_) => {
                return Err(GitError::Invalid(format!(
                    "{path} in {into} is not a regular file; it is left as it is"
                )));
            }
            Err(_) => None,
        };
        // What `into` has of its own at `path`: anything that is neither
        // the base's version nor already `from`'s.
        let own = match &into_bytes {
            None => false,
            Some(t) => Some(t) != base_bytes.as_ref() && Some(t) != from_bytes.as_ref(),
        };
        let mut trash = None;
        if own {
            if !force {
                return Err(GitError::WouldLose(format!(
                    "{path} was not taken: {into} has its own version of it (changed, untracked or ignored) that would be {}; pass --force to keep a copy in the trash and take it anyway",
                    if from_bytes.is_some() {
                        "overwritten"
                    } else {
                        "deleted"
                    }
                )));
            }
            let risk = crate::AtRisk {
                uncommitted: vec![path.to_string()],
                ..Default::default()
            };
            trash = Some(self.trash_save(into, TrashOperation::Take, &into_root, &risk)?);
        }
        match (from_bytes, src_meta) {
            (Some(bytes), Some(m)) => {
                if into_bytes.as_ref() == Some(&bytes) {
                    return Ok(trash);
                }
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| GitError::io("create", parent, e))?;
                }
                // Atomic: a temporary file next to the target, then rename.
                let dir = dst.parent().unwrap_or(Path::new("."));
                let tmp = tempfile::NamedTempFile::new_in(dir)
                    .map_err(|e| GitError::io("write", &dst, e))?;
                std::fs::write(tmp.path(), &bytes).map_err(|e| GitError::io("copy", &src, e))?;
                std::fs::set_permissions(tmp.path(), m.permissions())
                    .map_err(|e| GitError::io("copy", &src, e))?;
                tmp.persist(&dst)
                    .map_err(|e| GitError::io("replace", &dst, e.error))?;
            }
            _ => match std::fs::remove_file(&dst) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(GitError::io("remove", &dst, e)),
            },
        }
        Ok(trash)
    }

    /// Hand the winner over: commit its uncommitted changes on its branch,
    /// then (`Merge`) merge the branch into its base branch — fast-forward
    /// when possible, else a merge commit; a conflict moves no branch.
    /// Refused: a worktree not as mia-code made it, a base branch checked
    /// out in another worktree, and (unless `force`, which keeps a copy in
    /// the trash) a merge that would overwrite ignored files in the main
    /// checkout. Auto-cleanup removes the worktree only when nothing would
    /// be lost.
    pub fn promote(&self, name: &str, mode: PromoteMode, force: bool) -> Result<Promoted> {
        let _lock = self.lock()?;
        let info = self.get(name)?;
        match info.state {
            crate::worktree::WorktreeState::Ok => {}
            crate::worktree::WorktreeState::Missing => {
                return Err(GitError::Invalid(format!(
                    "worktree {name}'s directory {} is gone: nothing to promote",
                    info.path.display()
                )));
            }
            crate::worktree::WorktreeState::BranchChanged => {
                return Err(GitError::Invalid(format!(
                    "worktree {name} has {} checked out now, not {}; promote acts only on the branch mia-code made",
                    info.branch, info.recorded_branch
                )));
            }
        }
        let git = self.git(&info.path);
        let mut committed = None;
        if !info.dirty.is_empty() {
            git.ok(&["add", "-A"])?;
            let identity = self.identity(&info.path);
            let mut c = self.git(&info.path);
            for (k, v) in identity {
                c = c.with_env(k, v);
            }
            c.ok(&[
                "commit",
                "--quiet",
                "--no-verify",
                "-m",
                &format!("mia-code: attempt {name}"),
            ])?;
            committed = Some(git.ok(&["rev-parse", "HEAD"])?.trim().to_string());
        }
        let head = git.ok(&["rev-parse", "HEAD"])?.trim().to_string();
        let others: Vec<String> = self
            .list()?
            .into_iter()
            .map(|w| w.name)
            .filter(|n| n != name)
            .collect();
        let mut out = Promoted {
            name: name.to_string(),
            branch: info.branch.clone(),
            head: head.clone(),
            merged_into: None,
            commit: None,
            fast_forward: false,
            removed: false,
            others,
            committed: committed.clone(),
            trash: None,
            kept: None,
        };
        if mode == PromoteMode::KeepBranch {
            return Ok(out);
        }
        let Some(base) = info.base_ref.clone() else {
            return Err(GitError::Invalid(format!(
                "worktree {name} was not made from a branch, so there is nothing to merge into; use --keep-branch"
            )));
        };
        let root = self.git(&self.repo.root);
        let root_dir =
            dunce::canonicalize(&self.repo.root).unwrap_or_else(|_| self.repo.root.clone());
        if let Some((elsewhere, _, _)) = self
            .registered()?
            .into_iter()
            .find(|(p, _, b)| b.as_deref() == Some(base.as_str()) && *p != root_dir)
        {
            return Err(GitError::Invalid(format!(
                "{base} is checked out in the worktree {}: git would not move it under that checkout; switch it to another branch there first{}",
                elsewhere.display(),
                committed
                    .as_ref()
                    .map(|c| format!(
                        " (the uncommitted changes were committed on {} as {c})",
                        info.branch
                    ))
                    .unwrap_or_default()
            )));
        }
        let base_tip = root
            .ok(&["rev-parse", "--verify", &format!("refs/heads/{base}")])?
            .trim()
            .to_string();
        let ff = root.yes(&["merge-base", "--is-ancestor", &base_tip, &head])?;
        let new = if ff {
            head.clone()
        } else {
            let m = root.output(&[
                "merge-tree",
                "--write-tree",
                "--name-only",
                "--no-messages",
                &base_tip,
                &head,
            ])?;
            let text = String::from_utf8_lossy(&m.stdout).to_string();
            let mut lines = text.lines();
            let tree = lines.next().unwrap_or_default().trim().to_string();
            if !m.status.success() {
                let files: Vec<String> = lines
                    .take_while(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect();
                if m.status.code() == Some(1) {
                    return Err(GitError::MergeConflict {
                        branch: info.branch.clone(),
                        base,
                        files,
                        committed,
                    });
                }
                return Err(crate::git::fail(&["merge-tree"], &m));
            }
            let mut c = self.git(&self.repo.root);
            for (k, v) in self.identity(&self.repo.root) {
                c = c.with_env(k, v);
            }
            c.ok(&[
                "commit-tree",
                &tree,
                "-p",
                &base_tip,
                "-p",
                &head,
                "-m",
                &format!("Merge mia-code attempt {name} ({})", info.branch),
            ])?
            .trim()
            .to_string()
        };
        // Move the base branch: in the main tree when it is checked out
        // there (a fast-forward to the new commit, refused if local changes
        // would be overwritten: nothing half-applied), else the ref alone.
        let checked_out = root
            .ok(&["symbolic-ref", "--quiet", "--short", "HEAD"])
            .map(|s| s.trim() == base)
            .unwrap_or(false);
        if checked_out {
            // git overwrites ignored files on a merge: never without a copy.
            let ignored = self.ignored_overwritten(&base_tip, &new)?;
            if !ignored.is_empty() {
                if !force {
                    return Err(GitError::WouldLose(format!(
                        "{} was not merged into {base}: it would overwrite ignored file(s) in the main checkout ({}){}; pass --force to keep a copy in the trash first",
                        info.branch,
                        ignored.join(", "),
                        committed
                            .as_ref()
                            .map(|c| format!(
                                "; the uncommitted changes were committed on {} as {c}",
                                info.branch
                            ))
                            .unwrap_or_default()
                    )));
                }
                let risk = crate::AtRisk {
                    ignored,
                    ..Default::default()
                };
                out.trash = Some(self.trash_save(
                    "main",
                    TrashOperation::Promote,
                    &self.repo.root,
                    &risk,
                )?);
            }
            root.ok(&["merge", "--quiet", "--ff-only", &new])?;
        } else {
            root.ok(&["update-ref", &format!("refs/heads/{base}"), &new, &base_tip])?;
        }
        out.merged_into = Some(base);
        out.commit = Some(new);
        out.fast_forward = ff;
        if self.settings.auto_cleanup {
            match self.remove_locked(name, false, TrashOperation::AutoCleanup) {
                Ok(_) => out.removed = true,
                Err(e) => out.kept = Some(e.to_string()),
            }
        }
        Ok(out)
    }

    /// Files the move from `from` to `to` writes that exist in the main
    /// checkout as ignored files.
    fn ignored_overwritten(&self, from: &str, to: &str) -> Result<Vec<String>> {
        let root = self.git(&self.repo.root);
        let changed = root.ok(&["diff", "--name-only", "-z", "--no-renames", from, to])?;
        let mut out = Vec::new();
        for p in changed.split('\0').filter(|p| !p.is_empty()) {
            if self.repo.root.join(p).is_file()
                && root.yes(&["check-ignore", "-q", "--no-index", p])?
            {
                // Tracked at `from` means not ignored there: only files git
                // does not track count.
                let tracked = root.yes(&["cat-file", "-e", &format!("{from}:{p}")])?;
                if !tracked {
                    out.push(p.to_string());
                }
            }
        }
        Ok(out)
    }

    /// Author and committer for mia-code's own commits when git has none configured.
    fn identity(&self, dir: &Path) -> Vec<(&'static str, String)> {
        let has = |k: &str| {
            self.git(dir)
                .ok(&["config", "--get", k])
                .map(|s| !s.trim().is_empty())
                .unwrap_or(false)
        };
        let mut v = Vec::new();
        if !has("user.name") {
            v.push(("GIT_AUTHOR_NAME", "mia-code".to_string()));
            v.push(("GIT_COMMITTER_NAME", "mia-code".to_string()));
        }
        if !has("user.email") {
            v.push(("GIT_AUTHOR_EMAIL", "mia-code@localhost".to_string()));
            v.push(("GIT_COMMITTER_EMAIL", "mia-code@localhost".to_string()));
        }
        v
    }
}

/// Every existing folder on the way from `root` to `rel` is a real folder (not a symlink).
fn inside_without_links(root: &Path, rel: &str) -> Result<()> {
    let mut cur = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        cur.push(part);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(GitError::Invalid(format!(
                    "{rel}: {} is a symbolic link; only files inside the attempt can be taken",
                    cur.display()
                )));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// A project-relative path without `..`, absolute parts or `.git`.
fn check_rel(path: &str) -> Result<()> {
    let p = Path::new(path);
    let bad = path.is_empty()
        || p.is_absolute()
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_)) || c.as_os_str() == ".git");
    if bad {
        return Err(GitError::Invalid(format!(
            "{path:?} is not a path inside the project (relative, no `..`, not in .git)"
        )));
    }
    Ok(())
}
