//! Diffs between snapshots (spec 077): structured [`FileDiff`]s, unified
//! text, patches that `git apply` and `patch -p1` accept, and statistics.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use git2::{Oid, Repository, Tree};
use similar::{Algorithm, DiffTag};

use crate::cache::{MODE_LINK, MODE_TREE};
use crate::capture::Budget;
use crate::error::Result;
use crate::repo::SnapshotRepo;
use crate::tree;

pub use mia_protocol::{DiffLine, DiffStats, DiffStatus, FileDiff, Hunk, LineType};

/// Context lines around each change.
pub const CONTEXT_LINES: usize = 3;

/// Statistics of a diff.
pub fn stats(diffs: &[FileDiff]) -> DiffStats {
    let mut s = DiffStats::default();
    for d in diffs {
        s.files_changed += 1;
        match d.status {
            DiffStatus::Added => s.files_added += 1,
            DiffStatus::Deleted => s.files_deleted += 1,
            DiffStatus::Modified => s.files_modified += 1,
        }
        s.total_additions += u64::from(d.additions);
        s.total_deletions += u64::from(d.deletions);
    }
    s.estimated_loc_impact = i64::try_from(s.total_additions).unwrap_or(i64::MAX)
        - i64::try_from(s.total_deletions).unwrap_or(i64::MAX);
    s
}

/// One side of a changed file: mode and blob.
type Side = Option<(u32, Oid)>;

impl SnapshotRepo {
    /// Structured diff between two snapshots (hashes, abbreviations allowed).
    pub fn diff_full(&self, a: &str, b: &str) -> Result<Vec<FileDiff>> {
        let ta = self
            .repo
            .find_tree(self.resolve(a)?)
            .map_err(self.git_err())?;
        let tb = self
            .repo
            .find_tree(self.resolve(b)?)
            .map_err(self.git_err())?;
        diff_trees(&self.repo, &ta, &tb, None).map_err(self.git_err())
    }

    /// Unified diff text between two snapshots (the same text as
    /// [`to_patch`]).
    pub fn diff(&self, a: &str, b: &str) -> Result<String> {
        Ok(self.patch(&self.diff_full(a, b)?))
    }

    /// Structured diff of snapshot `a` against the live working tree,
    /// optionally limited to some paths.
    pub fn diff_worktree(&mut self, a: &str, paths: Option<&[PathBuf]>) -> Result<Vec<FileDiff>> {
        let oid = self.resolve(a)?;
        let current = {
            let _lock = self.lock_until(None)?;
            self.capture_tree(None, Budget::unlimited())?.tree
        };
        let ta = self.repo.find_tree(oid).map_err(self.git_err())?;
        let tb = self.repo.find_tree(current).map_err(self.git_err())?;
        let filter = match paths {
            Some(ps) => Some(
                ps.iter()
                    .map(|p| self.relative_path(p))
                    .collect::<Result<Vec<_>>>()?,
            ),
            None => None,
        };
        diff_trees(&self.repo, &ta, &tb, filter.as_deref()).map_err(self.git_err())
    }

    /// Structured diff restricted to `paths` (project-relative, `/`).
    pub fn diff_paths(&self, a: &str, b: &str, paths: &[String]) -> Result<Vec<FileDiff>> {
        let ta = self
            .repo
            .find_tree(self.resolve(a)?)
            .map_err(self.git_err())?;
        let tb = self
            .repo
            .find_tree(self.resolve(b)?)
            .map_err(self.git_err())?;
        diff_trees(&self.repo, &ta, &tb, Some(paths)).map_err(self.git_err())
    }
}

/// Diff two trees file by file. `filter`: only these paths (or directories).
pub(crate) fn diff_trees(
    repo: &Repository,
    a: &Tree<'_>,
    b: &Tree<'_>,
    filter: Option<&[String]>,
) -> Result<Vec<FileDiff>, git2::Error> {
    let mut changed: BTreeMap<String, (Side, Side)> = BTreeMap::new();
    collect_changes(repo, Some(a), Some(b), "", &mut changed)?;
    let mut out = Vec::new();
    for (path, (old, new)) in changed {
        if let Some(f) = filter
            && !f
                .iter()
                .any(|p| path == *p || path.starts_with(&format!("{p}/")))
        {
            continue;
        }
        // A file that became a symlink (or back) is a deletion plus an
        // addition, as git shows it.
        match (old, new) {
            (Some(o), Some(n)) if (o.0 == MODE_LINK) != (n.0 == MODE_LINK) => {
                out.push(file_diff(repo, &path, Some(o), None)?);
                out.push(file_diff(repo, &path, None, Some(n))?);
            }
            _ => out.push(file_diff(repo, &path, old, new)?),
        }
    }
    Ok(out)
}

