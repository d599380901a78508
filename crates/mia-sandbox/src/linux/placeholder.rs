//! Mount points for protected paths that do not exist yet.
//!
//! A read-only mount needs something to be mounted on: for a missing
//! `.mcp.json` an empty file is created, bound read-only into the sandbox,
//! and removed again when the last command using it has ended (still empty,
//! still the same file: anything a person wrote into it meanwhile is kept).
//!
//! A placeholder is marked by the sticky bit (an empty file or directory
//! with mode `1644`/`1755`, which no person makes), so it is told apart from
//! a real file without any record that would need writing to disk.
//!
//! Several commands, in this process or others, may use the same
//! placeholder. Two lock files per path in a private directory the sandbox
//! cannot see (`$TMPDIR/mia-code-<uid>/placeholders`) keep them apart: a
//! *mutex* held while a placeholder is made or removed, and a *users* lock
//! held shared by every command using it. The last one out takes it
//! exclusively and removes the placeholder. After a crash (kill -9) the
//! next command on the same path, or the next process to start a sandbox
//! (the users file names the path), removes what no one holds any more.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Once;

use crate::SandboxError;
use crate::protect::Protected;

fn err(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Build(format!("{what}: {e}"))
}

/// The private directory of the lock files (0700, ours, not a link).
pub(crate) fn private_dir(sub: &str) -> Result<PathBuf, SandboxError> {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let base = std::env::temp_dir().join(format!("mia-code-{uid}"));
    for d in [base.clone(), base.join(sub)] {
        match std::fs::create_dir(&d) {
            Ok(()) => {
                std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700))
                    .map_err(|e| err(&format!("secure {}", d.display()), e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(err(&format!("create {}", d.display()), e)),
        }
        let m = std::fs::symlink_metadata(&d).map_err(|e| err("inspect the lock directory", e))?;
        if !m.is_dir() || m.uid() != uid || m.mode() & 0o077 != 0 {
            return Err(SandboxError::Build(format!(
                "{} is not a private directory of this user (a link, another owner, or open to others); remove it and try again",
                d.display()
            )));
        }
    }
    Ok(base.join(sub))
}

fn flock(f: &File, op: i32) -> std::io::Result<()> {
    loop {
        // SAFETY: a valid descriptor and a flock operation.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// FNV-1a of the path: the lock files' name.
fn key(path: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

struct Locks {
    mutex: File,
    users: File,
}

fn open_locks(dir: &Path, path: &Path) -> Result<Locks, SandboxError> {
    let k = key(path);
    let open = |name: String| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(dir.join(&name))
            .map_err(|e| err(&format!("open the lock {name}"), e))
    };
    Ok(Locks {
        mutex: open(format!("{k}.mutex"))?,
        users: open(format!("{k}.users"))?,
    })
}

/// The path a users file names (written when the lock files are made; a
/// hint for the sweep after a crash, nothing depends on it being on disk).
fn read_path(f: &mut File) -> Option<PathBuf> {
    let mut s = String::new();
    f.rewind().ok()?;
    f.read_to_string(&mut s).ok()?;
    (!s.is_empty()).then(|| PathBuf::from(s))
}

fn write_path(f: &mut File, path: &Path) -> std::io::Result<()> {
    if read_path(f).as_deref() == Some(path) {
        return Ok(());
    }
    f.set_len(0)?;
    f.rewind()?;
    f.write_all(path.as_os_str().as_encoded_bytes())
}

/// Is `path` an empty placeholder (sticky bit set)? `Some(true)`: empty,
/// `Some(false)`: a placeholder a person has written into.
fn placeholder_state(path: &Path) -> Option<bool> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if m.mode() & 0o1000 == 0 {
        return None;
    }
    if m.is_dir() {
        Some(std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()))
    } else if m.is_file() {
        Some(m.len() == 0)
    } else {
        None
    }
}

/// The last user's clean-up: an empty placeholder goes; one a person wrote
/// into stays, as an ordinary file (the mark cleared).
fn remove(path: &Path) {
    match placeholder_state(path) {
        Some(true) => {
            let r = if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                std::fs::remove_dir(path)
            } else {
                std::fs::remove_file(path)
            };
            if let Err(e) = r {
                tracing::warn!(path = %path.display(), "could not remove a sandbox placeholder: {e}");
            }
        }
        Some(false) => {
            if let Ok(m) = std::fs::symlink_metadata(path) {
                let _ = std::fs::set_permissions(
                    path,
                    std::fs::Permissions::from_mode(m.mode() & 0o777),
                );
            }
        }
        None => {}
    }
}

/// Placeholders a command holds; dropping it releases them.
#[derive(Default)]
pub(crate) struct Held {
    dir: Option<PathBuf>,
    held: Vec<(PathBuf, Locks)>,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.held.iter().map(|(p, _)| p))
            .finish()
    }
}

/// What [`acquire`] found for one missing protected path.
pub(crate) enum Outcome {
    /// A placeholder (new or shared) is there now: mount on it.
    Mount,
    /// It cannot be created (a read-only directory, no permission): the
    /// command cannot create it either, nothing to mount.
    Skip,
}

