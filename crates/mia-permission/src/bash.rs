//! Shell command parsing: tree-sitter-bash reduces a command line to simple
//! commands ("segments") made of plain words, and records everything that
//! cannot be reduced to plain words (which can then never be auto-allowed).

use std::fmt;

use serde::Serialize;
use tree_sitter::{Node, Parser};

/// Commands longer than this are still parsed and every deny rule still
/// applies, but they can never be auto-allowed.
pub const MAX_AUTO_ALLOW_LEN: usize = 16 * 1024;
/// Nesting depth (substitutions, `bash -c`, wrappers) beyond which parsing stops (ask).
pub const MAX_DEPTH: usize = 24;
/// Past this many segments a command can no longer be auto-allowed (all are still judged).
pub const MAX_SEGMENTS: usize = 4096;
/// Longer commands are not given to the parser: they are split lexically
/// (every word still meets the deny rules) and always ask.
pub const MAX_PARSE_LEN: usize = 64 * 1024;
/// Lexical nesting (`$(`, `(`, `{`, backquotes) past which the parser is not
/// used: deeply nested input is where its time and memory grow fastest.
pub const MAX_LEXICAL_NESTING: usize = 64;
/// Time the parser may take for a command longer than [`MAX_AUTO_ALLOW_LEN`]
/// before it gives up (the lexical split: deny rules still apply, and such a
/// command asks anyway).
pub const PARSE_BUDGET: std::time::Duration = std::time::Duration::from_millis(40);

/// Why a segment cannot be auto-allowed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Opaque {
    CommandSubstitution,
    ProcessSubstitution,
    VariableExpansion,
    ArithmeticExpansion,
    AnsiCString,
    GlobPattern,
    Assignment,
    Redirection,
    Heredoc,
    Subshell,
    ControlFlow,
    Unsupported(String),
    ParseError,
    ControlCharacters,
    TooLong,
    TooDeep,
    TooManySegments,
    DynamicArguments,
    HiddenCode,
    ChangesDirectory,
    Empty,
}

impl fmt::Display for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::CommandSubstitution => "command substitution",
            Self::ProcessSubstitution => "process substitution",
            Self::VariableExpansion => "variable expansion",
            Self::ArithmeticExpansion => "arithmetic expansion",
            Self::AnsiCString => "$'...' string",
            Self::GlobPattern => "unquoted glob or brace pattern",
            Self::Assignment => "variable assignment",
            Self::Redirection => "redirection",
            Self::Heredoc => "heredoc or here-string",
            Self::Subshell => "subshell or command group",
            Self::ControlFlow => "control flow or function",
            Self::Unsupported(k) => return write!(f, "unsupported shell syntax ({k})"),
            Self::ParseError => "shell syntax the parser could not read",
            Self::ControlCharacters => "control or invisible characters",
            Self::TooLong => "command too long to auto-allow",
            Self::TooDeep => "nesting too deep",
            Self::TooManySegments => "too many commands",
            Self::DynamicArguments => "arguments read at run time (xargs)",
            Self::HiddenCode => "code the parser cannot see (inline script, stdin or alias)",
            Self::ChangesDirectory => "directory change that cannot be followed",
            Self::Empty => "empty command",
        };
        f.write_str(s)
    }
}

/// A redirect target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// The target as spelled (literal when `literal`).
    pub target: String,
    pub write: bool,
    pub literal: bool,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// The words; a word that is not plain (contains expansions) is kept as spelled.
    pub words: Vec<String>,
    /// Why this segment cannot be auto-allowed (empty: plain words only).
    pub opaque: Vec<Opaque>,
    pub redirects: Vec<Redirect>,
    /// Wrappers and interpreters this segment was unwrapped from (`sudo`, `bash -c`).
    pub via: Vec<String>,
    /// Directory set by an earlier `cd` in the same command line, if any.
    pub cwd: Option<String>,
    /// Indices of words that are not plain (kept as spelled).
    #[serde(skip)]
    pub non_literal: Vec<usize>,
    /// The words of the wrappers this segment was unwrapped from, outermost
    /// first: deny and ask rules naming a wrapper (`env *`) match them.
    #[serde(skip)]
    pub wrappers: Vec<Vec<String>>,
    /// The shell operator after this command in its list (`&&`, `;`, `&`, ...).
    #[serde(skip)]
    pub followed_by: Option<String>,
    /// Part of a pipeline (runs in a subshell: a `cd` there changes nothing after it).
    #[serde(skip)]
    pub in_pipeline: bool,
    /// How the command was written, when [`Segment::words`] is a reading
    /// of it (a PowerShell cmdlet read as its POSIX equivalent).
    #[serde(skip)]
    pub shown: Option<String>,
}

impl Segment {
    pub(crate) fn new() -> Self {
        Self {
            words: vec![],
            opaque: vec![],
            redirects: vec![],
            via: vec![],
            cwd: None,
            non_literal: vec![],
            wrappers: vec![],
            followed_by: None,
            in_pipeline: false,
            shown: None,
        }
    }

    /// The command as words joined by spaces (display form).
    pub fn display(&self) -> String {
        if let Some(shown) = &self.shown {
            return shown.clone();
        }
        let mut s = self.words.join(" ");
        for r in &self.redirects {
            s.push_str(if r.write { " > " } else { " < " });
            s.push_str(&r.target);
        }
        s
    }

    pub(crate) fn flag(&mut self, o: Opaque) {
        if !self.opaque.contains(&o) {
            self.opaque.push(o);
        }
    }

    /// Is the word at `i` plain (literal)?
    pub fn is_literal(&self, i: usize) -> bool {
        !self.non_literal.contains(&i)
    }
}

/// The result of parsing a command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParsedCommand {
    pub segments: Vec<Segment>,
}

/// The language the shell tool's commands are written in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShellDialect {
    /// bash and sh: parsed into segments.
    #[default]
    Posix,
    /// PowerShell (Windows without bash): plain commands, pipelines and
    /// statement lists are read ([`crate::powershell`]); anything it would
    /// evaluate is one opaque segment of its words (deny and ask rules still
    /// see them; never auto-allowed).
    PowerShell,
}