/// Walk two trees in step, descending only where subtree ids differ.
fn collect_changes(
    repo: &Repository,
    a: Option<&Tree<'_>>,
    b: Option<&Tree<'_>>,
    prefix: &str,
    out: &mut BTreeMap<String, (Side, Side)>,
) -> Result<(), git2::Error> {
    let mut entries: BTreeMap<Vec<u8>, (Side, Side)> = BTreeMap::new();
    if let Some(a) = a {
        for e in a.iter() {
            entries.entry(e.name_bytes().to_vec()).or_default().0 =
                Some((e.filemode() as u32, e.id()));
        }
    }
    if let Some(b) = b {
        for e in b.iter() {
            entries.entry(e.name_bytes().to_vec()).or_default().1 =
                Some((e.filemode() as u32, e.id()));
        }
    }
    for (name, (ea, eb)) in entries {
        if ea == eb {
            continue;
        }
        let path = format!("{prefix}{}", crate::names::enc(&name));
        let is_tree = |e: &Option<(u32, Oid)>| e.is_some_and(|(m, _)| m == MODE_TREE);
        let sub_a = if is_tree(&ea) {
            ea.map(|(_, id)| repo.find_tree(id)).transpose()?
        } else {
            None
        };
        let sub_b = if is_tree(&eb) {
            eb.map(|(_, id)| repo.find_tree(id)).transpose()?
        } else {
            None
        };
        if sub_a.is_some() || sub_b.is_some() {
            collect_changes(
                repo,
                sub_a.as_ref(),
                sub_b.as_ref(),
                &format!("{path}/"),
                out,
            )?;
        }
        let fa = ea.filter(|(m, _)| tree::is_file_mode(*m));
        let fb = eb.filter(|(m, _)| tree::is_file_mode(*m));
        if fa.is_some() || fb.is_some() {
            out.insert(path, (fa, fb));
        }
    }
    Ok(())
}

fn mode_str(m: u32) -> String {
    format!("{m:o}")
}

fn file_diff(repo: &Repository, path: &str, old: Side, new: Side) -> Result<FileDiff, git2::Error> {
    let load = |s: Side| -> Result<Option<(u32, Vec<u8>, String)>, git2::Error> {
        match s {
            Some((mode, oid)) => Ok(Some((
                mode,
                repo.find_blob(oid)?.content().to_vec(),
                oid.to_string(),
            ))),
            None => Ok(None),
        }
    };
    Ok(bytes_diff(path, load(old)?, load(new)?))
}

/// The diff of a proposed change: `before` (`None`: a new file) → `after`,
/// with no object ids (nothing is stored yet).
pub fn proposed_diff(path: &str, before: Option<&[u8]>, after: &[u8]) -> FileDiff {
    bytes_diff(
        path,
        before.map(|b| (0o100644, b.to_vec(), String::new())),
        Some((0o100644, after.to_vec(), String::new())),
    )
}

/// A [`FileDiff`] of `path` from two optional `(git mode, content)` sides
/// (`None`: the file does not exist on that side): hunks for text, a
/// binary mark otherwise.
pub fn contents_diff(
    path: &str,
    old: Option<(u32, Vec<u8>)>,
    new: Option<(u32, Vec<u8>)>,
) -> FileDiff {
    bytes_diff(
        path,
        old.map(|(m, b)| (m, b, String::new())),
        new.map(|(m, b)| (m, b, String::new())),
    )
}

/// A [`FileDiff`] from two optional `(mode, content, object id)` sides
/// (`None`: the file does not exist on that side).
pub(crate) fn bytes_diff(
    path: &str,
    old: Option<(u32, Vec<u8>, String)>,
    new: Option<(u32, Vec<u8>, String)>,
) -> FileDiff {
    let status = match (&old, &new) {
        (None, _) => DiffStatus::Added,
        (_, None) => DiffStatus::Deleted,
        _ => DiffStatus::Modified,
    };
    let mut d = FileDiff {
        file: path.to_string(),
        status,
        before: String::new(),
        after: String::new(),
        additions: 0,
        deletions: 0,
        hunks: Vec::new(),
        binary: false,
        old_mode: old.as_ref().map(|(m, _, _)| mode_str(*m)),
        new_mode: new.as_ref().map(|(m, _, _)| mode_str(*m)),
        old_id: old.as_ref().map(|(_, _, o)| o.clone()),
        new_id: new.as_ref().map(|(_, _, o)| o.clone()),
        line_endings: None,
    };
    let before_bytes = old.map(|(_, b, _)| b).unwrap_or_default();
    let after_bytes = new.map(|(_, b, _)| b).unwrap_or_default();
    let (before, after) = match (
        String::from_utf8(before_bytes),
        String::from_utf8(after_bytes),
    ) {
        (Ok(b), Ok(a)) if !b.contains('\0') && !a.contains('\0') => (b, a),
        _ => {
            d.binary = true;
            return d;
        }
    };
    if let (Some(b), Some(a)) = (line_ending_style(&before), line_ending_style(&after))
        && b != a
        && d.status == DiffStatus::Modified
    {
        d.line_endings = Some(format!("{b} → {a}"));
    }
    let (hunks, additions, deletions) = compute_hunks(&before, &after);
    d.hunks = hunks;
    d.additions = additions;
    d.deletions = deletions;
    d.before = before;
    d.after = after;
    d
}

