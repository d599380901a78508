//! git: global options, subcommands on the read-only list, dangerous
//! long options (git accepts unique prefixes), `git config` keys that name
//! commands, and the paths `git show REV:path` reads.

use super::{Analysis, Hazard, RUNS, WRITES};
/// Long options of git subcommands that run programs or write files; git
/// accepts any unique prefix of a long option, so a prefix of one of these is one of these.
const GIT_DANGEROUS_LONG: &[(&str, &str)] = &[
    ("output", WRITES),
    ("open-files-in-pager", RUNS),
    ("ext-diff", RUNS),
    ("upload-pack", RUNS),
    ("receive-pack", RUNS),
    ("exec", RUNS),
    ("extcmd", RUNS),
    ("tool", RUNS),
    ("config-env", RUNS),
];

/// `git config` keys whose values are commands.
fn git_key_runs(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.starts_with("alias.")
        || k.ends_with(".pager")
        || k.starts_with("pager.")
        || k.starts_with("filter.")
        || k.starts_with("diff.") && (k.ends_with(".textconv") || k.ends_with(".command"))
        || k.starts_with("merge.") && k.ends_with(".driver")
        || k.starts_with("credential")
        || matches!(
            k.as_str(),
            "core.pager"
                | "core.editor"
                | "core.sshcommand"
                | "core.hookspath"
                | "core.fsmonitor"
                | "core.askpass"
                | "core.gitproxy"
                | "diff.external"
                | "sequence.editor"
                | "gpg.program"
                | "gpg.ssh.program"
                | "gpg.x509.program"
                | "web.browser"
                | "uploadpack.packobjectshook"
                | "include.path"
        )
        || k.starts_with("includeif.")
        || k.starts_with("gpg.") && k.ends_with(".program")
}

/// The git subcommand after global options, and whether those options are harmless.
pub fn git_subcommand(words: &[String]) -> (Option<usize>, Vec<Hazard>, bool) {
    let mut hazards = Vec::new();
    let mut harmless = true;
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        if !w.starts_with('-') {
            return (Some(i), hazards, harmless);
        }
        match w {
            "--no-pager"
            | "--no-optional-locks"
            | "-P"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-advice"
            | "--paginate"
            | "-p" => {}
            // `--bare` treats the directory as a repository: one shipped
            // inside the project brings its own config (diff.external, ...).
            "--bare" => harmless = false,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => {
                harmless = false;
                i += 1;
            }
            "-c" => {
                let kv = words.get(i + 1).map(String::as_str).unwrap_or("");
                let key = kv.split('=').next().unwrap_or(kv);
                hazards.push(Hazard::new(
                    format!("-c {kv}"),
                    if git_key_runs(key) {
                        RUNS
                    } else {
                        "sets configuration for this command (can run programs)"
                    },
                ));
                i += 1;
            }
            _ if w.starts_with("--exec-path") => {
                hazards.push(Hazard::new(w, RUNS));
            }
            _ if w.starts_with("--config-env") => {
                hazards.push(Hazard::new(w, RUNS));
                if !w.contains('=') {
                    i += 1;
                }
            }
            _ if w.starts_with("--git-dir=")
                || w.starts_with("--work-tree=")
                || w.starts_with("--namespace=") =>
            {
                harmless = false;
            }
            _ if w.starts_with("-C") || w.starts_with("-c") => {
                // attached forms `-C.` / `-calias.x=!sh`
                if w.starts_with("-c") {
                    hazards.push(Hazard::new(w, RUNS));
                }
                harmless = false;
            }
            _ => harmless = false,
        }
        i += 1;
    }
    (None, hazards, harmless)
}

/// The words of a git command with its global options removed (`git -C . push` → `git push`).
pub fn git_without_globals(words: &[String]) -> Option<Vec<String>> {
    let (sub, _, _) = git_subcommand(words);
    let sub = sub?;
    if sub == 1 {
        return None;
    }
    let mut v = vec![words[0].clone()];
    v.extend(words[sub..].iter().cloned());
    Some(v)
}