/// Parse a command line written in `dialect`.
pub fn parse_as(dialect: ShellDialect, command: &str) -> ParsedCommand {
    match dialect {
        ShellDialect::Posix => parse(command),
        ShellDialect::PowerShell => crate::powershell::parse(command),
    }
}

/// Parse a command line into segments. Never panics; anything unusual is
/// recorded as [`Opaque`] on the affected (or every) segment.
pub fn parse(command: &str) -> ParsedCommand {
    parse_at_depth(command, 0)
}

pub(crate) fn has_control(s: &str) -> bool {
    s.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}')
    })
}

fn parse_at_depth(command: &str, depth: usize) -> ParsedCommand {
    let mut global: Vec<Opaque> = Vec::new();
    if has_control(command) {
        global.push(Opaque::ControlCharacters);
    }
    if command.len() > MAX_AUTO_ALLOW_LEN {
        global.push(Opaque::TooLong);
    }
    let mut w = Walker {
        src: command,
        segments: Vec::new(),
        overflow: false,
    };
    // tree-sitter-bash 0.25.1 crashes (SIGSEGV) on some non-ASCII input, e.g.
    // `{` followed by U+E01B7 (found by tests/fuzz_parser.rs). The parser only
    // ever sees an ASCII shadow of the command: every non-ASCII character is
    // replaced by as many `a` bytes as it has UTF-8 bytes, so byte offsets are
    // unchanged and words are still read from the real command text. Bash
    // treats non-ASCII bytes as word characters, as it does `a`.
    // Bounded: too long, too deeply nested or too slow to parse → the
    // lexical split (deny rules still see every word; nothing is auto-allowed).
    let bound = if command.len() > MAX_PARSE_LEN {
        Some(Opaque::TooLong)
    } else if lexical_nesting(command) > MAX_LEXICAL_NESTING {
        Some(Opaque::TooDeep)
    } else {
        None
    };
    let shadow = ascii_shadow(command);
    let tree = match bound {
        Some(_) => None,
        None => parse_tree(&shadow),
    };
    if tree.is_none() && bound.is_none() && command.len() > 1024 {
        global.push(Opaque::TooLong);
    }
    if let Some(b) = &bound {
        global.push(b.clone());
        for seg in lexical_fallback(command, std::slice::from_ref(b)) {
            w.push(seg);
        }
    }
    match tree {
        Some(tree) => {
            let root = tree.root_node();
            if root.has_error() {
                global.push(Opaque::ParseError);
            }
            w.stmt(root, &[], 0);
        }
        None => {
            global.push(Opaque::ParseError);
            if bound.is_none() {
                for seg in lexical_fallback(command, &[Opaque::ParseError]) {
                    w.push(seg);
                }
            }
        }
    }
    if w.overflow {
        global.push(Opaque::TooManySegments);
    }
    let mut segments = Vec::new();
    for s in w.segments {
        unwrap_into(s, depth, &mut segments);
    }
    apply_cd(&mut segments);
    for seg in &mut segments {
        flag_hidden_code(seg);
    }
    if segments.is_empty() {
        let mut s = Segment::new();
        s.words = command.split_whitespace().map(str::to_string).collect();
        s.non_literal = (0..s.words.len()).collect();
        s.flag(Opaque::Empty);
        segments.push(s);
    }
    for s in &mut segments {
        for g in &global {
            s.flag(g.clone());
        }
    }
    ParsedCommand { segments }
}

/// The deepest nesting of `$(`, `(`, `{` and backquotes, read lexically
/// (quotes are not followed: an over-estimate only sends more input to the
/// lexical split, which asks).
fn lexical_nesting(command: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut tick = false;
    for b in command.bytes() {
        match b {
            b'(' | b'{' => {
                depth += 1;
                max = max.max(depth + usize::from(tick));
            }
            b')' | b'}' => depth = depth.saturating_sub(1),
            b'`' => tick = !tick,
            _ => {}
        }
    }
    max
}

/// The command with every non-ASCII character replaced by `a`s of the same byte length.
fn ascii_shadow(command: &str) -> std::borrow::Cow<'_, str> {
    if command.is_ascii() {
        return std::borrow::Cow::Borrowed(command);
    }
    let mut out = String::with_capacity(command.len());
    for c in command.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for _ in 0..c.len_utf8() {
                out.push('a');
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

thread_local! {
    static PARSER: std::cell::RefCell<Option<Parser>> = const { std::cell::RefCell::new(None) };
}

/// Parse with this thread's reused parser (creating one is much more expensive than parsing).
fn parse_tree(command: &str) -> Option<tree_sitter::Tree> {
    let fresh = || {
        let mut p = Parser::new();
        p.set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()
            .map(|()| p)
    };
    PARSER
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                if slot.is_none() {
                    *slot = fresh();
                }
                slot.as_mut().and_then(|p| bounded_parse(p, command))
            }
            Err(_) => fresh().and_then(|mut p| bounded_parse(&mut p, command)),
        })
        .ok()
        .flatten()
}

/// Parse within [`PARSE_BUDGET`]; `None` when the parser gave up.
fn bounded_parse(p: &mut Parser, command: &str) -> Option<tree_sitter::Tree> {
    let start = std::time::Instant::now();
    // Only commands too long to be auto-allowed anyway are timed: below that
    // the verdict never depends on how fast this machine is.
    let timed = command.len() > MAX_AUTO_ALLOW_LEN;
    let mut over = |_: &tree_sitter::ParseState| timed && start.elapsed() > PARSE_BUDGET;
    let bytes = command.as_bytes();
    let tree = p.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(tree_sitter::ParseOptions::new().progress_callback(&mut over)),
    );
    if tree.is_none() {
        // A cancelled parse leaves state behind; the next one starts clean.
        p.reset();
    }
    tree
}

struct Walker<'s> {
    src: &'s str,
    segments: Vec<Segment>,
    overflow: bool,
}

