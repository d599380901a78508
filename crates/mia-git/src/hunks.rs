//! Hunks of the user's own repository, as `git add -p` sees them: list the
//! work tree's hunks against the index (or the index's against `HEAD`),
//! stage, unstage or discard one, and the hunks of one file between two
//! versions (an attempt against its base) with applying one of them to a
//! third version (`worktree take --hunk`).
//!
//! The index is written by libgit2's `apply` restricted to one delta and
//! one hunk, which is what `git add -p` does: `git diff --cached` shows that
//! hunk afterwards and nothing else.
//!
//! A hunk's id is a hash of its file and its content (the lines it removes
//! and adds, and its context), with an ordinal for identical hunks of one
//! file. Its line ranges are listed but are not part of the id, so staging
//! one hunk of a file does not change the ids of the others, and a staged
//! hunk keeps its id in `hunk list --staged` (where `unstage` takes it).
//! Binary files, mode changes, renames, new and deleted files are one
//! whole-file hunk each.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use git2::{
    ApplyLocation, ApplyOptions, Delta, Diff, DiffFindOptions, DiffOptions, ObjectType, Oid, Patch,
    Repository,
};

use crate::error::{GitError, Result};

/// One hunk of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkEntry {
    pub id: String,
    /// The file's path (its new path for a rename).
    pub file: String,
    /// The path it was renamed from.
    pub old_file: Option<String>,
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub staged: bool,
    /// The hunk's lines as a unified diff prints them (`+`, `-` or space,
    /// then the line without its end of line); `\ No newline at end of
    /// file` where git prints it.
    pub lines: Vec<String>,
    pub binary: bool,
    /// Taken, staged or discarded as a whole (binary, mode change, rename,
    /// new or deleted file).
    pub whole_file: bool,
    /// The exact lines (with their ends of line) for applying elsewhere.
    pub(crate) raw: Vec<(char, Vec<u8>)>,
}

/// Which pair of versions the hunks are between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The work tree against the index (untracked files included).
    Unstaged,
    /// The index against `HEAD`.
    Staged,
}

fn open(dir: &Path) -> Result<Repository> {
    let repo =
        Repository::discover(dir).map_err(|_| GitError::NotARepository(dir.to_path_buf()))?;
    if repo.is_bare() {
        return Err(GitError::Invalid(format!(
            "{} is a bare repository: hunks need a work tree",
            dir.display()
        )));
    }
    Ok(repo)
}

fn diff_options(reverse: bool, untracked: bool) -> DiffOptions {
    let mut o = DiffOptions::new();
    o.context_lines(3)
        .interhunk_lines(0)
        .show_binary(true)
        .reverse(reverse);
    if untracked {
        o.include_untracked(true)
            .recurse_untracked_dirs(true)
            .show_untracked_content(true);
    }
    o
}

/// The diff of `side`; only of the paths `only` when given (then renames
/// are not looked for).
fn diff<'r>(
    repo: &'r Repository,
    side: Side,
    reverse: bool,
    only: Option<&[String]>,
) -> Result<Diff<'r>> {
    let index = repo.index()?;
    let narrow = |mut o: DiffOptions| {
        if let Some(paths) = only {
            for p in paths {
                o.pathspec(p);
            }
            o.disable_pathspec_match(true);
        }
        o
    };
    let mut d = match side {
        Side::Unstaged => repo
            .diff_index_to_workdir(Some(&index), Some(&mut narrow(diff_options(reverse, true))))?,
        Side::Staged => {
            let head = match repo.head() {
                Ok(h) => Some(h.peel_to_tree()?),
                Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
                Err(e) if e.code() == git2::ErrorCode::NotFound => None,
                Err(e) => return Err(e.into()),
            };
            repo.diff_tree_to_index(
                head.as_ref(),
                Some(&index),
                Some(&mut narrow(diff_options(reverse, false))),
            )?
        }
    };
    if side == Side::Staged && only.is_none() {
        d.find_similar(Some(DiffFindOptions::new().renames(true)))?;
    }
    Ok(d)
}

