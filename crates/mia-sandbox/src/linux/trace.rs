//! Which files a sandboxed command's processes change, told by the kernel:
//! a seccomp filter turns every file-changing system call (an open for
//! writing, create, truncate, rename, remove, link, mkdir, chmod) into a
//! user notification, and a thread in mia-code reads the path, records it
//! and lets the call continue. The snapshot engine uses the list to tell
//! the command's changes from a person's edits made while it ran.
//!
//! This is attribution, not a security boundary (Landlock is): the path is
//! read from the process's memory before the kernel reads it again, so a
//! process racing itself could record a different name. Nothing is
//! refused here; a notification that cannot be read marks the log
//! incomplete and the caller falls back to treating every change as the
//! command's.
#![allow(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use crate::SandboxError;

/// Where the path arguments of a traced system call are: (dirfd arg or
/// None for the cwd, path arg). fd-only calls name the file by `fd`.
#[derive(Clone, Copy)]
enum Args {
    /// `(dirfd index or None, path index)` for each path the call changes.
    Paths(&'static [(Option<usize>, usize)]),
    /// The file open on the descriptor in this argument.
    Fd(usize),
}

fn traced() -> Vec<(i64, Args, Option<usize>)> {
    // (syscall, where its paths are, index of an open-flags argument: only
    // opens that can write are traced)
    let mut v: Vec<(i64, Args, Option<usize>)> = vec![
        (libc::SYS_openat, Args::Paths(&[(Some(0), 1)]), Some(2)),
        (libc::SYS_openat2, Args::Paths(&[(Some(0), 1)]), None),
        (libc::SYS_truncate, Args::Paths(&[(None, 0)]), None),
        (libc::SYS_ftruncate, Args::Fd(0), None),
        (
            libc::SYS_renameat,
            Args::Paths(&[(Some(0), 1), (Some(2), 3)]),
            None,
        ),
        (
            libc::SYS_renameat2,
            Args::Paths(&[(Some(0), 1), (Some(2), 3)]),
            None,
        ),
        (libc::SYS_unlinkat, Args::Paths(&[(Some(0), 1)]), None),
        (libc::SYS_mkdirat, Args::Paths(&[(Some(0), 1)]), None),
        (libc::SYS_linkat, Args::Paths(&[(Some(2), 3)]), None),
        (libc::SYS_symlinkat, Args::Paths(&[(Some(1), 2)]), None),
        (libc::SYS_mknodat, Args::Paths(&[(Some(0), 1)]), None),
        (libc::SYS_fchmodat, Args::Paths(&[(Some(0), 1)]), None),
        (libc::SYS_fchmod, Args::Fd(0), None),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        (libc::SYS_open, Args::Paths(&[(None, 0)]), Some(1)),
        (libc::SYS_creat, Args::Paths(&[(None, 0)]), None),
        (libc::SYS_rename, Args::Paths(&[(None, 0), (None, 1)]), None),
        (libc::SYS_unlink, Args::Paths(&[(None, 0)]), None),
        (libc::SYS_rmdir, Args::Paths(&[(None, 0)]), None),
        (libc::SYS_mkdir, Args::Paths(&[(None, 0)]), None),
        (libc::SYS_link, Args::Paths(&[(None, 1)]), None),
        (libc::SYS_symlink, Args::Paths(&[(None, 1)]), None),
        (libc::SYS_mknod, Args::Paths(&[(None, 0)]), None),
        (libc::SYS_chmod, Args::Paths(&[(None, 0)]), None),
    ]);
    v
}

fn err(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Build(format!("{what}: {e}"))
}