fn text<'a>(n: Node<'_>, src: &'a str) -> &'a str {
    src.get(n.byte_range()).unwrap_or("")
}

/// Nodes whose content is a list of statements that run unconditionally in sequence.
const SEQUENCE: &[&str] = &["program", "list", "pipeline", "negated_command"];
const CONTROL: &[&str] = &[
    "if_statement",
    "elif_clause",
    "else_clause",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "case_item",
    "do_group",
    "function_definition",
    "test_command",
];

/// Recursion depth of the tree walk; deeper subtrees are scanned flat.
const MAX_WALK_DEPTH: usize = 200;

impl Walker<'_> {
    /// Too deeply nested for the recursive walk: find every simple command in
    /// the subtree iteratively (no recursion, so no stack overflow) and judge
    /// its plain words; each is marked too deep (never auto-allowed), but deny
    /// rules still see it.
    fn flat(&mut self, n: Node<'_>) {
        let mut found = false;
        let mut cursor = n.walk();
        'walk: loop {
            let node = cursor.node();
            if node.kind() == "command" {
                found = true;
                let mut s = Segment::new();
                s.flag(Opaque::TooDeep);
                let mut c = node.walk();
                for ch in node.named_children(&mut c) {
                    let ch = if ch.kind() == "command_name" {
                        ch.named_child(0).unwrap_or(ch)
                    } else {
                        ch
                    };
                    match ch.kind() {
                        "variable_assignment"
                        | "file_redirect"
                        | "heredoc_redirect"
                        | "herestring_redirect"
                        | "comment" => {}
                        _ => match flat_literal(ch, self.src) {
                            Some(w) => s.words.push(w),
                            None => {
                                s.non_literal.push(s.words.len());
                                s.words.push(text(ch, self.src).to_string());
                            }
                        },
                    }
                }
                self.push(s);
            }
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node() == n {
                    break 'walk;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        if !found {
            let mut s = Segment::new();
            s.words = vec![text(n, self.src).to_string()];
            s.non_literal = vec![0];
            s.flag(Opaque::TooDeep);
            self.push(s);
            for s in lexical_fallback(text(n, self.src), &[Opaque::TooDeep]) {
                self.push(s);
            }
        }
    }

    fn push(&mut self, s: Segment) {
        // Never drop a segment (deny rules must see every one); past the
        // limit the whole command just can no longer be auto-allowed.
        if self.segments.len() >= MAX_SEGMENTS {
            self.overflow = true;
        }
        self.segments.push(s);
    }

    /// Walk a statement-level node.
    fn stmt(&mut self, n: Node<'_>, inherited: &[Opaque], level: usize) {
        if level > MAX_WALK_DEPTH {
            self.flat(n);
            return;
        }
        let kind = n.kind();
        if kind == "comment" || !n.is_named() {
            return;
        }
        if SEQUENCE.contains(&kind) {
            let mut c = n.walk();
            let children: Vec<Node<'_>> = n.children(&mut c).collect();
            for (k, ch) in children.iter().enumerate() {
                if !ch.is_named() {
                    continue;
                }
                let before = self.segments.len();
                self.stmt(*ch, inherited, level + 1);
                let op = children[k + 1..]
                    .iter()
                    .find(|x| !x.is_named() || x.kind() != "comment")
                    .map(|x| {
                        if x.is_named() {
                            // the next statement on a new line: like `;`
                            ";".to_string()
                        } else {
                            x.kind().to_string()
                        }
                    });
                let pipeline = kind == "pipeline";
                let len = self.segments.len();
                let pushed = &mut self.segments[before.min(len)..];
                if pipeline {
                    for seg in pushed.iter_mut() {
                        seg.in_pipeline = true;
                    }
                }
                if let Some(last) = pushed.last_mut()
                    && last.followed_by.is_none()
                {
                    last.followed_by = op;
                }
            }
            return;
        }
        if kind == "command" {
            let seg = self.command(n, inherited, level);
            self.push(seg);
            return;
        }
        if kind == "redirected_statement" {
            let before = self.segments.len();
            let mut redirects = Vec::new();
            let mut flags = Vec::new();
            let mut c = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut c).collect();
            for ch in &children {
                if is_redirect(ch.kind()) {
                    self.redirect(*ch, &mut redirects, &mut flags, level);
                }
            }
            let mut any_body = false;
            for ch in &children {
                if !is_redirect(ch.kind()) {
                    any_body = true;
                    self.stmt(*ch, inherited, level + 1);
                }
            }
            if !any_body || self.segments.len() == before {
                let mut s = Segment::new();
                s.flag(Opaque::Empty);
                self.push(s);
            }
            let after = self.segments.len();
            // A simple command is pushed after the commands of its substitutions:
            // the redirects belong to it alone. Groups and subshells share them.
            let bodies: Vec<&Node<'_>> =
                children.iter().filter(|c| !is_redirect(c.kind())).collect();
            let start = if bodies.len() == 1 && bodies[0].kind() == "command" && after > before {
                after - 1
            } else {
                before.min(after)
            };
            for s in &mut self.segments[start..after] {
                s.redirects.extend(redirects.iter().cloned());
                for f in &flags {
                    s.flag(f.clone());
                }
            }
            return;
        }
        let mut flags: Vec<Opaque> = inherited.to_vec();
        let flag = match kind {
            "subshell" | "compound_statement" => Some(Opaque::Subshell),
            "ERROR" => Some(Opaque::ParseError),
            k if CONTROL.contains(&k) => Some(Opaque::ControlFlow),
            _ => None,
        };
        match flag {
            Some(f) => {
                if !flags.contains(&f) {
                    flags.push(f);
                }
                let before = self.segments.len();
                self.children_as_statements(n, &flags, level);
                if self.segments.len() == before && kind == "ERROR" {
                    self.opaque_text_segment(n, &flags);
                }
            }
            None => {
                // Declarations, bare assignments, anything else: never auto-allowed;
                // commands nested inside still get judged.
                let mut f2 = flags.clone();
                f2.push(match kind {
                    "variable_assignment" | "variable_assignments" => Opaque::Assignment,
                    k => Opaque::Unsupported(k.to_string()),
                });
                self.opaque_text_segment(n, &f2);
                self.scan_substitutions(n, level);
            }
        }
    }

    fn opaque_text_segment(&mut self, n: Node<'_>, flags: &[Opaque]) {
        let mut s = Segment::new();
        s.words = text(n, self.src)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        s.non_literal = (0..s.words.len()).collect();
        for f in flags {
            s.flag(f.clone());
        }
        if s.opaque.is_empty() {
            s.flag(Opaque::Unsupported(n.kind().to_string()));
        }
        if n.kind() == "ERROR" || n.has_error() {
            for f in lexical_fallback(text(n, self.src), &s.opaque) {
                self.push(f);
            }
        }
        self.push(s);
    }

    fn children_as_statements(&mut self, n: Node<'_>, flags: &[Opaque], level: usize) {
        let mut c = n.walk();
        for ch in n.named_children(&mut c) {
            match ch.kind() {
                // Statement-like children.
                "command"
                | "redirected_statement"
                | "list"
                | "pipeline"
                | "subshell"
                | "compound_statement"
                | "negated_command"
                | "variable_assignment"
                | "declaration_command"
                | "unset_command"
                | "ERROR" => self.stmt(ch, flags, level + 1),
                k if CONTROL.contains(&k) => self.stmt(ch, flags, level + 1),
                _ => self.scan_substitutions(ch, level + 1),
            }
        }
    }

    /// Find command/process substitutions anywhere below `n` and judge their commands.
    fn scan_substitutions(&mut self, n: Node<'_>, level: usize) {
        if level > MAX_WALK_DEPTH {
            self.flat(n);
            return;
        }
        match n.kind() {
            "command_substitution" | "process_substitution" => {
                self.children_as_statements(n, &[], level + 1);
            }
            _ => {
                let mut c = n.walk();
                for ch in n.named_children(&mut c) {
                    self.scan_substitutions(ch, level + 1);
                }
            }
        }
    }

    fn command(&mut self, n: Node<'_>, inherited: &[Opaque], level: usize) -> Segment {
        let mut s = Segment::new();
        for f in inherited {
            s.flag(f.clone());
        }
        let mut c = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut c).collect();
        for ch in children {
            match ch.kind() {
                "variable_assignment" => {
                    s.flag(Opaque::Assignment);
                    self.scan_substitutions(ch, level + 1);
                }
                "comment" => {}
                k if is_redirect(k) => {
                    let mut flags = Vec::new();
                    let mut reds = Vec::new();
                    self.redirect(ch, &mut reds, &mut flags, level);
                    s.redirects.extend(reds);
                    for f in flags {
                        s.flag(f);
                    }
                }
                "command_name" => {
                    let inner = ch.named_child(0).unwrap_or(ch);
                    self.word(inner, &mut s, level);
                }
                _ => self.word(ch, &mut s, level),
            }
        }
        s
    }

    fn word(&mut self, n: Node<'_>, s: &mut Segment, level: usize) {
        match literal(n, self.src) {
            Ok(w) => s.words.push(w),
            Err(o) => {
                s.non_literal.push(s.words.len());
                s.words.push(text(n, self.src).to_string());
                s.flag(o);
                self.scan_substitutions(n, level + 1);
            }
        }
    }

    fn redirect(
        &mut self,
        n: Node<'_>,
        out: &mut Vec<Redirect>,
        flags: &mut Vec<Opaque>,
        level: usize,
    ) {
        let kind = n.kind();
        if kind == "heredoc_redirect" || kind == "herestring_redirect" {
            flags.push(Opaque::Heredoc);
            self.scan_substitutions(n, level + 1);
            return;
        }
        let mut op = String::new();
        let mut dest: Option<Node<'_>> = None;
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            if !ch.is_named() {
                op.push_str(ch.kind());
            } else if ch.kind() != "file_descriptor" {
                dest = Some(ch);
            }
        }
        let Some(dest) = dest else {
            flags.push(Opaque::Redirection);
            return;
        };
        let write = op.contains('>');
        match literal(dest, self.src) {
            Ok(t) => {
                let dup = op.contains('&')
                    && op != "&>"
                    && op != "&>>"
                    && (t == "-" || t.chars().all(|c| c.is_ascii_digit()));
                if dup || t == "/dev/null" {
                    return;
                }
                // A literal target is judged as a read or write of that path.
                out.push(Redirect {
                    target: t,
                    write,
                    literal: true,
                });
            }
            Err(o) => {
                flags.push(Opaque::Redirection);
                flags.push(o);
                out.push(Redirect {
                    target: text(dest, self.src).to_string(),
                    write,
                    literal: false,
                });
                self.scan_substitutions(dest, level + 1);
            }
        }
    }
}

