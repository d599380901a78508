//! Linux, the wall: bubblewrap.
//!
//! The command runs in fresh mount, PID, IPC, UTS, user and network
//! namespaces, in a new session, with every capability dropped and a
//! seccomp filter, under `--ro-bind / /` with
//! - the writable roots bound read-write,
//! - the protected paths inside them bound read-only on themselves (a
//!   missing one on an empty placeholder, [`super::placeholder`]), and the
//!   git directory bound on itself so it cannot be renamed away,
//! - hidden directories replaced by empty read-only tmpfs and hidden files
//!   by `/dev/null`, other users' homes and `/run/user` among them,
//! - `/dev/null` mounted over every named Unix socket it could reach,
//! - a private `/tmp` (the session's own directory), a new `/proc` (only
//!   the sandbox's processes) and a minimal `/dev`.
//!
//! The network namespace is made by mia-code in the forked child before
//! bubblewrap starts ([`super::netns`]); bubblewrap shares it.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::placeholder::{Held, Outcome};
use crate::protect::ProtectPlan;
use crate::{SandboxError, SandboxMode, SandboxPolicy};

fn err(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Build(format!("{what}: {e}"))
}

/// Where `bwrap` is: `MIA_CODE_BWRAP`, the usual system places, then `PATH`.
pub(crate) fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MIA_CODE_BWRAP").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    for p in ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"] {
        if Path::new(p).is_file() {
            return Some(PathBuf::from(p));
        }
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("bwrap"))
            .find(|p| p.is_file())
    })
}

/// One mount, by where it appears in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mount {
    Bind(PathBuf, PathBuf),
    RoBind(PathBuf, PathBuf),
    Tmpfs(PathBuf),
    DevNull(PathBuf),
    /// A read-only directory (0555) on the way to a mount inside the
    /// private `/tmp`: a write next to the project fails there instead of
    /// landing in the sandbox's own copy of the path.
    Dir(PathBuf),
}

impl Mount {
    fn dest(&self) -> &Path {
        match self {
            Self::Bind(_, d)
            | Self::RoBind(_, d)
            | Self::Tmpfs(d)
            | Self::DevNull(d)
            | Self::Dir(d) => d,
        }
    }
}

/// Parents before children (a deeper mount must come after the one it lies
/// in, or it would be covered); the order given is kept among equals.
pub(crate) fn order(mut v: Vec<Mount>) -> Vec<Mount> {
    v.sort_by_key(|m| m.dest().components().count());
    v
}

/// bubblewrap's arguments for the mounts, then the tmpfs dirs made read-only.
pub(crate) fn mount_args(mounts: &[Mount], read_only: &[PathBuf]) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |flag: &str, paths: &[&Path]| {
        a.push(flag.into());
        a.extend(paths.iter().map(|p| p.as_os_str().to_os_string()));
    };
    for m in mounts {
        match m {
            Mount::Bind(s, d) => push("--bind", &[s, d]),
            Mount::RoBind(s, d) => push("--ro-bind", &[s, d]),
            Mount::Tmpfs(d) => push("--tmpfs", &[d]),
            Mount::DevNull(d) => push("--ro-bind", &[Path::new("/dev/null"), d]),
            Mount::Dir(d) => {
                push("--perms", &[Path::new("0555")]);
                push("--dir", &[d]);
            }
        }
    }
    for d in read_only {
        push("--remount-ro", &[d]);
    }
    a
}

fn canonical(p: &Path) -> Option<PathBuf> {
    dunce::canonicalize(p).ok()
}

/// The account's home directory from the password database.
pub(crate) fn account_home() -> Option<PathBuf> {
    let mut buf = vec![0u8; 4096];
    let mut pwd = std::mem::MaybeUninit::<libc::passwd>::uninit();
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    #[allow(unsafe_code)]
    // SAFETY: the buffers outlive the call; `out` is checked before use.
    unsafe {
        let rc = libc::getpwuid_r(
            libc::getuid(),
            pwd.as_mut_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut out,
        );
        if rc != 0 || out.is_null() || (*out).pw_dir.is_null() {
            return None;
        }
        let dir = std::ffi::CStr::from_ptr((*out).pw_dir);
        Some(PathBuf::from(std::ffi::OsStr::new(
            std::str::from_utf8(dir.to_bytes()).ok()?,
        )))
    }
}

