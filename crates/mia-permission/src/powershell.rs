//! PowerShell, read just far enough to judge it: commands made of plain words
//! in pipelines and statement lists. The common read-only cmdlets
//! (`Get-ChildItem`, `Get-Content`, `Select-String`, `Test-Path`, …) and the
//! destructive and network ones (`Remove-Item`, `Invoke-WebRequest`, …) are
//! read as the POSIX command that does the same (`ls`, `cat`, `grep`,
//! `stat`, `rm`, `curl`), so every path, read-only and fetch check of the
//! engine applies to them unchanged; a native program (`git status`) is its
//! own words. Deny and ask rules naming the cmdlet (`Remove-Item *`) match it
//! too (it is kept as the segment's wrapper).
//!
//! Everything PowerShell evaluates is refused as opaque, so it asks:
//! variables, sub-expressions, script blocks, splatting, arrays, type
//! literals, escapes, redirections, the call and dot-source operators,
//! `--%`, a module-qualified cmdlet, provider paths (`Env:`, `HKLM:`), any
//! parameter a cmdlet's table does not know, and any character that is not
//! ASCII (PowerShell reads typographic dashes and quotes as `-` and `'`).
//!
//! Why not tree-sitter-powershell: the allow-list needs only this subset, and
//! a lexer that refuses every other character is smaller to prove right than
//! a walk over the grammar's 180 node kinds, where any node forgotten would
//! be a command read wrongly.

use crate::bash::{Opaque, ParsedCommand, Segment};

/// Parse a PowerShell command line into segments.
pub fn parse(command: &str) -> ParsedCommand {
    let segments = match lex(command) {
        Ok(commands) => commands.into_iter().map(segment).collect(),
        Err(why) => vec![whole(command, why)],
    };
    ParsedCommand { segments }
}

/// The command as one unread segment of its whitespace-separated words (deny
/// and ask rules still see them; it is never auto-allowed).
fn whole(command: &str, why: Opaque) -> Segment {
    let mut seg = Segment::new();
    seg.words = command.split_whitespace().map(str::to_string).collect();
    seg.flag(why);
    seg
}

/// One command of a pipeline or statement list, as lexed.
struct Command {
    words: Vec<String>,
    /// The words spelled with quotes (a parameter's name is never quoted).
    quoted: Vec<bool>,
    followed_by: Option<&'static str>,
    in_pipeline: bool,
}

fn unsupported(what: &str) -> Opaque {
    Opaque::Unsupported(format!("PowerShell {what}"))
}

/// Split into commands of plain words, or say why the line is not plain.
fn lex(command: &str) -> Result<Vec<Command>, Opaque> {
    if crate::bash::has_control(&command.replace('\r', "")) {
        return Err(Opaque::ControlCharacters);
    }
    if let Some(c) = command.chars().find(|c| !c.is_ascii()) {
        return Err(unsupported(&format!(
            "non-ASCII character {c:?} (PowerShell reads some as dashes or quotes)"
        )));
    }
    let mut out: Vec<Command> = Vec::new();
    let mut cur = Command {
        words: vec![],
        quoted: vec![],
        followed_by: None,
        in_pipeline: false,
    };
    let mut chars = command.chars().peekable();
    let finish = |cur: &mut Command, out: &mut Vec<Command>, op: &'static str| {
        let done = std::mem::replace(
            cur,
            Command {
                words: vec![],
                quoted: vec![],
                followed_by: None,
                in_pipeline: op == "|",
            },
        );
        if done.words.is_empty() {
            return Err(unsupported("empty command before an operator"));
        }
        out.push(Command {
            followed_by: Some(op),
            in_pipeline: done.in_pipeline || op == "|",
            ..done
        });
        Ok(())
    };
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' => {
                chars.next();
            }
            '\n' | ';' => {
                chars.next();
                if !cur.words.is_empty() {
                    finish(&mut cur, &mut out, ";")?;
                }
            }
            '|' => {
                chars.next();
                let op = if chars.peek() == Some(&'|') {
                    chars.next();
                    "||"
                } else {
                    "|"
                };
                finish(&mut cur, &mut out, op)?;
            }
            '&' => {
                chars.next();
                if chars.peek() != Some(&'&') {
                    return Err(unsupported("call or background operator (&)"));
                }
                chars.next();
                finish(&mut cur, &mut out, "&&")?;
            }
            '>' | '<' => return Err(Opaque::Redirection),
            _ => {
                let (word, quoted) = lex_word(&mut chars)?;
                cur.words.push(word);
                cur.quoted.push(quoted);
            }
        }
    }
    if cur.words.is_empty() {
        match out.last() {
            Some(last) if last.followed_by != Some(";") => {
                return Err(unsupported("operator with nothing after it"));
            }
            None => return Err(Opaque::Empty),
            Some(_) => {}
        }
    } else {
        out.push(cur);
    }
    Ok(out)
}