/// `LF`, `CRLF` or `mixed`; `None` without any line break.
pub fn line_ending_style(text: &str) -> Option<&'static str> {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count();
    match (crlf, lf) {
        (_, 0) => None,
        (0, _) => Some("LF"),
        (c, l) if c == l => Some("CRLF"),
        _ => Some("mixed"),
    }
}

/// Split into lines keeping each line's `\n`.
fn split_lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

fn strip_nl(line: &str) -> (&str, bool) {
    match line.strip_suffix('\n') {
        Some(l) => (l, false),
        None => (line, true),
    }
}

/// Line diff (Myers, minimal within a deadline) grouped into hunks with
/// [`CONTEXT_LINES`] of context.
pub fn compute_hunks(before: &str, after: &str) -> (Vec<Hunk>, u32, u32) {
    let old = split_lines(before);
    let new = split_lines(after);
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &old,
        &new,
        Some(Instant::now() + Duration::from_secs(5)),
    );
    let mut additions = 0u32;
    let mut deletions = 0u32;
    for op in &ops {
        let (tag, o, n) = op.as_tag_tuple();
        match tag {
            DiffTag::Delete => deletions += o.len() as u32,
            DiffTag::Insert => additions += n.len() as u32,
            DiffTag::Replace => {
                deletions += o.len() as u32;
                additions += n.len() as u32;
            }
            DiffTag::Equal => {}
        }
    }
    let mut hunks = Vec::new();
    for group in similar::group_diff_ops(ops, CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let o_start = first.old_range().start;
        let n_start = first.new_range().start;
        let o_len = last.old_range().end - o_start;
        let n_len = last.new_range().end - n_start;
        let mut lines = Vec::new();
        for op in &group {
            for change in op.iter_changes(&old, &new) {
                let (content, no_nl) = strip_nl(change.value());
                let old_line = change.old_index().map(|i| i as u32 + 1);
                let new_line = change.new_index().map(|i| i as u32 + 1);
                let kind = match change.tag() {
                    similar::ChangeTag::Insert => LineType::Add,
                    similar::ChangeTag::Delete => LineType::Delete,
                    similar::ChangeTag::Equal => LineType::Context,
                };
                let line_number = match kind {
                    LineType::Delete => old_line.unwrap_or(0),
                    _ => new_line.unwrap_or(0),
                };
                lines.push(DiffLine {
                    kind,
                    content: content.to_string(),
                    line_number,
                    old_line,
                    new_line,
                    no_newline: no_nl,
                });
            }
        }
        let start = |idx: usize, len: usize| if len == 0 { idx as u32 } else { idx as u32 + 1 };
        hunks.push(Hunk {
            start_before: start(o_start, o_len),
            start_after: start(n_start, n_len),
            lines_before: o_len as u32,
            lines_after: n_len as u32,
            lines,
        });
    }
    (hunks, additions, deletions)
}

/// Quote a path the way git does when it holds special bytes.
fn quote_path(prefix: &str, path: &str) -> String {
    let full = format!("{prefix}{path}");
    let needs = full
        .bytes()
        .any(|b| b < 0x20 || b == 0x7f || b == b'"' || b == b'\\' || b >= 0x80);
    if !needs {
        return full;
    }
    let mut out = String::from("\"");
    for b in full.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b if !(0x20..0x7f).contains(&b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(b as char),
        }
    }
    out.push('"');
    out
}

fn short(id: &Option<String>) -> String {
    match id {
        Some(s) => s.chars().take(12).collect(),
        None => "0".repeat(12),
    }
}

/// A patch in git's unified format, applicable with `git apply` and
/// `patch -p1`. Without the objects at hand, binary files are listed as
/// differing; [`SnapshotRepo::patch`] encodes them (`GIT binary patch`).
pub fn to_patch(diffs: &[FileDiff]) -> String {
    to_patch_with(diffs, |_| None)
}