/// Other people's homes: `/home/*` and `/root`, but the own ones.
pub(crate) fn other_homes(own: &[PathBuf]) -> Vec<PathBuf> {
    let mut own: Vec<PathBuf> = own.iter().filter_map(|h| canonical(h)).collect();
    own.extend(account_home().and_then(|h| canonical(&h)));
    let mut candidates: Vec<PathBuf> = std::fs::read_dir("/home")
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    candidates.push(PathBuf::from("/root"));
    candidates
        .into_iter()
        .filter_map(|c| canonical(&c))
        .filter(|c| !own.iter().any(|o| o.starts_with(c)))
        .collect()
}

/// The areas replaced inside the sandbox: nothing of the host's is seen there.
const REPLACED: &[&str] = &["/tmp", "/var/tmp", "/proc", "/dev"];

/// What the command's mounts are and what it holds while it runs.
pub(crate) struct Plan {
    pub(crate) mounts: Vec<Mount>,
    pub(crate) read_only: Vec<PathBuf>,
    pub(crate) held: Held,
}

/// Read the mounts for `policy` off the file system (and make the
/// placeholders the protected paths need).
pub(crate) fn plan(policy: &SandboxPolicy) -> Result<Plan, SandboxError> {
    let creds = super::sockets::Creds::current();
    let mut mounts: Vec<Mount> = Vec::new();
    let mut read_only: Vec<PathBuf> = Vec::new();
    let mut held = Held::default();

    // A private /tmp (and /var/tmp): the session's directory, or a new one.
    match &policy.tmp {
        Some(t) if policy.mode == SandboxMode::WorkspaceWrite => {
            std::fs::create_dir_all(t).map_err(|e| err(&format!("create {}", t.display()), e))?;
            let t = canonical(t).unwrap_or_else(|| t.clone());
            mounts.push(Mount::Bind(t.clone(), "/tmp".into()));
            if is_real_dir("/var/tmp") {
                mounts.push(Mount::Bind(t, "/var/tmp".into()));
            }
        }
        _ => {
            mounts.push(Mount::Tmpfs("/tmp".into()));
            if is_real_dir("/var/tmp") {
                mounts.push(Mount::Tmpfs("/var/tmp".into()));
            }
        }
    }

    let replaced: Vec<PathBuf> = REPLACED.iter().map(PathBuf::from).collect();
    let projects: Vec<PathBuf> = policy
        .projects
        .iter()
        .filter_map(|p| canonical(p))
        .collect();

    // Hidden: what the command may not read.
    let mut hidden_dirs: Vec<PathBuf> = Vec::new();
    let mut hidden_all: Vec<PathBuf> = Vec::new();
    let own_homes = policy.homes_for_hiding();
    for h in policy
        .hidden
        .iter()
        .cloned()
        .chain(other_homes(&own_homes))
        .chain(std::iter::once(PathBuf::from("/run/user")))
    {
        let Some(h) = canonical(&h) else { continue };
        if replaced.iter().any(|r| h.starts_with(r))
            || hidden_all.iter().any(|x| h.starts_with(x))
            || !super::sockets::reachable(&h, &creds)
        {
            continue;
        }
        if h.is_dir() {
            mounts.push(Mount::Tmpfs(h.clone()));
            read_only.push(h.clone());
            hidden_dirs.push(h.clone());
        } else {
            mounts.push(Mount::DevNull(h.clone()));
        }
        hidden_all.push(h);
    }
    // Visible inside a hidden or replaced area: bound back, read-only.
    for v in &policy.visible {
        if let Some(v) = canonical(v)
            && (hidden_dirs.iter().any(|h| v.starts_with(h))
                || replaced.iter().any(|r| v.starts_with(r)))
        {
            mounts.push(Mount::RoBind(v.clone(), v));
        }
    }
    // Read-only: the project is still where the command runs (under a
    // replaced /tmp too).
    if policy.mode == SandboxMode::ReadOnly {
        for p in &projects {
            mounts.push(Mount::RoBind(p.clone(), p.clone()));
        }
    }

    // Writable roots (a root inside a hidden path stays hidden, but the
    // project itself, where the command runs).
    let mut writable: Vec<PathBuf> = Vec::new();
    if policy.mode == SandboxMode::WorkspaceWrite {
        for w in &policy.writable {
            let Some(w) = canonical(w) else { continue };
            let in_hidden = hidden_all.iter().any(|h| w.starts_with(h));
            if (in_hidden && !projects.contains(&w)) || writable.contains(&w) {
                continue;
            }
            mounts.push(Mount::Bind(w.clone(), w.clone()));
            writable.push(w);
        }
        let protect = ProtectPlan::of(policy);
        for a in &protect.anchors {
            if !writable.contains(a) {
                mounts.push(Mount::Bind(a.clone(), a.clone()));
            }
        }
        for p in &protect.paths {
            if p.exists || matches!(held.acquire(p)?, Outcome::Mount) {
                mounts.push(Mount::RoBind(p.path.clone(), p.path.clone()));
            }
        }
    }

    // Unix sockets: masked unless in a writable root or allowed; an allowed
    // one inside a hidden or replaced area is bound back in.
    let allowed: Vec<PathBuf> = policy
        .unix_sockets
        .iter()
        .filter_map(|s| canonical(s))
        .collect();
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let keep: Vec<PathBuf> = writable.iter().chain(&allowed).cloned().collect();
    let gone: Vec<PathBuf> = hidden_all.iter().chain(&replaced).cloned().collect();
    for s in super::sockets::to_mask(&table, &keep, &gone) {
        mounts.push(Mount::DevNull(s));
    }
    for s in allowed {
        if gone.iter().any(|g| s.starts_with(g)) {
            mounts.push(Mount::Bind(s.clone(), s));
        }
    }
    // The way to a mount inside the private /tmp: read-only directories.
    let mut dirs: Vec<PathBuf> = Vec::new();
    for m in &mounts {
        let d = m.dest();
        for area in [Path::new("/tmp"), Path::new("/var/tmp")] {
            let Ok(rel) = d.strip_prefix(area) else {
                continue;
            };
            let mut cur = area.to_path_buf();
            let parts: Vec<_> = rel.components().collect();
            for c in parts.iter().take(parts.len().saturating_sub(1)) {
                cur.push(c);
                if !dirs.contains(&cur) && !mounts.iter().any(|o| o.dest() == cur) {
                    dirs.push(cur.clone());
                }
            }
        }
    }
    mounts.extend(dirs.into_iter().map(Mount::Dir));
    Ok(Plan {
        mounts: order(mounts),
        read_only,
        held,
    })
}