pub(super) fn git(words: &[String]) -> Analysis {
    let mut a = Analysis {
        understood: true,
        ..Default::default()
    };
    let (sub_at, hazards, harmless_globals) = git_subcommand(words);
    a.hazards = hazards;
    let Some(si) = sub_at else {
        return a;
    };
    let sub = words[si].as_str();
    let rest = &words[si..];
    for w in rest.iter().skip(1) {
        if w == "--" {
            break;
        }
        if let Some(body) = w.strip_prefix("--") {
            let name = body.split('=').next().unwrap_or("");
            if name.len() >= 2 || name == "o" || name == "e" {
                for (d, why) in GIT_DANGEROUS_LONG {
                    // `--no-ext-diff` is harmless; `--ext`, `--op`, `--output=x` are not.
                    if d.starts_with(name) {
                        a.hazards.push(Hazard::new(w.clone(), why));
                        if *why == WRITES
                            && let Some((_, v)) = body.split_once('=')
                        {
                            a.writes.push(v.to_string());
                        }
                    }
                }
            }
        } else if w.starts_with('-') && w.len() > 1 && sub == "grep" && w[1..].contains('O') {
            a.hazards.push(Hazard::new(w.clone(), RUNS));
        }
    }
    // `git show REV:path`, `git cat-file -p REV:path`: the path is read.
    if matches!(sub, "show" | "cat-file" | "grep" | "archive") {
        for w in rest.iter().skip(1) {
            if !w.starts_with('-')
                && let Some((_, p)) = w.split_once(':')
                && !p.is_empty()
            {
                a.reads.push(p.to_string());
            }
        }
    }
    if sub == "grep" || sub == "archive" || sub == "bundle" {
        a.recursive = true;
    }
    if sub == "diff" && rest.iter().any(|w| w == "--no-index") {
        a.recursive = true;
    }
    if sub == "config" {
        // A read only with a read action: the flag forms, or `get`/`list`
        // as the first word after `config` (git 2.46+). A `get` or `list`
        // anywhere else is a value (`git config diff.external CMD list` sets it).
        let first = rest.get(1).map(String::as_str);
        let setting = !(rest.iter().skip(1).any(|w| {
            matches!(
                w.as_str(),
                "--get" | "--list" | "-l" | "--get-all" | "--get-regexp" | "--get-urlmatch"
            )
        }) || matches!(first, Some("get" | "list")));
        let operands: Vec<&String> = rest
            .iter()
            .skip(1)
            .filter(|w| !w.starts_with('-'))
            .collect();
        if setting {
            // A set or edit: writes the repository's config; keys naming commands run them.
            a.writes.push(".git/config".into());
            let key = operands
                .iter()
                .map(|s| s.as_str())
                .find(|s| *s != "set" && *s != "unset");
            match key {
                Some(k) if git_key_runs(k) => {
                    a.hazards.push(Hazard::new(format!("config {k}"), RUNS));
                }
                _ => a.hazards.push(Hazard::new(
                    "git config",
                    "changes repository configuration",
                )),
            }
        }
    }
    a.read_only =
        harmless_globals && a.hazards.is_empty() && a.writes.is_empty() && git_sub_read_only(rest);
    a
}

fn has_flag(words: &[String], pred: impl Fn(&str) -> bool) -> bool {
    words.iter().skip(1).any(|w| w.starts_with('-') && pred(w))
}

fn git_sub_read_only(rest: &[String]) -> bool {
    let Some(sub) = rest.first() else {
        return false;
    };
    match sub.as_str() {
        "log" | "diff" | "show" | "status" | "blame" | "shortlog" | "describe" | "rev-parse"
        | "ls-files" | "ls-tree" | "cat-file" | "grep" | "whatchanged" | "rev-list"
        | "merge-base" | "name-rev" | "annotate" | "count-objects" | "for-each-ref"
        | "show-ref" | "check-ignore" | "check-attr" | "var" => {
            // textconv drivers are programs from configuration.
            !has_flag(rest, |w| w.starts_with("--textconv"))
        }
        "reflog" => rest
            .get(1)
            .is_none_or(|w| w.starts_with('-') || w == "show"),
        "branch" => rest.iter().skip(1).all(|w| {
            matches!(
                w.as_str(),
                "-a" | "-r"
                    | "-v"
                    | "-vv"
                    | "--list"
                    | "--all"
                    | "--remotes"
                    | "--show-current"
                    | "--verbose"
                    | "--no-color"
                    | "--color"
                    | "--merged"
                    | "--no-merged"
                    | "--contains"
            )
        }),
        "tag" => rest
            .iter()
            .skip(1)
            .all(|w| matches!(w.as_str(), "-l" | "--list" | "-n")),
        "remote" => rest
            .iter()
            .skip(1)
            .all(|w| matches!(w.as_str(), "-v" | "--verbose")),
        "config" => true, // reaching here means a get/list (no hazards, no writes)
        "stash" => matches!(rest.get(1).map(String::as_str), Some("list" | "show")),
        _ => false,
    }
}
