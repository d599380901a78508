//! Secret detection and redaction of a share payload.
//!
//! Applied to the payload itself (never only to what is displayed): every
//! string that leaves the machine — the title, text, reasoning, tool call
//! arguments (recursively), tool output, errors, summaries, diff file names
//! and patches — goes through the same detectors, in order:
//! 1. private key blocks, then provider and service tokens (Anthropic,
//!    OpenAI, Google, GitHub, GitLab, Slack, Stripe, AWS access keys, JWTs),
//! 2. context-bound secrets (AWS secret keys, bearer tokens, passwords in
//!    URLs, `KEY=value` lines whose key names a secret),
//! 3. every `KEY=value` value in the output of a tool that read an
//!    `.env`-style file,
//! 4. the user's `share.redactPatterns`,
//! 5. the user's home directory, replaced by `~`.
//!
//! A replacement is `[REDACTED:<kind>]`; the [`Redaction`] list names each
//! with its place and a masked hint, which is what the preview highlights.

use std::collections::HashSet;

use mia_protocol::{Redaction, RedactionPlace, SharePayload, SharedPart};
use regex::{Captures, Regex};
use serde_json::Value;

use crate::ShareError;

/// A built-in detector: `group` is the capture that is the secret (0: all).
struct Detector {
    kind: &'static str,
    re: Regex,
    group: usize,
}

const BUILTIN: &[(&str, &str, usize)] = &[
    (
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
        0,
    ),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0),
    (
        "openai-key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        0,
    ),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}", 0),
    (
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        0,
    ),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}", 0),
    ("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", 0),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        0,
    ),
    (
        "stripe-key",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        0,
    ),
    (
        "aws-access-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        0,
    ),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        0,
    ),
    (
        "aws-secret",
        r#"(?i)aws.{0,20}?(?:secret|key).{0,20}?["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#,
        1,
    ),
    (
        "bearer-token",
        r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9._~+/=\-]{16,})",
        1,
    ),
    (
        "url-password",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:([^@\s/]+)@",
        1,
    ),
    (
        "secret-assignment",
        r#"(?im)\b[A-Za-z0-9_.\-]*(?:secret|token|passw(?:or)?d|pwd|api[_\-]?key|apikey|private[_\-]?key|access[_\-]?key|credentials?)[A-Za-z0-9_.\-]*["']?\s*[:=]\s*["']?([^\s"',;#()\[\]{}<>]{6,})"#,
        1,
    ),
];

/// An env-file line: `KEY=value` (optionally `export`, quoted, or after
/// the line number the read tool puts in front).
const ENV_LINE: &str = r#"(?m)^(\s*(?:\d+[\t:|]\s*)?(?:export\s+)?[A-Za-z_][A-Za-z0-9_.\-]*\s*=\s*)(["']?)([^"'\r\n]+)"#;

/// What the redactor needs besides the payload.
#[derive(Debug, Clone, Default)]
pub struct RedactOptions {
    /// `share.redactPatterns` (regular expressions; a match is replaced whole).
    pub patterns: Vec<String>,
    /// The user's home directory, as spelled in paths (replaced by `~`).
    pub home: Vec<String>,
    /// Tool call ids that read an `.env`-style file: every value in their
    /// output is redacted.
    pub env_file_calls: HashSet<String>,
}

pub struct Redactor {
    builtin: Vec<Detector>,
    patterns: Vec<Regex>,
    env_line: Regex,
    home: Vec<Regex>,
    env_file_calls: HashSet<String>,
}