fn is_real_dir(p: &str) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// The seccomp filter bubblewrap loads right before the command's exec:
/// no io_uring (it bypasses the other filters), no typing into a terminal
/// (TIOCSTI, TIOCLINUX), no kernel keyrings (the account's secrets), no
/// BPF or userfaultfd, and sockets only of the families a build needs
/// (Unix, IPv4, IPv6, netlink: no vsock, no packet sockets).
pub(crate) fn filter() -> Result<BpfProgram, SandboxError> {
    let cond = |arg: u8, op: SeccompCmpOp, v: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, v)
            .map_err(|e| err("seccomp condition", e))
    };
    let rule = |c: Vec<SeccompCondition>| SeccompRule::new(c).map_err(|e| err("seccomp rule", e));
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> = Default::default();
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_userfaultfd,
    ] {
        rules.insert(nr, vec![]);
    }
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    rules.insert(
        libc::SYS_socket,
        vec![rule(vec![
            cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_INET as u64)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_INET6 as u64)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_NETLINK as u64)?,
        ])?],
    );
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| err("seccomp architecture", e))?;
    let f = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| err("seccomp filter", e))?;
    f.try_into().map_err(|e| err("compile seccomp", e))
}

/// The compiled filter as bytes, made once per process.
fn filter_bytes() -> Result<&'static [u8], SandboxError> {
    static BYTES: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            filter().map_err(|e| e.to_string()).map(|prog| {
                let mut v = Vec::with_capacity(prog.len() * 8);
                for ins in prog {
                    v.extend_from_slice(&ins.code.to_ne_bytes());
                    v.push(ins.jt);
                    v.push(ins.jf);
                    v.extend_from_slice(&ins.k.to_ne_bytes());
                }
                v
            })
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(|e| SandboxError::Build(e.clone()))
}

