//! The Unix sockets a sandboxed command could connect to by path.
//!
//! A read-only mount does not stop `connect()` on a socket file, so every
//! named socket bound on this machine (the kernel lists them in
//! `/proc/net/unix`) that the command could reach gets `/dev/null` mounted
//! over it, unless it lies in a writable root or `sandbox.unixSockets`
//! allows it. Abstract sockets belong to the network namespace, which the
//! command does not share.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The named sockets in `/proc/net/unix`'s text (the path is the eighth
/// column and may contain spaces; abstract ones start with `@`).
pub(crate) fn parse(table: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in table.lines().skip(1) {
        let mut rest = line;
        let mut ok = true;
        for _ in 0..7 {
            rest = rest.trim_start();
            match rest.find(' ') {
                Some(i) => rest = &rest[i..],
                None => {
                    ok = false;
                    break;
                }
            }
        }
        let path = rest.trim();
        if ok && path.starts_with('/') {
            let p = PathBuf::from(path);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// This process's credentials, for [`reachable`].
pub(crate) struct Creds {
    uid: u32,
    gids: Vec<u32>,
}

impl Creds {
    pub(crate) fn current() -> Self {
        // SAFETY: plain credential queries.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut gids = vec![gid];
        let mut buf = [0 as libc::gid_t; 256];
        // SAFETY: the buffer holds 256 entries.
        let n = unsafe { libc::getgroups(256, buf.as_mut_ptr()) };
        if n > 0 {
            gids.extend(buf.iter().take(usize::try_from(n).unwrap_or(0)));
        }
        Self { uid, gids }
    }

    fn may(&self, m: &std::fs::Metadata, bit: u32) -> bool {
        let mode = m.mode();
        if m.uid() == self.uid {
            mode & (bit << 6) != 0
        } else if self.gids.contains(&m.gid()) {
            mode & (bit << 3) != 0
        } else {
            mode & bit != 0
        }
    }
}

/// Could a process with `creds` and no capabilities look `path` up (every
/// ancestor searchable)? The sandbox only needs to mask what it could reach,
/// and bubblewrap can only mount where it can look.
pub(crate) fn reachable(path: &Path, creds: &Creds) -> bool {
    let mut dir = path.parent();
    while let Some(d) = dir {
        match std::fs::metadata(d) {
            Ok(m) if creds.may(&m, 0o1) => {}
            _ => return false,
        }
        dir = d.parent();
    }
    std::fs::symlink_metadata(path).is_ok()
}

/// The sockets to mask: named, existing, reachable, canonical, outside
/// every path in `keep` (writable roots, allowed sockets) and outside
/// every path in `gone` (hidden or replaced in the sandbox).
pub(crate) fn to_mask(table: &str, keep: &[PathBuf], gone: &[PathBuf]) -> Vec<PathBuf> {
    let creds = Creds::current();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in parse(table) {
        let Ok(real) = dunce::canonicalize(&p) else {
            continue;
        };
        if keep.iter().any(|k| real.starts_with(k))
            || gone.iter().any(|g| real.starts_with(g))
            || !reachable(&real, &creds)
            || out.contains(&real)
        {
            continue;
        }
        use std::os::unix::fs::FileTypeExt;
        if std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_socket()) {
            out.push(real);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_sockets_are_read_and_abstract_ones_skipped() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20481 /run/systemd/private\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20482 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 20483\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20484 /home/me/with space.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20485 /run/systemd/private\n";
        assert_eq!(
            parse(table),
            vec![
                PathBuf::from("/run/systemd/private"),
                PathBuf::from("/home/me/with space.sock"),
            ]
        );
    }

    #[test]
    fn a_listening_socket_is_masked_unless_kept() {
        let d = tempfile::tempdir().unwrap();
        let dir = dunce::canonicalize(d.path()).unwrap();
        let sock = dir.join("s.sock");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let table = std::fs::read_to_string("/proc/net/unix").unwrap();
        assert!(to_mask(&table, &[], &[]).contains(&sock));
        assert!(!to_mask(&table, std::slice::from_ref(&dir), &[]).contains(&sock));
        assert!(!to_mask(&table, &[], &[dir]).contains(&sock));
    }
}
