//! Path canonicalisation: the only module that touches the file system. It
//! turns a path as spelled by a tool or a shell argument into the canonical
//! forms the pure evaluator matches ([`PathForm`]): the spelled path
//! (lexically normalised) and the real target (symlinks resolved).

use std::collections::VecDeque;
use std::fs;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use crate::error::PathError;
use crate::rules::PathForm;

/// Maximum number of symlinks followed while resolving one path.
pub const MAX_SYMLINKS: usize = 40;

/// A path in canonical forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalPath {
    /// As given by the caller.
    pub raw: String,
    /// Lexically normalised (`.`/`..` removed) absolute path, symlinks not followed.
    pub spelled: PathForm,
    /// Real target: every symlink that exists resolved.
    pub real: PathForm,
}

impl CanonicalPath {
    /// The distinct forms (one when spelled and real agree).
    pub fn forms(&self) -> Vec<&PathForm> {
        if self.spelled == self.real {
            vec![&self.spelled]
        } else {
            vec![&self.spelled, &self.real]
        }
    }

    /// Is any form outside the project root?
    pub fn outside_project(&self) -> bool {
        self.spelled.rel.is_none() || self.real.rel.is_none()
    }

    /// Short display form: project-relative when inside, else absolute.
    pub fn display(&self) -> String {
        match &self.spelled.rel {
            Some(r) if r.is_empty() => ".".into(),
            Some(r) => r.clone(),
            None => self.spelled.abs.clone(),
        }
    }
}

/// Turns spelled paths into canonical ones. [`PathContext`] is the file-system
/// implementation; the evaluator only sees this trait.
pub trait PathResolver: Sync {
    /// Canonicalise `raw`; relative paths are resolved against `base` (itself
    /// relative to the project root, or absolute, or `~`-prefixed) or the project root.
    fn resolve(&self, raw: &str, base: Option<&str>) -> Result<CanonicalPath, PathError>;
}

/// File-system backed path canonicalisation for one project.
#[derive(Debug, Clone)]
pub struct PathContext {
    /// The project root, symlinks resolved.
    pub root: PathBuf,
    /// The project root as given (absolute, lexically normalised).
    pub root_spelled: PathBuf,
    pub home: Option<PathBuf>,
    pub case_insensitive: bool,
}

/// Reject NUL, control and invisible formatting characters.
pub fn check_chars(raw: &str) -> Result<(), PathError> {
    if raw.contains('\0') {
        return Err(PathError::Nul(raw.to_string()));
    }
    if raw.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}')
    }) {
        return Err(PathError::ControlCharacter(raw.to_string()));
    }
    Ok(())
}

/// Lexical normalisation of an absolute path: drop `.`, apply `..` (never above `/`).
pub fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(x) => out.push(x.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// Resolve every existing symlink component by component, like the kernel
/// does (`link/..` is the parent of the link's target). Components that do not
/// exist are kept as spelled.
pub fn resolve_real(abs: &Path) -> Result<PathBuf, PathError> {
    resolve_real_from(PathBuf::from("/"), abs, abs)
}

/// [`resolve_real`] for `rest` below `start`, an already resolved directory.
fn resolve_real_from(start: PathBuf, rest: &Path, abs: &Path) -> Result<PathBuf, PathError> {
    let mut queue: VecDeque<PathBuf> = rest
        .components()
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    let mut cur = start;
    let mut hops = 0usize;
    while let Some(c) = queue.pop_front() {
        let comp = c.components().next();
        match comp {
            None | Some(Component::CurDir) => {}
            // `C:\`: the root of the drive the prefix named, not `/`.
            Some(Component::RootDir) => {
                let prefix = match cur.components().next() {
                    Some(Component::Prefix(p)) => PathBuf::from(p.as_os_str()),
                    _ => PathBuf::new(),
                };
                cur = prefix.join(std::path::MAIN_SEPARATOR_STR);
            }
            Some(Component::Prefix(p)) => cur = PathBuf::from(p.as_os_str()),
            Some(Component::ParentDir) => {
                cur.pop();
            }
            Some(Component::Normal(n)) => {
                let next = cur.join(n);
                match fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        hops += 1;
                        if hops > MAX_SYMLINKS {
                            return Err(PathError::SymlinkLoop(abs.display().to_string()));
                        }
                        let target = fs::read_link(&next)
                            .map_err(|_| PathError::SymlinkLoop(abs.display().to_string()))?;
                        if target.is_absolute() {
                            cur = PathBuf::from("/");
                        }
                        for (i, tc) in target.components().enumerate() {
                            queue.insert(i, PathBuf::from(tc.as_os_str()));
                        }
                    }
                    _ => cur = next,
                }
            }
        }
    }
    Ok(cur)
}

/// NFC form (ASCII is already NFC: no work).
pub(crate) fn nfc(s: &str) -> String {
    if s.is_ascii() {
        s.to_string()
    } else {
        s.nfc().collect()
    }
}

fn to_slash(p: &Path) -> String {
    let s = nfc(&p.to_string_lossy());
    if cfg!(windows) { windows_form(&s) } else { s }
}

/// A Windows path as rules see it: `/`-separated, the verbatim and device
/// prefixes dropped (`\\?\C:\x` and `\\.\C:\x` are `C:/x`,
/// `\\?\UNC\srv\share` is `//srv/share`) and the drive letter upper-case,
/// so every spelling of one file is one string. Pure: tested on every system.
pub fn windows_form(s: &str) -> String {
    let slashed = s.replace('\\', "/");
    let rest = if let Some(r) = slashed
        .strip_prefix("//?/UNC/")
        .or_else(|| slashed.strip_prefix("//./UNC/"))
    {
        format!("//{r}")
    } else if let Some(r) = slashed
        .strip_prefix("//?/")
        .or_else(|| slashed.strip_prefix("//./"))
        .or_else(|| slashed.strip_prefix("/??/"))
    {
        r.to_string()
    } else {
        slashed
    };
    let b = rest.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_lowercase() && b[1] == b':' {
        let mut out = rest.clone();
        out.replace_range(0..1, &rest[0..1].to_ascii_uppercase());
        return out;
    }
    rest
}

