//! Custom slash commands: Markdown files whose body is a prompt template
//! (Claude Code's and OpenCode's format). Read from the project's
//! `.mia-code/commands/`, `.claude/commands/` and `.opencode/command/`, then
//! the person's `~/.config/mia-code/commands/`; the first of a name wins,
//! and a file named like a built-in command is listed with a warning and
//! never used. A file that cannot be read is listed with its error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Paths;

/// The front ends' own commands (the composer's, `ui/src/app/commands.ts`):
/// a file never replaces one.
pub const BUILTIN_COMMANDS: &[&str] = &[
    "undo",
    "redo",
    "revert",
    "snapshots",
    "diff",
    "new",
    "plan",
    "build",
    "worktrees",
    "compare",
    "review",
    "fork",
    "forks",
    "promote",
    "compact",
    "model",
    "share",
    "unshare",
    "cost",
    "history",
    "agent",
    "help",
];

/// Largest command file read.
const MAX_COMMAND_FILE: u64 = 256 * 1024;
/// Deepest folder nesting followed (`a:b:c:d`).
const MAX_DEPTH: usize = 4;

/// Where a command file was found, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandSource {
    /// `.mia-code/commands/` in the project.
    Project,
    /// `.claude/commands/` in the project.
    Claude,
    /// `.opencode/command/` in the project.
    Opencode,
    /// `~/.config/mia-code/commands/`.
    User,
}

impl CommandSource {
    /// Whether the file belongs to the project (a cloned repository).
    pub fn is_project(self) -> bool {
        !matches!(self, Self::User)
    }
}

/// One command file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandFile {
    /// `review` for `review.md`, `git:commit` for `git/commit.md`.
    pub name: String,
    pub source: CommandSource,
    pub path: PathBuf,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub agent: Option<String>,
    pub model: Option<String>,
    /// Claude Code's tool rules (`Bash(git add:*)`, `Read`), allowed for
    /// the command's turn only.
    pub allowed_tools: Vec<String>,
    pub body: String,
    /// Why the file is not used: a YAML error, an unknown key, a built-in's
    /// name, or a name another file already took.
    pub error: Option<String>,
}

impl CommandFile {
    pub fn usable(&self) -> bool {
        self.error.is_none()
    }
}

/// Front matter keys (Claude Code's, plus OpenCode's `agent`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Front {
    description: Option<String>,
    argument_hint: Option<String>,
    agent: Option<String>,
    model: Option<String>,
    allowed_tools: Option<ToolList>,
    /// Accepted: a model never invokes commands in mia-code.
    #[allow(dead_code)]
    disable_model_invocation: Option<bool>,
}

/// `allowed-tools: Bash(git add:*), Read` or a YAML list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ToolList {
    One(String),
    Many(Vec<String>),
}

impl ToolList {
    fn into_vec(self) -> Vec<String> {
        match self {
            Self::Many(v) => v.into_iter().map(|s| s.trim().to_string()).collect(),
            Self::One(s) => split_tool_list(&s),
        }
    }
}

/// Split `Bash(git add:*), Bash(git status:*), Read` at top-level commas.
pub fn split_tool_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The command folders, in precedence order.
pub fn command_dirs(paths: &Paths, project: Option<&Path>) -> Vec<(CommandSource, PathBuf)> {
    let mut dirs = Vec::new();
    if let Some(root) = project {
        dirs.push((CommandSource::Project, root.join(".mia-code/commands")));
        dirs.push((CommandSource::Claude, root.join(".claude/commands")));
        dirs.push((CommandSource::Opencode, root.join(".opencode/command")));
    }
    if let Some(dir) = paths
        .global_configs
        .first()
        .and_then(|c| c.parent())
        .map(|d| d.join("commands"))
    {
        dirs.push((CommandSource::User, dir));
    }
    dirs
}

