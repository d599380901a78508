//! Compiled rules: one config-facing [`PermissionRule`] plus where it came from
//! and a pre-built matcher. Matching here is pure: it takes already-canonical
//! inputs ([`PathForm`], words, [`UrlForm`]).

use std::fmt;

use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobMatcher};
use mia_protocol::{PermissionAction, PermissionRule};
use serde::Serialize;
use unicode_normalization::UnicodeNormalization;

use crate::error::RuleError;
use crate::readonly;

/// Where a compiled rule sits in the checked order (top to bottom).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    /// Built-in invariants: nothing relaxes them.
    Invariant,
    /// "always"/"never" answers given in this session.
    Session,
    /// "always for this project" approvals (persisted in the store).
    ProjectApproval,
    /// `agent.<name>.permissions` from config.
    Agent,
    /// The deny/ask rules of the agent's built-in ruleset.
    AgentRestriction,
    /// Project config (`mia-code.json` / `.mia-code.json`).
    Project,
    /// Global config (`~/.config/mia-code/config.json`, `~/.mia-code.json`).
    Global,
    /// Built-in safe defaults for every agent (credential stores and the
    /// first fetch of each host ask): below user configuration and answers,
    /// which can lift them; above the agent's built-in grants.
    SafeDefault,
    /// The allow rules (and final catch-all) of the agent's built-in ruleset.
    AgentGrant,
    /// Built-in defaults (spec 074): allow reads, ask for writes and bash.
    Default,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Invariant => "invariant",
            Self::Session => "session",
            Self::ProjectApproval => "project-approval",
            Self::Agent => "agent",
            Self::AgentRestriction => "agent-restriction",
            Self::Project => "project",
            Self::Global => "global",
            Self::SafeDefault => "safe-default",
            Self::AgentGrant => "agent-grant",
            Self::Default => "default",
        }
    }

    /// Layers that only ever tighten: a stricter match below still applies.
    pub fn is_floor(self) -> bool {
        matches!(self, Self::Invariant | Self::SafeDefault)
    }

    /// Rules of this layer come from user configuration or answers (and are linted).
    pub fn is_user(self) -> bool {
        matches!(
            self,
            Self::Session | Self::ProjectApproval | Self::Agent | Self::Project | Self::Global
        )
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A path in the forms rules are matched against (produced by [`crate::path`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathForm {
    /// Absolute path, `/`-separated, NFC-normalised.
    pub abs: String,
    /// Path relative to the project root when the path is inside it (`""` for the root).
    pub rel: Option<String>,
    /// Compare case-insensitively (the file system is case-insensitive).
    pub case_insensitive: bool,
    /// Components of `rel` (or of `abs` when outside the project), precomputed.
    #[serde(skip)]
    components: Vec<String>,
    /// Bit set of the (ASCII-lowercased) last bytes of the components: a quick
    /// reject for suffix and literal component patterns.
    #[serde(skip)]
    last_bytes: u64,
    /// Same for the second-to-last bytes.
    #[serde(skip)]
    second_last_bytes: u64,
}

fn byte_bit(b: u8) -> u64 {
    1u64 << (b.to_ascii_lowercase() % 64)
}

impl PathForm {
    pub fn new(abs: String, rel: Option<String>, case_insensitive: bool) -> Self {
        let components: Vec<String> = rel
            .as_deref()
            .unwrap_or(&abs)
            .split('/')
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect();
        let last_bytes = components
            .iter()
            .filter_map(|c| c.as_bytes().last())
            .fold(0u64, |m, b| m | byte_bit(*b));
        let second_last_bytes = components
            .iter()
            .filter_map(|c| c.as_bytes().iter().rev().nth(1))
            .fold(0u64, |m, b| m | byte_bit(*b));
        Self {
            abs,
            rel,
            case_insensitive,
            components,
            last_bytes,
            second_last_bytes,
        }
    }
}

/// A URL in the forms fetch rules are matched against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UrlForm {
    /// `scheme://host[:port]/path[?query]`, host lowercased, userinfo and fragment removed.
    pub full: String,
    /// Lowercased host name.
    pub host: String,
}

/// What a rule pattern is matched against.
#[derive(Debug, Clone, Copy)]
pub enum MatchInput<'a> {
    /// The request has no target (e.g. `plan_exit`); only pattern-less rules match.
    Nothing,
    Path(&'a PathForm),
    /// The words of one simple shell command.
    Words(&'a [String]),
    Url(&'a UrlForm),
    Text(&'a str),
}

/// A validated glob whose matcher (a regex) is only built when first needed:
/// most patterns are decided by the fast paths, and compiling every regex up
/// front made `Policy::compile` cost milliseconds.
#[derive(Debug, Clone)]
struct LazyGlob {
    glob: Glob,
    matcher: OnceLock<GlobMatcher>,
}

impl LazyGlob {
    fn new(glob: Glob) -> Self {
        Self {
            glob,
            matcher: OnceLock::new(),
        }
    }

    fn is_match(&self, s: &str) -> bool {
        self.matcher
            .get_or_init(|| self.glob.compile_matcher())
            .is_match(s)
    }
}

#[derive(Debug, Clone)]
enum WordTok {
    Any,
    Lit(String),
    Glob(LazyGlob),
}

#[derive(Debug, Clone)]
struct WordPattern {
    toks: Vec<WordTok>,
}

impl WordPattern {
    fn compile(p: &str) -> Result<Self, String> {
        let mut toks: Vec<WordTok> = Vec::new();
        for t in p.split_whitespace() {
            if t == "*" {
                toks.push(WordTok::Any);
            } else if t.contains(['*', '?', '[', '{']) {
                let g = GlobBuilder::new(t)
                    .literal_separator(false)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| format!("bad word pattern {t:?}: {e}"))?;
                toks.push(WordTok::Glob(LazyGlob::new(g)));
            } else {
                toks.push(WordTok::Lit(t.to_string()));
            }
        }
        // A trailing `*` is optional: patterns match a prefix of the words.
        while matches!(toks.last(), Some(WordTok::Any)) {
            toks.pop();
        }
        Ok(Self { toks })
    }

    fn matches(&self, words: &[String]) -> bool {
        if words.len() < self.toks.len() {
            return false;
        }
        self.toks.iter().zip(words).all(|(t, w)| match t {
            WordTok::Any => true,
            WordTok::Lit(l) => l == w,
            WordTok::Glob(g) => g.is_match(w),
        })
    }

    fn covers(&self, other: &WordPattern) -> bool {
        if other.toks.len() < self.toks.len() {
            return false;
        }
        self.toks
            .iter()
            .zip(&other.toks)
            .all(|(a, b)| match (a, b) {
                (WordTok::Any, _) => true,
                (WordTok::Lit(x), WordTok::Lit(y)) => x == y,
                (WordTok::Glob(g), WordTok::Lit(y)) => g.is_match(y),
                _ => false,
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// `/abs/**` or `~/x`: matched against the absolute path.
    Abs,
    /// Contains a `/`: matched against the project-relative path.
    Rel,
    /// No `/`: matched against every path component (gitignore-like), so
    /// `*.env` matches `config/prod.env` and `node_modules` matches everything below it.
    Component,
}

#[derive(Debug, Clone)]
struct PathPattern {
    anchor: Anchor,
    /// Absolute without a drive (`/etc/**`, not `//srv/x` or `C:/x`).
    driveless: bool,
    fast: Fast,
    cs: LazyGlob,
    ci: LazyGlob,
}

/// Shapes matched without the regex engine (same results as the glob).
#[derive(Debug, Clone)]
enum Fast {
    /// No glob characters: equality.
    Literal(String),
    /// `*X` (X without `/` or glob characters): ends with X.
    Suffix(String),
    /// `X/**` (X without glob characters): starts with `X/`.
    Prefix(String),
    /// Anything else: the regex decides, after a check of the literal text
    /// before the first and after the last glob character (necessary conditions).
    Regex { prefix: String, suffix: String },
}

fn has_meta(s: &str) -> bool {
    s.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// Byte equality without a library call (the compared strings are short).
#[inline]
fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

fn ends_with_ci(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.is_char_boundary(s.len() - suffix.len())
        && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

fn starts_with_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

impl Fast {
    fn classify(pat: &str) -> Self {
        if !has_meta(pat) {
            Self::Literal(pat.to_string())
        } else if let Some(rest) = pat
            .strip_prefix('*')
            .filter(|r| !has_meta(r) && !r.contains('/'))
        {
            Self::Suffix(rest.to_string())
        } else if let Some(pre) = pat
            .strip_suffix("/**")
            .filter(|p| !has_meta(p) && !p.is_empty())
        {
            Self::Prefix(format!("{pre}/"))
        } else {
            let is_meta = |c: char| matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\');
            let prefix: String = pat.chars().take_while(|c| !is_meta(*c)).collect();
            let suffix: String = {
                let rev: Vec<char> = pat.chars().rev().take_while(|c| !is_meta(*c)).collect();
                rev.into_iter().rev().collect()
            };
            // `**/` can match zero directories (`**/x` matches `x`): drop a
            // separator next to the glob part so the conditions stay necessary.
            let prefix = prefix
                .strip_suffix('/')
                .map(str::to_string)
                .unwrap_or(prefix);
            let suffix = suffix
                .strip_prefix('/')
                .map(str::to_string)
                .unwrap_or(suffix);
            Self::Regex { prefix, suffix }
        }
    }

    /// `None`: not decidable here (use the regex).
    fn matches(&self, s: &str, ci: bool) -> Option<bool> {
        if ci && !s.is_ascii() {
            return None;
        }
        if let Self::Regex { prefix, suffix } = self {
            let ok = if ci {
                if !prefix.is_ascii() || !suffix.is_ascii() {
                    return None;
                }
                starts_with_ci(s, prefix) && ends_with_ci(s, suffix)
            } else {
                let (b, p, x) = (s.as_bytes(), prefix.as_bytes(), suffix.as_bytes());
                b.len() >= p.len()
                    && b.len() >= x.len()
                    && bytes_eq(&b[..p.len()], p)
                    && bytes_eq(&b[b.len() - x.len()..], x)
            };
            return if ok { None } else { Some(false) };
        }
        let pattern_ascii = match self {
            Self::Literal(x) | Self::Suffix(x) | Self::Prefix(x) => x.is_ascii(),
            Self::Regex { .. } => false,
        };
        if ci && !pattern_ascii {
            return None;
        }
        Some(match (self, ci) {
            (Self::Literal(l), false) => s == l,
            (Self::Literal(l), true) => s.eq_ignore_ascii_case(l),
            (Self::Suffix(x), false) => {
                // Cheap last-byte check before the comparison call.
                let (s, x) = (s.as_bytes(), x.as_bytes());
                s.len() >= x.len() && bytes_eq(&s[s.len() - x.len()..], x)
            }
            (Self::Suffix(x), true) => ends_with_ci(s, x),
            (Self::Prefix(x), false) => {
                let (s, x) = (s.as_bytes(), x.as_bytes());
                s.len() >= x.len() && bytes_eq(&s[..x.len()], x)
            }
            (Self::Prefix(x), true) => starts_with_ci(s, x),
            (Self::Regex { .. }, _) => return None,
        })
    }
}

/// `C:/x` → `/x` (a Windows path's drive dropped); `None` without a drive.
fn drive_stripped(abs: &str) -> Option<&str> {
    let b = abs.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/').then(|| &abs[2..])
}

impl PathPattern {
    fn compile(p: &str, home: Option<&str>) -> Result<Self, String> {
        let mut pat = p.nfc().collect::<String>();
        // `dir/` means everything below `dir`.
        if pat.len() > 1 && pat.ends_with('/') {
            pat.push_str("**");
        }
        // A Windows path (`C:\\Users\\me\\**`, `\\\\?\\C:\\x`): its backslashes are
        // separators, not glob escapes, and it is matched in its one form.
        if crate::path::is_windows_path(&pat) {
            pat = crate::path::windows_form(&pat);
        }
        let anchor = if let Some(rest) = pat.strip_prefix("~/") {
            let home = home.ok_or_else(|| {
                "pattern starts with `~/` but no home directory is known".to_string()
            })?;
            let home = if crate::path::is_windows_path(home) {
                crate::path::windows_form(home)
            } else {
                home.to_string()
            };
            pat = format!("{}/{}", home.trim_end_matches('/'), rest);
            Anchor::Abs
        } else if pat.starts_with('/') || crate::path::is_windows_path(&pat) {
            Anchor::Abs
        } else if pat.contains('/') {
            while let Some(rest) = pat.strip_prefix("./") {
                pat = rest.to_string();
            }
            Anchor::Rel
        } else {
            Anchor::Component
        };
        let build = |ci: bool| {
            GlobBuilder::new(&pat)
                .literal_separator(true)
                .backslash_escape(true)
                .case_insensitive(ci)
                .build()
                .map(LazyGlob::new)
                .map_err(|e| format!("bad glob {p:?}: {e}"))
        };
        Ok(Self {
            anchor,
            driveless: pat.starts_with('/') && !pat.starts_with("//"),
            fast: Fast::classify(&pat),
            cs: build(false)?,
            ci: build(true)?,
        })
    }

    fn matches(&self, path: &PathForm) -> bool {
        let g = if path.case_insensitive {
            &self.ci
        } else {
            &self.cs
        };
        let ci = path.case_insensitive;
        let m = |s: &str| self.fast.matches(s, ci).unwrap_or_else(|| g.is_match(s));
        match self.anchor {
            // `/etc/**` names that directory on every drive: Windows reads a
            // path without a drive (`/etc/passwd`) on the current one.
            Anchor::Abs => {
                m(&path.abs) || (self.driveless && drive_stripped(&path.abs).is_some_and(m))
            }
            Anchor::Rel => path.rel.as_deref().is_some_and(m),
            Anchor::Component => {
                if let Fast::Suffix(x) | Fast::Literal(x) = &self.fast {
                    let mut rev = x.as_bytes().iter().rev();
                    if rev
                        .next()
                        .is_some_and(|b| path.last_bytes & byte_bit(*b) == 0)
                        || rev
                            .next()
                            .is_some_and(|b| path.second_last_bytes & byte_bit(*b) == 0)
                    {
                        return false;
                    }
                }
                path.components.iter().any(|c| m(c))
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Matcher {
    /// No pattern, `*` or `**`.
    Any,
    /// Built-in: a shell command on the read-only list (plan/explore).
    ReadOnlyCommand,
    /// Built-in: a shell command NOT on the read-only list.
    NotReadOnlyCommand,
    /// Pattern of a `bash` rule.
    Words(WordPattern),
    /// Pattern of a `fetch`/`web_fetch` rule: with `://` on the whole URL, else on the host.
    Url { full: bool, g: LazyGlob },
    /// Any other permission: path glob, plus word/text forms for non-path inputs.
    General {
        path: Box<PathPattern>,
        text: LazyGlob,
        words: WordPattern,
    },
}

/// Longest accepted pattern (keeps every glob's regex small).
pub const MAX_PATTERN_LEN: usize = 4096;

/// Built-in marker patterns understood only in built-in rulesets.
pub(crate) const READ_ONLY_MARKER: &str = "<read-only command>";
pub(crate) const NOT_READ_ONLY_MARKER: &str = "<not a read-only command>";

fn is_fetch_permission(p: &str) -> bool {
    matches!(p, "fetch" | "web_fetch" | "webfetch")
}

/// A rule ready to be matched, remembering its layer and source.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub rule: PermissionRule,
    pub layer: Layer,
    /// A config file path, or `built-in`.
    pub source: String,
    /// Position of the rule in its source list (zero-based).
    pub source_index: usize,
    exact: bool,
    perm_glob: Option<GlobMatcher>,
    matcher: Matcher,
}

impl CompiledRule {
    /// Compile one rule. `home` expands `~/` in path patterns.
    pub fn compile(
        rule: PermissionRule,
        layer: Layer,
        source: &str,
        source_index: usize,
        home: Option<&str>,
    ) -> Result<Self, RuleError> {
        let err = |reason: String| RuleError {
            source_label: source.to_string(),
            index: source_index,
            permission: rule.permission.clone(),
            reason,
        };
        let perm = rule.permission.trim();
        if perm.is_empty() {
            return Err(err(
                "empty permission name; use a tool id such as `read` or `*` for all".into(),
            ));
        }
        if perm != rule.permission {
            return Err(err(format!(
                "permission {:?} has surrounding spaces",
                rule.permission
            )));
        }
        let perm_glob = if perm != "*" && perm.contains(['*', '?', '[', '{']) {
            Some(
                GlobBuilder::new(perm)
                    .build()
                    .map_err(|e| err(format!("bad permission pattern {perm:?}: {e}")))?
                    .compile_matcher(),
            )
        } else {
            None
        };
        if rule
            .pattern
            .as_ref()
            .is_some_and(|p| p.len() > MAX_PATTERN_LEN)
        {
            return Err(err(format!(
                "pattern is longer than {MAX_PATTERN_LEN} characters; split it into several rules"
            )));
        }
        let matcher = match rule.pattern.as_deref() {
            None => Matcher::Any,
            Some(p) if p.trim().is_empty() => {
                return Err(err(
                    "empty pattern; remove the `pattern` field to match everything".into(),
                ));
            }
            Some(p) if matches!(p.trim(), "*" | "**") => Matcher::Any,
            Some(READ_ONLY_MARKER) if source == crate::agents::BUILT_IN => Matcher::ReadOnlyCommand,
            Some(NOT_READ_ONLY_MARKER) if source == crate::agents::BUILT_IN => {
                Matcher::NotReadOnlyCommand
            }
            Some(p) if perm == "bash" => Matcher::Words(WordPattern::compile(p).map_err(err)?),
            Some(p) if is_fetch_permission(perm) => {
                let full = p.contains("://");
                let g = GlobBuilder::new(&if full {
                    p.to_string()
                } else {
                    p.to_lowercase()
                })
                .literal_separator(false)
                .build()
                .map_err(|e| err(format!("bad URL pattern {p:?}: {e}")))?;
                let g = LazyGlob::new(g);
                Matcher::Url { full, g }
            }
            Some(p) => Matcher::General {
                path: Box::new(PathPattern::compile(p, home).map_err(err)?),
                text: GlobBuilder::new(p)
                    .literal_separator(false)
                    .build()
                    .map(LazyGlob::new)
                    .map_err(|e| err(format!("bad glob {p:?}: {e}")))?,
                words: WordPattern::compile(p).map_err(err)?,
            },
        };
        Ok(Self {
            exact: perm != "*" && perm_glob.is_none(),
            perm_glob,
            matcher,
            rule,
            layer,
            source: source.to_string(),
            source_index,
        })
    }

    /// Could this rule match a path at or below the absolute directory `dir`?
    /// Only rules anchored at an absolute path can be ruled out; every other
    /// rule (relative, component, non-path) may.
    pub fn reaches_under(&self, dir: &str) -> bool {
        let Matcher::General { path, .. } = &self.matcher else {
            return true;
        };
        if path.anchor != Anchor::Abs {
            return true;
        }
        let prefix = match &path.fast {
            Fast::Literal(s) => s.as_str(),
            Fast::Prefix(p) => p.as_str(),
            Fast::Regex { prefix, .. } => prefix.as_str(),
            Fast::Suffix(_) => return true,
        };
        let dir = dir.trim_end_matches('/');
        prefix.starts_with(dir) || dir.starts_with(prefix.trim_end_matches('/'))
    }

    /// A bash rule naming one program (`allow bash rg *`), as opposed to a
    /// broad one (`allow bash`, `allow bash *`, `allow *`).
    pub fn names_a_command(&self) -> bool {
        match &self.matcher {
            Matcher::Words(_) => self
                .rule
                .pattern
                .as_deref()
                .and_then(|p| p.split_whitespace().next())
                .is_some_and(|w| !w.contains(['*', '?', '[', '{'])),
            _ => false,
        }
    }

    pub fn action(&self) -> PermissionAction {
        self.rule.action
    }

    /// The exact permission name this rule applies to (`None` for `*` and globs).
    pub fn exact_permission(&self) -> Option<&str> {
        self.exact.then_some(self.rule.permission.as_str())
    }

    /// Match the pattern only (the caller has checked the permission). Pure.
    pub fn matches_input(&self, input: MatchInput<'_>) -> bool {
        self.matches_unchecked(input)
    }

    /// Does this rule match every target (no pattern, `*` or `**`)?
    pub fn matches_every_target(&self) -> bool {
        matches!(self.matcher, Matcher::Any)
    }

    /// Does this rule's permission name cover `permission`?
    pub fn matches_permission(&self, permission: &str) -> bool {
        let p = self.rule.permission.as_str();
        p == "*"
            || p == permission
            || self
                .perm_glob
                .as_ref()
                .is_some_and(|g| g.is_match(permission))
    }

    /// Does this rule match the request? Pure.
    pub fn matches(&self, permission: &str, input: MatchInput<'_>) -> bool {
        self.matches_permission(permission) && self.matches_unchecked(input)
    }

    fn matches_unchecked(&self, input: MatchInput<'_>) -> bool {
        match (&self.matcher, input) {
            (Matcher::Any, _) => true,
            (_, MatchInput::Nothing) => false,
            (Matcher::ReadOnlyCommand, MatchInput::Words(w)) => readonly::is_read_only(w),
            (Matcher::NotReadOnlyCommand, MatchInput::Words(w)) => !readonly::is_read_only(w),
            (Matcher::ReadOnlyCommand | Matcher::NotReadOnlyCommand, _) => false,
            (Matcher::Words(wp), MatchInput::Words(w)) => wp.matches(w),
            (Matcher::Words(wp), MatchInput::Text(t)) => {
                let w: Vec<String> = t.split_whitespace().map(str::to_string).collect();
                wp.matches(&w)
            }
            (Matcher::Words(_), _) => false,
            (Matcher::Url { full, g }, MatchInput::Url(u)) => {
                if *full {
                    g.is_match(&u.full)
                } else {
                    g.is_match(&u.host)
                }
            }
            (Matcher::Url { g, .. }, MatchInput::Text(t)) => g.is_match(t),
            (Matcher::Url { .. }, _) => false,
            (Matcher::General { path, .. }, MatchInput::Path(p)) => path.matches(p),
            (Matcher::General { words, .. }, MatchInput::Words(w)) => words.matches(w),
            (Matcher::General { text, .. }, MatchInput::Url(u)) => text.is_match(&u.full),
            (Matcher::General { text, .. }, MatchInput::Text(t)) => text.is_match(t),
        }
    }

    /// Does this (earlier) rule match every request that `later` matches?
    pub fn covers(&self, later: &CompiledRule) -> bool {
        let perm_ok = self.rule.permission == "*"
            || self.rule.permission == later.rule.permission
            || (later.perm_glob.is_none()
                && self
                    .perm_glob
                    .as_ref()
                    .is_some_and(|g| g.is_match(&later.rule.permission)));
        if !perm_ok {
            return false;
        }
        if self.rule.pattern.is_some() && self.rule.pattern == later.rule.pattern {
            return true;
        }
        match (&self.matcher, &later.matcher) {
            (Matcher::Any, _) => true,
            (_, Matcher::Any) => false,
            (Matcher::Words(a), Matcher::Words(b)) => a.covers(b),
            (Matcher::General { path: a, .. }, Matcher::General { path: b, .. }) => {
                let lp = later.rule.pattern.as_deref().unwrap_or("");
                a.anchor == b.anchor
                    && a.anchor != Anchor::Abs
                    && !lp.contains(['*', '?', '[', '{', '\\'])
                    && {
                        let lp = lp.trim_start_matches("./");
                        match a.anchor {
                            Anchor::Component => lp.split('/').any(|c| a.cs.is_match(c)),
                            _ => a.cs.is_match(lp),
                        }
                    }
            }
            _ => false,
        }
    }
}

impl fmt::Display for CompiledRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(rel: &str, ci: bool) -> PathForm {
        PathForm::new(format!("/p/{rel}"), Some(rel.to_string()), ci)
    }

    /// The fast paths and prefilters agree with globset on every pair.
    #[test]
    fn fast_paths_agree_with_globset() {
        let patterns = [
            "*.env",
            "secrets/**",
            "Cargo.lock",
            "**/x",
            "**/test_*.py",
            "a/**/b",
            "src/**/gen_*.rs",
            "[Ss]ecret*",
            "*.min.*",
            "**/.env.*",
            "config/*.y?ml",
            "{a,b}/c",
            "caf\u{e9}.txt",
            "x\\*y",
            "docs/**/*.md",
            "**/*.{pem,key}",
            "/p/**",
            "/p/a/*",
        ];
        let paths = [
            "x",
            "a/x",
            "a/b",
            "a/c/b",
            "test_a.py",
            "t/test_b.py",
            "src/gen_a.rs",
            "src/q/gen_b.rs",
            "Secret.txt",
            "secrets/k",
            "app.min.js",
            ".env.local",
            "d/.env.prod",
            "config/a.yml",
            "config/a.yaml",
            "a/c",
            "b/c",
            "caf\u{e9}.txt",
            "CAF\u{c9}.TXT",
            "x*y",
            "docs/a/b.md",
            "k.pem",
            "z/k.key",
            ".ENV",
            "Cargo.lock",
            "cargo.LOCK",
            "a.env",
        ];
        for p in patterns {
            for ci in [false, true] {
                let pat = PathPattern::compile(p, None).unwrap();
                let g = GlobBuilder::new(p)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .case_insensitive(ci)
                    .build()
                    .unwrap()
                    .compile_matcher();
                for path in paths {
                    let f = form(path, ci);
                    let expected = match pat.anchor {
                        Anchor::Abs => g.is_match(&f.abs),
                        Anchor::Rel => g.is_match(path),
                        Anchor::Component => path.split('/').any(|c| g.is_match(c)),
                    };
                    assert_eq!(
                        pat.matches(&f),
                        expected,
                        "pattern {p:?} path {path:?} ci {ci}"
                    );
                }
            }
        }
    }

    #[test]
    fn windows_paths_are_one_form_and_driveless_patterns_match_every_drive() {
        use crate::path::windows_form;
        for (spelled, want) in [
            (r"\\?\C:\Users\me\x.txt", "C:/Users/me/x.txt"),
            (r"\\.\c:\x", "C:/x"),
            (r"\\?\UNC\srv\share\x", "//srv/share/x"),
            (r"\\srv\share\x", "//srv/share/x"),
            (r"d:\proj\src", "D:/proj/src"),
            ("C:/already/slashed", "C:/already/slashed"),
        ] {
            assert_eq!(windows_form(spelled), want, "{spelled}");
        }
        let abs = |a: &str| PathForm::new(a.to_string(), None, true);
        // `/etc/**` on Windows: that directory on the drive the path is on.
        let etc = PathPattern::compile("/etc/**", None).unwrap();
        assert!(etc.matches(&abs("C:/etc/passwd")));
        assert!(etc.matches(&abs("D:/etc/passwd")));
        assert!(!etc.matches(&abs("C:/proj/etc/passwd")));
        assert!(!etc.matches(&abs("//srv/share/etc/passwd")));
        // A Windows pattern's backslashes are separators; case is folded.
        let ssh = PathPattern::compile(r"C:\Users\Me\.ssh\**", None).unwrap();
        assert!(ssh.matches(&abs("C:/users/me/.ssh/id_rsa")));
        // `~/` with a verbatim home is the plain form.
        let home = PathPattern::compile("~/.aws/**", Some(r"\\?\C:\Users\me")).unwrap();
        assert!(home.matches(&abs("C:/Users/me/.aws/credentials")));
        assert!(!home.matches(&abs("C:/Users/other/.aws/credentials")));
    }
}
