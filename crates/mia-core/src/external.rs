//! What MCP servers and plugins — programs mia-code starts and talks to —
//! share: the minimal environment they get, and the cap on what their
//! tools hand to the model.

use std::collections::BTreeMap;

/// Tool output handed to the model (the rest is cut, and said so).
pub(crate) const MAX_OUTPUT: usize = 100 * 1024;

/// Environment variables every started program gets (when set) besides
/// its configured `env`: enough to run, no keys or tokens.
const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "SystemRoot",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "PATHEXT",
    "COMSPEC",
    "WINDIR",
];

/// [`BASE_ENV`] plus `extra`, with the values `lookup` has.
pub(crate) fn base_env(
    extra: &[&str],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    BASE_ENV
        .iter()
        .chain(extra)
        .filter_map(|k| lookup(k).map(|v| (k.to_string(), v)))
        .collect()
}

/// Cut `text` to [`MAX_OUTPUT`] bytes (on a character boundary), then add
/// `note(total bytes)`. Returns whether it was cut.
pub(crate) fn cap_output(text: &mut String, note: impl FnOnce(usize) -> String) -> bool {
    if text.len() <= MAX_OUTPUT {
        return false;
    }
    let total = text.len();
    let mut cut = MAX_OUTPUT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&note(total));
    true
}

/// A program the person configured themselves (a global MCP server or
/// plugin) runs the same in every project, and nothing of a project reaches
/// it: not its working directory (npx, npm, uv and pyenv read
/// `package.json`, `node_modules`, `.npmrc`, `uv.toml`, `.python-version`
/// from there), not `PATH` entries inside it or relative ones, not a
/// same-named program in it. The project is passed only where the person's
/// config says `{project}`.
pub(crate) struct Outside<'a> {
    pub project: &'a std::path::Path,
    pub home: &'a std::path::Path,
}

/// What a person's own server must be able to read in its sandbox although
/// it may lie under the sandbox's private `/tmp`: the directory of its
/// program and of every existing file its arguments name, and every
/// existing directory they name (read-only).
pub(crate) fn named_paths(command: &str, args: &[String]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for p in std::iter::once(command).chain(args.iter().map(String::as_str)) {
        let p = std::path::Path::new(p);
        if !p.is_absolute() || p.parent().is_none() {
            continue;
        }
        let dir = if p.is_dir() {
            Some(p.to_path_buf())
        } else if p.is_file() {
            p.parent().map(std::path::Path::to_path_buf)
        } else {
            None
        };
        if let Some(d) = dir.filter(|d| d.parent().is_some() && !out.contains(d)) {
            out.push(d);
        }
    }
    out
}

/// The placeholder a person's config writes for the project's path.
pub(crate) const PROJECT_PLACEHOLDER: &str = "{project}";

impl Outside<'_> {
    /// `{project}` replaced by the project's path.
    pub(crate) fn expand(&self, s: &str) -> String {
        s.replace(PROJECT_PLACEHOLDER, &self.project.display().to_string())
    }

    fn inside(&self, p: &std::path::Path) -> bool {
        let real = dunce::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        real.starts_with(self.project)
    }

    /// `PATH` without relative entries and entries inside the project.
    pub(crate) fn path(&self, path: &str) -> String {
        let kept: Vec<std::path::PathBuf> = std::env::split_paths(path)
            .filter(|p| p.is_absolute() && !self.inside(p))
            .collect();
        std::env::join_paths(kept)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// `command` as an absolute executable outside the project: a bare
    /// name looked up on `path` (already [`Outside::path`]), `~/…` under the
    /// person's home, an absolute path as it is.
    pub(crate) fn program(&self, command: &str, path: &str) -> Result<std::path::PathBuf, String> {
        let c = std::path::Path::new(command);
        let found = if let Some(rest) = command.strip_prefix("~/") {
            self.home.join(rest)
        } else if c.is_absolute() {
            c.to_path_buf()
        } else if c.components().count() > 1 {
            return Err(format!(
                "`{command}` is a relative path: it would name a different program in every project; use an absolute path (or `~/…`)"
            ));
        } else {
            which::which_in(command, Some(path), self.home).map_err(|_| {
                format!(
                    "`{command}` is not on PATH (programs inside the project are not looked up for your own servers and plugins)"
                )
            })?
        };
        if self.inside(&found) {
            return Err(format!(
                "`{command}` resolves to {} inside the project; your own servers and plugins run nothing of a project's",
                found.display()
            ));
        }
        Ok(found)
    }
}