/// One word: unquoted characters from a safe set, `'…'` (literal, `''` is a
/// quote) and `"…"` without `$` or a backtick.
fn lex_word(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
) -> Result<(String, bool), Opaque> {
    let mut word = String::new();
    let mut quoted = false;
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' | '\n' | ';' | '|' | '&' => break,
            '>' | '<' => return Err(Opaque::Redirection),
            '\'' => {
                chars.next();
                quoted = true;
                loop {
                    match chars.next() {
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            word.push('\'');
                        }
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err(Opaque::ParseError),
                    }
                }
            }
            '"' => {
                chars.next();
                quoted = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('$') => return Err(Opaque::VariableExpansion),
                        Some('`') => return Err(unsupported("escape (`)")),
                        Some(ch) => word.push(ch),
                        None => return Err(Opaque::ParseError),
                    }
                }
            }
            '$' => return Err(Opaque::VariableExpansion),
            '@' if word.is_empty() => return Err(unsupported("splatting or array (@)")),
            '(' | ')' => return Err(Opaque::Subshell),
            '{' | '}' => return Err(unsupported("script block")),
            '[' | ']' => return Err(unsupported("type literal or wildcard range ([ ])")),
            ',' => return Err(unsupported("array (,)")),
            '#' => return Err(unsupported("comment (#)")),
            '`' => return Err(unsupported("escape (`)")),
            c if c.is_ascii_alphanumeric() || "_.-/\\:+=~*?!^%@".contains(c) => {
                chars.next();
                word.push(c);
            }
            _ => return Err(unsupported(&format!("character {c:?}"))),
        }
    }
    if word == "--%" {
        return Err(unsupported("stop-parsing token (--%)"));
    }
    Ok((word, quoted))
}

/// A lexed command as the segment the engine judges.
fn segment(cmd: Command) -> Segment {
    let mut seg = Segment::new();
    seg.followed_by = cmd.followed_by.map(str::to_string);
    seg.in_pipeline = cmd.in_pipeline;
    let name = cmd.words.first().cloned().unwrap_or_default();
    if name.starts_with('.') && !name.contains(['/', '\\']) || name.starts_with('-') {
        seg.words = cmd.words;
        seg.flag(unsupported(
            "dot-sourcing or a parameter in command position",
        ));
        return seg;
    }
    if name.contains('\\') && !name.contains('/') && !looks_like_path(&name) {
        // `Module\Cmdlet`: what it runs depends on the modules loaded.
        seg.words = cmd.words;
        seg.flag(unsupported("module-qualified command"));
        return seg;
    }
    match Cmdlet::named(&name) {
        Some(cmdlet) => match translate(cmdlet, &cmd) {
            Ok(posix) => {
                let mut spelled = cmd.words.clone();
                spelled[0] = cmdlet.canonical().to_string();
                seg.shown = Some(spelled.join(" "));
                seg.wrappers.push(spelled);
                seg.via.push(cmdlet.canonical().to_string());
                seg.words = posix;
            }
            Err(why) => {
                seg.words = cmd.words;
                seg.words[0] = cmdlet.canonical().to_string();
                seg.flag(unsupported(&why));
            }
        },
        None if runs_code(&name) => {
            seg.words = cmd.words;
            seg.flag(Opaque::HiddenCode);
        }
        None => {
            // A native program (`git`, `cargo`): its own words, the name as
            // Windows finds it (case-insensitive, `.exe` optional).
            // PowerShell hands a native program its arguments as strings.
            let mut words = cmd.words;
            let lower = name.to_ascii_lowercase();
            if !name.contains(['/', '\\']) {
                words[0] = lower.strip_suffix(".exe").unwrap_or(&lower).to_string();
            }
            seg.words = words;
        }
    }
    seg
}

