//! The OS sandbox shell commands run in: the second wall behind the
//! permission engine.
//!
//! The engine judges what a command *says*; the sandbox enforces what it
//! *does*. A [`SandboxPolicy`] says where a command may write and whether it
//! may open network connections; [`command`] builds the process that runs
//! under it:
//!
//! - Linux: Landlock (file system; TCP too when the network is denied) and
//!   a seccomp filter (no sockets but Unix ones), applied in the child
//!   between fork and exec.
//! - macOS: a Seatbelt profile through `sandbox-exec`.
//! - Windows: not available; [`support`] says so and callers fall back to
//!   the permission engine alone.
//!
//! Nothing runs unconfined by accident: when the policy asks for a sandbox
//! and it cannot be applied, [`command`] returns an error instead of a
//! command.

#![deny(unsafe_code)]

#[cfg(target_os = "linux")]
mod linux;
mod policy;
#[cfg(windows)]
pub mod process;
pub mod seatbelt;
#[cfg(target_os = "linux")]
mod trace;

#[cfg(target_os = "linux")]
pub use trace::{Tracer, WriteSet, Writes};

use std::process::Command;
use std::sync::OnceLock;

pub use policy::{
    NetworkAccess, PolicyInputs, SandboxMode, SandboxPolicy, package_caches, temp_dirs,
};

/// Set to a reason to make [`support`] report the sandbox unavailable
/// (diagnostics, and the tests of the fail-closed path).
pub const FORCE_UNAVAILABLE_ENV: &str = "MIA_CODE_SANDBOX_UNAVAILABLE";

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the OS sandbox is unavailable: {0}")]
    Unavailable(String),
    #[error("the OS sandbox could not be set up ({0}); the command was not run")]
    Build(String),
}

/// Whether this machine can sandbox commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    Available {
        /// `landlock+seccomp`, `seatbelt`.
        mechanism: &'static str,
        detail: String,
    },
    Unavailable {
        reason: String,
    },
}

impl Support {
    pub fn is_available(&self) -> bool {
        matches!(self, Self::Available { .. })
    }

    pub fn mechanism(&self) -> Option<&'static str> {
        match self {
            Self::Available { mechanism, .. } => Some(mechanism),
            Self::Unavailable { .. } => None,
        }
    }
}

/// What this OS offers, probed once per process.
pub fn support() -> Support {
    if let Some(reason) = std::env::var(FORCE_UNAVAILABLE_ENV)
        .ok()
        .filter(|r| !r.is_empty())
    {
        return Support::Unavailable {
            reason: format!("{reason} ({FORCE_UNAVAILABLE_ENV} is set)"),
        };
    }
    static PROBED: OnceLock<Support> = OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    linux::support()
}

#[cfg(target_os = "macos")]
fn probe() -> Support {
    if std::path::Path::new(seatbelt::SANDBOX_EXEC).exists() {
        Support::Available {
            mechanism: "seatbelt",
            detail: "sandbox-exec with a generated Seatbelt profile".into(),
        }
    } else {
        Support::Unavailable {
            reason: format!("{} is missing", seatbelt::SANDBOX_EXEC),
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn probe() -> Support {
    Support::Unavailable {
        reason: "this OS has no sandbox for shell commands yet (Linux and macOS do); the permission engine alone decides".into(),
    }
}

/// The default `sandbox.mode` on this OS: workspace-write where a sandbox
/// exists (Linux, macOS), off elsewhere (Windows).
pub fn default_mode() -> SandboxMode {
    if cfg!(any(target_os = "linux", target_os = "macos")) {
        SandboxMode::WorkspaceWrite
    } else {
        SandboxMode::Off
    }
}

/// `program args...` confined by `policy` (unconfined when its mode is off).
pub fn command(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
) -> Result<Command, SandboxError> {
    if !wants_sandbox(policy)? {
        return Ok(plain(program, args));
    }
    platform_command(policy, program, args)
}

/// `false` when the policy is off; an error when it wants a sandbox this
/// machine cannot apply (never an unconfined command instead).
fn wants_sandbox(policy: &SandboxPolicy) -> Result<bool, SandboxError> {
    if policy.is_off() {
        return Ok(false);
    }
    match support() {
        Support::Available { .. } => Ok(true),
        Support::Unavailable { reason } => Err(SandboxError::Unavailable(reason)),
    }
}

fn plain(program: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args);
    cmd
}

/// [`command`], plus (Linux) a [`Tracer`] that records which files the
/// command's processes change: call [`Tracer::start`] right after the
/// spawn and [`Writes::finish`] once the command has ended. `None` when
/// the policy is off or this OS cannot trace.
#[cfg(target_os = "linux")]
pub fn command_traced(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
) -> Result<(Command, Option<Tracer>), SandboxError> {
    if !wants_sandbox(policy)? {
        return Ok((plain(program, args), None));
    }
    linux::command(policy, program, args, true)
}

#[cfg(target_os = "linux")]
fn platform_command(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
) -> Result<Command, SandboxError> {
    linux::command(policy, program, args, false).map(|(c, _)| c)
}

#[cfg(target_os = "macos")]
fn platform_command(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
) -> Result<Command, SandboxError> {
    let argv = seatbelt::argv(policy, program, args);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    Ok(cmd)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn platform_command(
    _policy: &SandboxPolicy,
    _program: &str,
    _args: &[&str],
) -> Result<Command, SandboxError> {
    Err(SandboxError::Unavailable(
        "this OS has no sandbox for shell commands".into(),
    ))
}

/// What a failed sandboxed command's output suggests the sandbox blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    Write,
    Network,
}

impl Blocked {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Network => "network",
        }
    }
}

/// Read a failed command's output for the marks of a sandbox denial: a
/// refused write ("Permission denied", "Read-only file system",
/// "Operation not permitted") or, when the network is denied, a refused
/// connection or name lookup. A guess from the text (the kernel does not
/// tell the parent why a child's call failed), so it only ever adds advice.
pub fn blocked(policy: &SandboxPolicy, output: &str) -> Option<Blocked> {
    if policy.is_off() {
        return None;
    }
    let o = output.to_ascii_lowercase();
    if policy.network == NetworkAccess::Deny
        && [
            "could not resolve host",
            "temporary failure in name resolution",
            "name or service not known",
            "network is unreachable",
            "failed to establish a new connection",
            "couldn't connect to server",
            "failed to connect",
            "getaddrinfo",
            "eai_again",
            "socket: operation not permitted",
            "enotfound",
            "econnrefused",
        ]
        .iter()
        .any(|m| o.contains(m))
    {
        return Some(Blocked::Network);
    }
    if [
        "permission denied",
        "read-only file system",
        "operation not permitted",
        "eacces",
        "eperm",
    ]
    .iter()
    .any(|m| o.contains(m))
    {
        return Some(Blocked::Write);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_reads_denials_and_ignores_plain_failures() {
        let p = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            network: NetworkAccess::Deny,
            writable: vec![],
            hidden: vec![],
        };
        assert_eq!(
            blocked(&p, "touch: cannot touch '/etc/x': Permission denied"),
            Some(Blocked::Write)
        );
        assert_eq!(
            blocked(&p, "curl: (6) Could not resolve host: example.com"),
            Some(Blocked::Network)
        );
        assert_eq!(blocked(&p, "error: test failed, 2 of 10"), None);
        assert_eq!(blocked(&SandboxPolicy::off(), "Permission denied"), None);
    }
}