fn is_redirect(kind: &str) -> bool {
    matches!(
        kind,
        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
    )
}

fn unescape_unquoted(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut it = t.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut it = t.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.peek().copied() {
                Some('\n') => {
                    it.next();
                }
                Some(n @ ('\\' | '"' | '$' | '`')) => {
                    it.next();
                    out.push(n);
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// When the parser cannot reduce text to commands: split it on shell
/// operators and judge each piece's words anyway (best effort, so deny rules
/// still apply). The pieces are never auto-allowed.
fn lexical_fallback(text: &str, flags: &[Opaque]) -> Vec<Segment> {
    text.split(|c: char| {
        matches!(
            c,
            ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' | '\n' | '<' | '>' | '$'
        )
    })
    .filter_map(|piece| {
        let words: Vec<String> = piece
            .split_whitespace()
            .map(|w| {
                w.chars()
                    .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                    .collect::<String>()
            })
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() {
            return None;
        }
        let mut s = Segment::new();
        s.non_literal = (0..words.len()).collect();
        s.words = words;
        for f in flags {
            s.flag(f.clone());
        }
        s.flag(Opaque::ParseError);
        Some(s)
    })
    .collect()
}

/// A word's literal value without recursion (plain words and quotes only).
fn flat_literal(n: Node<'_>, src: &str) -> Option<String> {
    match n.kind() {
        "word" | "number" | "raw_string" => literal(n, src).ok(),
        "string" if n.named_child_count() <= 1 => literal(n, src).ok(),
        _ => None,
    }
}

/// Unquoted glob or brace characters (not escaped by a backslash).
fn has_unquoted_pattern(t: &str) -> bool {
    let mut esc = false;
    for c in t.chars() {
        if esc {
            esc = false;
            continue;
        }
        match c {
            '\\' => esc = true,
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

/// Reduce a word-like node to its literal value, or say why it is not plain.
fn literal(n: Node<'_>, src: &str) -> Result<String, Opaque> {
    let t = text(n, src);
    match n.kind() {
        "word" | "number" => {
            if has_unquoted_pattern(t) {
                Err(Opaque::GlobPattern)
            } else if t.starts_with('~') && !t.starts_with("~/") && t != "~" {
                Err(Opaque::VariableExpansion)
            } else {
                Ok(unescape_unquoted(t))
            }
        }
        "raw_string" => Ok(t
            .strip_prefix('\'')
            .and_then(|x| x.strip_suffix('\''))
            .unwrap_or(t)
            .to_string()),
        "string" => {
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                if ch.kind() != "string_content" {
                    return Err(match ch.kind() {
                        "command_substitution" => Opaque::CommandSubstitution,
                        "arithmetic_expansion" => Opaque::ArithmeticExpansion,
                        _ => Opaque::VariableExpansion,
                    });
                }
            }
            let inner = t
                .strip_prefix('"')
                .and_then(|x| x.strip_suffix('"'))
                .unwrap_or(t);
            Ok(unescape_double(inner))
        }
        "concatenation" => {
            let mut out = String::new();
            let mut c = n.walk();
            for ch in n.children(&mut c) {
                if ch.is_named() {
                    out.push_str(&literal(ch, src)?);
                } else {
                    return Err(Opaque::Unsupported(format!("`{}` in a word", ch.kind())));
                }
            }
            Ok(out)
        }
        "command_substitution" => Err(Opaque::CommandSubstitution),
        "process_substitution" => Err(Opaque::ProcessSubstitution),
        "simple_expansion" | "expansion" => Err(Opaque::VariableExpansion),
        "arithmetic_expansion" => Err(Opaque::ArithmeticExpansion),
        "ansi_c_string" | "translated_string" => Err(Opaque::AnsiCString),
        "brace_expression" => Err(Opaque::GlobPattern),
        "ERROR" => Err(Opaque::ParseError),
        k => Err(Opaque::Unsupported(k.to_string())),
    }
}

// ---------------------------------------------------------------------------
// Wrappers and interpreters

/// The program name if `w` is a bare name or an absolute path in a system
/// directory (however the path is spelled: `//bin/rm`, `/usr/./bin/rm`).
fn system_program(w: &str) -> Option<&str> {
    crate::commands::program_name(w)
}

const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"];

/// Skip options of a wrapper; returns the index of the wrapped command, or Err if unknown.
fn skip_opts(words: &[String], start: usize, with_arg: &[&str], long_with_arg: &[&str]) -> usize {
    let mut i = start;
    while i < words.len() {
        let w = words[i].as_str();
        if w == "--" {
            return i + 1;
        }
        if !w.starts_with('-') || w == "-" {
            return i;
        }
        if w.starts_with("--") {
            if long_with_arg.contains(&w) {
                i += 1;
            }
        } else if with_arg.contains(&w) {
            i += 1;
        }
        i += 1;
    }
    i
}

fn unwrap_into(mut s: Segment, depth: usize, out: &mut Vec<Segment>) {
    if depth > MAX_DEPTH {
        s.flag(Opaque::TooDeep);
        out.push(s);
        return;
    }
    let Some(first) = s.words.first().cloned() else {
        out.push(s);
        return;
    };
    if !s.is_literal(0) {
        out.push(s);
        return;
    }
    let Some(prog) = system_program(&first) else {
        out.push(s);
        return;
    };
    let inner_start: Option<usize> = match prog {
        "env" | "time" | "exec" | "timeout" | "nice" | "nohup" | "setsid" | "stdbuf"
        | "command" | "xargs" | "builtin" | "coproc" | "busybox" | "toybox" | "taskset"
        | "chrt" | "ionice" | "flock" | "unbuffer" | "caffeinate" | "script" => {
            let Some(w) = crate::commands::wrapper(prog, &s.words) else {
                out.push(s);
                return;
            };
            if let Some(k) = w.payload {
                // `flock FILE -c CMD`, `script -c CMD`: a shell command line.
                if s.is_literal(k) {
                    let payload = s.words[k].clone();
                    out.push(s.clone());
                    push_payload(&s, &payload, &format!("{prog} -c"), depth, out);
                } else {
                    s.flag(Opaque::HiddenCode);
                    out.push(s);
                }
                return;
            }
            if prog == "xargs" {
                s.flag(Opaque::DynamicArguments);
            }
            if let Some(flag) = &w.uncertain {
                // Options that cannot be read with certainty: the wrapped
                // command is unknown, so nothing here can be auto-allowed.
                s.flag(Opaque::Unsupported(format!("{prog} option {flag}")));
                out.push(s);
                return;
            }
            if w.chdir {
                s.flag(Opaque::ChangesDirectory);
            }
            if w.split_string {
                s.flag(Opaque::HiddenCode);
            }
            if w.assigns {
                s.flag(Opaque::Assignment);
            }
            for f in &w.writes {
                s.redirects.push(Redirect {
                    target: f.clone(),
                    write: true,
                    literal: true,
                });
            }
            w.inner
        }
        "sudo" | "doas" => {
            let i = skip_opts(
                &s.words,
                1,
                &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"],
                &[
                    "--user",
                    "--group",
                    "--chdir",
                    "--prompt",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--close-from",
                    "--host",
                ],
            );
            if i < s.words.len() {
                // sudo: judge both the whole command and the inner one.
                out.push(s.clone());
                Some(i)
            } else {
                None
            }
        }
        p if SHELLS.contains(&p) => {
            // `bash -c 'payload'`: judge the payload's commands instead.
            let mut i = 1;
            let mut has_c = false;
            while i < s.words.len() {
                let w = s.words[i].as_str();
                if w == "--" || w == "-" {
                    i += 1;
                    break;
                }
                if matches!(w, "--rcfile" | "--init-file") {
                    // Runs the named file first: code the parser cannot see.
                    s.flag(Opaque::HiddenCode);
                    i += 2;
                    continue;
                }
                if matches!(w, "-o" | "+o" | "-O" | "+O") {
                    i += 2;
                    continue;
                }
                if w.starts_with("--") {
                    i += 1;
                    continue;
                }
                if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 {
                    if w.starts_with('-') && w.contains('c') {
                        has_c = true;
                    }
                    i += 1;
                    continue;
                }
                break;
            }
            if has_c && i < s.words.len() {
                if !s.is_literal(i) {
                    out.push(s);
                    return;
                }
                let payload = s.words[i].clone();
                push_payload(&s, &payload, &format!("{p} -c"), depth, out);
                return;
            }
            None
        }
        "eval" => {
            // `eval WORDS`: the words joined by spaces are parsed as a command.
            if s.words.len() > 1 && (1..s.words.len()).all(|k| s.is_literal(k)) {
                let payload = s.words[1..].join(" ");
                push_payload(&s, &payload, "eval", depth, out);
                return;
            }
            None
        }
        "su" | "runuser" => {
            // `su [user] -c 'payload'`: judge the whole command and the payload.
            if let Some(k) = s.words.iter().position(|w| w == "-c" || w == "--command")
                && k + 1 < s.words.len()
                && s.is_literal(k + 1)
            {
                let payload = s.words[k + 1].clone();
                out.push(s.clone());
                push_payload(&s, &payload, &format!("{prog} -c"), depth, out);
                return;
            }
            None
        }
        "find" | "fd" | "fdfind" => {
            // `find ... -exec CMD ... ;` / `fd ... -x CMD`: judge CMD too.
            let execs: &[&str] = if prog == "find" {
                &["-exec", "-execdir", "-ok", "-okdir"]
            } else {
                &["-x", "--exec", "-X", "--exec-batch"]
            };
            let mut inners = Vec::new();
            let mut k = 1;
            while k < s.words.len() {
                if execs.contains(&s.words[k].as_str()) {
                    let start = k + 1;
                    let mut end = start;
                    while end < s.words.len() && !matches!(s.words[end].as_str(), ";" | "+") {
                        end += 1;
                    }
                    if start < end {
                        let mut inner = Segment::new();
                        inner.words = s.words[start..end].to_vec();
                        inner.non_literal = s
                            .non_literal
                            .iter()
                            .filter(|&&j| j >= start && j < end)
                            .map(|j| j - start)
                            .collect();
                        inner.opaque = s.opaque.clone();
                        inner.flag(Opaque::DynamicArguments);
                        inner.via = s.via.clone();
                        inner.via.push(format!("{prog} {}", s.words[k]));
                        inner.wrappers = s.wrappers.clone();
                        inner.wrappers.push(s.words.clone());
                        inners.push(inner);
                    }
                    k = end;
                }
                k += 1;
            }
            out.push(s);
            for inner in inners {
                unwrap_into(inner, depth + 1, out);
            }
            return;
        }
        _ => None,
    };
    match inner_start {
        Some(i) if i < s.words.len() => {
            let mut inner = Segment::new();
            inner.words = s.words[i..].to_vec();
            inner.non_literal = s
                .non_literal
                .iter()
                .filter(|&&k| k >= i)
                .map(|k| k - i)
                .collect();
            inner.opaque = s.opaque.clone();
            inner.redirects = s.redirects.clone();
            inner.via = s.via.clone();
            inner.via.push(prog.to_string());
            inner.wrappers = s.wrappers.clone();
            inner.wrappers.push(s.words.clone());
            unwrap_into(inner, depth + 1, out);
        }
        _ => out.push(s),
    }
}

const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "Rscript",
    "osascript",
    "pwsh",
    "powershell",
];

/// Code this parser cannot see: inline interpreter code (`python -c`,
/// `node -e`, ...), a shell reading its program from stdin (`curl … | sh`),
/// git aliases that run shell commands (`git -c alias.x='!…'`). Such a
/// segment can never be auto-allowed.
fn flag_hidden_code(seg: &mut Segment) {
    let Some(first) = seg.words.first() else {
        return;
    };
    let Some(prog) = system_program(first) else {
        return;
    };
    let base = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let args = &seg.words[1..];
    let inline = |flags: &[&str]| {
        args.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || (a.starts_with(f) && !a.starts_with("--")))
        })
    };
    let info_only = !args.is_empty()
        && args
            .iter()
            .all(|a| matches!(a.as_str(), "--version" | "-V" | "--help" | "-h" | "-v"));
    let hidden = if info_only {
        false
    } else if INTERPRETERS.contains(&prog) || INTERPRETERS.contains(&base) {
        inline(&["-c", "-e", "-E", "-r", "--eval", "--print", "-p"])
            || args.iter().all(|a| a.starts_with('-'))
    } else if SHELLS.contains(&prog) {
        // Not unwrapped (no literal -c payload): the program comes from stdin or a variable.
        args.iter()
            .all(|a| a.starts_with('-') || a.starts_with('+'))
            || args
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
    } else if prog == "git" {
        args.windows(2).any(|w| w[0] == "-c" && w[1].contains("=!"))
            || args.iter().any(|a| a.starts_with("--config-env"))
    } else {
        false
    };
    if hidden {
        seg.flag(Opaque::HiddenCode);
    }
}

/// Parse `payload` (from `bash -c`, `eval`, `su -c`) and add its segments,
/// inheriting the outer segment's flags, redirects and wrapper chain.
fn push_payload(s: &Segment, payload: &str, via: &str, depth: usize, out: &mut Vec<Segment>) {
    let parsed = parse_at_depth(payload, depth + 1);
    for mut inner in parsed.segments {
        let mut wrappers = s.wrappers.clone();
        wrappers.push(s.words.clone());
        wrappers.append(&mut inner.wrappers);
        inner.wrappers = wrappers;
        inner.via.insert(0, via.to_string());
        inner.via.splice(0..0, s.via.iter().cloned());
        for o in &s.opaque {
            inner.flag(o.clone());
        }
        inner.redirects.extend(s.redirects.iter().cloned());
        out.push(inner);
    }
}

/// Follow `cd DIR` through the rest of the command line so relative paths in
/// later segments are resolved against it; an untrackable `cd` marks later segments.
fn apply_cd(segments: &mut [Segment]) {
    let mut cwd: Option<String> = None;
    let mut lost = false;
    let mut prev_op: Option<String> = None;
    for s in segments.iter_mut() {
        // A directory set by `cd` holds only within its `&&` chain (and
        // pipelines in it): after `;`, `||`, `&` or a newline the `cd` may
        // have failed, and the command runs from the old directory.
        if cwd.is_some() && !matches!(prev_op.as_deref(), Some("&&" | "|" | "|&")) {
            lost = true;
        }
        prev_op = s.followed_by.clone();
        if lost {
            s.flag(Opaque::ChangesDirectory);
        }
        s.cwd = cwd.clone();
        let prog = s.words.first().map(String::as_str);
        if matches!(prog, Some("cd" | "pushd" | "popd" | "chdir")) {
            // Only a `cd` whose success gates what follows (`cd X && ...`, or
            // the last command) moves later commands: in a pipeline or in the
            // background it changes nothing after it, and after `;` a failed
            // `cd` leaves the old directory. `cd -` goes back to a directory
            // the engine does not know.
            let certain = !s.in_pipeline
                && s.via.is_empty()
                && matches!(s.followed_by.as_deref(), None | Some("&&"));
            if !certain || s.words.iter().skip(1).any(|w| w == "-") {
                lost = true;
                s.flag(Opaque::ChangesDirectory);
                continue;
            }
            let args: Vec<usize> = (1..s.words.len())
                .filter(|&i| !s.words[i].starts_with('-'))
                .collect();
            match (prog, args.as_slice()) {
                (Some("cd" | "pushd" | "chdir"), [i]) if s.is_literal(*i) => {
                    let d = s.words[*i].clone();
                    cwd = Some(match &cwd {
                        Some(c) if !d.starts_with('/') && !d.starts_with('~') => format!("{c}/{d}"),
                        _ => d,
                    });
                }
                (Some("cd"), []) => cwd = Some("~".to_string()),
                _ => {
                    lost = true;
                    s.flag(Opaque::ChangesDirectory);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<Vec<String>> {
        parse(cmd).segments.into_iter().map(|s| s.words).collect()
    }

    fn opaque(cmd: &str) -> Vec<Vec<Opaque>> {
        parse(cmd).segments.into_iter().map(|s| s.opaque).collect()
    }

    #[test]
    fn separators_split_segments() {
        assert_eq!(
            words("git status && ls -la | grep x; echo hi & pwd\nid || true"),
            vec![
                vec!["git", "status"],
                vec!["ls", "-la"],
                vec!["grep", "x"],
                vec!["echo", "hi"],
                vec!["pwd"],
                vec!["id"],
                vec!["true"]
            ]
        );
        assert!(opaque("git status && ls | wc -l").iter().all(Vec::is_empty));
    }

    #[test]
    fn quoting_is_reduced_to_words() {
        assert_eq!(
            words(r#"cat "a b" 'c d' g\it "x\"y" a"b"c"#),
            vec![vec!["cat", "a b", "c d", "git", "x\"y", "abc"]]
        );
        assert!(opaque(r#"cat "a b" 'c'"#)[0].is_empty());
    }

    #[test]
    fn substitutions_are_opaque_and_inner_commands_extracted() {
        let p = parse("echo $(rm -rf /) `id` <(ls)");
        let w: Vec<_> = p.segments.iter().map(|s| s.words.clone()).collect();
        assert!(w.contains(&vec!["rm".to_string(), "-rf".into(), "/".into()]));
        assert!(w.contains(&vec!["id".to_string()]));
        assert!(w.contains(&vec!["ls".to_string()]));
        let echo = p.segments.iter().find(|s| s.words[0] == "echo").unwrap();
        assert!(echo.opaque.contains(&Opaque::CommandSubstitution));
        assert!(echo.opaque.contains(&Opaque::ProcessSubstitution));
    }

    #[test]
    fn expansions_assignments_redirects_heredocs_are_opaque() {
        assert!(opaque("echo $HOME")[0].contains(&Opaque::VariableExpansion));
        assert!(opaque("echo ${X:-y}")[0].contains(&Opaque::VariableExpansion));
        assert!(opaque("echo $((1+2))")[0].contains(&Opaque::ArithmeticExpansion));
        assert!(opaque("FOO=1 ls")[0].contains(&Opaque::Assignment));
        // A literal redirect target is judged as a path, not as opaque.
        assert!(!opaque("ls > out.txt")[0].contains(&Opaque::Redirection));
        assert!(opaque("ls > \"$X\"")[0].contains(&Opaque::Redirection));
        assert!(opaque("cat <<EOF\nhi\nEOF")[0].contains(&Opaque::Heredoc));
        assert!(opaque("(ls)")[0].contains(&Opaque::Subshell));
        assert!(opaque("cat *.env")[0].contains(&Opaque::GlobPattern));
        assert!(opaque("echo $'\\x41'")[0].contains(&Opaque::AnsiCString));
        assert!(opaque("if true; then ls; fi")[0].contains(&Opaque::ControlFlow));
        assert!(opaque("ls )(")[0].contains(&Opaque::ParseError));
        assert!(opaque("ls\u{7}")[0].contains(&Opaque::ControlCharacters));
        // fd duplication and /dev/null are harmless
        assert!(opaque("ls 2>&1 >/dev/null")[0].is_empty());
    }

    #[test]
    fn redirect_targets_recorded() {
        let p = parse("echo hi >> ~/.bashrc < in.txt");
        let r = &p.segments[0].redirects;
        assert!(r.contains(&Redirect {
            target: "~/.bashrc".into(),
            write: true,
            literal: true
        }));
        assert!(r.contains(&Redirect {
            target: "in.txt".into(),
            write: false,
            literal: true
        }));
    }

    #[test]
    fn wrappers_and_shells_unwrapped() {
        assert_eq!(
            words("timeout 10 nice -n 5 git push"),
            vec![vec!["git", "push"]]
        );
        assert_eq!(words("env -i git status"), vec![vec!["git", "status"]]);
        assert_eq!(words("nohup command exec ls"), vec![vec!["ls"]]);
        assert_eq!(
            words("sudo -u root rm -rf /"),
            vec![
                vec!["sudo", "-u", "root", "rm", "-rf", "/"],
                vec!["rm", "-rf", "/"]
            ]
        );
        assert_eq!(
            words("bash -c 'ls && rm x'"),
            vec![vec!["ls"], vec!["rm", "x"]]
        );
        assert_eq!(words("/bin/sh -lc \"cat .env\""), vec![vec!["cat", ".env"]]);
        let p = parse("find . | xargs rm");
        assert_eq!(p.segments[1].words, vec!["rm"]);
        assert!(p.segments[1].opaque.contains(&Opaque::DynamicArguments));
        // a path-qualified wrapper is not unwrapped
        assert_eq!(words("./timeout 1 ls"), vec![vec!["./timeout", "1", "ls"]]);
        assert_eq!(parse("bash -c 'ls'").segments[0].via, vec!["bash -c"]);
    }

    #[test]
    fn input_that_crashed_tree_sitter_is_parsed() {
        // `{` + U+E01B7 made tree-sitter-bash 0.25.1 segfault.
        let p = parse("G\u{1d53b}{\u{e01b7}\u{b13}:b%");
        assert_eq!(p.segments.len(), 1);
        let p = parse("echo {\u{e01b7} && rm x");
        assert_eq!(p.segments[0].words[0], "echo");
        assert_eq!(p.segments[1].words, vec!["rm", "x"]);
        // words keep their real (non-ASCII) text
        assert_eq!(
            words("cat caf\u{e9}.txt"),
            vec![vec!["cat", "caf\u{e9}.txt"]]
        );
    }

    #[test]
    fn cd_is_followed() {
        let p = parse("cd /etc && cat passwd");
        assert_eq!(p.segments[1].cwd.as_deref(), Some("/etc"));
        let p = parse("cd $X && cat passwd");
        assert!(p.segments[1].opaque.contains(&Opaque::ChangesDirectory));
    }

    #[test]
    fn empty_and_comment_commands_are_never_plain() {
        assert!(!parse("").segments[0].opaque.is_empty());
        assert!(!parse("# just a comment").segments[0].opaque.is_empty());
    }

    #[test]
    fn hostile_input_is_bounded() {
        // 96 KB of nested `$(` used to take gigabytes and seconds: now the
        // lexical split, still showing every word to the deny rules.
        let nested = format!(
            "{}rm -rf x{}",
            "$(".repeat(48 * 1024),
            ")".repeat(48 * 1024)
        );
        let p = parse(&nested);
        assert!(
            p.segments
                .iter()
                .all(|s| s.opaque.contains(&Opaque::TooLong))
        );
        assert!(p.segments.iter().any(|s| s.words == ["rm", "-rf", "x"]));
        let deep = format!("{}rm -rf y{}", "$(".repeat(100), ")".repeat(100));
        let p = parse(&deep);
        assert!(
            p.segments
                .iter()
                .all(|s| s.opaque.contains(&Opaque::TooDeep))
        );
        assert!(p.segments.iter().any(|s| s.words == ["rm", "-rf", "y"]));
        let long = format!("ls; {}", "rm z; ".repeat(MAX_PARSE_LEN / 6 + 1));
        let p = parse(&long);
        assert!(
            p.segments
                .iter()
                .all(|s| s.opaque.contains(&Opaque::TooLong))
        );
        assert!(p.segments.iter().any(|s| s.words == ["rm", "z"]));
        // Just under the limit, many heredocs still parse.
        let heredocs = "cat <<E\nx\nE\n".repeat((MAX_PARSE_LEN - 100) / 12);
        let p = parse(&heredocs);
        assert!(p.segments.len() > 1000);
    }

    #[test]
    fn long_and_deep_commands_degrade() {
        let long = format!("echo {}", "a ".repeat(MAX_AUTO_ALLOW_LEN));
        assert!(parse(&long).segments[0].opaque.contains(&Opaque::TooLong));
        let deep = format!("{}ls", "nice ".repeat(MAX_DEPTH + 5));
        let p = parse(&deep);
        assert!(
            p.segments
                .iter()
                .all(|s| s.opaque.contains(&Opaque::TooDeep))
        );
        let nested = format!("{}rm x{}", "echo $(".repeat(300), ")".repeat(300));
        let p = parse(&nested);
        // every command is still extracted, the deep ones marked
        let rm = p
            .segments
            .iter()
            .find(|s| s.words.first().is_some_and(|w| w == "rm"))
            .unwrap();
        assert_eq!(rm.words, vec!["rm", "x"]);
        assert!(rm.opaque.contains(&Opaque::TooDeep));
        let subshells = format!("{}rm y{}", "(".repeat(500), ")".repeat(500));
        let p = parse(&subshells);
        assert!(
            p.segments.iter().any(|s| s.words == vec!["rm", "y"]),
            "{:?}",
            p.segments
                .iter()
                .map(|s| (&s.words, &s.opaque))
                .collect::<Vec<_>>()
        );
        let three = "bash -c 'sh -c \"ls\"'";
        assert_eq!(words(three), vec![vec!["ls"]]);
    }
}
