//! Lint, `show`, ask replies, "always" derivation, audit records, path canonicalisation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, Setup, request, rule, rules};
use mia_permission::{
    Answerer, Audit, AuditRecord, Checker, Layer, PathContext, PathResolver, PermissionAction,
    Policy, PolicyInput, Reply, ReplyError, Request, RuleList, SessionRules, apply_reply,
};

fn policy(agent: &str, global: &[&str], project: &[&str]) -> Policy {
    Policy::compile(&PolicyInput {
        agent: agent.into(),
        global: vec![RuleList::new("/g/config.json", rules(global))],
        project: vec![RuleList::new("/p/.mia-code.json", rules(project))],
        workspace_trusted: true,
        home: Some("/home/u".into()),
        ..Default::default()
    })
}

#[test]
fn lint_reports_shadowed_rules_with_both_positions() {
    let p = policy("custom", &["deny *", "allow read"], &[]);
    assert_eq!(p.lint.len(), 1, "{:?}", p.lint);
    let w = &p.lint[0];
    assert_eq!(w.shadowed.rule, rule("allow read"));
    assert_eq!(w.shadowed.index, 1);
    assert_eq!(w.by.rule, rule("deny *"));
    assert_eq!(w.by.index, 0);
    assert!(
        w.message
            .contains("rule #2 `allow read` from /g/config.json can never match"),
        "{}",
        w.message
    );
    assert!(
        w.message.contains("rule #1 `deny *` from /g/config.json"),
        "{}",
        w.message
    );
    assert!(p.render().contains("warning: rule #2 `allow read`"));

    // bash prefixes and globs
    let p = policy(
        "custom",
        &[
            "allow bash git *",
            "deny bash git push *",
            "deny read *.lock",
            "allow read Cargo.lock",
        ],
        &[],
    );
    let shadowed: Vec<String> = p.lint.iter().map(|w| w.shadowed.rule.to_string()).collect();
    assert_eq!(
        shadowed,
        vec!["deny bash git push *", "allow read Cargo.lock"]
    );

    // across files: project (checked first) shadows global
    let p = policy("custom", &["allow write src/**"], &["deny write"]);
    assert_eq!(p.lint.len(), 1);
    assert_eq!(p.lint[0].by.source, "/p/.mia-code.json");

    // plan's built-in restriction shadows a global write grant
    let p = policy("plan", &["allow write src/**"], &[]);
    assert_eq!(p.lint.len(), 1);
    assert_eq!(p.lint[0].by.layer, Layer::AgentRestriction);

    // nothing shadowed: no warnings
    let p = policy("custom", &["allow read src/**", "deny read"], &[]);
    assert!(p.lint.is_empty(), "{:?}", p.lint);
}

#[test]
fn show_lists_layers_in_checking_order_with_sources() {
    let p = policy("plan", &["deny read *.env"], &["ask bash"]);
    let text = p.render();
    let order = [
        "[invariant]",
        "[agent-restriction]",
        "[project]",
        "[global]",
        "[agent-grant]",
        "[default]",
    ];
    let mut last = 0;
    for o in order {
        let at = text
            .find(o)
            .unwrap_or_else(|| panic!("{o} missing in\n{text}"));
        assert!(at >= last, "{o} out of order in\n{text}");
        last = at;
    }
    assert!(text.contains("deny read *.env"));
    assert!(text.contains("from /g/config.json #1"));
    assert!(text.contains("from /p/.mia-code.json #1"));
    let layers: Vec<Layer> = p.positions().iter().map(|r| r.layer).collect();
    let mut sorted = layers.clone();
    sorted.sort();
    assert_eq!(layers, sorted, "compiled order follows the layer order");
}

