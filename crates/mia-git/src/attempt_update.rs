//! The in-process half of a watched comparison: the attempt's new tree is
//! its previous tree with just the changed paths re-read, built with
//! libgit2's tree updater (only the changed paths' ancestor trees are
//! rewritten). No index is read or written, so the cost follows the
//! number of changes, not the size of the repository.
//!
//! It does what `git add -A` does to those paths: a tracked path is
//! updated or removed whatever the ignore rules say; an untracked path is
//! added unless ignored; a symbolic link is stored as its target; the
//! executable bit follows `core.fileMode`. Whatever it cannot do exactly
//! like git (content filters, submodules, nested repositories, a file
//! turned into a directory or back) returns `None`, and git does it.

use std::path::Path;

use git2::{FileMode, ObjectType, Oid, Repository};

use crate::error::Result;

/// `tree` with `paths` (relative, `/`-separated) re-read from `dir`, or
/// `None` when git must do it.
pub(crate) fn updated_tree(dir: &Path, tree: &str, paths: &[String]) -> Result<Option<String>> {
    let repo = Repository::open(dir)?;
    let base = repo.find_tree(Oid::from_str(tree)?)?;
    let file_mode = repo
        .config()?
        .get_bool("core.fileMode")
        .unwrap_or(cfg!(unix));
    let mut sorted: Vec<&str> = paths.iter().map(|p| p.trim_matches('/')).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut update = git2::build::TreeUpdateBuilder::new();
    let mut removed_dirs: Vec<&str> = Vec::new();
    for rel in sorted {
        if rel.is_empty() {
            return Ok(None);
        }
        // Below a directory already removed whole.
        if removed_dirs
            .iter()
            .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
        {
            continue;
        }
        let (in_tree, through_link) = lookup(&base, rel)?;
        if through_link {
            // Inside a submodule or below a path stored as a file or link.
            return Ok(None);
        }
        let full = dir.join(rel);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => return Ok(None),
        };
        match (meta, in_tree) {
            (None, None) => {}
            (None, Some((kind, _))) => {
                update.remove(rel);
                if kind == ObjectType::Tree {
                    removed_dirs.push(rel);
                }
            }
            (Some(m), in_tree) if m.is_dir() => {
                // Its files are reported one by one; a directory that is a
                // repository of its own, or replaced a file, is git's.
                let was_file = in_tree.is_some_and(|(k, _)| k != ObjectType::Tree);
                if was_file || full.join(".git").exists() {
                    return Ok(None);
                }
            }
            (Some(m), in_tree) => {
                if in_tree.is_some_and(|(k, _)| k != ObjectType::Blob) {
                    // A directory or a submodule became a file.
                    return Ok(None);
                }
                if in_tree.is_none() && repo.is_path_ignored(rel)? {
                    continue;
                }
                let (oid, mode) = if m.file_type().is_symlink() {
                    let target = std::fs::read_link(&full)
                        .map_err(|e| crate::GitError::io("read", &full, e))?;
                    let bytes = target.to_string_lossy().replace('\\', "/");
                    (repo.blob(bytes.as_bytes())?, FileMode::Link)
                } else if m.is_file() {
                    let mode = if file_mode {
                        exec_mode(&m)
                    } else {
                        // core.fileMode off: the recorded bit stands.
                        match in_tree {
                            Some((_, 0o100755)) => FileMode::BlobExecutable,
                            _ => FileMode::Blob,
                        }
                    };
                    // The bytes as they are: no filter applies (the caller
                    // checked), and libgit2's filter lookup would read the
                    // worktree's whole index for attributes.
                    let bytes =
                        std::fs::read(&full).map_err(|e| crate::GitError::io("read", &full, e))?;
                    (repo.blob(&bytes)?, mode)
                } else {
                    // A socket, a fifo: git skips them.
                    continue;
                };
                update.upsert(rel, oid, mode);
            }
        }
    }
    Ok(Some(update.create_updated(&repo, &base)?.to_string()))
}

#[cfg(unix)]
fn exec_mode(m: &std::fs::Metadata) -> FileMode {
    use std::os::unix::fs::PermissionsExt;
    if m.permissions().mode() & 0o100 != 0 {
        FileMode::BlobExecutable
    } else {
        FileMode::Blob
    }
}

#[cfg(not(unix))]
fn exec_mode(_: &std::fs::Metadata) -> FileMode {
    FileMode::Blob
}

/// The entry at `rel` in `tree` (its kind and mode), and whether the path
/// goes through an entry that is not a directory (a submodule, a file).
fn lookup(tree: &git2::Tree<'_>, rel: &str) -> Result<(Option<(ObjectType, i32)>, bool)> {
    let mut prefix = String::new();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        let entry = match tree.get_path(Path::new(&prefix)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok((None, false)),
            Err(e) => return Err(e.into()),
        };
        let kind = entry.kind().unwrap_or(ObjectType::Any);
        if i + 1 == parts.len() {
            return Ok((Some((kind, entry.filemode())), false));
        }
        if kind != ObjectType::Tree {
            return Ok((None, true));
        }
    }
    Ok((None, false))
}
