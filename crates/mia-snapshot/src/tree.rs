//! Tree objects built directly: a full scan serialises every directory in
//! memory and writes only the trees that changed; a capture with known paths
//! rewrites just the ancestors of those paths on top of the previous tree.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use git2::{ObjectType, Oid, Repository, Tree};

use crate::cache::{Content, FastMap, MODE_EXEC, MODE_FILE, MODE_LINK, MODE_TREE};
use crate::scan::DirScan;

/// Git's tree entry order: names compared bytewise, directories as if they
/// ended in `/`.
pub fn git_name_cmp(a: &[u8], a_tree: bool, b: &[u8], b_tree: bool) -> Ordering {
    let n = a.len().min(b.len());
    match a[..n].cmp(&b[..n]) {
        Ordering::Equal => {}
        other => return other,
    }
    let ca = a.get(n).copied().or(if a_tree { Some(b'/') } else { None });
    let cb = b.get(n).copied().or(if b_tree { Some(b'/') } else { None });
    ca.cmp(&cb)
}

/// Serialise entries `(name, mode, oid)` into a git tree object body.
pub fn serialize_tree(entries: &mut [(&[u8], u32, Oid)]) -> Vec<u8> {
    entries.sort_by(|a, b| git_name_cmp(a.0, a.1 == MODE_TREE, b.0, b.1 == MODE_TREE));
    let mut buf = Vec::with_capacity(entries.len() * 40);
    for (name, mode, oid) in entries.iter() {
        buf.extend_from_slice(format!("{mode:o} ").as_bytes());
        buf.extend_from_slice(name);
        buf.push(0);
        buf.extend_from_slice(oid.as_bytes());
    }
    buf
}

/// Build the trees of a scan bottom-up. A directory that is clean (no
/// changed file in it or below, nothing deleted under it) reuses its cached
/// id without being serialised; others are hashed and written when new.
/// Returns the root, every visited directory and the directories whose id
/// is new.
#[allow(clippy::type_complexity)]
pub(crate) fn build_scanned(
    sink: &crate::capture::Sink<'_, '_>,
    odb: &git2::Odb<'_>,
    dirs: &FastMap<Vec<u8>, DirScan>,
    known: &FastMap<Vec<u8>, Oid>,
    dirty: &HashSet<Vec<u8>>,
) -> Result<(Oid, Vec<Vec<u8>>, Vec<(Vec<u8>, Oid)>, Vec<Oid>), git2::Error> {
    let mut ctx = Build {
        sink,
        odb,
        dirs,
        known,
        dirty,
        visited: Vec::with_capacity(dirs.len()),
        changed: Vec::new(),
        written: Vec::new(),
    };
    let root = ctx.dir(b"")?;
    let root = match root {
        Some((r, _)) => r,
        None => {
            let oid = sink.write(ObjectType::Tree, &[])?;
            ctx.written.push(oid);
            oid
        }
    };
    Ok((root, ctx.visited, ctx.changed, ctx.written))
}

struct Build<'a, 'r> {
    sink: &'a crate::capture::Sink<'a, 'r>,
    odb: &'a git2::Odb<'r>,
    dirs: &'a FastMap<Vec<u8>, DirScan>,
    known: &'a FastMap<Vec<u8>, Oid>,
    dirty: &'a HashSet<Vec<u8>>,
    visited: Vec<Vec<u8>>,
    changed: Vec<(Vec<u8>, Oid)>,
    /// Trees written (not found in the object store).
    written: Vec<Oid>,
}

impl Build<'_, '_> {
    /// The tree id of directory `rel` and whether it changed.
    fn dir(&mut self, rel: &[u8]) -> Result<Option<(Oid, bool)>, git2::Error> {
        let Some(d) = self.dirs.get(rel) else {
            return Ok(None);
        };
        let name_start = if rel.is_empty() { 0 } else { rel.len() + 1 };
        let mut subs: Vec<(&[u8], Oid)> = Vec::with_capacity(d.subdirs.len());
        let mut any_dirty = d.dirty || self.dirty.contains(rel);
        let mut sub_rel = Vec::with_capacity(rel.len() + 32);
        for sub in &d.subdirs {
            sub_rel.clear();
            if !rel.is_empty() {
                sub_rel.extend_from_slice(rel);
                sub_rel.push(b'/');
            }
            sub_rel.extend_from_slice(sub);
            if let Some((oid, changed)) = self.dir(&sub_rel)? {
                subs.push((sub.as_slice(), oid));
                any_dirty |= changed;
            }
        }
        if !any_dirty && let Some(oid) = self.known.get(rel) {
            self.visited.push(rel.to_vec());
            return Ok(Some((*oid, false)));
        }
        let mut entries: Vec<(&[u8], u32, Oid)> = Vec::with_capacity(d.files.len() + subs.len());
        for f in &d.files {
            if let Some(Content::Stored(oid)) = f.hit {
                entries.push((&f.rel[name_start..], f.stat.mode, oid));
            }
        }
        for (name, oid) in subs {
            entries.push((name, MODE_TREE, oid));
        }
        if entries.is_empty() && !rel.is_empty() {
            // Not a tree any more: not visited, so its cached id is dropped.
            return Ok(None);
        }
        let body = serialize_tree(&mut entries);
        let oid = Oid::hash_object(ObjectType::Tree, &body)?;
        self.visited.push(rel.to_vec());
        let changed = self.known.get(rel) != Some(&oid);
        if changed {
            if !self.odb.exists(oid) {
                self.sink.write(ObjectType::Tree, &body)?;
                self.written.push(oid);
            }
            self.changed.push((rel.to_vec(), oid));
        }
        Ok(Some((oid, changed)))
    }
}