#[test]
fn untrusted_workspace_project_rules_may_only_tighten() {
    let mk = |trusted| {
        Policy::compile(&PolicyInput {
            agent: "custom".into(),
            project: vec![RuleList::new(
                "/p/.mia-code.json",
                rules(&["allow bash", "deny read secrets/**"]),
            )],
            agent_project: vec![RuleList::new("/p/.mia-code.json", rules(&["allow *"]))],
            workspace_trusted: trusted,
            ..Default::default()
        })
    };
    let untrusted = mk(false);
    assert_eq!(untrusted.ignored.len(), 2);
    assert!(
        untrusted
            .render()
            .contains("ignored: allow bash from /p/.mia-code.json #1")
    );
    assert!(
        untrusted
            .rules()
            .iter()
            .any(|r| r.rule == rule("deny read secrets/**"))
    );
    assert!(
        !untrusted
            .rules()
            .iter()
            .any(|r| r.rule.action == PermissionAction::Allow && r.layer == Layer::Project)
    );
    let trusted = mk(true);
    assert!(trusted.ignored.is_empty());
    assert!(
        trusted
            .rules()
            .iter()
            .any(|r| r.rule == rule("allow bash") && r.layer == Layer::Project)
    );
}

#[test]
fn invalid_rules_name_file_index_and_reason() {
    let p = policy("build", &["allow read", "deny write src/[oops"], &[]);
    assert_eq!(p.errors.len(), 1);
    let e = p.errors[0].to_string();
    assert!(
        e.contains("invalid permission rule #2 in /g/config.json"),
        "{e}"
    );
    assert!(e.contains("unclosed character class"), "{e}");
    assert!(e.contains("`write` is disabled"), "{e}");
    assert!(p.disabled_by("write").is_some());
    assert!(p.disabled_by("read").is_none());
    assert!(p.render().contains("error: invalid permission rule #2"));
}

#[test]
fn always_stores_the_natural_prefix_and_is_not_offered_for_dangerous_or_opaque() {
    let fx = Fixture::new();
    let s = Setup {
        agent: "custom",
        ..Default::default()
    };
    let d = s.check(&fx, &Request::command("npm run dev --port 3000"));
    assert_eq!(d.decision, PermissionAction::Ask);
    assert_eq!(d.always, vec![rule("allow bash npm run dev *")]);
    let d = s.check(&fx, &Request::command("git status -s && cargo test --all"));
    assert_eq!(
        d.always,
        vec![
            rule("allow bash git status *"),
            rule("allow bash cargo test *")
        ]
    );
    for cmd in [
        "rm -rf build",
        "echo $(id)",
        "FOO=1 make",
        "sudo ls",
        "git push --force",
        "curl https://x.dev",
        "ls > out",
    ] {
        let d = s.check(&fx, &Request::command(cmd));
        assert_eq!(d.decision, PermissionAction::Ask, "{cmd}");
        assert!(
            d.always.is_empty(),
            "always offered for {cmd}: {:?}",
            d.always
        );
    }
    // paths: the exact path
    let d = s.check(&fx, &Request::path("write", "src/a.ts"));
    assert_eq!(d.always, vec![rule("allow write ./src/a.ts")]);
    // invariants never get an "always"
    let d = Setup {
        agent: "build",
        ..Default::default()
    }
    .check(&fx, &Request::path("write", ".git/config"));
    assert_eq!(d.decision, PermissionAction::Ask);
    assert!(d.always.is_empty());
}