impl Redactor {
    pub fn new(opts: RedactOptions) -> Result<Self, ShareError> {
        let mut builtin = Vec::new();
        for (kind, src, group) in BUILTIN {
            let re = Regex::new(src).map_err(|e| ShareError::Internal(format!("{kind}: {e}")))?;
            builtin.push(Detector {
                kind,
                re,
                group: *group,
            });
        }
        let mut patterns = Vec::new();
        for (index, p) in opts.patterns.iter().enumerate() {
            let re = regex::RegexBuilder::new(p)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| ShareError::BadPattern {
                    index,
                    pattern: p.clone(),
                    message: e.to_string(),
                })?;
            if re.is_match("") {
                return Err(ShareError::BadPattern {
                    index,
                    pattern: p.clone(),
                    message: "it matches the empty string".into(),
                });
            }
            patterns.push(re);
        }
        let mut home = Vec::new();
        let mut spelled: Vec<&String> = opts.home.iter().filter(|h| h.len() > 1).collect();
        // Longest first, so `/home/ann/x` (a symlinked home) wins over `/home/ann`.
        spelled.sort_by_key(|h| std::cmp::Reverse(h.len()));
        spelled.dedup();
        for h in spelled {
            let trimmed = h.trim_end_matches(['/', '\\']);
            let re = Regex::new(&format!(
                r"{}([/\\]|$|[^A-Za-z0-9_.\-])",
                regex::escape(trimmed)
            ))
            .map_err(|e| ShareError::Internal(e.to_string()))?;
            home.push(re);
        }
        Ok(Self {
            builtin,
            patterns,
            env_line: Regex::new(ENV_LINE).map_err(|e| ShareError::Internal(e.to_string()))?,
            home,
            env_file_calls: opts.env_file_calls,
        })
    }

    /// Redact the payload in place; returns every replacement made.
    pub fn redact(&self, payload: &mut SharePayload) -> Vec<Redaction> {
        let mut out = Vec::new();
        self.text(
            &mut payload.session.title,
            &RedactionPlace::Title,
            false,
            &mut out,
        );
        for m in &mut payload.messages {
            for (i, part) in m.parts.iter_mut().enumerate() {
                let place = RedactionPlace::Message {
                    message_id: m.id.clone(),
                    part: i,
                };
                match part {
                    SharedPart::Text { content }
                    | SharedPart::Reasoning { content }
                    | SharedPart::Summary { content } => {
                        self.text(content, &place, false, &mut out)
                    }
                    SharedPart::Error { message } => self.text(message, &place, false, &mut out),
                    SharedPart::ToolCall { args, .. } => self.value(args, &place, &mut out),
                    SharedPart::ToolResult {
                        call_id, output, ..
                    } => {
                        let env = self.env_file_calls.contains(call_id.as_str());
                        self.text(output, &place, env, &mut out);
                    }
                }
            }
        }
        for d in &mut payload.diffs {
            let place = RedactionPlace::Diff {
                file: d.file.clone(),
            };
            self.text(&mut d.file, &place, false, &mut out);
            let env = is_env_file(&d.file);
            self.text(&mut d.patch, &place, env, &mut out);
        }
        out
    }

    fn value(&self, v: &mut Value, place: &RedactionPlace, out: &mut Vec<Redaction>) {
        match v {
            Value::String(s) => self.text(s, place, false, out),
            Value::Array(items) => items.iter_mut().for_each(|i| self.value(i, place, out)),
            Value::Object(map) => {
                // A path argument naming an env file: its content argument is one.
                let env = map
                    .get("path")
                    .or_else(|| map.get("file_path"))
                    .and_then(Value::as_str)
                    .is_some_and(is_env_file);
                for (_, item) in map.iter_mut() {
                    match item {
                        Value::String(s) if env => self.text(s, place, true, out),
                        other => self.value(other, place, out),
                    }
                }
            }
            _ => {}
        }
    }

    /// Redact one string.
    pub fn text(
        &self,
        s: &mut String,
        place: &RedactionPlace,
        env_file: bool,
        out: &mut Vec<Redaction>,
    ) {
        for d in &self.builtin {
            let check = if d.kind == "secret-assignment" {
                looks_secret
            } else {
                always
            };
            replace_group(s, &d.re, d.group, d.kind, place, check, out);
        }
        if env_file {
            replace_group(s, &self.env_line, 3, "env-value", place, always, out);
        }
        for (i, re) in self.patterns.iter().enumerate() {
            let kind = format!("pattern:{}", i + 1);
            replace_group(s, re, 0, &kind, place, always, out);
        }
        for re in &self.home {
            if re.is_match(s) {
                let mut n = 0usize;
                let replaced = re
                    .replace_all(s, |c: &Captures| {
                        n += 1;
                        format!("~{}", c.get(1).map_or("", |m| m.as_str()))
                    })
                    .into_owned();
                *s = replaced;
                for _ in 0..n {
                    out.push(Redaction {
                        kind: "home-path".into(),
                        place: place.clone(),
                        replacement: "~".into(),
                        hint: "home directory".into(),
                    });
                }
            }
        }
    }
}

/// Replace capture `group` of every match of `re` in `s`.
fn replace_group(
    s: &mut String,
    re: &Regex,
    group: usize,
    kind: &str,
    place: &RedactionPlace,
    check: fn(&str) -> bool,
    out: &mut Vec<Redaction>,
) {
    if !re.is_match(s) {
        return;
    }
    let replacement = format!("[REDACTED:{kind}]");
    let mut result = String::with_capacity(s.len());
    let mut last = 0;
    for caps in re.captures_iter(s) {
        let Some(m) = caps.get(group) else { continue };
        if m.as_str().is_empty() || m.as_str().starts_with("[REDACTED:") || !check(m.as_str()) {
            continue;
        }
        result.push_str(&s[last..m.start()]);
        result.push_str(&replacement);
        last = m.end();
        out.push(Redaction {
            kind: kind.to_string(),
            place: place.clone(),
            replacement: replacement.clone(),
            hint: mask(m.as_str()),
        });
    }
    result.push_str(&s[last..]);
    *s = result;
}

fn always(_: &str) -> bool {
    true
}

/// The value of `password = ...`: a secret has a digit or a symbol, or is
/// long; `password: string` or `token = getToken()` are code, not secrets.
fn looks_secret(v: &str) -> bool {
    if v.contains('(') || v.starts_with('$') || v.starts_with('{') || v.starts_with('<') {
        return false;
    }
    let symbols = v
        .chars()
        .any(|c| !c.is_ascii_alphanumeric() && c != '_' && c != '.');
    v.chars().any(|c| c.is_ascii_digit()) || symbols || v.len() >= 16
}

/// A hint of a secret that does not reveal it: its first four characters
/// (usually the public prefix) and its length.
pub fn mask(secret: &str) -> String {
    let n = secret.chars().count();
    if n < 12 {
        return format!("{n} characters");
    }
    let head: String = secret.chars().take(4).collect();
    format!("{head}… ({n} characters)")
}

/// `.env`, `.env.local`, `prod.env`, `.envrc`: files of `KEY=value` lines.
pub fn is_env_file(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name == ".env" || name.starts_with(".env.") || name.ends_with(".env") || name == ".envrc"
}