fn path_str(p: Option<&Path>) -> String {
    p.map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default()
}

/// The hunks between the two sides, in file order.
pub fn list(dir: &Path, side: Side) -> Result<Vec<HunkEntry>> {
    list_in(&open(dir)?, side, None)
}

fn list_in(repo: &Repository, side: Side, only: Option<&[String]>) -> Result<Vec<HunkEntry>> {
    let d = diff(repo, side, false, only)?;
    let workdir = repo.workdir().map(Path::to_path_buf);
    let mut out = Vec::new();
    for i in 0..d.deltas().len() {
        let Some(patch) = Patch::from_diff(&d, i)? else {
            continue;
        };
        out.extend(patch_hunks(&patch, side, workdir.as_deref())?);
    }
    Ok(out)
}

/// The hunks of one file between two versions (`None`: the file is not
/// there), as `list` would make them, `staged` false.
pub fn between(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> Result<Vec<HunkEntry>> {
    let mut o = diff_options(false, false);
    let p = Path::new(path);
    let patch = Patch::from_buffers(
        old.unwrap_or_default(),
        old.map(|_| p),
        new.unwrap_or_default(),
        new.map(|_| p),
        Some(&mut o),
    )?;
    let mut hunks = patch_hunks(&patch, Side::Unstaged, None)?;
    let whole = old.is_none() || new.is_none() || hunks.iter().any(|h| h.binary);
    if whole {
        let id_src = format!("{path}\0{:?}\0{:?}", old.map(blob_id), new.map(blob_id));
        let lines = hunks.iter().flat_map(|h| h.lines.clone()).collect();
        let raw = hunks.iter().flat_map(|h| h.raw.clone()).collect();
        let (old_lines, new_lines) = (count_lines(old), count_lines(new));
        hunks = vec![HunkEntry {
            id: hunk_id(path, &id_src),
            file: path.to_string(),
            old_file: None,
            old_start: u32::from(old_lines > 0),
            old_lines,
            new_start: u32::from(new_lines > 0),
            new_lines,
            staged: false,
            lines,
            binary: hunks.iter().any(|h| h.binary) || is_binary(old) || is_binary(new),
            whole_file: true,
            raw,
        }];
    }
    Ok(hunks)
}

fn count_lines(b: Option<&[u8]>) -> u32 {
    match b {
        None => 0,
        Some([]) => 0,
        Some(b) => {
            let n = b.iter().filter(|c| **c == b'\n').count();
            (n + usize::from(!b.ends_with(b"\n"))) as u32
        }
    }
}

fn is_binary(b: Option<&[u8]>) -> bool {
    b.is_some_and(|b| b.contains(&0) || std::str::from_utf8(b).is_err())
}

fn blob_id(b: &[u8]) -> String {
    Oid::hash_object(ObjectType::Blob, b)
        .map(|o| o.to_string())
        .unwrap_or_default()
}

/// A hunk's id: 4 hex digits of its file's hash (so one hunk is found
/// without diffing every file), then 8 of its content's.
fn hunk_id(file: &str, content: &str) -> String {
    let f = short_hash(file);
    let c = short_hash(&format!("{file}\0{content}"));
    format!("{}{}", &f[..4.min(f.len())], &c[..8.min(c.len())])
}

fn short_hash(s: &str) -> String {
    let full = Oid::hash_object(ObjectType::Blob, s.as_bytes())
        .map(|o| o.to_string())
        .unwrap_or_default();
    full.chars().take(12).collect()
}

/// The hunks of one file's patch. A file that is taken whole becomes one
/// entry whose ranges span the file.
fn patch_hunks(patch: &Patch<'_>, side: Side, workdir: Option<&Path>) -> Result<Vec<HunkEntry>> {
    let delta = patch.delta();
    let file = path_str(delta.new_file().path().or(delta.old_file().path()));
    let old_path = path_str(delta.old_file().path());
    let renamed = matches!(delta.status(), Delta::Renamed | Delta::Copied) && old_path != file;
    let old_mode = u32::from(delta.old_file().mode());
    let new_mode = u32::from(delta.new_file().mode());
    let added = matches!(delta.status(), Delta::Added | Delta::Untracked);
    let deleted = delta.status() == Delta::Deleted;
    let mode_change = !added && !deleted && old_mode != new_mode && old_mode != 0 && new_mode != 0;
    let binary = delta.flags().is_binary();
    let staged = side == Side::Staged;
    let mut hunks: Vec<HunkEntry> = Vec::new();
    for h in 0..patch.num_hunks() {
        let (hunk, n) = patch.hunk(h)?;
        let mut lines = Vec::with_capacity(n);
        let mut raw = Vec::with_capacity(n);
        for l in 0..n {
            let line = patch.line_in_hunk(h, l)?;
            let origin = line.origin();
            let content = line.content();
            match origin {
                '+' | '-' | ' ' => {
                    let text = String::from_utf8_lossy(content);
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    lines.push(format!("{origin}{text}"));
                    raw.push((origin, content.to_vec()));
                }
                // End of file without a newline (`=`: both sides, `>`:
                // added, `<`: removed).
                '=' | '>' | '<' => {
                    lines.push("\\ No newline at end of file".to_string());
                    raw.push((origin, Vec::new()));
                }
                _ => {}
            }
        }
        hunks.push(HunkEntry {
            id: String::new(),
            file: file.clone(),
            old_file: renamed.then(|| old_path.clone()),
            old_start: hunk.old_start(),
            old_lines: hunk.old_lines(),
            new_start: hunk.new_start(),
            new_lines: hunk.new_lines(),
            staged,
            lines,
            binary,
            whole_file: false,
            raw,
        });
    }
    let whole = binary || mode_change || renamed || added || deleted || hunks.is_empty();
    if whole {
        let new_id = match (delta.new_file().id().is_zero(), workdir) {
            (true, Some(root)) if !deleted => {
                Oid::hash_file(ObjectType::Blob, root.join(&file)).unwrap_or(Oid::zero())
            }
            _ => delta.new_file().id(),
        };
        let content_src: String = hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .map(|l| format!("{l}\n"))
            .collect();
        let id_src = format!(
            "{old_path}\0{:?}\0{old_mode:o}\0{new_mode:o}\0{}\0{new_id}\0{content_src}",
            delta.status(),
            delta.old_file().id(),
        );
        let first = hunks.first();
        let last = hunks.last();
        let entry = HunkEntry {
            id: hunk_id(&file, &id_src),
            file: file.clone(),
            old_file: renamed.then(|| old_path.clone()),
            old_start: first.map_or(0, |h| h.old_start),
            old_lines: last
                .map_or(0, |l| l.old_start + l.old_lines)
                .saturating_sub(first.map_or(0, |h| h.old_start)),
            new_start: first.map_or(0, |h| h.new_start),
            new_lines: last
                .map_or(0, |l| l.new_start + l.new_lines)
                .saturating_sub(first.map_or(0, |h| h.new_start)),
            staged,
            lines: hunks.iter().flat_map(|h| h.lines.clone()).collect(),
            binary,
            whole_file: true,
            raw: hunks.into_iter().flat_map(|h| h.raw).collect(),
        };
        return Ok(vec![entry]);
    }
    let mut seen: HashMap<String, u32> = HashMap::new();
    for h in &mut hunks {
        let body: String = h.lines.iter().map(|l| format!("{l}\n")).collect();
        let n = seen.entry(body.clone()).or_insert(0);
        h.id = hunk_id(&file, &format!("{body}\0{n}"));
        *n += 1;
    }
    Ok(hunks)
}

/// Find `id` among the hunks of `side`: first among the files whose path
/// hash starts as the id does (one file, almost always), then everywhere.
fn find(dir: &Path, side: Side, id: &str) -> Result<Option<HunkEntry>> {
    let repo = open(dir)?;
    let id = id.trim();
    if let Some(prefix) = id.get(..4) {
        let candidates = candidate_paths(&repo, side, prefix)?;
        if !candidates.is_empty()
            && let Some(h) = list_in(&repo, side, Some(&candidates))?
                .into_iter()
                .find(|h| h.id == id)
        {
            return Ok(Some(h));
        }
    }
    Ok(list_in(&repo, side, None)?.into_iter().find(|h| h.id == id))
}

/// Paths of the index (and, for staged hunks, of `HEAD`) whose hash starts
/// with `prefix`.
fn candidate_paths(repo: &Repository, side: Side, prefix: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = repo
        .index()?
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| short_hash(p).starts_with(prefix))
        .collect();
    // A staged deletion is in HEAD only.
    if side == Side::Staged
        && out.is_empty()
        && let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree())
    {
        tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                let p = format!("{root}{}", entry.name().unwrap_or_default());
                if short_hash(&p).starts_with(prefix) && !out.contains(&p) {
                    out.push(p);
                }
            }
            git2::TreeWalkResult::Ok
        })?;
    }
    Ok(out)
}

