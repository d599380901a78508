#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Redaction catches each kind of secret wherever it sits in a payload, and
//! the page renders hostile model output inertly.

use std::collections::HashSet;

use mia_protocol::{
    RedactionPlace, SHARE_PAYLOAD_VERSION, SharePayload, SharedDiff, SharedMessage, SharedPart,
    SharedSession,
};
use mia_share::{PageMeta, RedactOptions, Redactor, page};

fn payload(parts: Vec<SharedPart>) -> SharePayload {
    SharePayload {
        version: SHARE_PAYLOAD_VERSION.into(),
        session: SharedSession {
            id: "s1".into(),
            title: "A session".into(),
            project: "app".into(),
            created_at: 1_764_000_000_000,
            updated_at: None,
            model: Some("mock/model".into()),
            agent: None,
        },
        messages: vec![SharedMessage {
            id: "m1".into(),
            role: "assistant".into(),
            parts,
            metadata: None,
            created_at: 1_764_000_001_000,
        }],
        diffs: vec![],
    }
}

fn text(s: &str) -> SharedPart {
    SharedPart::Text { content: s.into() }
}

/// (kind, secret, text containing it)
fn corpus() -> Vec<(&'static str, String, String)> {
    let aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".to_string();
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U".to_string();
    let pk = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----".to_string();
    vec![
        (
            "anthropic-api-key",
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789".into(),
            String::new(),
        ),
        (
            "openai-api-key",
            "sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0".into(),
            String::new(),
        ),
        (
            "gcp-api-key",
            "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY".into(),
            String::new(),
        ),
        (
            "github-pat",
            "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789".into(),
            String::new(),
        ),
        (
            "github-fine-grained-pat",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop".into(),
            String::new(),
        ),
        (
            "gitlab-pat",
            "glpat-xYz123AbC456dEf789gH".into(),
            String::new(),
        ),
        (
            "slack-bot-token",
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKl".into(),
            String::new(),
        ),
        (
            "stripe-access-token",
            "sk_live_51HcDeFgHiJkLmNoPqRsTuVw".into(),
            String::new(),
        ),
        (
            "aws-access-token",
            "AKIAIOSFODNN7EXAMPLE".into(),
            String::new(),
        ),
        (
            "aws-secret",
            aws_secret.clone(),
            format!("aws_secret_access_key = {aws_secret}"),
        ),
        ("jwt", jwt.clone(), String::new()),
        ("private-key", pk.clone(), String::new()),
        (
            "curl-auth-header",
            "abcDEF123456ghiJKL789".into(),
            "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789' x".into(),
        ),
        (
            "bearer-token",
            "abcDEF123456ghiJKL789".into(),
            "GET /v1/me HTTP/1.1\nAuthorization: Bearer abcDEF123456ghiJKL789".into(),
        ),
        (
            "url-password",
            "hunter2pass".into(),
            "postgres://admin:hunter2pass@db.internal:5432/app".into(),
        ),
        (
            "password-assignment",
            "s3cr3t-Value!".into(),
            "DB_PASSWORD=s3cr3t-Value!".into(),
        ),
        (
            "generic-api-key",
            "s3cr3t-Value!".into(),
            "API_SECRET=s3cr3t-Value!".into(),
        ),
    ]
}

#[test]
fn every_builtin_kind_is_redacted_in_text() {
    let r = Redactor::new(RedactOptions::default()).unwrap();
    for (kind, secret, context) in corpus() {
        let s = if context.is_empty() {
            format!("here it is: {secret} (do not share)")
        } else {
            context
        };
        let mut p = payload(vec![text(&s)]);
        let found = r.redact(&mut p);
        let json = serde_json::to_string(&p).unwrap();
        assert!(
            !json.contains(&secret),
            "{kind}: {secret} survived in {json}"
        );
        assert!(
            found.iter().any(|f| f.kind == kind),
            "{kind}: not reported, found {found:?}"
        );
        assert!(json.contains(&format!("[REDACTED:{kind}]")) || kind != "private-key");
        for f in &found {
            assert!(!f.hint.contains(&secret), "the hint reveals {secret}");
        }
    }
}

