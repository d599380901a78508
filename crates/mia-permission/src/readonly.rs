//! Command knowledge: the built-in read-only list (plan/explore), dangerous
//! commands (never offered "always"), writers (arguments checked as writes)
//! and the natural prefix stored by an "always" answer.

fn has_flag(words: &[String], pred: impl Fn(&str) -> bool) -> bool {
    words.iter().skip(1).any(|w| w.starts_with('-') && pred(w))
}

/// Is this simple command on the built-in read-only list, with options the
/// table knows to be harmless only ([`crate::commands`])? Path-qualified
/// programs outside the system directories (`./ls`) are never on the list.
pub fn is_read_only(words: &[String]) -> bool {
    crate::commands::analyse(words).read_only
}

/// Programs whose path arguments are written (so they are checked as `write` too).
pub fn writes_arguments(words: &[String]) -> bool {
    let Some(prog) = words.first() else {
        return false;
    };
    match prog.as_str() {
        "rm" | "rmdir" | "mv" | "cp" | "touch" | "mkdir" | "tee" | "truncate" | "ln" | "chmod"
        | "chown" | "chgrp" | "install" | "shred" | "unlink" | "rsync" | "dd" | "patch"
        | "mkfifo" | "mknod" | "unzip" | "tar" => true,
        "sed" | "perl" | "ruby" => has_flag(words, |w| {
            w.starts_with("-i")
                || w == "--in-place"
                || (w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
        }),
        "sort" => has_flag(words, |w| w.starts_with("-o") || w.starts_with("--output")),
        "git" => words.get(1).is_some_and(|s| {
            matches!(
                s.as_str(),
                "checkout"
                    | "restore"
                    | "rm"
                    | "mv"
                    | "clean"
                    | "reset"
                    | "apply"
                    | "stash"
                    | "switch"
            )
        }),
        _ => false,
    }
}

/// Programs that reach the network (URL arguments are checked as `fetch`).
pub fn is_network(prog: &str) -> bool {
    matches!(
        prog,
        "curl"
            | "wget"
            | "http"
            | "https"
            | "xh"
            | "aria2c"
            | "nc"
            | "ncat"
            | "netcat"
            | "telnet"
            | "ssh"
            | "scp"
            | "sftp"
            | "ftp"
            | "rsync"
            | "socat"
    )
}

const DANGEROUS: &[&str] = &[
    "rm",
    "rmdir",
    "dd",
    "shred",
    "mkfs",
    "fdisk",
    "parted",
    "wipefs",
    "chmod",
    "chown",
    "chgrp",
    "sudo",
    "doas",
    "su",
    "kill",
    "killall",
    "pkill",
    "reboot",
    "shutdown",
    "halt",
    "poweroff",
    "mount",
    "umount",
    "eval",
    "exec",
    "source",
    ".",
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python3",
    "python2",
    "node",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "osascript",
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "crontab",
    "systemctl",
    "launchctl",
    "iptables",
    "truncate",
    "mv",
    "xargs",
    "env",
    "nohup",
    "setsid",
    "time",
    "timeout",
    "nice",
    "command",
    "stdbuf",
    "tee",
];

/// A segment for which "always" is never offered.
/// Destructive, privileged or flagged (`rm`, `sudo`, `kill`, `eval`, a
/// hazardous flag): what still asks under the OS sandbox when its words are
/// not plain.
pub fn is_destructive_or_privileged(words: &[String]) -> bool {
    let Some(prog) = words.first() else {
        return true;
    };
    let base = prog.rsplit('/').next().unwrap_or(prog);
    DANGEROUS.contains(&base)
        || base.starts_with("mkfs")
        || !crate::commands::analyse(words).hazards.is_empty()
}

/// [`is_destructive_or_privileged`], but an interpreter or shell running
/// code is not (under the full sandbox its inline code is judged like a
/// script file it could run as well).
pub fn is_destructive_or_privileged_beyond_code(words: &[String]) -> bool {
    const CODE: &[&str] = &[
        "bash", "sh", "zsh", "dash", "ksh", "fish", "python", "python3", "python2", "node", "deno",
        "bun", "perl", "ruby", "php", "lua",
    ];
    let Some(prog) = words.first() else {
        return true;
    };
    let base = prog.rsplit('/').next().unwrap_or(prog);
    if CODE.contains(&base) {
        // Its other flags still count (`python3 -c X` is fine, `sudo` is not a flag).
        return false;
    }
    is_destructive_or_privileged(words)
}

pub fn is_dangerous(words: &[String]) -> bool {
    let Some(prog) = words.first() else {
        return true;
    };
    if prog.contains('/') {
        return true;
    }
    if !crate::commands::analyse(words).hazards.is_empty() {
        return true;
    }
    let base = prog.as_str();
    if DANGEROUS.contains(&base) || base.starts_with("mkfs") || base.starts_with("python") {
        return true;
    }
    match base {
        // Other forms of these run code in ways the flag table cannot see
        // (a sed or awk script, a pager's or editor's shell escape): an
        // "always" for one form would cover them.
        "sed" | "awk" | "gawk" | "mawk" | "nawk" | "less" | "more" | "most" | "vi" | "vim"
        | "nvim" | "emacs" | "nano" | "ed" | "ex" => true,
        "git" => git_always_risky(words),
        "npm" | "pnpm" | "yarn" | "bun" => words
            .iter()
            .skip(1)
            .any(|w| matches!(w.as_str(), "publish" | "unpublish" | "login" | "adduser")),
        "cargo" => words
            .iter()
            .skip(1)
            .any(|w| matches!(w.as_str(), "publish" | "yank" | "login" | "owner")),
        "docker" | "podman" => words.iter().skip(1).any(|w| {
            matches!(
                w.as_str(),
                "--privileged" | "rm" | "rmi" | "system" | "prune"
            )
        }),
        _ => false,
    }
}

/// git commands an "always" would be too broad for: a global option before
/// the subcommand (`git -C sub log` would store `git *`), history rewrites and config.
fn git_always_risky(words: &[String]) -> bool {
    words.get(1).is_none_or(|w| w.starts_with('-'))
        || words.iter().skip(1).any(|w| {
            matches!(
                w.as_str(),
                "push"
                    | "reset"
                    | "clean"
                    | "rebase"
                    | "filter-branch"
                    | "filter-repo"
                    | "gc"
                    | "prune"
                    | "update-ref"
                    | "-c"
                    | "--exec-path"
                    | "config"
            ) || w == "--force"
                || w.starts_with("--force")
                || w == "-f"
                || w == "-D"
        })
}

fn is_plain_token(w: &str) -> bool {
    !w.is_empty()
        && w.len() <= 40
        && w.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.' | '@'))
        && !w.contains("..")
}

/// How many leading words make a command's natural prefix.
fn prefix_depth(prog: &str, sub: Option<&str>) -> usize {
    match (prog, sub) {
        ("npm" | "pnpm" | "yarn" | "bun", Some("run" | "run-script" | "exec" | "x")) => 3,
        ("docker" | "podman", Some("compose")) => 3,
        (
            "cargo" | "go" | "git" | "npm" | "pnpm" | "yarn" | "bun" | "docker" | "podman"
            | "kubectl" | "make" | "just" | "uv" | "pip" | "pip3" | "poetry" | "gradle" | "mvn"
            | "dotnet" | "swift" | "rustup" | "brew" | "apt" | "gh" | "deno" | "npx" | "pnpx"
            | "bunx" | "mix" | "bundle" | "rake" | "composer" | "terraform" | "helm" | "tsc"
            | "pytest" | "jest" | "vitest" | "tmux" | "screen" | "systemctl" | "launchctl"
            | "ninja" | "nx" | "turbo" | "aws" | "gcloud" | "az" | "firebase" | "vercel" | "flyctl"
            | "heroku",
            _,
        ) => 2,
        _ => 1,
    }
}

/// The natural prefix of a command for an "always" answer: `npm run dev *`
/// for `npm run dev --port 3000`, `git status *` for `git status -s`. Never
/// broader than the program and its subcommand words: a command of a
/// program with subcommands given without one (`make`, `tmux -L x`) is
/// stored exactly as it is. `None` when the command has no safe prefix.
pub fn natural_prefix(words: &[String]) -> Option<String> {
    let prog = words.first()?;
    if !is_plain_token(prog) {
        return None;
    }
    let depth = prefix_depth(prog, words.get(1).map(String::as_str));
    let mut parts = vec![prog.clone()];
    for w in words.iter().skip(1).take(depth - 1) {
        if w.starts_with('-') || !is_plain_token(w) {
            break;
        }
        parts.push(w.clone());
    }
    if parts.len() < depth {
        // No subcommand: exactly this command, if its words are plain.
        return words
            .iter()
            .all(|w| {
                is_plain_token(w)
                    || (w.starts_with('-') && w.len() <= 40 && !w.contains(['*', '?', '[', '{']))
            })
            .then(|| words.join(" "));
    }
    parts.push("*".into());
    Some(parts.join(" "))
}

/// How many leading positional arguments are not paths (a pattern or script):
/// `grep PATTERN FILE`, `sed SCRIPT FILE`, `awk PROGRAM FILE` (unless the
/// pattern/script is given with -e/-f).
pub fn leading_non_path_args(words: &[String]) -> usize {
    let Some(prog) = words.first() else { return 0 };
    // The pattern or script comes from an option when any short-option
    // group contains `e`/`f` (`-e`, `-ie.`, `-rf FILE`) or a long option is
    // a prefix of `--regexp`, `--expression` or `--file` (GNU accepts
    // abbreviations: `--reg=`). Then every positional word is a path.
    let given_by_flag = |flags: &[&str]| {
        words.iter().skip(1).any(|w| {
            if let Some(long) = w.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or("");
                return !name.is_empty()
                    && ["regexp", "expression", "file", "source"]
                        .iter()
                        .any(|full| full.starts_with(name));
            }
            w.len() > 1
                && w.starts_with('-')
                && flags
                    .iter()
                    .filter_map(|f| f.strip_prefix('-'))
                    .any(|f| w[1..].contains(f))
        })
    };
    match prog.as_str() {
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => {
            usize::from(!given_by_flag(&["-e", "-f"]))
        }
        "sed" => usize::from(!given_by_flag(&["-e", "-f"])),
        "awk" | "gawk" | "mawk" | "nawk" => usize::from(!given_by_flag(&["-f"])),
        _ => 0,
    }
}
