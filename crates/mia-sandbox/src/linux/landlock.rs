//! Linux, the fallback where user namespaces are off (Ubuntu's AppArmor
//! restriction, some containers): Landlock for the file system, seccomp
//! (and Landlock's TCP rules) for the network, capabilities dropped.
//!
//! Weaker than bubblewrap ([`crate::Mechanism::Landlock`] lists what it
//! cannot hold): Landlock grants are inherited by everything below a
//! writable root, so paths inside the project cannot be protected; `/proc`
//! shows the account's other processes; path Unix sockets cannot be told
//! apart, so every Unix socket is refused; there is no per-host proxy, so
//! the network is all or nothing.
//!
//! Everything that can fail or allocate happens in the parent, before the
//! fork: the ruleset is created and filled, the BPF programs compiled, the
//! tracer's socket made. Between fork and exec the child only makes system
//! calls (`PR_SET_NO_NEW_PRIVS`, `landlock_restrict_self`, `seccomp`, and when
//! tracing the notifying filter and a `sendmsg` of its listener), so mia-code
//! itself is never confined and nothing that allocates runs in a forked
//! multi-threaded process.
#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use crate::{NetworkAccess, SandboxError, SandboxMode, SandboxPolicy, Support};
use std::os::fd::RawFd;

/// The oldest Landlock ABI that can confine writes completely (ABI 3 adds
/// truncation; Linux 6.2).
const MIN_ABI: i32 = 3;
/// The newest rights asked for; older kernels drop what they lack.
const WANT: ABI = ABI::V6;

/// The kernel's Landlock ABI version, or the errno that says why there is none.
fn landlock_abi() -> Result<i32, i32> {
    // LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
    // SAFETY: a query with a null attribute pointer and size 0 is the
    // documented way to read the ABI version; no memory is passed.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if v < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(i32::try_from(v).unwrap_or(i32::MAX))
    }
}

pub(crate) fn support(why_not_bwrap: &str) -> Support {
    match landlock_abi() {
        Ok(abi) if abi >= MIN_ABI => Support::Available {
            mechanism: crate::Mechanism::Landlock,
            detail: format!(
                "Landlock ABI {abi} and seccomp, the fallback: {why_not_bwrap}"
            ),
        },
        Ok(abi) => Support::Unavailable {
            reason: format!(
                "this kernel's Landlock (ABI {abi}) cannot confine every write; ABI {MIN_ABI} (Linux 6.2) or newer is needed"
            ),
        },
        Err(e) if e == libc::ENOSYS => Support::Unavailable {
            reason: "this kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)"
                .into(),
        },
        Err(e) if e == libc::EOPNOTSUPP => Support::Unavailable {
            reason: "Landlock is built into this kernel but turned off (add `landlock` to the `lsm=` boot parameter)".into(),
        },
        Err(e) => Support::Unavailable {
            reason: format!(
                "Landlock could not be queried: {}",
                std::io::Error::from_raw_os_error(e)
            ),
        },
    }
}

/// Devices every command may read and write (`> /dev/null`, `/dev/tty`).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// What the child applies to itself before `exec`.
struct Prepared {
    ruleset: OwnedFd,
    seccomp: Option<BpfProgram>,
    /// The write-tracing filter and the socket its listener goes through.
    trace: Option<(BpfProgram, RawFd)>,
    /// Running as root: drop every capability first.
    drop_caps: bool,
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// No capabilities, now or after exec (bounding and ambient sets empty).
fn drop_capabilities() -> std::io::Result<()> {
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments; negative past the last cap.
        let present = unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) };
        if present < 0 {
            break;
        }
        // Already gone (an outer sandbox dropped it): nothing to do, and
        // dropping again would need a capability we no longer have.
        // SAFETY: prctl with integer arguments.
        if present == 1 && unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    let header = CapHeader {
        version: 0x2008_0522,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: a version-3 header and two data entries, as capset expects.
    if unsafe { libc::syscall(libc::SYS_capset, &raw const header, data.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl Prepared {
    /// Runs in the forked child: system calls only (no allocation, no locks).
    fn apply(&self) -> std::io::Result<()> {
        // SAFETY: prctl with integer arguments.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if self.drop_caps {
            drop_capabilities()?;
        }
        // SAFETY: the ruleset fd is open (owned by self) and flags are 0.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some(bpf) = &self.seccomp {
            seccompiler::apply_filter(bpf)
                .map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
        }
        if let Some((bpf, sock)) = &self.trace {
            crate::linux::trace::install_in_child(bpf, *sock)?;
        }
        Ok(())
    }
}

fn err(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Build(format!("{what}: {e}"))
}

/// The paths under `root` to grant when `hidden` must stay unreadable: the
/// whole of `root` when nothing hidden lies beneath it, else its entries
/// minus the hidden ones, recursing into the entries that contain one.
/// Symbolic links at the levels walked are skipped (their targets are
/// granted or hidden at their real place), so a link cannot reopen a
/// hidden directory.
pub(crate) fn grant_list(root: &Path, hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(root, hidden, &mut out);
    out
}

fn walk(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>) {
    if hidden.iter().any(|h| h == dir) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_symlink() {
            continue;
        }
        let p = e.path();
        if ft.is_dir() {
            walk(&p, hidden, out);
        } else if !hidden.contains(&p) {
            out.push(p);
        }
    }
}