#[test]
fn secrets_in_tool_args_results_and_diffs_are_redacted_and_placed() {
    let key = "sk-ant-api03-PLANTEDplantedPLANTED0123456789";
    let mut p = payload(vec![
        SharedPart::ToolCall {
            call_id: "c1".into(),
            name: "write".into(),
            args: serde_json::json!({"path": "src/cfg.js", "content": format!("const k = \"{key}\";"), "nested": [{"x": key}]}),
        },
        SharedPart::ToolResult {
            call_id: "c1".into(),
            name: "write".into(),
            output: format!("wrote {key}"),
            is_error: false,
            duration_ms: None,
            omitted: false,
        },
    ]);
    p.diffs.push(SharedDiff {
        file: "src/cfg.js".into(),
        status: "added".into(),
        additions: 1,
        deletions: 0,
        patch: format!("@@ -0,0 +1 @@\n+const k = \"{key}\";\n"),
        binary: false,
    });
    let r = Redactor::new(RedactOptions::default()).unwrap();
    let found = r.redact(&mut p);
    assert!(!serde_json::to_string(&p).unwrap().contains(key));
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(found.iter().any(|f| f.place
        == RedactionPlace::Diff {
            file: "src/cfg.js".into()
        }));
    assert!(found.iter().any(|f| f.place
        == RedactionPlace::Message {
            message_id: "m1".into(),
            part: 1
        }));
}

#[test]
fn env_file_output_has_every_value_redacted() {
    let mut p = payload(vec![
        SharedPart::ToolCall {
            call_id: "c1".into(),
            name: "read".into(),
            args: serde_json::json!({"path": ".env.local"}),
        },
        SharedPart::ToolResult {
            call_id: "c1".into(),
            name: "read".into(),
            output: "     1\tDATABASE_HOST=db.internal\n     2\texport FEATURE_FLAG=\"plainvalue\"\n     3\t# comment\n"
                .into(),
            is_error: false,
            duration_ms: None,
            omitted: false,
        },
    ]);
    let r = Redactor::new(RedactOptions {
        env_file_calls: HashSet::from(["c1".to_string()]),
        ..Default::default()
    })
    .unwrap();
    let found = r.redact(&mut p);
    let json = serde_json::to_string(&p).unwrap();
    assert!(!json.contains("db.internal"), "{json}");
    assert!(!json.contains("plainvalue"), "{json}");
    assert!(json.contains("# comment"));
    assert_eq!(found.iter().filter(|f| f.kind == "env-value").count(), 2);
}

#[test]
fn user_patterns_and_home_paths() {
    let mut p = payload(vec![text(
        "ticket ACME-12345 in /home/ann/work/app/src and /home/ann; not /home/anna/x",
    )]);
    let r = Redactor::new(RedactOptions {
        patterns: vec![r"ACME-\d+".into()],
        home: vec!["/home/ann".into()],
        ..Default::default()
    })
    .unwrap();
    let found = r.redact(&mut p);
    let SharedPart::Text { content } = &p.messages[0].parts[0] else {
        panic!()
    };
    assert_eq!(
        content,
        "ticket [REDACTED:pattern:1] in ~/work/app/src and ~; not /home/anna/x"
    );
    assert_eq!(found.iter().filter(|f| f.kind == "home-path").count(), 2);
}

#[test]
fn a_bad_pattern_is_a_clear_error() {
    for bad in ["(unclosed", ".*"] {
        let err = Redactor::new(RedactOptions {
            patterns: vec!["ok".into(), bad.into()],
            ..Default::default()
        })
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("share.redactPatterns[1]"), "{err}");
    }
}

#[test]
fn code_is_not_mistaken_for_secrets() {
    let src = "function login(password: string) { const token = getToken(); }";
    let mut p = payload(vec![text(src)]);
    let found = Redactor::new(RedactOptions::default())
        .unwrap()
        .redact(&mut p);
    assert!(found.is_empty(), "{found:?}");
}

/// Hostile text a model (or a file it read) could produce.
pub const XSS: &[&str] = &[
    "<script>window.__xss=1</script>",
    "<img src=x onerror=\"window.__xss=2\">",
    "[click](javascript:window.__xss=3)",
    "<svg onload=\"window.__xss=4\"><circle r=5/></svg>",
    "![tracker](https://evil.example/pixel.png)",
    "<style>body{background:url(https://evil.example/css)}</style>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<iframe src=\"https://evil.example\"></iframe>",
    "\"><script>alert(1)</script>",
];