pub fn split_parent(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|c| *c == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[], path),
    }
}

/// A change to one path in a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Put { mode: u32, oid: Oid },
    Remove,
}

/// Apply `changes` (relative `/` paths) to `base`, rewriting only the trees
/// on the way to them. Returns the new root and the change in file count.
pub fn apply_changes(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    changes: &BTreeMap<Vec<u8>, Change>,
) -> Result<(Oid, i64), git2::Error> {
    let (oid, delta) = apply_level(repo, base, changes, true)?;
    match oid {
        Some(o) => Ok((o, delta)),
        None => Ok((repo.treebuilder(None)?.write()?, delta)),
    }
}

fn apply_level(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    changes: &BTreeMap<Vec<u8>, Change>,
    root: bool,
) -> Result<(Option<Oid>, i64), git2::Error> {
    let mut leaf: BTreeMap<&[u8], Change> = BTreeMap::new();
    let mut nested: BTreeMap<&[u8], BTreeMap<Vec<u8>, Change>> = BTreeMap::new();
    for (path, change) in changes {
        match path.iter().position(|c| *c == b'/') {
            None => {
                leaf.insert(path.as_slice(), *change);
            }
            Some(i) => {
                nested
                    .entry(&path[..i])
                    .or_default()
                    .insert(path[i + 1..].to_vec(), *change);
            }
        }
    }
    let mut builder = repo.treebuilder(base)?;
    let mut delta: i64 = 0;
    let mut names: Vec<&[u8]> = leaf.keys().chain(nested.keys()).copied().collect();
    names.sort();
    names.dedup();
    for name in names {
        let existing = builder.get(name)?.map(|e| (e.id(), e.filemode()));
        // Count only what a leaf change replaces; nested changes report
        // their own delta (never walk a whole subtree on the hot path).
        let old_count = |repo: &Repository| -> Result<i64, git2::Error> {
            match existing {
                Some((id, mode)) => entry_file_count(repo, id, mode),
                None => Ok(0),
            }
        };
        match (leaf.get(name), nested.get(name)) {
            (Some(Change::Put { mode, oid }), _) => {
                delta += 1 - old_count(repo)?;
                builder.insert(name, *oid, *mode as i32)?;
            }
            (_, Some(sub)) => {
                let sub_base = match existing {
                    Some((id, m)) if m == MODE_TREE as i32 => Some(repo.find_tree(id)?),
                    _ => None,
                };
                let (new_sub, sub_delta) = apply_level(repo, sub_base.as_ref(), sub, false)?;
                delta += sub_delta;
                match new_sub {
                    Some(oid) => {
                        if sub_base.is_none() {
                            // A file (or nothing) is replaced by a directory.
                            delta -= old_count(repo)?;
                        }
                        builder.insert(name, oid, MODE_TREE as i32)?;
                    }
                    None => {
                        if sub_base.is_some() {
                            // Everything below was removed (already counted).
                            builder.remove(name)?;
                        }
                    }
                }
            }
            (Some(Change::Remove), None) => {
                if existing.is_some() {
                    delta -= old_count(repo)?;
                    builder.remove(name)?;
                }
            }
            (None, None) => {}
        }
    }
    if builder.is_empty() && !root {
        return Ok((None, delta));
    }
    Ok((Some(builder.write()?), delta))
}

/// Number of files (blobs, symlinks) under one tree entry.
pub fn entry_file_count(repo: &Repository, id: Oid, mode: i32) -> Result<i64, git2::Error> {
    if mode != MODE_TREE as i32 {
        return Ok(if is_file_mode(mode as u32) { 1 } else { 0 });
    }
    let tree = repo.find_tree(id)?;
    let mut n = 0i64;
    tree.walk(git2::TreeWalkMode::PreOrder, |_, e| {
        if e.kind() == Some(ObjectType::Blob) {
            n += 1;
        }
        git2::TreeWalkResult::Ok
    })?;
    Ok(n)
}

pub fn is_file_mode(mode: u32) -> bool {
    mode == MODE_FILE || mode == MODE_EXEC || mode == MODE_LINK
}

/// Flatten a tree into `path → (mode, oid)` for blobs and symlinks.
pub fn flatten(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &str,
) -> Result<BTreeMap<String, (u32, Oid)>, git2::Error> {
    let mut out = BTreeMap::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, e| {
        if e.kind() == Some(ObjectType::Blob) {
            let name = crate::names::enc(e.name_bytes());
            out.insert(
                format!("{prefix}{dir}{name}"),
                (e.filemode() as u32, e.id()),
            );
        }
        git2::TreeWalkResult::Ok
    })?;
    let _ = repo;
    Ok(out)
}

/// The entry at `path` in `tree`, if it is a file or symlink.
pub fn file_at(tree: &Tree<'_>, path: &str) -> Option<(u32, Oid)> {
    let e = tree.get_path(&crate::names::path_of(path)).ok()?;
    let mode = e.filemode() as u32;
    if is_file_mode(mode) {
        Some((mode, e.id()))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_order_puts_directories_after_dotted_names() {
        // "a.txt" < "a/" because '.' (0x2e) < '/' (0x2f); "a0" > "a/".
        assert_eq!(git_name_cmp(b"a.txt", false, b"a", true), Ordering::Less);
        assert_eq!(git_name_cmp(b"a0", false, b"a", true), Ordering::Greater);
        assert_eq!(git_name_cmp(b"a", false, b"a", true), Ordering::Less);
        assert_eq!(git_name_cmp(b"ab", false, b"a", false), Ordering::Greater);
    }
}