/// Does `s` spell a Windows path (a drive, or a `\\` / `//?/` prefix)?
pub fn is_windows_path(s: &str) -> bool {
    let b = s.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/'))
        || s.starts_with("\\\\")
        || s.starts_with("//?/")
        || s.starts_with("//./")
}

/// Component-wise containment (`/proj` does not contain `/proj_evil`); returns
/// the relative path, `""` for the root itself.
pub fn relative_to(path: &Path, root: &Path, case_insensitive: bool) -> Option<String> {
    let same = |a: &str, b: &str| {
        if a == b {
            return true;
        }
        let (a, b) = (nfc(a), nfc(b));
        if case_insensitive {
            a.to_lowercase() == b.to_lowercase()
        } else {
            a == b
        }
    };
    let mut pc = path.components();
    for rc in root.components() {
        let p = pc.next()?;
        if !same(
            &rc.as_os_str().to_string_lossy(),
            &p.as_os_str().to_string_lossy(),
        ) {
            return None;
        }
    }
    let rest: Vec<String> = pc.map(|c| nfc(&c.as_os_str().to_string_lossy())).collect();
    Some(rest.join("/"))
}

/// Probe whether the file system holding `dir` compares names case-insensitively.
pub fn detect_case_insensitive(dir: &Path) -> bool {
    let Some(name) = dir.file_name().map(|n| n.to_string_lossy().to_string()) else {
        return cfg!(any(windows, target_os = "macos"));
    };
    let flipped: String = name
        .chars()
        .map(|c| {
            if c.is_lowercase() {
                c.to_uppercase().next().unwrap_or(c)
            } else {
                c.to_lowercase().next().unwrap_or(c)
            }
        })
        .collect();
    if flipped == name {
        return cfg!(any(windows, target_os = "macos"));
    }
    let Some(parent) = dir.parent() else {
        return false;
    };
    match (fs::metadata(dir), fs::metadata(parent.join(&flipped))) {
        (Ok(a), Ok(b)) => same_file(&a, &b),
        _ => false,
    }
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.ino() == b.ino() && a.dev() == b.dev()
}

#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

impl PathContext {
    /// Build the context for a project root (resolves the root and probes case sensitivity).
    pub fn new(project_root: &Path, home: Option<PathBuf>) -> Result<Self, PathError> {
        let abs = if project_root.is_absolute() {
            project_root.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| PathError::ProjectRoot(project_root.to_path_buf(), e.to_string()))?
                .join(project_root)
        };
        let root_spelled = lexical_normalize(&abs);
        let root = dunce::canonicalize(&root_spelled)
            .map_err(|e| PathError::ProjectRoot(project_root.to_path_buf(), e.to_string()))?;
        let case_insensitive = detect_case_insensitive(&root);
        // Kept as given: `~/` in rule patterns expands to the same spelling, and
        // the real form of a path (symlinks resolved) is matched as well.
        Ok(Self {
            root,
            root_spelled,
            home,
            case_insensitive,
        })
    }

    /// Same, with an explicit case sensitivity (tests, or a known file system).
    pub fn with_case_insensitive(mut self, ci: bool) -> Self {
        self.case_insensitive = ci;
        self
    }

    fn expand(&self, raw: &str) -> Result<PathBuf, PathError> {
        if raw == "~" || raw.starts_with("~/") {
            let home = self
                .home
                .as_ref()
                .ok_or_else(|| PathError::NoHome(raw.to_string()))?;
            return Ok(match raw.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => home.clone(),
            });
        }
        if raw.starts_with('~') {
            return Err(PathError::OtherUserHome(raw.to_string()));
        }
        Ok(PathBuf::from(raw))
    }

    fn form(&self, p: &Path) -> PathForm {
        let rel = relative_to(p, &self.root, self.case_insensitive)
            .or_else(|| relative_to(p, &self.root_spelled, self.case_insensitive));
        PathForm::new(to_slash(p), rel, self.case_insensitive)
    }
}

impl PathResolver for PathContext {
    fn resolve(&self, raw: &str, base: Option<&str>) -> Result<CanonicalPath, PathError> {
        if raw.is_empty() {
            return Err(PathError::Empty);
        }
        check_chars(raw)?;
        let p = self.expand(raw)?;
        let abs = if p.is_absolute() {
            p
        } else {
            let base_dir = match base {
                Some(b) => {
                    check_chars(b)?;
                    let b = self.expand(b)?;
                    if b.is_absolute() {
                        b
                    } else {
                        self.root.join(b)
                    }
                }
                None => self.root.clone(),
            };
            base_dir.join(p)
        };
        // `\\?\C:\x` is `C:\x` (the root was resolved without the prefix).
        let abs = dunce::simplified(&abs).to_path_buf();
        let spelled = lexical_normalize(&abs);
        // The root is already resolved: start below it when the path is spelled under it.
        let real = match abs.strip_prefix(&self.root) {
            Ok(rest) => resolve_real_from(self.root.clone(), rest, &abs)?,
            Err(_) => resolve_real(&abs)?,
        };
        let real = dunce::simplified(&real).to_path_buf();
        Ok(CanonicalPath {
            raw: raw.to_string(),
            spelled: self.form(&spelled),
            real: self.form(&real),
        })
    }
}
