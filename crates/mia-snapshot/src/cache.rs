//! The stat cache: what the last full scan saw (path → stat + blob id), so a
//! rescan only hashes files whose stat changed, and the tree ids of every
//! directory, so unchanged subtrees are never rewritten. Stored as one small
//! binary file next to the hidden repo; a broken or foreign file is ignored
//! (the next scan rebuilds it).

use std::fs::Metadata;
use std::path::Path;

use git2::Oid;

use crate::error::{Result, SnapshotError};

const MAGIC: &[u8; 8] = b"MIASC003";

/// A HashMap with a fast non-cryptographic hash (paths are not attacker
/// controlled here, and SipHash costs ~15 ms per 80k-entry scan).
pub type FastMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;

/// Git file modes used in trees.
pub const MODE_FILE: u32 = 0o100644;
pub const MODE_EXEC: u32 = 0o100755;
pub const MODE_LINK: u32 = 0o120000;
pub const MODE_TREE: u32 = 0o040000;

/// The parts of `lstat` that tell whether a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatInfo {
    pub size: u64,
    pub mtime_s: i64,
    pub mtime_ns: u32,
    pub ctime_s: i64,
    pub ctime_ns: u32,
    pub ino: u64,
    /// Git mode (file, executable, symlink).
    pub mode: u32,
    /// The exact permission bits (`0o7777` part of `st_mode`; 0 where the
    /// platform has none): what undo restores for a file a step removed.
    pub perm: u32,
}

impl StatInfo {
    #[cfg(unix)]
    pub fn from_metadata(m: &Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        let mode = if m.file_type().is_symlink() {
            MODE_LINK
        } else if m.mode() & 0o111 != 0 {
            MODE_EXEC
        } else {
            MODE_FILE
        };
        Self {
            size: m.size(),
            mtime_s: m.mtime(),
            mtime_ns: u32::try_from(m.mtime_nsec()).unwrap_or(0),
            ctime_s: m.ctime(),
            ctime_ns: u32::try_from(m.ctime_nsec()).unwrap_or(0),
            ino: m.ino(),
            mode,
            perm: m.mode() & 0o7777,
        }
    }

    #[cfg(not(unix))]
    pub fn from_metadata(m: &Metadata) -> Self {
        let mode = if m.file_type().is_symlink() {
            MODE_LINK
        } else {
            MODE_FILE
        };
        let (mtime_s, mtime_ns) = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| (i64::try_from(d.as_secs()).unwrap_or(0), d.subsec_nanos()))
            .unwrap_or((0, 0));
        Self {
            size: m.len(),
            mtime_s,
            mtime_ns,
            ctime_s: 0,
            ctime_ns: 0,
            ino: 0,
            mode,
            perm: 0,
        }
    }
}

/// What the cache knows about a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    Stored(Oid),
    Binary,
    TooLarge,
    /// Could not be read (permissions, a race): retried next time, never cached.
    Unreadable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheEntry {
    pub stat: StatInfo,
    pub content: Content,
}

#[derive(Debug, Default)]
pub struct StatCache {
    /// The tree the cached entries add up to (None after a partial scan).
    pub tree: Option<Oid>,
    /// When the scan that produced these entries started (seconds, nanos).
    pub scan_started: (i64, u32),
    pub files: FastMap<Vec<u8>, CacheEntry>,
    /// Directory path (no trailing slash; "" is the root) → tree id.
    pub dirs: FastMap<Vec<u8>, Oid>,
}

impl StatCache {
    /// A cached entry that can be trusted for this stat: same stat, and not
    /// modified within a second of the scan that recorded it (racy-git rule).
    pub fn lookup(&self, path: &[u8], stat: &StatInfo) -> Option<Content> {
        let e = self.files.get(path)?;
        if e.stat != *stat {
            return None;
        }
        let (ss, sn) = self.scan_started;
        let racy = (e.stat.mtime_s, e.stat.mtime_ns) >= (ss.saturating_sub(1), sn)
            || (e.stat.ctime_s, e.stat.ctime_ns) >= (ss.saturating_sub(1), sn);
        if racy { None } else { Some(e.content) }
    }

