//! Secret detection and redaction of a share payload.
//!
//! Applied to the payload itself (never only to what is displayed): every
//! string that leaves the machine — the title, text, reasoning, tool call
//! arguments (recursively), tool output, errors, summaries, diff file names
//! and patches — goes through the same detectors, in order:
//! 1. the built-in token and command rules ([`RULES`], keyed by gitleaks'
//!    rule ids) on the line-joined view of the text, for tokens wrapped
//!    across lines or split by a `\` continuation (only matches that span a
//!    joined break count there; each piece of the original is replaced);
//! 2. all the built-in rules on the text as it is, in the table's order
//!    (a rule with keywords only on a text that has one of them);
//! 3. every `KEY=value` value in the output of a tool that read an
//!    `.env`-style file,
//! 4. the user's `share.redactPatterns`,
//! 5. the user's home directory, replaced by `~`.
//!
//! A title that is the cut of the first user message (see [`title_from`]) is
//! cut again from the redacted message, so no part of a key cut short
//! survives in it; then it is redacted like any text.
//!
//! A replacement is `[REDACTED:<rule id>]`; the [`Redaction`] list names each
//! with its place and a masked hint, which is what the preview highlights.

use std::collections::HashSet;
use std::ops::Range;

use mia_protocol::{Redaction, RedactionPlace, SharePayload, SharedPart};
use regex::{Captures, Match, Regex};
use serde_json::Value;

use crate::ShareError;
use crate::joined::Joined;
use crate::keywords::Keywords;
use crate::rules::{Check, RULES, Rule, Shape};

/// An env-file line: `KEY=value` (optionally `export`, quoted, or after
/// the line number the read tool puts in front).
const ENV_LINE: &str = r#"(?m)^(\s*(?:\d+[\t:|]\s*)?(?:export\s+)?[A-Za-z_][A-Za-z0-9_.\-]*\s*=\s*)(["']?)([^"'\r\n]+)"#;

/// A title longer than this many characters is cut (as the session's title
/// is made from its first message).
pub const TITLE_CHARS: usize = 60;

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

/// A built-in rule with its expressions compiled.
#[derive(Clone)]
struct Compiled {
    rule: &'static Rule,
    patterns: Vec<(Regex, Check)>,
}

impl Compiled {
    /// Whether a text in which the keywords `hits` were found has one of
    /// the rule's keywords.
    fn wanted(&self, hits: &[&str]) -> bool {
        let words = self.rule.keywords;
        words.is_empty() || words.iter().any(|k| hits.contains(k))
    }
}

#[derive(Clone)]
pub struct Redactor {
    rules: Vec<Compiled>,
    /// Every rule's keywords: one pass over a text says which rules are
    /// worth trying.
    keywords: Keywords,
    patterns: Vec<Regex>,
    env_line: Regex,
    home: Vec<Regex>,
    env_file_calls: HashSet<String>,
}

/// A replacement to make in the original text, found in the joined view.
struct Edit {
    range: Range<usize>,
    kind: &'static str,
}

