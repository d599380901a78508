//! macOS: a Seatbelt profile run through `/usr/bin/sandbox-exec`, with the
//! same policy as Linux. The profile is generated here on every OS (and
//! unit-tested on Linux); paths reach it as `-D` parameters, never spliced
//! into the profile text, so no path can change its meaning.

use std::path::PathBuf;

use crate::{NetworkAccess, SandboxMode, SandboxPolicy};

pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile and its parameters (`NAME=value`) for one policy.
pub fn profile(policy: &SandboxPolicy) -> (String, Vec<(String, PathBuf)>) {
    let mut params = Vec::new();
    let mut p = String::from("(version 1)\n(allow default)\n");
    // Writes: only under the writable roots (and the usual devices).
    p.push_str("(deny file-write*\n  (require-all\n");
    p.push_str("    (require-not (literal \"/dev/null\"))\n");
    p.push_str("    (require-not (literal \"/dev/zero\"))\n");
    p.push_str("    (require-not (literal \"/dev/dtracehelper\"))\n");
    p.push_str("    (require-not (regex #\"^/dev/tty\"))\n");
    if policy.mode == SandboxMode::WorkspaceWrite {
        for (i, w) in policy.writable.iter().enumerate() {
            let name = format!("WRITABLE_{i}");
            p.push_str(&format!("    (require-not (subpath (param \"{name}\")))\n"));
            params.push((name, w.clone()));
        }
    }
    p.push_str("  ))\n");
    // Contents of the hidden paths (credential stores) cannot be read.
    for (i, h) in policy.hidden.iter().enumerate() {
        let name = format!("HIDDEN_{i}");
        p.push_str(&format!(
            "(deny file-read-data (subpath (param \"{name}\")))\n"
        ));
        params.push((name, h.clone()));
    }
    if policy.network == NetworkAccess::Deny {
        p.push_str("(deny network*)\n(allow network* (remote unix-socket))\n");
    }
    (p, params)
}

/// `sandbox-exec -D ... -p PROFILE program args...`
pub fn argv(policy: &SandboxPolicy, program: &str, args: &[&str]) -> Vec<String> {
    let (profile, params) = profile(policy);
    let mut v = vec![SANDBOX_EXEC.to_string()];
    for (k, path) in params {
        v.push("-D".into());
        v.push(format!("{k}={}", path.display()));
    }
    v.push("-p".into());
    v.push(profile);
    v.push(program.into());
    v.extend(args.iter().map(|a| (*a).to_string()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: SandboxMode, network: NetworkAccess) -> SandboxPolicy {
        SandboxPolicy {
            mode,
            network,
            writable: vec!["/Users/me/p\") (allow file-write* (subpath \"/".into()],
            hidden: vec!["/Users/me/.ssh".into()],
        }
    }

    #[test]
    fn paths_are_parameters_not_profile_text() {
        let (text, params) = profile(&policy(SandboxMode::WorkspaceWrite, NetworkAccess::Deny));
        assert!(!text.contains("/Users/me"), "{text}");
        assert_eq!(params.len(), 2);
        assert!(text.contains("(subpath (param \"WRITABLE_0\"))"));
        assert!(text.contains("(deny file-read-data (subpath (param \"HIDDEN_0\")))"));
        assert!(text.contains("(deny network*)"));
        // Balanced parentheses.
        let open = text.matches('(').count();
        assert_eq!(open, text.matches(')').count(), "{text}");
    }

    #[test]
    fn read_only_grants_no_writable_root_and_network_allow_adds_no_rule() {
        let (text, params) = profile(&policy(SandboxMode::ReadOnly, NetworkAccess::Allow));
        assert!(!text.contains("WRITABLE_"));
        assert!(!text.contains("network"));
        assert_eq!(params.len(), 1);
        let v = argv(
            &policy(SandboxMode::ReadOnly, NetworkAccess::Allow),
            "bash",
            &["-c", "ls"],
        );
        assert_eq!(v[0], SANDBOX_EXEC);
        assert_eq!(&v[v.len() - 3..], &["bash", "-c", "ls"]);
    }
}