/// Commands whose arguments are code PowerShell runs, or that change what
/// later names mean: never plain, whatever their words.
fn runs_code(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let n = n.strip_suffix(".exe").unwrap_or(&n);
    matches!(
        n,
        "invoke-expression"
            | "iex"
            | "invoke-command"
            | "icm"
            | "start-job"
            | "sajb"
            | "start-process"
            | "saps"
            | "start"
            | "invoke-item"
            | "ii"
            | "add-type"
            | "new-object"
            | "set-alias"
            | "sal"
            | "new-alias"
            | "nal"
            | "import-module"
            | "ipmo"
            | "set-item"
            | "si"
            | "new-item"
            | "ni"
            | "powershell"
            | "pwsh"
            | "cmd"
            | "wsl"
            | "bash"
            | "sh"
            | "foreach-object"
            | "%"
    )
}

fn looks_like_path(w: &str) -> bool {
    w.starts_with('.') || w.starts_with('\\') || has_drive(w)
}

fn has_drive(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// `Env:PATH`, `HKLM:\Software`, `Cert:\`: a PowerShell drive other than a
/// file-system letter.
fn is_provider_path(w: &str) -> bool {
    match w.split_once(':') {
        Some((drive, _)) => {
            drive.len() > 1
                && drive.chars().all(|c| c.is_ascii_alphanumeric())
                && !w.contains("://")
        }
        None => false,
    }
}

/// The cmdlets read as a POSIX command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmdlet {
    GetChildItem,
    GetContent,
    SelectString,
    TestPath,
    GetLocation,
    ResolvePath,
    GetItem,
    GetDate,
    WriteOutput,
    /// Object filters reading only their input (`Select-Object`, `Sort-Object`, …).
    Filter(&'static str),
    RemoveItem,
    CopyItem,
    MoveItem,
    InvokeWebRequest,
    InvokeRestMethod,
}

impl Cmdlet {
    /// The cmdlet a name or built-in alias stands for (case-insensitive).
    fn named(name: &str) -> Option<Self> {
        let n = name.to_ascii_lowercase();
        Some(match n.as_str() {
            "get-childitem" | "gci" | "ls" | "dir" => Self::GetChildItem,
            "get-content" | "gc" | "cat" | "type" => Self::GetContent,
            "select-string" | "sls" => Self::SelectString,
            "test-path" => Self::TestPath,
            "get-location" | "gl" | "pwd" => Self::GetLocation,
            "resolve-path" | "rvpa" => Self::ResolvePath,
            "get-item" | "gi" => Self::GetItem,
            "get-date" => Self::GetDate,
            "write-output" | "echo" | "write" => Self::WriteOutput,
            "select-object" | "select" => Self::Filter("Select-Object"),
            "sort-object" | "sort" => Self::Filter("Sort-Object"),
            "measure-object" | "measure" => Self::Filter("Measure-Object"),
            "where-object" | "where" => Self::Filter("Where-Object"),
            "format-table" | "ft" => Self::Filter("Format-Table"),
            "format-list" | "fl" => Self::Filter("Format-List"),
            "out-string" => Self::Filter("Out-String"),
            "get-unique" | "gu" => Self::Filter("Get-Unique"),
            "group-object" | "group" => Self::Filter("Group-Object"),
            "remove-item" | "rm" | "del" | "erase" | "ri" | "rd" | "rmdir" => Self::RemoveItem,
            "copy-item" | "cp" | "copy" | "cpi" => Self::CopyItem,
            "move-item" | "mv" | "move" | "mi" => Self::MoveItem,
            "invoke-webrequest" | "iwr" | "curl" | "wget" => Self::InvokeWebRequest,
            "invoke-restmethod" | "irm" => Self::InvokeRestMethod,
            _ => return None,
        })
    }

    fn canonical(self) -> &'static str {
        match self {
            Self::GetChildItem => "Get-ChildItem",
            Self::GetContent => "Get-Content",
            Self::SelectString => "Select-String",
            Self::TestPath => "Test-Path",
            Self::GetLocation => "Get-Location",
            Self::ResolvePath => "Resolve-Path",
            Self::GetItem => "Get-Item",
            Self::GetDate => "Get-Date",
            Self::WriteOutput => "Write-Output",
            Self::Filter(name) => name,
            Self::RemoveItem => "Remove-Item",
            Self::CopyItem => "Copy-Item",
            Self::MoveItem => "Move-Item",
            Self::InvokeWebRequest => "Invoke-WebRequest",
            Self::InvokeRestMethod => "Invoke-RestMethod",
        }
    }

    /// Its parameters: (name, takes a value, what the value is). Positional
    /// arguments are `Path` unless [`Cmdlet::positional`] says otherwise.
    fn params(self) -> &'static [(&'static str, Param)] {
        use Param::*;
        match self {
            Self::GetChildItem => &[
                ("path", Path),
                ("literalpath", Path),
                ("filter", Value),
                ("include", Value),
                ("exclude", Value),
                ("depth", Value),
                ("recurse", Recurse),
                ("force", Switch),
                ("name", Switch),
                ("file", Switch),
                ("directory", Switch),
                ("hidden", Switch),
            ],
            Self::GetContent => &[
                ("path", Path),
                ("literalpath", Path),
                ("totalcount", Value),
                ("head", Value),
                ("first", Value),
                ("tail", Value),
                ("last", Value),
                ("encoding", Value),
                ("raw", Switch),
            ],
            Self::SelectString => &[
                ("pattern", Pattern),
                ("path", Path),
                ("literalpath", Path),
                ("context", Value),
                ("encoding", Value),
                ("include", Value),
                ("exclude", Value),
                ("simplematch", Switch),
                ("casesensitive", Switch),
                ("notmatch", Switch),
                ("allmatches", Switch),
                ("list", Switch),
                ("quiet", Switch),
                ("raw", Switch),
            ],
            Self::TestPath => &[
                ("path", Path),
                ("literalpath", Path),
                ("pathtype", Value),
                ("isvalid", Switch),
            ],
            Self::ResolvePath => &[("path", Path), ("literalpath", Path), ("relative", Switch)],
            Self::GetItem => &[("path", Path), ("literalpath", Path), ("force", Switch)],
            Self::GetLocation | Self::GetDate => &[],
            Self::WriteOutput => &[("noenumerate", Switch)],
            Self::Filter(_) => &[],
            Self::RemoveItem => &[
                ("path", Path),
                ("literalpath", Path),
                ("recurse", Recurse),
                ("force", Force),
            ],
            Self::CopyItem | Self::MoveItem => &[
                ("path", Path),
                ("literalpath", Path),
                ("destination", Path),
                ("recurse", Recurse),
                ("force", Force),
            ],
            Self::InvokeWebRequest | Self::InvokeRestMethod => &[("uri", Path)],
        }
    }

    /// What a positional argument is, by position.
    fn positional(self, index: usize) -> Param {
        match (self, index) {
            (Self::SelectString, 0) => Param::Pattern,
            (Self::WriteOutput | Self::Filter(_), _) => Param::Value,
            _ => Param::Path,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Param {
    /// A path (or URL): judged as the POSIX command's operand.
    Path,
    /// `Select-String`'s pattern.
    Pattern,
    /// A value that names no file (a count, an encoding, a filter).
    Value,
    Switch,
    /// `-Recurse`: `-r` for the POSIX command.
    Recurse,
    /// `-Force`: `-f`.
    Force,
}

/// Read a cmdlet call as the POSIX command that does the same, or say why not.
fn translate(cmdlet: Cmdlet, cmd: &Command) -> Result<Vec<String>, String> {
    let mut paths: Vec<String> = Vec::new();
    let mut pattern: Option<String> = None;
    let mut flags: Vec<&str> = Vec::new();
    let mut values: Vec<String> = Vec::new();
    let mut positional = 0;
    let mut i = 1;
    while i < cmd.words.len() {
        let w = &cmd.words[i];
        let is_param = !cmd.quoted[i] && w.len() > 1 && w.starts_with('-');
        if is_param && matches!(cmdlet, Cmdlet::Filter(_)) {
            // An object filter reads only its input: no parameter names a file.
            i += 1;
            continue;
        }
        let (kind, value) = if is_param {
            let (name, inline) = match w[1..].split_once(':') {
                Some((n, v)) => (n.to_ascii_lowercase(), Some(v.to_string())),
                None => (w[1..].to_ascii_lowercase(), None),
            };
            let Some(&(_, kind)) = cmdlet.params().iter().find(|(p, _)| *p == name) else {
                return Err(format!(
                    "{} parameter {w} the allow-list does not know",
                    cmdlet.canonical()
                ));
            };
            match kind {
                Param::Switch | Param::Recurse | Param::Force => {
                    if inline.is_some() {
                        return Err(format!("switch {w} with a value"));
                    }
                    if kind == Param::Recurse {
                        flags.push("-r");
                    } else if kind == Param::Force {
                        flags.push("-f");
                    }
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let value = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    match cmd.words.get(i) {
                        Some(v) => v.clone(),
                        None => return Err(format!("{w} without a value")),
                    }
                }
            };
            (kind, value)
        } else {
            positional += 1;
            (cmdlet.positional(positional - 1), w.clone())
        };
        match kind {
            Param::Path => {
                if is_provider_path(&value) {
                    return Err(format!("provider path {value}"));
                }
                // The cmdlet expands `*` and `?` itself (`Get-Content .e*` is
                // `.env`): the engine would judge the pattern, not the files.
                if value.contains(['*', '?']) {
                    return Err(format!("wildcard path {value}"));
                }
                // `C:foo`: relative to that drive's own current directory.
                if has_drive(&value) && !value[2..].starts_with(['/', '\\']) {
                    return Err(format!("drive-relative path {value}"));
                }
                paths.push(value)
            }
            Param::Pattern if pattern.is_none() => pattern = Some(value),
            Param::Pattern => return Err("two patterns".into()),
            _ => values.push(value),
        }
        i += 1;
    }
    flags.dedup();
    let s = |v: &str| v.to_string();
    let mut out: Vec<String> = match cmdlet {
        Cmdlet::GetChildItem => [s("ls")]
            .into_iter()
            .chain(
                flags
                    .iter()
                    .map(|f| s(if *f == "-r" { "-R" } else { "-a" })),
            )
            .collect(),
        Cmdlet::GetContent => vec![s("cat")],
        Cmdlet::SelectString => match pattern {
            Some(p) => vec![s("grep"), s("-e"), p],
            None => return Err("Select-String without a pattern".into()),
        },
        Cmdlet::TestPath => vec![s("stat")],
        Cmdlet::GetLocation => vec![s("pwd")],
        Cmdlet::ResolvePath => vec![s("realpath")],
        Cmdlet::GetItem => vec![s("ls"), s("-d")],
        Cmdlet::GetDate => vec![s("date")],
        Cmdlet::WriteOutput => [s("echo")].into_iter().chain(values).collect(),
        Cmdlet::Filter(_) => vec![s("cat")],
        Cmdlet::RemoveItem => [s("rm")]
            .into_iter()
            .chain(flags.iter().map(|f| s(f)))
            .collect(),
        Cmdlet::CopyItem => [s("cp")]
            .into_iter()
            .chain(flags.iter().map(|f| s(f)))
            .collect(),
        Cmdlet::MoveItem => [s("mv")]
            .into_iter()
            .chain(flags.iter().filter(|f| **f == "-f").map(|f| s(f)))
            .collect(),
        Cmdlet::InvokeWebRequest | Cmdlet::InvokeRestMethod => vec![s("curl")],
    };
    if !matches!(cmdlet, Cmdlet::WriteOutput | Cmdlet::Filter(_)) && !paths.is_empty() {
        out.push(s("--"));
    }
    if matches!(
        cmdlet,
        Cmdlet::GetLocation | Cmdlet::GetDate | Cmdlet::WriteOutput | Cmdlet::Filter(_)
    ) && !paths.is_empty()
    {
        return Err(format!("{} with a path", cmdlet.canonical()));
    }
    out.extend(paths);
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn words(cmd: &str) -> Vec<Vec<String>> {
        parse(cmd).segments.into_iter().map(|s| s.words).collect()
    }

    fn opaque(cmd: &str) -> bool {
        parse(cmd).segments.iter().any(|s| !s.opaque.is_empty())
    }

    #[test]
    fn cmdlets_read_as_the_posix_command_that_does_the_same() {
        let cases: &[(&str, &[&str])] = &[
            ("Get-ChildItem src", &["ls", "--", "src"]),
            ("gci -Recurse -Path src", &["ls", "-R", "--", "src"]),
            ("dir", &["ls"]),
            ("get-content README.md", &["cat", "--", "README.md"]),
            ("cat -Path:a.txt -TotalCount 5", &["cat", "--", "a.txt"]),
            (
                "Select-String -Pattern 'fn main' -Path src\\main.rs",
                &["grep", "-e", "fn main", "--", "src\\main.rs"],
            ),
            (
                "sls TODO a.rs b.rs",
                &["grep", "-e", "TODO", "--", "a.rs", "b.rs"],
            ),
            ("Test-Path .env", &["stat", "--", ".env"]),
            (
                "Remove-Item -Recurse -Force build",
                &["rm", "-r", "-f", "--", "build"],
            ),
            (
                "iwr https://example.com/x",
                &["curl", "--", "https://example.com/x"],
            ),
            ("Write-Output \"hello world\"", &["echo", "hello world"]),
        ];
        for (cmd, want) in cases {
            assert_eq!(words(cmd), vec![want.to_vec()], "{cmd}");
            assert!(!opaque(cmd), "{cmd}");
        }
    }

    #[test]
    fn pipelines_and_statements_are_segments() {
        let p = parse("gci src | Select-String foo; git status && Get-Location");
        let w: Vec<_> = p.segments.iter().map(|s| s.words.join(" ")).collect();
        assert_eq!(
            w,
            ["ls -- src", "grep -e foo", "git status", "pwd"].map(String::from)
        );
        assert!(p.segments[0].in_pipeline && p.segments[1].in_pipeline);
        assert!(!p.segments[2].in_pipeline);
        assert_eq!(p.segments[0].display(), "Get-ChildItem src");
        assert_eq!(words("GIT.EXE log -1"), vec![vec!["git", "log", "-1"]]);
    }

    #[test]
    fn anything_powershell_evaluates_is_opaque() {
        for cmd in [
            "Get-Content $env:USERPROFILE\\.ssh\\id_rsa",
            "Get-Content \"$HOME\\x\"",
            "gci (Get-Location)",
            "gci | ForEach-Object { rm $_ }",
            "git status > out.txt",
            "& 'C:\\x.exe'",
            ". .\\profile.ps1",
            "gci @args",
            "Get-Content a,b",
            "[IO.File]::ReadAllText('x')",
            "echo `$x",
            "git log --% $x",
            "Get-Content Env:API_KEY",
            "gci HKLM:\\Software",
            "Get-Content -Stream secret a.txt",
            "Get-Content .e*",
            "gc ?env",
            "Select-String key -Path *",
            "Get-Content C:secrets.txt",
            "Get-Content \u{2013}Path a.txt",
            "Microsoft.PowerShell.Management\\Get-ChildItem",
            "gci |",
            "",
            "Get-Content 'unterminated",
        ] {
            assert!(opaque(cmd), "{cmd} must not be plain: {:?}", parse(cmd));
        }
    }
}