/// A pipe holding `data` for bubblewrap to read: (read end).
#[allow(unsafe_code)]
fn data_pipe(data: &[u8]) -> Result<OwnedFd, SandboxError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(err("pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptors owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut w = std::fs::File::from(w);
    use std::io::Write;
    // The filter is far below a pipe's buffer: the write never blocks.
    w.write_all(data)
        .map_err(|e| err("write the seccomp filter", e))?;
    drop(w);
    Ok(r)
}

/// What the child does before exec: its network namespace, bubblewrap's
/// descriptor, and the tracer.
struct Child {
    netns: super::netns::NetNs,
    seccomp_fd: OwnedFd,
    trace: Option<(BpfProgram, std::os::fd::RawFd)>,
}

impl Child {
    #[allow(unsafe_code)]
    fn apply(&self) -> std::io::Result<()> {
        self.netns.apply()?;
        // bubblewrap must inherit the filter's descriptor.
        // SAFETY: fcntl on a descriptor owned by self.
        if unsafe { libc::fcntl(self.seccomp_fd.as_raw_fd(), libc::F_SETFD, 0) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some((bpf, sock)) = &self.trace {
            // SAFETY: prctl with integer arguments.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            super::trace::install_in_child(bpf, *sock)?;
        }
        Ok(())
    }
}

/// The confined command and what the caller keeps while it runs.
pub(crate) fn command(
    bwrap: &Path,
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
    trace: bool,
) -> Result<(Command, crate::Guard), SandboxError> {
    let Plan {
        mounts,
        read_only,
        held,
    } = plan(policy)?;
    let mut argv: Vec<OsString> = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    argv.extend(mount_args(&mounts, &read_only));
    let seccomp_fd = data_pipe(filter_bytes()?)?;
    argv.push("--seccomp".into());
    argv.push(seccomp_fd.as_raw_fd().to_string().into());
    argv.push("--".into());
    argv.push(program.into());
    argv.extend(args.iter().map(OsString::from));

    let (netns, bridge) = super::netns::NetNs::new(policy.network.proxied())?;
    let tracer = if trace {
        Some(super::trace::Tracer::new()?)
    } else {
        None
    };
    let child = Child {
        netns,
        seccomp_fd,
        trace: match &tracer {
            Some(t) => Some((super::trace::filter()?, t.child_fd())),
            None => None,
        },
    };
    let mut cmd = Command::new(bwrap);
    cmd.args(argv);
    let env = crate::set_env(
        &mut cmd,
        policy,
        bridge.as_ref().map(|_| super::netns::PROXY_PORT),
    );
    #[allow(unsafe_code)]
    // SAFETY: `apply` makes only async-signal-safe system calls on data
    // prepared before the fork.
    unsafe {
        cmd.pre_exec(move || child.apply());
    }
    Ok((
        cmd,
        crate::Guard {
            mechanism: Some(crate::Mechanism::Bubblewrap),
            tracer,
            bridge,
            held: Some(held),
            own_tmp: None,
            env,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_come_parents_first_and_hidden_dirs_are_made_read_only_last() {
        let m = order(vec![
            Mount::RoBind("/p/.git/config".into(), "/p/.git/config".into()),
            Mount::Bind("/p".into(), "/p".into()),
            Mount::Tmpfs("/home/x".into()),
            Mount::Bind("/home/x/proj".into(), "/home/x/proj".into()),
            Mount::Bind("/s/tmp".into(), "/tmp".into()),
        ]);
        // Equal depths keep their order.
        assert_eq!(m[0], Mount::Bind("/p".into(), "/p".into()));
        assert_eq!(m[1], Mount::Bind("/s/tmp".into(), "/tmp".into()));
        assert_eq!(m[2], Mount::Tmpfs("/home/x".into()));
        assert_eq!(
            m[4],
            Mount::Bind("/home/x/proj".into(), "/home/x/proj".into())
        );
        let a = mount_args(&m, &["/home/x".into()]);
        let s: Vec<String> = a.iter().map(|x| x.to_string_lossy().into()).collect();
        assert_eq!(&s[..3], &["--bind", "/p", "/p"]);
        assert_eq!(&s[s.len() - 2..], &["--remount-ro", "/home/x"]);
    }

    #[test]
    fn the_filter_compiles() {
        assert!(filter_bytes().unwrap().len() >= 8 * 10);
    }
}
