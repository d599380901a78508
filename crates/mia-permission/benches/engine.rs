//! Benchmark: rule evaluations per second on a 50-rule ruleset, bash commands
//! parsed and judged per second, and the time for a 64 KiB command.
//! Run: `cargo bench -p mia-permission --bench engine`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use mia_permission::rules::{MatchInput, PathForm};
use mia_permission::{
    Checker, PathContext, PermissionAction, PermissionRule, Policy, PolicyInput, Request, RuleList,
    bash,
};

fn rule(action: PermissionAction, permission: &str, pattern: &str) -> PermissionRule {
    PermissionRule {
        permission: permission.into(),
        pattern: Some(pattern.into()),
        action,
    }
}

/// Median rate over 5 rounds of `n` calls (after a warm-up).
fn rate(label: &str, n: u64, f: impl FnMut(u64)) -> f64 {
    let mut f = f;
    for i in 0..n / 10 + 1 {
        f(i);
    }
    let mut rates = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for i in 0..n {
            f(i);
        }
        rates.push(n as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    let per_s = rates[2];
    println!(
        "{label:<58} {per_s:>14.0} /s   ({:.3} µs each; median of 5, range {:.0}-{:.0})",
        1e6 / per_s,
        rates[0],
        rates[4]
    );
    per_s
}

fn main() {
    use PermissionAction::*;
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(root.join("src/deep/er")).unwrap();
    std::fs::write(root.join("src/deep/er/file.rs"), "x").unwrap();

    // 50 path rules, none of which matches the probe below (worst case: all are tried).
    let mut rules = Vec::new();
    for i in 0..25 {
        rules.push(rule(Deny, "read", &format!("secrets{i}/**")));
        rules.push(rule(Ask, "read", &format!("*.secret{i}")));
    }
    assert_eq!(rules.len(), 50);
    let policy = Policy::compile(&PolicyInput {
        agent: "custom".into(),
        global: vec![RuleList::new("bench.json", rules)],
        workspace_trusted: true,
        home: Some("/home/bench".into()),
        ..Default::default()
    });
    let total_rules = policy.rules().len();
    if !std::env::var("MIA_BENCH_ONLY").is_ok_and(|v| v == "big") {
        let input = PolicyInput {
            agent: "plan".into(),
            global: vec![RuleList::new(
                "bench.json",
                (0..50)
                    .map(|i| rule(Deny, "read", &format!("dir{i}/**/*.key")))
                    .collect(),
            )],
            home: Some("/home/bench".into()),
            ..Default::default()
        };
        rate("policy compile (plan agent + 50 user rules)", 200, |_| {
            black_box(Policy::compile(black_box(&input)));
        });
    }
    let form = PathForm::new(
        format!("{}/src/deep/er/file.rs", root.display()),
        Some("src/deep/er/file.rs".into()),
        false,
    );
    let names: Vec<String> = (0..50).map(|i| format!("secrets{i}/x")).collect();

    println!(
        "== mia-permission benchmark ({total_rules} compiled rules: 50 user path rules + built-ins)"
    );
    let only_big = std::env::var("MIA_BENCH_ONLY").is_ok_and(|v| v == "big");
    let mut evals_per_s = 0.0;
    if !only_big {
        let base = rate(
            "baseline: 50 string comparisons (same rule count)",
            2_000_000,
            |i| {
                let probe = if i == u64::MAX {
                    "x"
                } else {
                    "src/deep/er/file.rs"
                };
                black_box(names.iter().any(|n| n == black_box(probe)));
            },
        );
        let evals = rate(
            "path rule evaluation (first_match over the whole list)",
            1_000_000,
            |_| {
                black_box(policy.first_match("read", MatchInput::Path(black_box(&form))));
            },
        );
        println!("    ratio vs baseline: {:.2}x slower", base / evals);
        evals_per_s = evals;

        // A realistic mix: suffix, prefix, literal, regex-only and absolute patterns.
        let mixed: Vec<PermissionRule> = [
            "*.pem",
            "*.key",
            "*.env",
            "*.p12",
            "*.sqlite",
            "*.log",
            "*.lock",
            "*.bak",
            "*.tmp",
            "*.swp",
            "secrets/**",
            "vendor/**",
            "dist/**",
            "build/**",
            "target/**",
            "node_modules/**",
            ".venv/**",
            "coverage/**",
            "tmp/**",
            "out/**",
            "id_rsa",
            "credentials",
            ".npmrc",
            ".pypirc",
            ".netrc",
            "Dockerfile",
            "Makefile",
            "package-lock.json",
            "yarn.lock",
            "Cargo.lock",
            "**/*.{pem,key}",
            "src/**/generated_*.rs",
            "docs/**/*.md",
            "config/*.y?ml",
            "**/test_*.py",
            "[Ss]ecret*",
            "*.min.*",
            "**/.env.*",
            "scripts/*.sh",
            "migrations/[0-9]*",
            "/etc/**",
            "/var/**",
            "~/.aws/**",
            "~/.kube/**",
            "~/.docker/**",
            "/usr/**",
            "/opt/**",
            "~/.gnupg/**",
            "/private/**",
            "~/.config/gcloud/**",
        ]
        .iter()
        .enumerate()
        .map(|(i, p)| rule(if i % 2 == 0 { Deny } else { Ask }, "read", p))
        .collect();
        assert_eq!(mixed.len(), 50);
        let mixed_policy = Policy::compile(&PolicyInput {
            agent: "custom".into(),
            global: vec![RuleList::new("mixed.json", mixed)],
            home: Some("/home/bench".into()),
            ..Default::default()
        });
        let mixed_evals = rate(
            "path rule evaluation, realistic mixed 50 rules (incl. regex)",
            1_000_000,
            |_| {
                black_box(mixed_policy.first_match("read", MatchInput::Path(black_box(&form))));
            },
        );
        println!("    ratio vs baseline: {:.2}x slower", base / mixed_evals);
    }
    if std::env::var("MIA_BENCH_ONLY").is_ok_and(|v| v == "rules") {
        return;
    }

    let ctx = PathContext::new(&root, Some("/home/bench".into())).unwrap();
    let checker = Checker::new(&policy, &ctx);
    if !only_big {
        let req = Request::path("read", "src/deep/er/../er/file.rs");
        let full = rate(
            "full path check incl. canonicalisation (file system)",
            100_000,
            |_| {
                black_box(checker.check(black_box(&req)));
            },
        );
        println!(
            "    ratio vs rule evaluation alone: {:.1}x slower",
            evals_per_s / full
        );
    }

    // Bash: parsed and judged per second.
    let build = Policy::compile(&PolicyInput {
        agent: "build".into(),
        global: vec![RuleList::new(
            "bench.json",
            vec![
                rule(Deny, "bash", "rm *"),
                rule(Allow, "bash", "git status *"),
                rule(Deny, "read", "*.env"),
            ],
        )],
        workspace_trusted: true,
        home: Some("/home/bench".into()),
        ..Default::default()
    });
    let bchecker = Checker::new(&build, &ctx);
    let cmds = [
        "git status",
        "cargo test -p mia-permission --all-targets",
        "ls -la src | grep rs | wc -l",
        "npm run dev --port 3000 && echo done",
        "bash -c 'git log --oneline -5; git diff --stat'",
        "find . -name '*.rs' -not -path './target/*'",
        "echo $(git rev-parse HEAD) > out.txt",
        "timeout 10 cargo build --release 2>&1 | tail -20",
    ];
    let reqs: Vec<Request> = cmds.iter().map(|c| Request::command(c)).collect();
    if !only_big {
        let parse_only = rate(
            "baseline: tree-sitter parse + segment extraction only",
            20_000,
            |i| {
                black_box(bash::parse(black_box(cmds[i as usize % cmds.len()])));
            },
        );
        let judged = rate("bash commands parsed and judged (mixed set)", 20_000, |i| {
            black_box(bchecker.check(&reqs[i as usize % reqs.len()]));
        });
        println!(
            "    ratio vs parse only: {:.2}x slower",
            parse_only / judged
        );
    }

    // 64 KiB commands: just under the parser's limit (parsed by
    // tree-sitter) and just over it (split lexically), plus hostile shapes.
    let chain = |limit: usize| {
        let mut chained = String::new();
        let mut k = 0;
        while chained.len() + 80 < limit {
            chained.push_str(&format!(
                "git status src/f{k}.rs && ls -la dir{k} | grep x{k}; "
            ));
            k += 1;
        }
        chained.push_str("rm -rf /");
        chained
    };
    let under = chain(bash::MAX_PARSE_LEN);
    let over = chain(bash::MAX_PARSE_LEN + 4096);
    let big_word = format!("echo {}", "a".repeat(64 * 1024 - 8));
    let nested = format!("{}x{}", "$(".repeat(24 * 1024), ")".repeat(24 * 1024));
    let heredocs = "cat <<E\nx\nE\n".repeat((bash::MAX_PARSE_LEN - 64) / 12);
    for (label, cmd) in [
        ("64 KiB chained command, parsed (~3,600 segments)", &under),
        ("68 KiB chained command, split lexically", &over),
        ("64 KiB single word", &big_word),
        (
            "96 KiB of nested $( (took seconds before the bounds)",
            &nested,
        ),
        ("64 KiB of heredocs (5,400)", &heredocs),
    ] {
        let mut times = Vec::new();
        let mut last = None;
        let reps = if only_big { 100 } else { 5 };
        for _ in 0..reps {
            let t = Instant::now();
            let d = bchecker.check(&Request::command(cmd));
            times.push(t.elapsed());
            last = Some(d);
        }
        times.sort();
        let d = last.unwrap();
        let median: Duration = times[times.len() / 2];
        println!(
            "{label:<58} {:>10.2} ms median of {reps} (decision: {}, {} segments){}",
            median.as_secs_f64() * 1e3,
            d.decision,
            d.segments.len(),
            if median < Duration::from_millis(50) {
                "  < 50 ms OK"
            } else {
                "  OVER 50 ms"
            }
        );
    }
}