/// The notifying filter. seccompiler has no user-notification action, so
/// the program is compiled with `Log` and its `Log` returns rewritten.
pub(crate) fn filter() -> Result<BpfProgram, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, _, flags) in traced() {
        let list = match flags {
            None => vec![],
            Some(i) => {
                let mut list = Vec::new();
                for bit in [libc::O_WRONLY, libc::O_RDWR, libc::O_CREAT, libc::O_TRUNC] {
                    let bit = bit as u64;
                    let c = SeccompCondition::new(
                        i as u8,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::MaskedEq(bit),
                        bit,
                    )
                    .map_err(|e| err("seccomp condition", e))?;
                    list.push(SeccompRule::new(vec![c]).map_err(|e| err("seccomp rule", e))?);
                }
                list
            }
        };
        rules.insert(nr, list);
    }
    // (io_uring, which can change files without these calls, is refused by
    // the errno filter installed with this one.)
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| err("seccomp architecture", e))?;
    let f = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Log, arch)
        .map_err(|e| err("seccomp filter", e))?;
    let mut prog: BpfProgram = f.try_into().map_err(|e| err("compile seccomp", e))?;
    const BPF_RET_K: u16 = 0x06;
    for ins in &mut prog {
        if ins.code == BPF_RET_K && ins.k == libc::SECCOMP_RET_LOG {
            ins.k = libc::SECCOMP_RET_USER_NOTIF;
        }
    }
    Ok(prog)
}

/// The child's half: install the filter with a listener and hand the
/// listener to the parent over `sock`. System calls only (runs after fork).
pub(crate) fn install_in_child(prog: &BpfProgram, sock: RawFd) -> std::io::Result<()> {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: a valid sock_fprog pointing at a live program.
    let listener = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        )
    };
    if listener < 0 {
        let e = std::io::Error::last_os_error();
        // Already under a tracing mia-code (an agent running mia-code's
        // own tests): one listener per filter chain. Run untraced; the
        // parent sees no listener and counts every change as the command's.
        if e.raw_os_error() == Some(libc::EBUSY) {
            return Ok(());
        }
        return Err(e);
    }
    let listener = listener as RawFd;
    let sent = super::fdpass::send(sock, listener);
    // SAFETY: the listener was opened above and is closed once.
    unsafe { libc::close(listener) };
    sent
}

/// The parent's half, before the spawn: the socket pair the listener
/// comes through.
pub struct Tracer {
    parent: OwnedFd,
    child: Option<OwnedFd>,
}

impl Tracer {
    pub(crate) fn new() -> Result<Self, SandboxError> {
        let (parent, child) = super::fdpass::pair()?;
        Ok(Self {
            parent,
            child: Some(child),
        })
    }

    pub(crate) fn child_fd(&self) -> RawFd {
        self.child.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// After the spawn: receive the listener and serve notifications on a
    /// thread until [`Writes::finish`].
    pub fn start(mut self) -> Writes {
        // The child's end now lives only in the child (closed at its exec).
        drop(self.child.take());
        let listener = super::fdpass::recv(&self.parent, 5_000);
        let log = Arc::new(std::sync::Mutex::new(Log::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = match listener {
            Some(l) => {
                let (log, stop) = (log.clone(), stop.clone());
                std::thread::Builder::new()
                    .name("mia-sandbox-trace".into())
                    .spawn(move || serve(l, &log, &stop))
                    .ok()
            }
            None => {
                if let Ok(mut l) = log.lock() {
                    l.incomplete = true;
                }
                None
            }
        };
        Writes { log, stop, thread }
    }
}

#[derive(Debug, Default)]
struct Log {
    paths: BTreeSet<PathBuf>,
    incomplete: bool,
}

/// The files a traced command changed, collected while it runs.
pub struct Writes {
    log: Arc<std::sync::Mutex<Log>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What a traced command changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteSet {
    /// Absolute, lexically normalised paths the command's processes
    /// opened for writing, created, truncated, renamed (both names),
    /// removed, linked or chmod-ed.
    pub paths: BTreeSet<PathBuf>,
    /// Every notification was read. When false, `paths` may miss some.
    pub complete: bool,
}

impl Writes {
    /// Stop serving (the command has ended) and return what was recorded.
    pub fn finish(mut self) -> WriteSet {
        self.stop.store(true, Ordering::SeqCst);
        let joined = self.thread.take().is_some_and(|t| t.join().is_ok());
        let log = self.log.lock().map(|l| (l.paths.clone(), l.incomplete));
        match log {
            Ok((paths, incomplete)) => WriteSet {
                paths,
                complete: joined && !incomplete,
            },
            Err(_) => WriteSet::default(),
        }
    }
}

fn serve(listener: OwnedFd, log: &std::sync::Mutex<Log>, stop: &AtomicBool) {
    let table = traced();
    let fd = listener.as_raw_fd();
    // `/proc/<pid>/mem` kept open per process (a build calls many times).
    let mut mems: std::collections::HashMap<u32, std::fs::File> = std::collections::HashMap::new();
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, 50) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        if n == 0 {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            continue;
        }
        if pfd.revents & libc::POLLIN != 0 {
            // SAFETY: the kernel fills a zeroed seccomp_notif.
            let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            // SAFETY: the listener and a valid pointer.
            let rc = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) };
            if rc != 0 {
                // The task died before we read it (ENOENT), or EINTR.
                continue;
            }
            let got = paths_of(&req, &table, &mut mems);
            // The call's memory was read while the task still waited on us.
            // SAFETY: the listener and a pointer to the id.
            let valid =
                unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) } == 0;
            if let Ok(mut l) = log.lock() {
                match got {
                    Some(ps) if valid => l.paths.extend(ps),
                    Some(_) => {}
                    None => l.incomplete = true,
                }
            }
            let mut resp = libc::seccomp_notif_resp {
                id: req.id,
                val: 0,
                error: 0,
                flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            };
            // SAFETY: the listener and a valid response.
            let _ = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
        } else if pfd.revents & (libc::POLLHUP | libc::POLLERR) != 0 {
            // No task uses the filter any more.
            break;
        }
    }
}