    pub fn load(path: &Path) -> Self {
        match std::fs::read(path) {
            Ok(bytes) => Self::decode(&bytes).unwrap_or_default(),
            Err(_) => Self::default(),
        }
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self.encode();
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, &bytes).map_err(SnapshotError::io("writing the stat cache", &tmp))?;
        std::fs::rename(&tmp, path).map_err(SnapshotError::io("replacing the stat cache", path))
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.files.len() * 96);
        out.extend_from_slice(MAGIC);
        match self.tree {
            Some(t) => {
                out.push(1);
                out.extend_from_slice(t.as_bytes());
            }
            None => {
                out.push(0);
                out.extend_from_slice(&[0u8; 20]);
            }
        }
        out.extend_from_slice(&self.scan_started.0.to_le_bytes());
        out.extend_from_slice(&self.scan_started.1.to_le_bytes());
        out.extend_from_slice(&(self.files.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.dirs.len() as u64).to_le_bytes());
        for (path, e) in &self.files {
            out.extend_from_slice(&(path.len() as u32).to_le_bytes());
            out.extend_from_slice(path);
            let s = &e.stat;
            out.extend_from_slice(&s.size.to_le_bytes());
            out.extend_from_slice(&s.mtime_s.to_le_bytes());
            out.extend_from_slice(&s.mtime_ns.to_le_bytes());
            out.extend_from_slice(&s.ctime_s.to_le_bytes());
            out.extend_from_slice(&s.ctime_ns.to_le_bytes());
            out.extend_from_slice(&s.ino.to_le_bytes());
            out.extend_from_slice(&s.mode.to_le_bytes());
            out.extend_from_slice(&s.perm.to_le_bytes());
            match e.content {
                Content::Stored(oid) => {
                    out.push(0);
                    out.extend_from_slice(oid.as_bytes());
                }
                Content::Binary => {
                    out.push(1);
                    out.extend_from_slice(&[0u8; 20]);
                }
                Content::TooLarge => {
                    out.push(2);
                    out.extend_from_slice(&[0u8; 20]);
                }
                Content::Unreadable => {
                    out.push(3);
                    out.extend_from_slice(&[0u8; 20]);
                }
            }
        }
        for (path, oid) in &self.dirs {
            out.extend_from_slice(&(path.len() as u32).to_le_bytes());
            out.extend_from_slice(path);
            out.extend_from_slice(oid.as_bytes());
        }
        out
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        let mut r = Reader { b: bytes, pos: 0 };
        if r.take(8)? != MAGIC {
            return None;
        }
        let has_tree = r.take(1)?[0] == 1;
        let tree_bytes = r.take(20)?;
        let tree = if has_tree {
            Some(Oid::from_bytes(tree_bytes).ok()?)
        } else {
            None
        };
        let scan_started = (r.i64()?, r.u32()?);
        let n_files = usize::try_from(r.u64()?).ok()?;
        let n_dirs = usize::try_from(r.u64()?).ok()?;
        let mut files = FastMap::with_capacity_and_hasher(n_files.min(1 << 22), Default::default());
        for _ in 0..n_files {
            let len = r.u32()? as usize;
            let path = r.take(len)?.to_vec();
            let stat = StatInfo {
                size: r.u64()?,
                mtime_s: r.i64()?,
                mtime_ns: r.u32()?,
                ctime_s: r.i64()?,
                ctime_ns: r.u32()?,
                ino: r.u64()?,
                mode: r.u32()?,
                perm: r.u32()?,
            };
            let kind = r.take(1)?[0];
            let oid = r.take(20)?;
            let content = match kind {
                0 => Content::Stored(Oid::from_bytes(oid).ok()?),
                1 => Content::Binary,
                2 => Content::TooLarge,
                3 => Content::Unreadable,
                _ => return None,
            };
            files.insert(path, CacheEntry { stat, content });
        }
        let mut dirs = FastMap::with_capacity_and_hasher(n_dirs.min(1 << 20), Default::default());
        for _ in 0..n_dirs {
            let len = r.u32()? as usize;
            let path = r.take(len)?.to_vec();
            let oid = Oid::from_bytes(r.take(20)?).ok()?;
            dirs.insert(path, oid);
        }
        Some(Self {
            tree,
            scan_started,
            files,
            dirs,
        })
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let mut c = StatCache {
            tree: Some(Oid::hash_object(git2::ObjectType::Blob, b"t").unwrap()),
            scan_started: (100, 5),
            ..Default::default()
        };
        let stat = StatInfo {
            size: 3,
            mtime_s: 50,
            mtime_ns: 1,
            ctime_s: 50,
            ctime_ns: 2,
            ino: 9,
            mode: MODE_FILE,
            perm: 0o600,
        };
        let oid = Oid::hash_object(git2::ObjectType::Blob, b"abc").unwrap();
        c.files.insert(
            b"a/b.txt".to_vec(),
            CacheEntry {
                stat,
                content: Content::Stored(oid),
            },
        );
        c.files.insert(
            b"img.png".to_vec(),
            CacheEntry {
                stat,
                content: Content::Binary,
            },
        );
        c.dirs.insert(b"a".to_vec(), oid);
        let back = StatCache::decode(&c.encode()).unwrap();
        assert_eq!(back.tree, c.tree);
        assert_eq!(back.files, c.files);
        assert_eq!(back.dirs, c.dirs);
        assert_eq!(back.lookup(b"a/b.txt", &stat), Some(Content::Stored(oid)));
        // A different stat is a miss; so is a racily-clean entry.
        let mut other = stat;
        other.size = 4;
        assert_eq!(back.lookup(b"a/b.txt", &other), None);
        let mut racy = back;
        racy.scan_started = (50, 0);
        assert_eq!(racy.lookup(b"a/b.txt", &stat), None);
        assert!(StatCache::decode(b"MIASC002\x01short").is_none());
    }
}
