//! Linux: bubblewrap where user namespaces work (the wall), Landlock and
//! seccomp where they do not (the fallback).
#![allow(unsafe_code)]

pub(crate) mod bwrap;
mod fdpass;
pub(crate) mod landlock;
pub(crate) mod netns;
pub(crate) mod peer;
pub(crate) mod placeholder;
pub(crate) mod sockets;
pub(crate) mod trace;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::{SandboxError, SandboxMode, SandboxPolicy, Support};

/// Set (to anything) to use the fallback as if user namespaces were off.
pub const NO_USERNS_ENV: &str = "MIA_CODE_SANDBOX_NO_USERNS";

/// bubblewrap's path when it runs here (probed once), or why not.
fn bubblewrap() -> &'static Result<PathBuf, String> {
    static PROBED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PROBED.get_or_init(|| {
        let Some(path) = bwrap::find() else {
            return Err("bubblewrap (bwrap) is not installed: install the `bubblewrap` package for the full sandbox".into());
        };
        // A real run: user namespaces may be off (a sysctl, Ubuntu's
        // AppArmor restriction, a container) even where bwrap exists.
        let policy = SandboxPolicy::build(
            SandboxMode::ReadOnly,
            crate::NetworkAccess::Deny,
            crate::PolicyInputs {
                project_root: PathBuf::from("/"),
                ..Default::default()
            },
        );
        let probe = bwrap::command(&path, &policy, "/bin/sh", &["-c", "exit 0"], false)
            .map_err(|e| e.to_string())
            .and_then(|(mut cmd, _guard)| {
                cmd.stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .output()
                    .map_err(|e| e.to_string())
            });
        match probe {
            Ok(out) if out.status.success() => Ok(path),
            Ok(out) => Err(format!(
                "user namespaces do not work here ({}): {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => Err(format!(
                "user namespaces do not work here ({}): {e}",
                path.display()
            )),
        }
    })
}

pub(crate) fn support() -> Support {
    if std::env::var_os(NO_USERNS_ENV).is_some_and(|v| !v.is_empty()) {
        return landlock::support(&format!(
            "user namespaces are treated as off ({NO_USERNS_ENV} is set)"
        ));
    }
    match bubblewrap() {
        Ok(path) => Support::Available {
            mechanism: crate::Mechanism::Bubblewrap,
            detail: format!(
                "bubblewrap ({}): mount, PID, IPC, user and network namespaces, no capabilities, seccomp; network through mia-code's proxy",
                path.display()
            ),
        },
        Err(why) => landlock::support(why),
    }
}

/// The confined command for `policy` with the mechanism [`support`] chose.
pub(crate) fn command(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
    trace: bool,
) -> Result<(Command, crate::Guard), SandboxError> {
    match support() {
        Support::Available {
            mechanism: crate::Mechanism::Bubblewrap,
            ..
        } => match bubblewrap() {
            Ok(path) => bwrap::command(path, policy, program, args, trace),
            Err(why) => Err(SandboxError::Unavailable(why.clone())),
        },
        Support::Available { .. } => landlock::command(policy, program, args, trace),
        Support::Unavailable { reason } => Err(SandboxError::Unavailable(reason)),
    }
}