#[test]
fn replies_once_always_never_feedback() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut session = SessionRules::default();
    let compile = |session: &SessionRules| {
        Policy::compile(&PolicyInput {
            agent: "custom".into(),
            session: session.rules().to_vec(),
            ..Default::default()
        })
    };
    let req = Request::command("npm run dev --port 1");
    let p = compile(&session);
    let d = Checker::new(&p, &ctx).check(&req);
    assert_eq!(d.decision, PermissionAction::Ask);

    let once = apply_reply(&d, Reply::Once).unwrap();
    assert!(once.proceed && once.session_rules.is_empty());

    let always = apply_reply(&d, Reply::Always).unwrap();
    session.add(&always.session_rules);
    let p = compile(&session);
    let d2 = Checker::new(&p, &ctx).check(&Request::command("npm run dev --port 2"));
    assert_eq!(d2.decision, PermissionAction::Allow);
    assert_eq!(d2.matched.as_ref().unwrap().layer, Layer::Session);
    // a different script still asks
    assert_eq!(
        Checker::new(&p, &ctx)
            .check(&Request::command("npm run build"))
            .decision,
        PermissionAction::Ask
    );

    let proj = apply_reply(&d, Reply::AlwaysForProject).unwrap();
    assert_eq!(proj.project_rules, vec![rule("allow bash npm run dev *")]);
    assert!(proj.session_rules.is_empty());

    let d3 = Checker::new(&p, &ctx).check(&Request::command("make all"));
    let never = apply_reply(&d3, Reply::Never).unwrap();
    assert!(!never.proceed);
    assert_eq!(never.session_rules, vec![rule("deny bash make all *")]);
    session.add(&never.session_rules);
    let p = compile(&session);
    assert_eq!(
        Checker::new(&p, &ctx)
            .check(&Request::command("make all -j4"))
            .decision,
        PermissionAction::Deny
    );

    let fb = apply_reply(&d3, Reply::RejectWithFeedback("use cargo instead".into())).unwrap();
    assert!(!fb.proceed);
    assert!(fb.message_to_model.unwrap().contains("use cargo instead"));

    let rejected = apply_reply(&d3, Reply::Reject).unwrap();
    assert!(!rejected.proceed && rejected.session_rules.is_empty());

    let dangerous = Checker::new(&p, &ctx).check(&Request::command("rm -rf x"));
    let r = apply_reply(&dangerous, Reply::Always);
    assert!(
        matches!(r, Err(ReplyError::AlwaysNotOffered(_))),
        "{r:?} {dangerous:#?}"
    );
    let allowed = Checker::new(&p, &ctx).check(&Request::path("read", "src/main.rs"));
    assert!(matches!(
        apply_reply(&allowed, Reply::Once),
        Err(ReplyError::NotAnAsk(_))
    ));
}

#[test]
fn nobody_to_answer_says_which() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let p = Policy::compile(&PolicyInput {
        agent: "custom".into(),
        ..Default::default()
    });
    for (a, why) in [
        (Answerer::Headless, "headless"),
        (Answerer::NoRoute, "no route to the user"),
        (Answerer::TimedOut, "timed out"),
    ] {
        let d = Checker::new(&p, &ctx)
            .with_answerer(a)
            .check(&Request::bare("question"));
        assert_eq!(d.decision, PermissionAction::Deny);
        assert!(d.reason.contains(why), "{}", d.reason);
        assert!(d.reason.contains("No rule"), "{}", d.reason);
    }
    let d = Checker::new(&p, &ctx).check(&Request::bare("question"));
    assert_eq!(d.decision, PermissionAction::Ask);
}

#[test]
fn denial_message_names_rule_and_source_and_audit_record() {
    let fx = Fixture::new();
    let s = Setup {
        agent: "build",
        project: &["deny write *.lock"],
        ..Default::default()
    };
    let d = s.check(&fx, &request(&fx, "write Cargo.lock"));
    assert_eq!(
        d.denial_message().unwrap(),
        "Permission denied: cannot write to Cargo.lock (matched rule: deny write *.lock from .mia-code.json)"
    );
    let a = AuditRecord::new(&d, "build", Some("ses_1"), 1_700_000_000_000);
    assert_eq!(a.decision, PermissionAction::Deny);
    assert_eq!(a.matched_rule.as_deref(), Some("deny write *.lock"));
    assert_eq!(a.layer.as_deref(), Some("project"));
    assert_eq!(a.source.as_deref(), Some(".mia-code.json"));
    assert_eq!(a.target, "Cargo.lock");
    a.emit();
    let j = d.to_check_json();
    assert_eq!(j["decision"], "deny");
    assert_eq!(j["matched"]["layer"], "project");
    assert_eq!(j["matched"]["source"], ".mia-code.json");
    assert_eq!(j["matched"]["rule"]["pattern"], "*.lock");
    assert!(j["segments"].as_array().unwrap().is_empty());
    let mut keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    // The key set is the contract, not the order.
    keys.sort();
    assert_eq!(keys, ["decision", "matched", "reason", "segments"]);
}