impl Held {
    /// Make (or share) the placeholder for `p`.
    pub(crate) fn acquire(&mut self, p: &Protected) -> Result<Outcome, SandboxError> {
        let dir = match &self.dir {
            Some(d) => d.clone(),
            None => {
                let d = private_dir("placeholders")?;
                sweep_once(&d);
                self.dir = Some(d.clone());
                d
            }
        };
        let mut locks = open_locks(&dir, &p.path)?;
        flock(&locks.mutex, libc::LOCK_EX).map_err(|e| err("lock a placeholder", e))?;
        let outcome = match std::fs::symlink_metadata(&p.path) {
            // A placeholder (another command's, or a crashed one's), or a
            // real file made meanwhile: mounted read-only either way; only a
            // placeholder is ever removed.
            Ok(_) => Outcome::Mount,
            Err(_) => {
                // Made with its mark (the sticky bit) in one system call, so
                // nothing ever sees it as an ordinary empty file (snapshots
                // leave placeholders out by that mark).
                let made = if p.dir {
                    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o1755)
                        .create(&p.path)
                } else {
                    OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .mode(0o1644)
                        .open(&p.path)
                        .map(drop)
                };
                match made {
                    Ok(()) => {
                        let mode = if p.dir { 0o1755 } else { 0o1644 };
                        std::fs::set_permissions(&p.path, std::fs::Permissions::from_mode(mode))
                            .map_err(|e| err("mark a new placeholder", e))?;
                        write_path(&mut locks.users, &p.path)
                            .map_err(|e| err("name a placeholder's lock", e))?;
                        Outcome::Mount
                    }
                    Err(e)
                        if matches!(
                            e.raw_os_error(),
                            Some(libc::EACCES | libc::EPERM | libc::EROFS)
                        ) =>
                    {
                        Outcome::Skip
                    }
                    Err(e) => {
                        let _ = flock(&locks.mutex, libc::LOCK_UN);
                        return Err(err(
                            &format!("create the placeholder {}", p.path.display()),
                            e,
                        ));
                    }
                }
            }
        };
        // Shared while the command runs; the mutex makes this and a
        // remover's exclusive attempt one at a time.
        let shared = match outcome {
            Outcome::Mount => flock(&locks.users, libc::LOCK_SH),
            Outcome::Skip => Ok(()),
        };
        let _ = flock(&locks.mutex, libc::LOCK_UN);
        shared.map_err(|e| err("share a placeholder", e))?;
        if matches!(outcome, Outcome::Mount) {
            self.held.push((p.path.clone(), locks));
        }
        Ok(outcome)
    }
}

/// Release one: the last user removes the placeholder if it is still empty.
fn release(path: &Path, locks: Locks) {
    if flock(&locks.mutex, libc::LOCK_EX).is_err() {
        return;
    }
    let _ = flock(&locks.users, libc::LOCK_UN);
    if flock(&locks.users, libc::LOCK_EX | libc::LOCK_NB).is_ok() {
        remove(path);
        let _ = flock(&locks.users, libc::LOCK_UN);
    }
    let _ = flock(&locks.mutex, libc::LOCK_UN);
}

impl Drop for Held {
    fn drop(&mut self) {
        for (path, locks) in self.held.drain(..) {
            release(&path, locks);
        }
    }
}

/// Remove the placeholders a crashed process left (no one holds them).
fn sweep_once(dir: &Path) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| sweep(dir));
}

pub(crate) fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(k) = name.to_str().and_then(|n| n.strip_suffix(".users")) else {
            continue;
        };
        let open = |n: String| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(dir.join(n))
        };
        let (Ok(mutex), Ok(users)) = (open(format!("{k}.mutex")), open(format!("{k}.users")))
        else {
            continue;
        };
        let mut locks = Locks { mutex, users };
        if flock(&locks.mutex, libc::LOCK_EX | libc::LOCK_NB).is_err() {
            continue;
        }
        if flock(&locks.users, libc::LOCK_EX | libc::LOCK_NB).is_ok()
            && let Some(path) = read_path(&mut locks.users)
        {
            remove(&path);
        }
        // Dropping the files releases both locks.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(path: PathBuf, dir: bool) -> Protected {
        Protected {
            path,
            dir,
            exists: false,
        }
    }

    #[test]
    fn the_last_user_removes_the_placeholder_and_a_persons_content_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(".mcp.json");
        let v = d.path().join(".vscode");
        let mut a = Held::default();
        let mut b = Held::default();
        assert!(matches!(
            a.acquire(&missing(f.clone(), false)).unwrap(),
            Outcome::Mount
        ));
        assert!(matches!(
            a.acquire(&missing(v.clone(), true)).unwrap(),
            Outcome::Mount
        ));
        assert!(f.is_file() && v.is_dir());
        // A second command shares it.
        assert!(matches!(
            b.acquire(&missing(f.clone(), false)).unwrap(),
            Outcome::Mount
        ));
        drop(a);
        assert!(f.exists(), "still used by b");
        assert!(!v.exists(), "nobody else used .vscode");
        drop(b);
        assert!(!f.exists());

        // A person writes into the placeholder meanwhile: it stays.
        let mut c = Held::default();
        c.acquire(&missing(f.clone(), false)).unwrap();
        std::fs::write(&f, "{\"mcpServers\": {}}").unwrap();
        drop(c);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "{\"mcpServers\": {}}");
        // ... as an ordinary file now.
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o1000,
            0
        );
        // A person's own empty file is never taken for a placeholder.
        let own = d.path().join(".envrc");
        std::fs::write(&own, "").unwrap();
        let mut e = Held::default();
        e.acquire(&missing(own.clone(), false)).unwrap();
        drop(e);
        assert!(own.exists());
    }

    #[test]
    fn a_crashed_holders_placeholder_is_swept() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(".envrc");
        let mut a = Held::default();
        a.acquire(&missing(f.clone(), false)).unwrap();
        // As if the process died: its locks go, the file stays.
        let held = std::mem::take(&mut a.held);
        drop(held);
        assert!(f.exists());
        sweep(&private_dir("placeholders").unwrap());
        assert!(!f.exists());
    }
}
