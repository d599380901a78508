//! Git repositories for test fixtures, made with libgit2 so the same tests
//! run where no `git` program exists (the Windows tests under Wine; Git for
//! Windows cannot be installed there).
//!
//! Each function does what the `git` command in its doc line does, for the
//! cases fixtures need: commits with a fixed test identity, `add -A` that
//! honours `.gitignore` and `info/exclude`, `clean -fdx`, and a reference
//! tree hash (`add -A` + `write-tree` into a separate git dir).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git2::{IndexAddOption, Repository, Signature, Status, StatusOptions};

/// What went wrong building a fixture.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("libgit2: {0}")]
    Git(#[from] git2::Error),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, RepoError>;

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> RepoError + 'a {
    move |source| RepoError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Whether a `git` program can be started (Linux CI: always; Wine: never).
pub fn has_git_program() -> bool {
    Command::new("git")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn signature() -> Result<Signature<'static>> {
    Ok(Signature::now("t", "t@example.invalid")?)
}

/// `git init -q` (branch `main`).
pub fn init(dir: &Path) -> Result<Repository> {
    let mut opts = git2::RepositoryInitOptions::new();
    opts.initial_head("main");
    Ok(Repository::init_opts(dir, &opts)?)
}

/// `git init -q --bare`.
pub fn init_bare(dir: &Path) -> Result<Repository> {
    Ok(Repository::init_bare(dir)?)
}

/// `git add -A`: new and changed files (ignored ones left out) and deletions.
pub fn add_all(dir: &Path) -> Result<()> {
    let repo = Repository::open(dir)?;
    let mut index = repo.index()?;
    index.add_all(["*"], IndexAddOption::DEFAULT, None)?;
    index.update_all(["*"], None)?;
    index.write()?;
    Ok(())
}

/// `git add -- paths…` (paths relative to the work tree, `/`-separated).
pub fn add(dir: &Path, paths: &[&str]) -> Result<()> {
    let repo = Repository::open(dir)?;
    let mut index = repo.index()?;
    for p in paths {
        index.add_path(Path::new(p))?;
    }
    index.write()?;
    Ok(())
}

/// `git commit -qm message` of the index onto HEAD; the new commit's hash.
pub fn commit(dir: &Path, message: &str) -> Result<String> {
    let repo = Repository::open(dir)?;
    let mut index = repo.index()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let parent = match repo.head() {
        Ok(h) => Some(h.peel_to_commit()?),
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
        Err(e) if e.code() == git2::ErrorCode::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let sig = signature()?;
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let id = repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)?;
    Ok(id.to_string())
}

/// `git add -A && git commit -qm message`.
pub fn commit_all(dir: &Path, message: &str) -> Result<String> {
    add_all(dir)?;
    commit(dir, message)
}

/// `git rev-parse HEAD`.
pub fn head(dir: &Path) -> Result<String> {
    let repo = Repository::open(dir)?;
    Ok(repo.head()?.peel_to_commit()?.id().to_string())
}

/// `git status --porcelain` as (path, status), untracked files included and
/// ignored ones left out, sorted by path.
pub fn status(dir: &Path) -> Result<Vec<(String, Status)>> {
    let repo = Repository::open(dir)?;
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let mut out: Vec<(String, Status)> = repo
        .statuses(Some(&mut opts))?
        .iter()
        .filter_map(|e| e.path().map(|p| (p.to_string(), e.status())))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// `git clean -fdx`: every untracked and ignored file and directory is
/// removed; what the index holds stays.
pub fn clean(dir: &Path) -> Result<()> {
    let repo = Repository::open(dir)?;
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .include_ignored(true)
        .recurse_untracked_dirs(false)
        .recurse_ignored_dirs(false);
    let doomed: Vec<String> = repo
        .statuses(Some(&mut opts))?
        .iter()
        .filter(|e| e.status().intersects(Status::WT_NEW | Status::IGNORED))
        .filter_map(|e| e.path().map(str::to_string))
        .collect();
    for rel in doomed {
        let p = dir.join(rel.trim_end_matches('/'));
        let meta = std::fs::symlink_metadata(&p).map_err(io("reading", &p))?;
        if meta.is_dir() {
            std::fs::remove_dir_all(&p).map_err(io("removing", &p))?;
        } else {
            std::fs::remove_file(&p).map_err(io("removing", &p))?;
        }
    }
    Ok(())
}

/// `git --git-dir G for-each-ref prefix` as ref names.
pub fn refs(git_dir: &Path, prefix: &str) -> Result<Vec<String>> {
    let repo = Repository::open_bare(git_dir)?;
    let mut names = Vec::new();
    for r in repo.references_glob(&format!("{prefix}*"))? {
        if let Some(n) = r?.name() {
            names.push(n.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// `git --git-dir G update-ref name target` (target: a hash).
pub fn update_ref(git_dir: &Path, name: &str, target: &str) -> Result<()> {
    let repo = Repository::open_bare(git_dir)?;
    repo.reference(name, git2::Oid::from_str(target)?, true, "fixture")?;
    Ok(())
}

/// `git add -A` + `git write-tree` of `project` into a separate git dir
/// whose `info/exclude` holds `exclude`: the tree hash git would give the
/// work tree as it is.
pub fn worktree_tree(project: &Path, exclude: &str) -> Result<String> {
    let gd = tempfile::tempdir().map_err(io("making a temporary directory", project))?;
    let repo = Repository::init_bare(gd.path())?;
    let info = gd.path().join("info");
    std::fs::create_dir_all(&info).map_err(io("making", &info))?;
    let ex = info.join("exclude");
    std::fs::write(&ex, exclude).map_err(io("writing", &ex))?;
    repo.set_workdir(project, false)?;
    let mut index = repo.index()?;
    index.add_all(["*"], IndexAddOption::DEFAULT, None)?;
    Ok(index.write_tree()?.to_string())
}

/// A stand-in for `git fsck`: every object reachable from every ref (and
/// from the trees and commits they name) is read back whole. The number of
/// objects read.
pub fn check_reachable(git_dir: &Path) -> Result<usize> {
    let repo = Repository::open_bare(git_dir)?;
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<git2::Oid> = Vec::new();
    for r in repo.references()? {
        if let Some(t) = r?.target() {
            stack.push(t);
        }
    }
    let odb = repo.odb()?;
    while let Some(oid) = stack.pop() {
        if !seen.insert(oid) {
            continue;
        }
        let obj = odb.read(oid)?;
        match obj.kind() {
            git2::ObjectType::Tree => {
                let tree = repo.find_tree(oid)?;
                stack.extend(
                    tree.iter()
                        .filter(|e| e.kind() != Some(git2::ObjectType::Commit))
                        .map(|e| e.id()),
                );
            }
            git2::ObjectType::Commit => {
                let c = repo.find_commit(oid)?;
                stack.push(c.tree_id());
                stack.extend(c.parent_ids());
            }
            git2::ObjectType::Tag => {
                stack.push(repo.find_tag(oid)?.target_id());
            }
            _ => {}
        }
    }
    Ok(seen.len())
}

/// `git apply` of `patch` onto the work tree of the repository at `dir`.
pub fn apply(dir: &Path, patch: &[u8]) -> Result<()> {
    let repo = Repository::open(dir)?;
    let diff = git2::Diff::from_buffer(patch)?;
    repo.apply(&diff, git2::ApplyLocation::WorkDir, None)?;
    Ok(())
}