/// Every command file, in precedence order; later files of a name already
/// taken (and files named like built-ins) carry an error saying so.
pub fn load_commands(paths: &Paths, project: Option<&Path>) -> Vec<CommandFile> {
    let mut out: Vec<CommandFile> = Vec::new();
    let mut taken: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (source, dir) in command_dirs(paths, project) {
        let mut files = Vec::new();
        collect(&dir, &dir, 0, &mut files);
        files.sort();
        for path in files {
            let mut cmd = read_command(&dir, &path, source);
            if cmd.error.is_none() {
                if BUILTIN_COMMANDS.contains(&cmd.name.as_str()) {
                    cmd.error = Some(format!(
                        "/{} is a built-in command; this file is never used (rename it)",
                        cmd.name
                    ));
                } else if let Some(first) = taken.get(&cmd.name) {
                    cmd.error = Some(format!(
                        "/{} is already defined by {}, which wins",
                        cmd.name,
                        first.display()
                    ));
                } else {
                    taken.insert(cmd.name.clone(), path.clone());
                }
            }
            out.push(cmd);
        }
    }
    out
}

fn collect(root: &Path, dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && depth < MAX_DEPTH {
            collect(root, &path, depth + 1, out);
        } else if (ft.is_file() || ft.is_symlink())
            && path.extension().is_some_and(|x| x == "md")
            && path.starts_with(root)
        {
            out.push(path);
        }
    }
}

/// The command's name from its path under its folder: `git/commit.md` → `git:commit`.
pub fn command_name(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path).with_extension("");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(":")
}

fn read_command(dir: &Path, path: &Path, source: CommandSource) -> CommandFile {
    let mut cmd = CommandFile {
        name: command_name(dir, path),
        source,
        path: path.to_path_buf(),
        description: None,
        argument_hint: None,
        agent: None,
        model: None,
        allowed_tools: Vec::new(),
        body: String::new(),
        error: None,
    };
    let text = match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err("not a regular file".to_string()),
        Ok(m) if m.len() > MAX_COMMAND_FILE => Err(format!(
            "{} bytes; a command file may have at most {MAX_COMMAND_FILE}",
            m.len()
        )),
        Ok(_) => std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string())),
        Err(e) => Err(e.to_string()),
    };
    match text.and_then(|t| parse_command(&t)) {
        Ok((front, body)) => {
            cmd.description = front.description;
            cmd.argument_hint = front.argument_hint;
            cmd.agent = front.agent;
            cmd.model = front.model;
            cmd.allowed_tools = front
                .allowed_tools
                .map(ToolList::into_vec)
                .unwrap_or_default();
            cmd.body = body;
            if cmd.description.is_none() {
                // As Claude Code: the first line of the body describes it.
                cmd.description = cmd.body.lines().find(|l| !l.trim().is_empty()).map(|l| {
                    l.trim()
                        .trim_start_matches('#')
                        .trim()
                        .chars()
                        .take(80)
                        .collect()
                });
            }
        }
        Err(e) => cmd.error = Some(e),
    }
    cmd
}

/// Split front matter (optional) from the body and check its keys.
fn parse_command(text: &str) -> Result<(Front, String), String> {
    let Some((yaml, body)) = crate::agent_file::split_front_matter(text)? else {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        return Ok((Front::default(), text.trim_end().to_string()));
    };
    let body = body.trim_end().to_string();
    let front: Front = if yaml.trim().is_empty() {
        Front::default()
    } else {
        serde_yaml_ng::from_str(yaml).map_err(|e| {
            let line = e.location().map_or(0, |l| l.line() + 1);
            format!("front matter, line {line}: {e}")
        })?
    };
    Ok((front, body))
}

/// Split `/name rest of line` into the name and its arguments; `None` when
/// the text is not a slash command.
pub fn split_invocation(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    valid.then(|| (name, rest[end..].trim()))
}

/// Shell-like split of the arguments for `$1`…`$9` (quotes group words).
pub fn split_arguments(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            (None, c) => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(cur);
    }
    out
}