#[test]
fn canonicalisation_forms() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    // Rules see `/`-separated paths on every system.
    let root = fx.root.to_string_lossy().replace('\\', "/");
    let c = ctx.resolve("src/../.env", None).unwrap();
    assert_eq!(c.spelled.rel.as_deref(), Some(".env"));
    assert_eq!(c.spelled.abs, format!("{root}/.env"));
    let c = ctx
        .resolve(&format!("{root}_evil/secret.txt"), None)
        .unwrap();
    assert!(c.outside_project(), "/proj must not contain /proj_evil");
    let c = ctx.resolve("link_env", None).unwrap();
    assert_eq!(c.spelled.rel.as_deref(), Some("link_env"));
    if fx.symlinks {
        assert_eq!(c.real.rel.as_deref(), Some(".env"));
        let c = ctx.resolve("linkdir/secret.txt", None).unwrap();
        assert_eq!(c.spelled.rel.as_deref(), Some("linkdir/secret.txt"));
        assert!(c.real.rel.is_none() && c.outside_project());
        // kernel semantics: `link/..` is the parent of the link's target
        let c = ctx.resolve("src/sec/../.env", None).unwrap();
        assert_eq!(c.real.rel.as_deref(), Some(".env"));
    }
    let c = ctx.resolve("~/.ssh/id_rsa", None).unwrap();
    assert!(c.spelled.abs.ends_with("home/.ssh/id_rsa") && c.outside_project());
    let c = ctx.resolve("passwd", Some("/etc")).unwrap();
    // Windows reads a path without a drive on the current drive.
    #[cfg(windows)]
    assert_eq!(c.spelled.abs, format!("{}/etc/passwd", &root[..2]));
    #[cfg(not(windows))]
    assert_eq!(c.spelled.abs, "/etc/passwd");
    assert!(ctx.resolve("a\0b", None).is_err());
    assert!(ctx.resolve("a\u{202e}b", None).is_err());
    assert!(ctx.resolve("", None).is_err());
    assert!(ctx.resolve("~bob/x", None).is_err());
    // a symlink loop is an error, not a hang
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(fx.root.join("loop_b"), fx.root.join("loop_a")).unwrap();
        std::os::unix::fs::symlink(fx.root.join("loop_a"), fx.root.join("loop_b")).unwrap();
        assert!(ctx.resolve("loop_a/x", None).is_err());
    }
    // case: this temp file system is case-sensitive on Linux (NTFS is not);
    // a forced case-insensitive context folds
    #[cfg(target_os = "linux")]
    assert!(!mia_permission::path::detect_case_insensitive(&fx.root));
    #[cfg(windows)]
    assert!(mia_permission::path::detect_case_insensitive(&fx.root));
    let ci = PathContext::new(&fx.root, None)
        .unwrap()
        .with_case_insensitive(true);
    let c = ci.resolve(&format!("{}/SRC/main.rs", root.to_uppercase()), None);
    // the upper-cased root does not exist on a case-sensitive fs, but containment is case-folded
    assert_eq!(c.unwrap().spelled.rel.as_deref(), Some("SRC/main.rs"));
}