impl SnapshotRepo {
    /// [`to_patch`] with binary files as `GIT binary patch` sections (full
    /// content, both directions), which `git apply` applies.
    pub fn patch(&self, diffs: &[FileDiff]) -> String {
        to_patch_with(diffs, |id| {
            let oid = Oid::from_str(id).ok()?;
            self.repo.find_blob(oid).ok().map(|b| b.content().to_vec())
        })
    }
}

/// Git's base85 alphabet (`base85.c`).
const B85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// One `literal` hunk of a `GIT binary patch`: the size, then the
/// zlib-deflated content in base85 lines of up to 52 bytes, each led by its
/// length (`A`–`Z` = 1–26, `a`–`z` = 27–52), then a blank line.
fn binary_literal(out: &mut String, content: &[u8]) {
    use std::io::Write as _;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    // Deflating into memory cannot fail short of running out of it.
    let deflated: Vec<u8> = z
        .write_all(content)
        .and_then(|()| z.finish())
        .unwrap_or_default();
    out.push_str(&format!("literal {}\n", content.len()));
    for chunk in deflated.chunks(52) {
        let n = chunk.len() as u8;
        out.push(if n <= 26 {
            (b'A' + n - 1) as char
        } else {
            (b'a' + n - 27) as char
        });
        for group in chunk.chunks(4) {
            let mut v: u32 = 0;
            for i in 0..4 {
                v = (v << 8) | u32::from(group.get(i).copied().unwrap_or(0));
            }
            let mut enc = [0u8; 5];
            for slot in enc.iter_mut().rev() {
                *slot = B85[(v % 85) as usize];
                v /= 85;
            }
            out.push_str(std::str::from_utf8(&enc).unwrap_or_default());
        }
        out.push('\n');
    }
    out.push('\n');
}