/// `$ARGUMENTS` → all of them, `$1`…`$9` → each (empty when missing).
pub fn substitute_arguments(body: &str, args: &str) -> String {
    let words = split_arguments(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let n = (d as usize) - ('1' as usize);
            out.push_str(words.get(n).map(String::as_str).unwrap_or_default());
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// One piece of an expanded body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    /// `@path`: the file's content goes here.
    Include(String),
    /// `` !`cmd` ``: the command's output goes here.
    Shell(String),
}

/// Split a body (arguments already substituted) into text, `@path`
/// includes and `` !`cmd` `` shell lines. `@` counts at the start or after
/// whitespace and is followed by a path-like word (an `@agent` mention
/// without a `/` or `.` stays text).
pub fn pieces(body: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = body;
    let mut prev_ws = true;
    while let Some(c) = rest.chars().next() {
        if c == '!'
            && let Some(after) = rest.strip_prefix("!`")
            && let Some(end) = after.find('`')
            && !after[..end].contains('\n')
            && !after[..end].trim().is_empty()
        {
            flush(&mut text, &mut out);
            out.push(Piece::Shell(after[..end].trim().to_string()));
            rest = &after[end + 1..];
            prev_ws = false;
            continue;
        }
        if c == '@' && prev_ws {
            let word_end = rest[1..]
                .find(|ch: char| ch.is_whitespace() || matches!(ch, ',' | ';' | ')' | '`'))
                .map_or(rest.len(), |i| i + 1);
            let word = rest[1..word_end].trim_end_matches(['.', ':', '!', '?']);
            if word.contains('/') || word.contains('.') {
                flush(&mut text, &mut out);
                out.push(Piece::Include(word.to_string()));
                rest = &rest[1 + word.len()..];
                prev_ws = false;
                continue;
            }
        }
        text.push(c);
        prev_ws = c.is_whitespace();
        rest = &rest[c.len_utf8()..];
    }
    flush(&mut text, &mut out);
    out
}

fn flush(text: &mut String, out: &mut Vec<Piece>) {
    if !text.is_empty() {
        out.push(Piece::Text(std::mem::take(text)));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn arguments_are_substituted() {
        assert_eq!(
            substitute_arguments(
                "fix #$1 in $2: $ARGUMENTS ($3) $HOME",
                "12 \"src/a b.rs\" now"
            ),
            "fix #12 in src/a b.rs: 12 \"src/a b.rs\" now (now) $HOME"
        );
        assert_eq!(substitute_arguments("x $9 y", ""), "x  y");
    }

    #[test]
    fn invocation_is_split() {
        assert_eq!(
            split_invocation("/git:commit  fix it "),
            Some(("git:commit", "fix it"))
        );
        assert_eq!(split_invocation("/review"), Some(("review", "")));
        assert_eq!(split_invocation("no /slash"), None);
        assert_eq!(split_invocation("/ x"), None);
        assert_eq!(split_invocation("/usr/bin/ls is"), None);
    }

    #[test]
    fn pieces_find_includes_and_shell_lines() {
        let p =
            pieces("Look at @src/main.rs and @explore, then !`git status --short`.\nmail a@b.c");
        assert_eq!(
            p,
            vec![
                Piece::Text("Look at ".into()),
                Piece::Include("src/main.rs".into()),
                Piece::Text(" and @explore, then ".into()),
                Piece::Shell("git status --short".into()),
                Piece::Text(".\nmail a@b.c".into()),
            ]
        );
    }

    #[test]
    fn tool_lists_split_at_top_level_commas() {
        assert_eq!(
            split_tool_list("Bash(git add:*), Bash(git commit:*, x), Read"),
            vec!["Bash(git add:*)", "Bash(git commit:*, x)", "Read"]
        );
    }

    #[test]
    fn front_matter_errors_are_kept() {
        assert!(
            parse_command("---\nbogus: 1\n---\nbody")
                .unwrap_err()
                .contains("bogus")
        );
        assert!(parse_command("---\ndescription: [\n---\nbody").is_err());
        let (f, b) =
            parse_command("---\nargument-hint: \"[n]\"\nallowed-tools: Bash(ls:*)\n---\nDo $1\n")
                .unwrap();
        assert_eq!(f.argument_hint.as_deref(), Some("[n]"));
        assert_eq!(f.allowed_tools.unwrap().into_vec(), vec!["Bash(ls:*)"]);
        assert_eq!(b, "Do $1");
    }
}