fn gone(id: &str, side: Side) -> GitError {
    GitError::HunkGone {
        id: id.to_string(),
        why: match side {
            Side::Unstaged => "is not among the work tree's unstaged hunks (it was staged, discarded, or its file changed since it was listed)".into(),
            Side::Staged => "is not among the staged hunks (it was unstaged or committed, or the index changed since it was listed)".into(),
        },
    }
}

/// Apply the one hunk `h` of the diff of `side` (reversed when `reverse`)
/// at `location`.
fn apply_one(
    repo: &Repository,
    side: Side,
    reverse: bool,
    h: &HunkEntry,
    location: ApplyLocation,
) -> Result<()> {
    // Only the hunk's file (a rename needs the whole diff to be seen as one).
    let only = [h.file.clone()];
    let d = diff(
        repo,
        side,
        reverse,
        h.old_file.is_none().then_some(&only[..]),
    )?;
    let (want_new, want_old) = match (&h.old_file, reverse) {
        (Some(old), false) => (h.file.clone(), old.clone()),
        (Some(old), true) => (old.clone(), h.file.clone()),
        (None, _) => (h.file.clone(), h.file.clone()),
    };
    let ranges = if reverse {
        (h.new_start, h.new_lines, h.old_start, h.old_lines)
    } else {
        (h.old_start, h.old_lines, h.new_start, h.new_lines)
    };
    let whole = h.whole_file;
    let mut matched = false;
    let mut opts = ApplyOptions::new();
    opts.delta_callback(|d| {
        d.is_some_and(|d| {
            let new = path_str(d.new_file().path().or(d.old_file().path()));
            let old = path_str(d.old_file().path().or(d.new_file().path()));
            new == want_new && old == want_old
        })
    });
    opts.hunk_callback(|hk| {
        let ok = whole
            || hk.is_some_and(|hk| {
                (
                    hk.old_start(),
                    hk.old_lines(),
                    hk.new_start(),
                    hk.new_lines(),
                ) == ranges
            });
        if ok {
            matched = true;
        }
        ok
    });
    repo.apply(&d, location, Some(&mut opts))?;
    drop(opts);
    if !matched && !whole {
        return Err(GitError::HunkGone {
            id: h.id.clone(),
            why: "no longer matches its file".into(),
        });
    }
    Ok(())
}