/// [`to_patch`], with `blob(id)` giving a binary side's content when it can.
pub fn to_patch_with(diffs: &[FileDiff], blob: impl Fn(&str) -> Option<Vec<u8>>) -> String {
    let mut out = String::new();
    for d in diffs {
        let a = quote_path("a/", &d.file);
        let b = quote_path("b/", &d.file);
        out.push_str(&format!("diff --git {a} {b}\n"));
        let same_content = d.old_id == d.new_id;
        // A binary side we can encode: git apply needs full object ids then.
        let encodable = d.binary
            && d.old_id.as_deref().is_none_or(|id| blob(id).is_some())
            && d.new_id.as_deref().is_none_or(|id| blob(id).is_some());
        let short = |id: &Option<String>| {
            if encodable {
                id.clone().unwrap_or_else(|| "0".repeat(40))
            } else {
                short(id)
            }
        };
        match d.status {
            DiffStatus::Added => {
                out.push_str(&format!(
                    "new file mode {}\n",
                    d.new_mode.as_deref().unwrap_or("100644")
                ));
                out.push_str(&format!("index {}..{}\n", short(&None), short(&d.new_id)));
            }
            DiffStatus::Deleted => {
                out.push_str(&format!(
                    "deleted file mode {}\n",
                    d.old_mode.as_deref().unwrap_or("100644")
                ));
                out.push_str(&format!("index {}..{}\n", short(&d.old_id), short(&None)));
            }
            DiffStatus::Modified => {
                if d.old_mode != d.new_mode {
                    out.push_str(&format!(
                        "old mode {}\n",
                        d.old_mode.as_deref().unwrap_or("100644")
                    ));
                    out.push_str(&format!(
                        "new mode {}\n",
                        d.new_mode.as_deref().unwrap_or("100644")
                    ));
                    if !same_content {
                        out.push_str(&format!(
                            "index {}..{}\n",
                            short(&d.old_id),
                            short(&d.new_id)
                        ));
                    }
                } else {
                    out.push_str(&format!(
                        "index {}..{} {}\n",
                        short(&d.old_id),
                        short(&d.new_id),
                        d.new_mode.as_deref().unwrap_or("100644")
                    ));
                }
            }
        }
        if d.binary {
            let from = if d.status == DiffStatus::Added {
                "/dev/null".to_string()
            } else {
                a.clone()
            };
            let to = if d.status == DiffStatus::Deleted {
                "/dev/null".to_string()
            } else {
                b.clone()
            };
            if encodable && !same_content {
                let side = |id: &Option<String>| id.as_deref().and_then(&blob).unwrap_or_default();
                out.push_str("GIT binary patch\n");
                binary_literal(&mut out, &side(&d.new_id));
                binary_literal(&mut out, &side(&d.old_id));
            } else if !same_content {
                out.push_str(&format!("Binary files {from} and {to} differ\n"));
            }
            continue;
        }
        if d.hunks.is_empty() {
            continue;
        }
        let from = if d.status == DiffStatus::Added {
            "/dev/null".to_string()
        } else {
            a
        };
        let to = if d.status == DiffStatus::Deleted {
            "/dev/null".to_string()
        } else {
            b
        };
        // Like git: a name with a space gets a trailing tab so `patch` can
        // tell where it ends.
        let tab = |n: &str| if n.contains(' ') { "\t" } else { "" };
        out.push_str(&format!("--- {from}{}\n+++ {to}{}\n", tab(&from), tab(&to)));
        for h in &d.hunks {
            out.push_str(&hunk_header(h));
            out.push('\n');
            for l in &h.lines {
                out.push(match l.kind {
                    LineType::Add => '+',
                    LineType::Delete => '-',
                    LineType::Context => ' ',
                });
                out.push_str(&l.content);
                out.push('\n');
                if l.no_newline {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}

/// `@@ -a,b +c,d @@` (a count of 1 is omitted, as git does).
pub fn hunk_header(h: &Hunk) -> String {
    let range = |start: u32, len: u32| {
        if len == 1 {
            format!("{start}")
        } else {
            format!("{start},{len}")
        }
    };
    format!(
        "@@ -{} +{} @@",
        range(h.start_before, h.lines_before),
        range(h.start_after, h.lines_after)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_count_and_mark_missing_newlines() {
        let (h, add, del) = compute_hunks("a\nb\nc", "a\nB\nc\nd\n");
        assert_eq!((add, del), (3, 2));
        assert_eq!(h.len(), 1);
        assert_eq!(hunk_header(&h[0]), "@@ -1,3 +1,4 @@");
        let last_del = h[0]
            .lines
            .iter()
            .rfind(|l| l.kind == LineType::Delete)
            .unwrap();
        assert_eq!(last_del.content, "c");
        assert!(last_del.no_newline);
    }

    #[test]
    fn a_line_ending_change_is_named() {
        let d = proposed_diff("a.txt", Some(b"a\nb\n"), b"a\r\nb\r\n");
        assert_eq!(d.line_endings.as_deref(), Some("LF → CRLF"));
        let d = proposed_diff("a.txt", Some(b"a\r\nb\r\n"), b"a\r\nb\n");
        assert_eq!(d.line_endings.as_deref(), Some("CRLF → mixed"));
        // Same style, new files, no line breaks: nothing to say.
        assert_eq!(
            proposed_diff("a", Some(b"a\r\n"), b"b\r\n").line_endings,
            None
        );
        assert_eq!(proposed_diff("a", None, b"a\r\n").line_endings, None);
        assert_eq!(proposed_diff("a", Some(b"a"), b"b\n").line_endings, None);
    }

    #[test]
    fn new_file_hunk_starts_at_zero() {
        let (h, add, del) = compute_hunks("", "x\n");
        assert_eq!((add, del), (1, 0));
        assert_eq!(hunk_header(&h[0]), "@@ -0,0 +1 @@");
    }

    #[test]
    fn quoting_follows_git() {
        assert_eq!(quote_path("a/", "plain name.txt"), "a/plain name.txt");
        assert_eq!(quote_path("a/", "tab\there"), "\"a/tab\\there\"");
        assert_eq!(quote_path("a/", "é"), "\"a/\\303\\251\"");
    }

    #[test]
    fn stats_add_up() {
        let mk = |status, additions, deletions| FileDiff {
            file: "f".into(),
            status,
            before: String::new(),
            after: String::new(),
            additions,
            deletions,
            hunks: vec![],
            binary: false,
            old_mode: None,
            new_mode: None,
            old_id: None,
            new_id: None,
            line_endings: None,
        };
        let s = stats(&[
            mk(DiffStatus::Added, 10, 0),
            mk(DiffStatus::Modified, 3, 5),
            mk(DiffStatus::Deleted, 0, 7),
        ]);
        assert_eq!(
            (
                s.files_changed,
                s.files_added,
                s.files_deleted,
                s.files_modified
            ),
            (3, 1, 1, 1)
        );
        assert_eq!(
            (s.total_additions, s.total_deletions, s.estimated_loc_impact),
            (13, 12, 1)
        );
        let json = serde_json::to_value(s).unwrap();
        assert_eq!(json["estimatedLOCImpact"], 1);
        assert_eq!(json["filesChanged"], 3);
    }
}
