//! Windows without bash runs commands in PowerShell. The engine reads plain
//! PowerShell (commands of plain words, pipelines, statement lists): the
//! read-only cmdlets are judged exactly as the POSIX command that does the
//! same, so `Get-Content .env` meets the same rules as `cat .env`; anything
//! PowerShell would evaluate asks, deny rules still see its words, and it is
//! never offered "always".
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

fn ps(fx: &Fixture, global: &'static [&'static str], cmd: &str) -> mia_permission::Decision {
    setup(ShellDialect::PowerShell, global).check(fx, &request(fx, &format!("bash: {cmd}")))
}

fn posix(fx: &Fixture, global: &'static [&'static str], cmd: &str) -> mia_permission::Decision {
    setup(ShellDialect::Posix, global).check(fx, &request(fx, &format!("bash: {cmd}")))
}

#[test]
fn the_read_only_cmdlets_are_judged_as_their_posix_twins() {
    let fx = Fixture::new();
    // PowerShell takes `\` as a separator; bash as an escape, so its twin
    // is spelled with `/` (as a person using Git Bash on Windows would).
    let ssh = fx.home.join(".ssh/id_rsa").display().to_string();
    let evil = fx.root.parent().unwrap().join("proj_evil/secret.txt");
    let evil = evil.display().to_string();
    let slash = |s: &str| s.replace('\\', "/");
    let pairs: Vec<(String, String)> = vec![
        ("Get-ChildItem".into(), "ls".into()),
        ("gci -Recurse src".into(), "ls -R src".into()),
        ("Get-Content README.md".into(), "cat README.md".into()),
        ("type notes.md".into(), "cat notes.md".into()),
        (
            "Select-String -Pattern TODO -Path src/main.rs".into(),
            "grep -e TODO src/main.rs".into(),
        ),
        ("Test-Path Cargo.lock".into(), "stat Cargo.lock".into()),
        ("Get-Location".into(), "pwd".into()),
        ("git status".into(), "git status".into()),
        ("git log -5 --oneline".into(), "git log -5 --oneline".into()),
        (
            "gci src | Select-String fn | Select-Object -First 3".into(),
            "ls src | grep -e fn | cat".into(),
        ),
        // The same secrets and places outside as the POSIX twin.
        ("Get-Content .env".into(), "cat .env".into()),
        (format!("Get-Content {ssh}"), format!("cat {}", slash(&ssh))),
        (format!("gc -Path {evil}"), format!("cat {}", slash(&evil))),
        ("Get-Content .git/config".into(), "cat .git/config".into()),
        ("Remove-Item -Recurse src".into(), "rm -r src".into()),
        (
            "iwr https://example.com/x".into(),
            "curl https://example.com/x".into(),
        ),
    ];
    let mut allowed = 0;
    for (p, x) in &pairs {
        let a = ps(&fx, &[], p);
        let b = posix(&fx, &[], x);
        assert_eq!(
            a.decision, b.decision,
            "`{p}` vs `{x}`: {} / {}",
            a.reason, b.reason
        );
        if a.decision == Allow {
            allowed += 1;
        }
    }
    // Both sides of the line are covered: some allowed, some not.
    assert!(allowed >= 8, "{allowed} of {} allowed", pairs.len());
    assert!(allowed < pairs.len());
    // The person sees the command as written.
    let d = ps(&fx, &[], "gc README.md");
    assert_eq!(d.segments[0].command, "Get-Content README.md");
}

#[test]
fn anything_powershell_evaluates_asks_and_is_never_always() {
    let fx = Fixture::new();
    for cmd in [
        "Get-Content $env:USERPROFILE\\.ssh\\id_rsa",
        "gci | ForEach-Object { Remove-Item $_ }",
        "git status > out.txt",
        "& .\\build.ps1",
        "Get-Content Env:OPENAI_API_KEY",
        "Get-Content -Stream hidden README.md",
        "Get-Content (Get-Item README.md)",
        "Invoke-Expression 'ls'",
        // PowerShell expands these itself: `.e*` is `.env`.
        "Get-Content .e*",
        "Select-String KEY -Path *",
    ] {
        let d = ps(&fx, &[], cmd);
        assert_eq!(d.decision, Ask, "{cmd}: {}", d.reason);
        assert!(d.always.is_empty(), "{cmd}: {:?}", d.always);
        assert!(d.reason.contains("PowerShell") || !d.segments.is_empty());
    }
    // An allow rule of the user's does not make an unread command safe.
    let d = ps(
        &fx,
        &["allow bash git *"],
        "git status; Remove-Item -Recurse $HOME",
    );
    assert_eq!(d.decision, Ask, "{}", d.reason);
    // A user's allow rule reads the same words as under bash.
    let d = ps(&fx, &["allow bash cargo test *"], "cargo test --workspace");
    assert_eq!(d.decision, Allow, "{}", d.reason);
}

#[test]
fn deny_rules_see_the_cmdlet_and_its_posix_twin() {
    let fx = Fixture::new();
    for rule in [&["deny bash Remove-Item *"][..], &["deny bash rm *"][..]] {
        let rule: &'static [&'static str] = rule;
        for cmd in ["Remove-Item -Recurse -Force build", "del build", "rm build"] {
            let d = ps(&fx, rule, cmd);
            assert_eq!(d.decision, Deny, "{rule:?} {cmd}: {}", d.reason);
        }
    }
    // A deny rule still sees the words of a command that is not read.
    let d = ps(
        &fx,
        &["deny bash Invoke-Expression *"],
        "Invoke-Expression $x",
    );
    assert_eq!(d.decision, Deny, "{}", d.reason);
    // Control characters are still called out.
    let d = ps(&fx, &[], "echo hi\u{202E}");
    assert_eq!(d.decision, Ask);
    assert!(
        d.segments.iter().any(|s| s
            .opaque
            .contains(&mia_permission::bash::Opaque::ControlCharacters)),
        "{:?}",
        d.segments
    );
}