/// The paths one notification's call changes; `None` when they cannot be read.
fn paths_of(
    req: &libc::seccomp_notif,
    table: &[(i64, Args, Option<usize>)],
    mems: &mut std::collections::HashMap<u32, std::fs::File>,
) -> Option<Vec<PathBuf>> {
    let nr = i64::from(req.data.nr);
    let (_, args, _) = table.iter().find(|(n, _, _)| *n == nr)?;
    let pid = req.pid;
    let a = req.data.args;
    match *args {
        Args::Fd(i) => {
            let fd = a[i] as i32;
            let p = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?;
            Some(vec![p])
        }
        Args::Paths(list) => {
            let mut out = Vec::new();
            for &(dirfd, path) in list {
                let raw = match mems.get(&pid).and_then(|m| read_c_string(m, a[path])) {
                    Some(r) => r,
                    None => {
                        // New process (or a reused pid): open its memory afresh.
                        let m = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
                        let r = read_c_string(&m, a[path])?;
                        if mems.len() > 256 {
                            mems.clear();
                        }
                        mems.insert(pid, m);
                        r
                    }
                };
                let p = PathBuf::from(
                    <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(raw),
                );
                let abs = if p.is_absolute() {
                    p
                } else {
                    let base = match dirfd.map(|i| a[i] as i32) {
                        None | Some(libc::AT_FDCWD) => {
                            std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?
                        }
                        Some(d) => std::fs::read_link(format!("/proc/{pid}/fd/{d}")).ok()?,
                    };
                    base.join(p)
                };
                out.push(normalise(&abs));
            }
            Some(out)
        }
    }
}

/// A NUL-terminated string from another process's memory (at most PATH_MAX).
fn read_c_string(mem: &std::fs::File, addr: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < 4096 {
        // Never read across a page boundary in one go (the next page may be unmapped).
        let room = (4096 - (at % 4096)) as usize;
        let mut buf = vec![0u8; room.min(4096 - out.len())];
        let n = mem.read_at(&mut buf, at).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(out);
        }
        out.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    None
}

/// `a/./b/../c` → `a/c`, without touching the file system (symbolic links
/// are the snapshot engine's to resolve).
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_is_lexical() {
        assert_eq!(normalise(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalise(Path::new("/a/b/")), PathBuf::from("/a/b"));
    }

    #[test]
    fn the_filter_notifies_instead_of_logging() {
        let prog = filter().unwrap();
        assert!(prog.iter().any(|i| i.k == libc::SECCOMP_RET_USER_NOTIF));
        assert!(
            !prog
                .iter()
                .any(|i| i.code == 0x06 && i.k == libc::SECCOMP_RET_LOG)
        );
    }
}
