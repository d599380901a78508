//! What a long-lived process (the desktop app, `mia-code serve`) knows about
//! an attempt's working directory between two comparisons of it, so a
//! comparison re-reads only the files that changed instead of `lstat`-ing
//! every file of every attempt (the cost that grows with the repository).
//!
//! A feed is a promise: `Paths` must name every path that changed since the
//! previous [`ChangeFeed::take`] for that directory. When it cannot promise
//! (just started, overflowed, the directory was replaced) it says `Unknown`
//! and the comparison scans the whole working tree, as it always does
//! without a feed.

use std::path::Path;

/// Changes in one working directory since the previous take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnownChanges {
    /// Exactly these paths (relative, `/`-separated; files or directories)
    /// changed. Empty: nothing changed.
    Paths(Vec<String>),
    /// The feed cannot tell: scan everything.
    Unknown,
    /// The feed cannot tell yet, but counts from now: scan everything, and
    /// the next take will know.
    Primed,
}

/// One attempt a comparison reads.
#[derive(Debug, Clone, Copy)]
pub struct AttemptDir<'a> {
    /// The attempt's name (`main` or a worktree name).
    pub name: &'a str,
    /// Its working directory.
    pub dir: &'a Path,
    /// A directory private to this attempt's feed state (inside the git
    /// directory, never in the working tree), for a watcher's markers.
    pub state_dir: &'a Path,
}

/// A source of [`KnownChanges`], usually a file watcher per attempt.
pub trait ChangeFeed: Send + Sync {
    /// What changed in `attempt.dir` since the previous take for it; starts
    /// a new period. Must be called before the directory is read, so a
    /// change made while it is read is reported by the next take.
    fn take(&self, attempt: &AttemptDir<'_>) -> KnownChanges;

    /// The attempt's directory is going away (removed, reset): forget it.
    fn forget(&self, dir: &Path);
}

/// How a comparison read an attempt's working tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptRead {
    /// Every file's stat data was checked (`git add -A`).
    #[default]
    Scanned,
    /// Only the paths its watcher saw change were read.
    Watched,
    /// Its watcher saw nothing change: the last tree was reused.
    Unchanged,
}