/// Stage the work tree's hunk `id` (as `git add -p` does); the hunk as it
/// was listed.
pub fn stage(dir: &Path, id: &str) -> Result<HunkEntry> {
    let repo = open(dir)?;
    let h = find(dir, Side::Unstaged, id)?.ok_or_else(|| gone(id, Side::Unstaged))?;
    if untracked(&repo, &h.file)? {
        let mut index = repo.index()?;
        index.add_path(Path::new(&h.file))?;
        index.write()?;
    } else {
        apply_one(&repo, Side::Unstaged, false, &h, ApplyLocation::Index)?;
    }
    Ok(h)
}

/// Unstage the staged hunk `id` (as `git reset -p` does).
pub fn unstage(dir: &Path, id: &str) -> Result<HunkEntry> {
    let repo = open(dir)?;
    let h = find(dir, Side::Staged, id)?.ok_or_else(|| gone(id, Side::Staged))?;
    apply_one(&repo, Side::Staged, true, &h, ApplyLocation::Index)?;
    Ok(h)
}

/// The work tree's hunk `id` and the files discarding it would change.
pub fn prepare_revert(dir: &Path, id: &str) -> Result<(HunkEntry, PathBuf)> {
    let repo = open(dir)?;
    let root = repo
        .workdir()
        .map(Path::to_path_buf)
        .ok_or_else(|| GitError::NotARepository(dir.to_path_buf()))?;
    if let Some(h) = find(dir, Side::Unstaged, id)? {
        return Ok((h, root));
    }
    match find(dir, Side::Staged, id)? {
        Some(staged) => Err(GitError::Invalid(format!(
            "hunk {id} of {} is staged: unstage it first (`mia-code hunk unstage {id}`), then discard it",
            staged.file
        ))),
        None => Err(gone(id, Side::Unstaged)),
    }
}