#[test]
fn hostile_markdown_renders_inert() {
    let mut parts: Vec<SharedPart> = XSS.iter().map(|x| text(x)).collect();
    parts.push(SharedPart::ToolCall {
        call_id: "c".into(),
        name: "<script>bad()</script>".into(),
        args: serde_json::json!({"path": "<img src=x onerror=alert(1)>"}),
    });
    parts.push(SharedPart::ToolResult {
        call_id: "c".into(),
        name: "read".into(),
        output: "</pre><script>alert(2)</script>".into(),
        is_error: false,
        duration_ms: None,
        omitted: false,
    });
    let mut p = payload(parts);
    p.session.title = "</title><script>alert(3)</script>".into();
    p.diffs.push(SharedDiff {
        file: "x\"><script>.js".into(),
        status: "modified".into(),
        additions: 1,
        deletions: 1,
        patch: "@@ -1 +1 @@\n-<script>old</script>\n+<img src=x onerror=alert(4)>\n".into(),
        binary: false,
    });
    let html = page(&p, &PageMeta::default());
    let lower = html.to_ascii_lowercase();
    // Every real tag (escaped text has no `<`) is one the renderer writes,
    // with no event handler and no source attribute.
    const ALLOWED: &[&str] = &[
        "!doctype",
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "main",
        "header",
        "h1",
        "h2",
        "h3",
        "dl",
        "div",
        "dt",
        "dd",
        "article",
        "span",
        "time",
        "p",
        "strong",
        "em",
        "a",
        "del",
        "details",
        "summary",
        "pre",
        "code",
        "section",
        "table",
        "tbody",
        "tr",
        "td",
        "footer",
        "ul",
        "ol",
        "li",
        "blockquote",
        "br",
        "hr",
        "input",
    ];
    for (i, _) in lower.match_indices('<') {
        let rest = &lower[i + 1..];
        let tag = &rest[..rest.find('>').unwrap()];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        assert!(ALLOWED.contains(&name.as_str()), "tag <{tag}> in page");
        assert!(!tag.contains(" on") && !tag.contains("src="), "tag <{tag}>");
    }
    assert!(!lower.contains("<style>body"));
    // Every link is ours: http(s) only, marked external.
    for (i, _) in html.match_indices("<a ") {
        let tag = &html[i..html[i..].find('>').unwrap() + i];
        assert!(
            tag.starts_with("<a href=\"https://") && tag.contains("class=\"external\""),
            "{tag}"
        );
    }
    // Only our own stylesheet and our own external links.
    assert_eq!(lower.matches("<style>").count(), 1);
    assert!(html.contains("href=\"https://evil.example/pixel.png\" class=\"external\" rel=\"noopener noreferrer nofollow ugc\""));
    assert!(html.contains("&lt;script&gt;window.__xss=1&lt;/script&gt;"));
    assert!(mia_share::csp().contains("default-src 'none'"));
    assert!(!mia_share::csp().contains("unsafe"));
}

#[test]
fn page_shows_transcript_tool_call_and_highlighted_diff() {
    let mut p = payload(vec![
        text("I'll **fix** it."),
        SharedPart::ToolCall {
            call_id: "c".into(),
            name: "edit".into(),
            args: serde_json::json!({"path": "src/main.rs"}),
        },
        SharedPart::ToolResult {
            call_id: "c".into(),
            name: "edit".into(),
            output: "edited".into(),
            is_error: false,
            duration_ms: Some(120),
            omitted: false,
        },
    ]);
    p.diffs.push(SharedDiff {
        file: "src/main.rs".into(),
        status: "modified".into(),
        additions: 1,
        deletions: 1,
        patch: "@@ -1 +1 @@\n-fn main() {}\n+fn main() { println!(\"hi\"); }\n".into(),
        binary: false,
    });
    let html = page(
        &p,
        &PageMeta {
            expires_at: Some(1_766_592_000_000),
            exported: false,
        },
    );
    assert!(html.contains("<strong>fix</strong>"));
    assert!(html.contains("<details class=\"tool\"><summary><span class=\"name\">edit</span><span class=\"arg\">src/main.rs</span>"));
    assert!(html.contains("edited"));
    assert!(html.contains("<tr class=\"add\">"));
    assert!(html.contains("class=\"s-"), "no highlighting classes");
    assert!(html.contains("expires 2025-12-24"));
    assert!(html.contains("<dt>Files changed</dt><dd>1</dd>"));
}

#[test]
fn the_csp_hash_matches_the_inline_stylesheet() {
    use base64::Engine as _;
    use sha2::Digest as _;
    let html = page(&payload(vec![text("x")]), &PageMeta::default());
    let start = html.find("<style>").unwrap() + 7;
    let end = html.find("</style>").unwrap();
    let hash = base64::engine::general_purpose::STANDARD
        .encode(sha2::Sha256::digest(&html.as_bytes()[start..end]));
    assert!(mia_share::csp().contains(&hash));
}

#[test]
fn a_fence_info_string_names_a_language_and_nothing_else() {
    let html = mia_share::markdown("```rust\texternal x\nfn main() {}\n```\n");
    assert!(html.contains("class=\"language-rust\""), "{html}");
    assert!(!html.contains("external"), "{html}");
    let html = mia_share::markdown("```\"onmouseover=x\nhi\n```\n");
    assert!(!html.contains("language-"), "{html}");
    assert!(!html.contains("onmouseover"), "{html}");
}