impl Redactor {
    pub fn new(opts: RedactOptions) -> Result<Self, ShareError> {
        let mut rules = Vec::new();
        for rule in RULES {
            let mut patterns = Vec::new();
            for p in rule.patterns {
                // `\b` is Unicode-aware by default, which keeps the regex
                // engine off its fast path on non-ASCII text; the rules only
                // need ASCII word boundaries.
                let src = p.regex.replace(r"\b", r"(?-u:\b)");
                let re = Regex::new(&src)
                    .map_err(|e| ShareError::Internal(format!("{}: {e}", rule.id)))?;
                patterns.push((re, p.check));
            }
            rules.push(Compiled { rule, patterns });
        }
        let keywords = Keywords::new(RULES.iter().flat_map(|r| r.keywords.iter().copied()));
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
            rules,
            keywords,
            patterns,
            env_line: Regex::new(ENV_LINE).map_err(|e| ShareError::Internal(e.to_string()))?,
            home,
            env_file_calls: opts.env_file_calls,
        })
    }

    /// This redactor without the built-in rule `id`: what the other rules
    /// catch (the tests show each fixture needs its rule).
    #[doc(hidden)]
    pub fn without(mut self, id: &str) -> Self {
        self.rules.retain(|c| c.rule.id != id);
        self
    }

    /// Redact the payload in place; returns every replacement made (the
    /// title's first).
    pub fn redact(&self, payload: &mut SharePayload) -> Vec<Redaction> {
        let source = title_source(payload);
        let mut body = Vec::new();
        self.body(payload, &mut body);
        let mut out = Vec::new();
        let recut = source.is_some_and(|(m, p)| recut_title(payload, m, p, &body, &mut out));
        self.text(
            &mut payload.session.title,
            &RedactionPlace::Title,
            false,
            &mut out,
        );
        if !recut {
            self.cut_tail(&mut payload.session.title, &mut out);
        }
        out.extend(body);
        out
    }

    /// Redact the messages and the diffs.
    fn body(&self, payload: &mut SharePayload, out: &mut Vec<Redaction>) {
        for m in &mut payload.messages {
            for (i, part) in m.parts.iter_mut().enumerate() {
                let place = RedactionPlace::Message {
                    message_id: m.id.clone(),
                    part: i,
                };
                match part {
                    SharedPart::Text { content }
                    | SharedPart::Reasoning { content }
                    | SharedPart::Summary { content } => self.text(content, &place, false, out),
                    SharedPart::Error { message } => self.text(message, &place, false, out),
                    SharedPart::ToolCall { args, .. } => self.value(args, &place, out),
                    SharedPart::ToolResult {
                        call_id, output, ..
                    } => {
                        let env = self.env_file_calls.contains(call_id.as_str());
                        self.text(output, &place, env, out);
                    }
                }
            }
        }
        for d in &mut payload.diffs {
            let place = RedactionPlace::Diff {
                file: d.file.clone(),
            };
            self.text(&mut d.file, &place, false, out);
            let env = is_env_file(&d.file);
            self.text(&mut d.patch, &place, env, out);
        }
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
        self.joined(s, place, out);
        self.rules_on(s, place, out);
        if env_file {
            replace(
                s,
                &self.env_line,
                "env-value",
                place,
                out,
                env_value,
                Check::Always,
            );
        }
        for (i, re) in self.patterns.iter().enumerate() {
            let kind = format!("pattern:{}", i + 1);
            replace(s, re, &kind, place, out, whole, Check::Always);
        }
        self.home(s, place, out);
    }

    /// The built-in rules on `s` as it is, in order.
    fn rules_on(&self, s: &mut String, place: &RedactionPlace, out: &mut Vec<Redaction>) {
        let hits = self.keywords.find(s);
        for c in self.rules.iter().filter(|c| c.wanted(&hits)) {
            for (re, check) in &c.patterns {
                replace(s, re, c.rule.id, place, out, secret_of, *check);
            }
        }
    }

    /// Tokens and commands that span a joined line break: found in the
    /// line-joined view, each piece replaced in `s`.
    fn joined(&self, s: &mut String, place: &RedactionPlace, out: &mut Vec<Redaction>) {
        let Some(view) = Joined::of(s) else { return };
        let mut taken: Vec<Range<usize>> = Vec::new();
        let mut edits: Vec<Edit> = Vec::new();
        for segment in view.segments() {
            let text = &view.text[segment.clone()];
            let hits = self.keywords.find(text);
            let rules = self
                .rules
                .iter()
                .filter(|c| c.rule.shape != Shape::Text && c.wanted(&hits));
            for c in rules {
                for (re, check) in &c.patterns {
                    for caps in re.captures_iter(text) {
                        let (Some(whole), Some(m)) = (caps.get(0), secret_of(&caps)) else {
                            continue;
                        };
                        let at = segment.start;
                        let (a, b) = (at + m.start(), at + m.end());
                        // A command's secret may sit on one line of a command
                        // continued over several: the match as a whole spans
                        // the break.
                        if !view.crosses(at + whole.start(), at + whole.end())
                            || m.as_str().contains("[REDACTED:")
                            || taken.iter().any(|t| t.start < b && a < t.end)
                            || !check.passes(m.as_str())
                        {
                            continue;
                        }
                        taken.push(a..b);
                        let kind = c.rule.id;
                        edits.extend(
                            view.pieces(a, b)
                                .into_iter()
                                .map(|range| Edit { range, kind }),
                        );
                        out.push(redaction(kind, place, m.as_str()));
                    }
                }
            }
        }
        edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
        for e in edits {
            s.replace_range(e.range, &format!("[REDACTED:{}]", e.kind));
        }
    }

    /// The user's home directory, replaced by `~`.
    fn home(&self, s: &mut String, place: &RedactionPlace, out: &mut Vec<Redaction>) {
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

    /// A title cut short (`…`) whose source message is not in the payload:
    /// when its last word is the start of a token (some token rule matches
    /// it once completed with random characters), that start is redacted.
    fn cut_tail(&self, title: &mut String, out: &mut Vec<Redaction>) {
        let Some(stem) = title.strip_suffix('…') else {
            return;
        };
        let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+');
        let from = stem
            .char_indices()
            .rev()
            .take_while(|(_, c)| word(*c))
            .last()
            .map_or(stem.len(), |(i, _)| i);
        let fragment = &stem[from..];
        if fragment.len() < 4 {
            return;
        }
        let lower = fragment.to_ascii_lowercase();
        let tokens = self.rules.iter().filter(|c| {
            c.rule.shape == Shape::Token
                && c.rule
                    .keywords
                    .iter()
                    .any(|k| lower.contains(k) || k.starts_with(lower.as_str()))
        });
        for c in tokens {
            for (re, check) in &c.patterns {
                if let Some(at) = completes(fragment, re, *check) {
                    let kind = c.rule.id;
                    out.push(redaction(kind, &RedactionPlace::Title, &fragment[at..]));
                    *title = format!("{}[REDACTED:{kind}]…", &stem[..from + at]);
                    return;
                }
            }
        }
    }
}