/// The hidden paths as the kernel sees them: canonical, existing.
fn real_hidden(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for h in hidden {
        if let Ok(c) = dunce::canonicalize(h)
            && !v.contains(&c)
        {
            v.push(c);
        }
    }
    v
}

fn prepare(
    policy: &SandboxPolicy,
    tmp: Option<&Path>,
    trace: bool,
) -> Result<Prepared, SandboxError> {
    let all = AccessFs::from_all(WANT);
    // The network is all or nothing here: no proxy can be forced on a
    // process that shares mia-code's network namespace.
    let deny_net = policy.network != NetworkAccess::Allow;
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(|e| err("Landlock file-system rights", e))?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(|e| err("Landlock scopes", e))?;
    if deny_net {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(WANT))
            .map_err(|e| err("Landlock network rights", e))?;
    }
    let mut created = ruleset
        .create()
        .map_err(|e| err("create the Landlock ruleset", e))?;
    let rule = |path: &Path, access: BitFlags<AccessFs>| -> Result<Option<_>, SandboxError> {
        match PathFd::new(path) {
            Ok(fd) => Ok(Some(PathBeneath::new(fd, access))),
            // A path that does not exist (or vanished) is simply not granted.
            Err(_) => Ok(None),
        }
    };
    // Directory listings everywhere; file contents and execution everywhere
    // but the hidden paths.
    if let Some(r) = rule(Path::new("/"), AccessFs::ReadDir.into())? {
        created = created
            .add_rule(r)
            .map_err(|e| err("grant directory listing", e))?;
    }
    let mut hidden_in = policy.hidden.clone();
    hidden_in.extend(super::bwrap::other_homes(&policy.homes_for_hiding()));
    hidden_in.push("/run/user".into());
    let hidden = real_hidden(&hidden_in);
    let read = AccessFs::ReadFile | AccessFs::Execute;
    for p in grant_list(Path::new("/"), &hidden) {
        if let Some(r) = rule(&p, read)? {
            created = created
                .add_rule(r)
                .map_err(|e| err(&format!("grant reading {}", p.display()), e))?;
        }
    }
    for v in &policy.visible {
        if let Some(r) = rule(v, read)? {
            created = created
                .add_rule(r)
                .map_err(|e| err(&format!("grant reading {}", v.display()), e))?;
        }
    }
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    for d in DEVICES {
        if let Some(r) = rule(Path::new(d), device)? {
            created = created
                .add_rule(r)
                .map_err(|e| err(&format!("grant the device {d}"), e))?;
        }
    }
    let writable: Vec<&Path> = if policy.mode == SandboxMode::WorkspaceWrite {
        policy
            .writable
            .iter()
            .map(PathBuf::as_path)
            .chain(tmp)
            .collect()
    } else {
        Vec::new()
    };
    for w in writable {
        // A writable root inside a hidden path stays hidden.
        if hidden.iter().any(|h| w.starts_with(h)) {
            continue;
        }
        if let Some(r) = rule(w, all)? {
            created = created
                .add_rule(r)
                .map_err(|e| err(&format!("grant writing {}", w.display()), e))?;
        }
    }
    let fd: Option<OwnedFd> = created.into();
    let ruleset = fd.ok_or_else(|| {
        SandboxError::Unavailable("the kernel did not create a Landlock ruleset".into())
    })?;
    let trace = if trace {
        Some(crate::linux::trace::filter()?)
    } else {
        None
    };
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    Ok(Prepared {
        ruleset,
        seccomp: Some(errno_filter(deny_net)?),
        trace: trace.map(|p| (p, -1)),
        drop_caps: root,
    })
}