/// Discard the work tree's hunk `id` (as `git checkout -p` does): the file
/// goes back to the index's version of that hunk; an untracked file is
/// deleted. The caller captures the file first.
pub fn revert(dir: &Path, id: &str) -> Result<HunkEntry> {
    let repo = open(dir)?;
    let h = find(dir, Side::Unstaged, id)?.ok_or_else(|| gone(id, Side::Unstaged))?;
    if untracked(&repo, &h.file)? {
        let root = repo
            .workdir()
            .ok_or_else(|| GitError::NotARepository(dir.to_path_buf()))?;
        let path = root.join(&h.file);
        std::fs::remove_file(&path).map_err(|e| GitError::io("remove", &path, e))?;
    } else {
        apply_one(&repo, Side::Unstaged, true, &h, ApplyLocation::WorkDir)?;
    }
    Ok(h)
}

fn untracked(repo: &Repository, file: &str) -> Result<bool> {
    let index = repo.index()?;
    Ok(index.get_path(Path::new(file), 0).is_none())
}

/// `current` (the file where the hunk goes) with hunk `h` applied: its old
/// lines are looked for at the hunk's place first, then nearest to it;
/// they must match exactly. A whole-file hunk is refused (the caller takes
/// the whole file).
pub fn apply_to(current: &[u8], h: &HunkEntry) -> Result<Vec<u8>> {
    let refuse = |why: &str| {
        GitError::Conflict(format!(
            "hunk {} of {} does not apply: {why}; take the whole file instead, or edit it by hand",
            h.id, h.file
        ))
    };
    let mut old_block: Vec<Vec<u8>> = Vec::new();
    let mut new_block: Vec<Vec<u8>> = Vec::new();
    for (origin, bytes) in &h.raw {
        match origin {
            ' ' => {
                old_block.push(bytes.clone());
                new_block.push(bytes.clone());
            }
            '-' => old_block.push(bytes.clone()),
            '+' => new_block.push(bytes.clone()),
            // libgit2's lines carry their exact bytes: a last line without
            // a newline has none, so its marker needs nothing here.
            _ => {}
        }
    }
    let cur: Vec<Vec<u8>> = split_lines(current);
    if h.whole_file {
        return Err(refuse("it is a whole-file change"));
    }
    let expected = (h.old_start as usize).saturating_sub(usize::from(h.old_lines > 0));
    let fits = |at: usize| {
        at + old_block.len() <= cur.len() && cur[at..at + old_block.len()] == old_block[..]
    };
    let at = (0..=cur.len())
        .filter(|&at| fits(at))
        .min_by_key(|&at| at.abs_diff(expected))
        .ok_or_else(|| {
            refuse("the lines it changes are not in the target's version of the file")
        })?;
    let mut out: Vec<u8> = Vec::new();
    for l in &cur[..at] {
        out.extend_from_slice(l);
    }
    for l in &new_block {
        out.extend_from_slice(l);
    }
    for l in &cur[at + old_block.len()..] {
        out.extend_from_slice(l);
    }
    Ok(out)
}

fn split_lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split_inclusive(|c| *c == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}