/// Random completions of a cut token: mixed-case alphanumerics, lower-case
/// hex, upper-case alphanumerics (what token alphabets are made of).
const PADS: [&str; 3] = [
    "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H4i5J6k7L8m9N0o1P2q3R4",
    "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b",
    "A1B2C3D4E5F6G7H8I9J0K1L2M3N4O5P6Q7R8S9T0U1V2W3X4Y5Z6A7B8C9D0E1F2G3H4I5J6K7L8M9N0O1P2Q3R4",
];

/// Where in `fragment` a match of `re` starts when `fragment`, completed
/// with some random characters, is a token `re` matches (and the match
/// covers the fragment's end).
fn completes(fragment: &str, re: &Regex, check: Check) -> Option<usize> {
    for pad in PADS {
        for n in 1..=pad.len() {
            let probe = format!("{fragment}{}", &pad[..n]);
            let found = re.captures_iter(&probe).find_map(|caps| {
                let m = secret_of(&caps)?;
                (m.start() < fragment.len()
                    && m.end() >= fragment.len()
                    && check.passes(m.as_str()))
                .then_some(m.start())
            });
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

/// The secret of a rule's match: its first capture group that took part,
/// or the whole match.
fn secret_of<'h>(caps: &Captures<'h>) -> Option<Match<'h>> {
    (1..caps.len())
        .find_map(|i| caps.get(i))
        .or_else(|| caps.get(0))
}

/// The value of an env-file line.
fn env_value<'h>(caps: &Captures<'h>) -> Option<Match<'h>> {
    caps.get(3)
}

/// The whole match (of a user's pattern).
fn whole<'h>(caps: &Captures<'h>) -> Option<Match<'h>> {
    caps.get(0)
}

fn redaction(kind: &str, place: &RedactionPlace, secret: &str) -> Redaction {
    Redaction {
        kind: kind.to_string(),
        place: place.clone(),
        replacement: format!("[REDACTED:{kind}]"),
        hint: mask(secret),
    }
}