/// io_uring (which can open sockets and change files without the system
/// calls the other filters see), typing into a terminal (TIOCSTI,
/// TIOCLINUX), the kernel keyrings, and Unix sockets (path sockets outside
/// cannot be told from inside ones here) fail with EPERM; when the network
/// is denied, every `socket()` does (socket pairs still work).
fn errno_filter(deny_net: bool) -> Result<BpfProgram, SandboxError> {
    let cond = |arg: u8, op: SeccompCmpOp, v: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, v)
            .map_err(|e| err("seccomp condition", e))
    };
    let rule = |c: Vec<SeccompCondition>| SeccompRule::new(c).map_err(|e| err("seccomp rule", e));
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
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
    if deny_net {
        rules.insert(libc::SYS_socket, vec![]);
    } else {
        rules.insert(
            libc::SYS_socket,
            vec![rule(vec![cond(
                0,
                SeccompCmpOp::Eq,
                libc::AF_UNIX as u64,
            )?])?],
        );
    }
    compile(rules)
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>) -> Result<BpfProgram, SandboxError> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| err("seccomp architecture", e))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| err("seccomp filter", e))?;
    filter.try_into().map_err(|e| err("compile seccomp", e))
}

/// The confined command (the caller checked that the policy wants a sandbox
/// and this machine has one).
pub(crate) fn command(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
    trace: bool,
) -> Result<(Command, crate::Guard), SandboxError> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    // A private temp dir instead of the shared /tmp: the session's, or one
    // of its own removed with the command.
    let (tmp, own_tmp) = match &policy.tmp {
        Some(t) if policy.mode == SandboxMode::WorkspaceWrite => {
            std::fs::create_dir_all(t).map_err(|e| err(&format!("create {}", t.display()), e))?;
            (Some(t.clone()), None)
        }
        _ if policy.mode == SandboxMode::WorkspaceWrite => {
            let t = super::placeholder::private_dir("tmp")?.join(format!(
                "cmd-{}-{}",
                std::process::id(),
                crate::next_id()
            ));
            std::fs::create_dir_all(&t).map_err(|e| err(&format!("create {}", t.display()), e))?;
            (Some(t.clone()), Some(t))
        }
        _ => (None, None),
    };
    let mut prepared = prepare(policy, tmp.as_deref(), trace)?;
    let tracer = if prepared.trace.is_some() {
        let t = crate::linux::trace::Tracer::new()?;
        if let Some((_, sock)) = &mut prepared.trace {
            *sock = t.child_fd();
        }
        Some(t)
    } else {
        None
    };
    let mut env = crate::set_env(&mut cmd, policy, None);
    env.retain(|(k, _)| k != "TMPDIR");
    if let Some(t) = &tmp {
        cmd.env("TMPDIR", t);
        env.push(("TMPDIR".into(), t.display().to_string()));
    }
    // SAFETY: `apply` makes only async-signal-safe system calls on data
    // prepared before the fork.
    unsafe {
        cmd.pre_exec(move || prepared.apply());
    }
    Ok((
        cmd,
        crate::Guard {
            mechanism: Some(crate::Mechanism::Landlock),
            tracer,
            bridge: None,
            held: None,
            own_tmp,
            env,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_list_leaves_out_hidden_paths_and_keeps_their_siblings() {
        let d = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(root.join("home/.config/gh")).unwrap();
        std::fs::create_dir_all(root.join("home/.config/nvim")).unwrap();
        std::fs::write(root.join("home/.bashrc"), "").unwrap();
        std::fs::create_dir_all(root.join("usr")).unwrap();
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("home/link")).unwrap();
        let hidden = vec![root.join("home/.ssh"), root.join("home/.config/gh")];
        let mut got = grant_list(&root, &hidden);
        got.sort();
        let mut want = vec![
            root.join("home/.bashrc"),
            root.join("home/.config/nvim"),
            root.join("usr"),
        ];
        want.sort();
        assert_eq!(got, want);
        // Nothing hidden: the root itself.
        assert_eq!(grant_list(&root, &[]), vec![root.clone()]);
    }
}