#[test]
fn availability_counts_pattern_rules() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let pol = |agent: &str, global: &[&str]| {
        Policy::compile(&PolicyInput {
            agent: agent.into(),
            global: vec![RuleList::new("g", rules(global))],
            home: Some(fx.home.to_string_lossy().into()),
            ..Default::default()
        })
    };
    let plan = pol("plan", &[]);
    let c = Checker::new(&plan, &ctx);
    assert_eq!(
        c.availability("bash"),
        PermissionAction::Allow,
        "read-only commands are allowed"
    );
    assert_eq!(
        c.check(&Request::bare("bash")).decision,
        PermissionAction::Deny,
        "a bare check only sees pattern-less rules"
    );
    assert_eq!(c.availability("write"), PermissionAction::Deny);
    assert_eq!(c.availability("read"), PermissionAction::Allow);
    assert_eq!(c.availability("fetch"), PermissionAction::Deny);
    let compaction = pol("compaction", &[]);
    assert_eq!(
        Checker::new(&compaction, &ctx).availability("read"),
        PermissionAction::Deny
    );
    let build = pol("build", &["deny bash", "allow write src/**", "deny write"]);
    let c = Checker::new(&build, &ctx);
    assert_eq!(c.availability("bash"), PermissionAction::Deny);
    assert_eq!(c.availability("write"), PermissionAction::Allow);
    let custom = pol("custom", &[]);
    let c = Checker::new(&custom, &ctx);
    assert_eq!(c.availability("question"), PermissionAction::Ask);
    assert_eq!(
        c.with_answerer(Answerer::Headless).availability("question"),
        PermissionAction::Deny
    );
    // subagent: intersection with the parent
    let explore = pol("explore", &[]);
    let c = Checker::new(&build, &ctx).with_parent(&explore);
    assert_eq!(c.availability("write"), PermissionAction::Deny);
    // depth 2: every ancestor counts, the strictest wins, and the denial names it
    let grand = pol("build", &["deny write secret/**"]);
    let parent = pol("reviewer", &["allow write"]);
    let child = pol("custom", &["allow write"]);
    let c = Checker::new(&child, &ctx)
        .with_parent(&parent)
        .with_parent(&grand);
    let d = c.check(&Request::path("write", "secret/key.txt"));
    assert_eq!(d.decision, PermissionAction::Deny, "{}", d.reason);
    assert!(d.reason.contains("parent agent `build`"), "{}", d.reason);
    let d = c.check(&Request::path("write", "src/lib.rs"));
    assert_eq!(d.decision, PermissionAction::Allow, "{}", d.reason);
}

#[test]
fn long_commands_ask_but_never_skip_deny_rules() {
    let fx = Fixture::new();
    let s = Setup {
        agent: "build",
        global: &["deny bash rm *"],
        ..Default::default()
    };
    let mut cmd = String::new();
    while cmd.len() < 64 * 1024 {
        cmd.push_str("git status src/main.rs && ls -la | grep x; ");
    }
    let plain = format!("{cmd}true");
    let d = s.check(&fx, &Request::command(&plain));
    assert_eq!(d.decision, PermissionAction::Ask, "{}", d.reason);
    assert!(d.reason.contains("too long"), "{}", d.reason);
    let with_rm = format!("{cmd}rm -rf /");
    let t = std::time::Instant::now();
    let d = s.check(&fx, &Request::command(&with_rm));
    let took = t.elapsed();
    assert_eq!(d.decision, PermissionAction::Deny, "{}", d.reason);
    assert!(d.reason.contains("deny bash rm *"), "{}", d.reason);
    // A debug build on a shared machine; the release figure is in docs/benchmarks.md.
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
}

#[test]
fn many_tiny_segments_are_all_judged() {
    let fx = Fixture::new();
    let s = Setup {
        agent: "build",
        global: &["deny bash rm *"],
        ..Default::default()
    };
    let cmd = format!("{}rm x", "true;".repeat(13_000));
    let d = s.check(&fx, &Request::command(&cmd));
    assert_eq!(d.decision, PermissionAction::Deny, "{}", d.reason);
    assert_eq!(d.segments.len(), 13_001);
}

#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn audit_events_deny_and_ask_at_warn_allow_at_debug() {
    let fx = Fixture::new();
    let s = Setup {
        agent: "build",
        project: &["deny write *.lock", "ask edit README.md"],
        ..Default::default()
    };
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        for req in ["write Cargo.lock", "edit README.md", "read src/main.rs"] {
            let d = s.check(&fx, &request(&fx, req));
            AuditRecord::new(&d, "build", Some("ses_1"), 1).emit();
        }
    });
    let out = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("permission check"))
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].contains("WARN")
            && lines[0].contains("decision=\"deny\"")
            && lines[0].contains("Cargo.lock"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("deny write *.lock") && lines[0].contains(".mia-code.json"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("WARN") && lines[1].contains("decision=\"ask\""),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("DEBUG") && lines[2].contains("decision=\"allow\""),
        "{}",
        lines[2]
    );
}

#[test]
fn engine_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Policy>();
    assert_send_sync::<PathContext>();
    assert_send_sync::<Checker<'static>>();
    assert_send_sync::<mia_permission::Decision>();
}