/// Replace the secret `pick` takes from every match of `re` in `s`, when it
/// passes `check`.
fn replace(
    s: &mut String,
    re: &Regex,
    kind: &str,
    place: &RedactionPlace,
    out: &mut Vec<Redaction>,
    pick: for<'h> fn(&Captures<'h>) -> Option<Match<'h>>,
    check: Check,
) {
    let replacement = format!("[REDACTED:{kind}]");
    let mut result = String::new();
    let mut last = 0;
    for caps in re.captures_iter(s) {
        let Some(m) = pick(&caps) else { continue };
        if m.as_str().is_empty()
            || m.as_str().starts_with("[REDACTED:")
            || !check.passes(m.as_str())
        {
            continue;
        }
        result.push_str(&s[last..m.start()]);
        result.push_str(&replacement);
        last = m.end();
        out.push(redaction(kind, place, m.as_str()));
    }
    if last > 0 {
        result.push_str(&s[last..]);
        *s = result;
    }
}

/// The first user message's first text part, when the title is its cut:
/// (message index, part index).
fn title_source(payload: &SharePayload) -> Option<(usize, usize)> {
    let title = &payload.session.title;
    if title.is_empty() {
        return None;
    }
    let (m, msg) = payload
        .messages
        .iter()
        .enumerate()
        .find(|(_, m)| m.role == "user")?;
    let (p, text) = msg.parts.iter().enumerate().find_map(|(i, p)| match p {
        SharedPart::Text { content } => Some((i, content)),
        _ => None,
    })?;
    (title_from(text) == *title).then_some((m, p))
}

/// Cut the title again from the (redacted) text part `p` of message `m`.
/// The title's redactions are those of the part whose replacement shows in
/// the new title. Returns false when that part is gone.
fn recut_title(
    payload: &mut SharePayload,
    m: usize,
    p: usize,
    body: &[Redaction],
    out: &mut Vec<Redaction>,
) -> bool {
    let Some(msg) = payload.messages.get(m) else {
        return false;
    };
    let Some(SharedPart::Text { content }) = msg.parts.get(p) else {
        return false;
    };
    let title = title_from(content);
    if title == payload.session.title {
        return true;
    }
    let stem = title.strip_suffix('…').unwrap_or(&title);
    let cut_label = stem
        .rfind('[')
        .map(|i| &stem[i..])
        .filter(|l| !l.contains(']'));
    let place = RedactionPlace::Message {
        message_id: msg.id.clone(),
        part: p,
    };
    let mut seen = HashSet::new();
    for r in body.iter().filter(|r| r.place == place) {
        let shown = stem.contains(&r.replacement)
            || cut_label.is_some_and(|l| r.replacement.starts_with(l));
        if shown && seen.insert((r.kind.clone(), r.hint.clone())) {
            out.push(Redaction {
                place: RedactionPlace::Title,
                ..r.clone()
            });
        }
    }
    payload.session.title = title;
    true
}

/// A session title from a first message: its first non-empty line, at most
/// [`TITLE_CHARS`] characters, then `…` when it was longer (the rule
/// mia-core names a new session by).
pub fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title = title.trim_end().to_string();
        title.push('…');
    }
    title
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Without the line-joined view, the second line of a wrapped key and
    /// the password of a continued command get through.
    #[test]
    fn wrapped_and_continued_secrets_need_the_joined_view() {
        let r = Redactor::new(RedactOptions::default()).unwrap();
        let key = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");
        // Wrapped at 76 columns (base64's width).
        let wrapped = format!("{} {}\n{}\nmore", "x".repeat(63), &key[..12], &key[12..]);
        let continued = "mysql -h db \\\n  -u root \\\n  -pContinu3d shop".to_string();
        for (text, piece) in [(wrapped, &key[12..]), (continued, "Continu3d")] {
            let mut plain = text.clone();
            r.rules_on(&mut plain, &RedactionPlace::Title, &mut Vec::new());
            assert!(plain.contains(piece), "{plain}");
            let mut full = text.clone();
            let mut out = Vec::new();
            r.text(&mut full, &RedactionPlace::Title, false, &mut out);
            assert!(!full.contains(piece), "{full}");
            assert_eq!(out.len(), 1, "{out:?}");
        }
    }
}
