//! Windows without bash runs commands in PowerShell, which the engine does
//! not parse: told so, it never auto-allows a command (every one asks),
//! still applies deny rules to the command's words, and never offers
//! "always". The same commands under POSIX show what changed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, Setup, request};
use mia_permission::PermissionAction::{Allow, Ask, Deny};
use mia_permission::ShellDialect;

fn setup(dialect: ShellDialect, global: &'static [&'static str]) -> Setup<'static> {
    Setup {
        agent: "build",
        global,
        dialect,
        ..Default::default()
    }
}

#[test]
fn powershell_commands_always_ask_even_where_posix_would_allow() {
    let fx = Fixture::new();
    for cmd in ["ls", "git status", "cat README.md"] {
        let req = request(&fx, &format!("bash: {cmd}"));
        let posix = setup(ShellDialect::Posix, &[]).check(&fx, &req);
        assert_eq!(posix.decision, Allow, "{cmd} as POSIX: {}", posix.reason);
        let ps = setup(ShellDialect::PowerShell, &[]).check(&fx, &req);
        assert_eq!(ps.decision, Ask, "{cmd} as PowerShell: {}", ps.reason);
        assert!(
            ps.reason.contains("PowerShell"),
            "the reason names the shell: {}",
            ps.reason
        );
        assert!(
            ps.always.is_empty(),
            "no 'always' for an unparsed command: {:?}",
            ps.always
        );
    }
    // An allow rule of the user's does not make an unparsed command safe.
    let req = request(&fx, "bash: git status; Remove-Item -Recurse C:\\");
    let ps = setup(ShellDialect::PowerShell, &["allow bash git *"]).check(&fx, &req);
    assert_eq!(ps.decision, Ask, "{}", ps.reason);
}

#[test]
fn deny_rules_still_see_a_powershell_commands_words() {
    let fx = Fixture::new();
    let req = request(&fx, "bash: Remove-Item -Recurse -Force build");
    let d = setup(ShellDialect::PowerShell, &["deny bash Remove-Item *"]).check(&fx, &req);
    assert_eq!(d.decision, Deny, "{}", d.reason);
    // Control characters are still called out.
    let req = request(&fx, "bash: echo hi\u{202E}");
    let d = setup(ShellDialect::PowerShell, &[]).check(&fx, &req);
    assert_eq!(d.decision, Ask);
    assert!(
        d.segments.iter().any(|s| s
            .opaque
            .contains(&mia_permission::bash::Opaque::ControlCharacters)),
        "{:?}",
        d.segments
    );
}
