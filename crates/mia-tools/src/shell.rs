//! Which shell runs the `bash` tool's commands.
//!
//! On Linux and macOS it is `bash` from `PATH`. Windows has no bash of its
//! own, so [`select`] looks, in this order, for:
//!
//! 1. `MIA_CODE_SHELL`: a path to `bash.exe`, `pwsh.exe` or `powershell.exe`;
//! 2. Git for Windows' bash (`Git\bin\bash.exe` under Program Files or
//!    `%LOCALAPPDATA%\Programs`), then a `bash.exe` on `PATH`, except
//!    `System32\bash.exe`: that is the WSL launcher, whose commands run in a
//!    Linux VM that sees the project under another path;
//! 3. PowerShell: `pwsh.exe` on `PATH`, then Windows PowerShell.
//!
//! With PowerShell the permission engine is told so (mia-core passes
//! [`ShellKind::PowerShell`] on as `ShellDialect::PowerShell`): it reads plain
//! PowerShell (the read-only cmdlets as their POSIX twins, native programs as
//! their words) and asks for anything PowerShell would evaluate.
//!
//! Selection is a pure function of the environment and a file probe, so
//! every branch is unit tested on any OS.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Overrides the shell (a path to bash or PowerShell).
pub const SHELL_ENV: &str = "MIA_CODE_SHELL";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    Bash,
    PowerShell,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shell {
    pub kind: ShellKind,
    pub program: PathBuf,
}

impl Shell {
    /// The arguments that run `command` and exit.
    pub fn args(&self, command: &str) -> Vec<String> {
        match self.kind {
            ShellKind::Bash => vec!["-c".into(), command.into()],
            ShellKind::PowerShell => vec![
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-NonInteractive".into(),
                "-Command".into(),
                command.into(),
            ],
        }
    }

    /// `bash` or `PowerShell (C:\...\pwsh.exe)`, for messages and Settings.
    pub fn describe(&self) -> String {
        match self.kind {
            ShellKind::Bash if self.program == Path::new("bash") => "bash".into(),
            ShellKind::Bash => format!("bash ({})", self.program.display()),
            ShellKind::PowerShell => format!("PowerShell ({})", self.program.display()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error(
        "{SHELL_ENV} is {0}, which is not a file; point it at bash.exe, pwsh.exe or powershell.exe, or unset it"
    )]
    OverrideMissing(String),
    #[error(
        "{SHELL_ENV} is {0}; it must name bash, pwsh or powershell (the command line is passed as `-c` or `-Command`)"
    )]
    OverrideUnknown(String),
    #[error(
        "no shell for commands: install Git for Windows (it brings bash) or PowerShell 7, or set {SHELL_ENV} to a bash.exe"
    )]
    NotFound,
}

/// The operating systems selection distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Unix,
    Windows,
}

impl Os {
    pub const fn current() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else {
            Self::Unix
        }
    }
}

/// What selection may look at.
pub struct Probe<'a> {
    pub os: Os,
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
    pub is_file: &'a dyn Fn(&Path) -> bool,
}

fn kind_of(program: &Path) -> Option<ShellKind> {
    let stem = program.file_stem()?.to_string_lossy().to_ascii_lowercase();
    match stem.as_str() {
        "bash" | "sh" => Some(ShellKind::Bash),
        "pwsh" | "powershell" => Some(ShellKind::PowerShell),
        _ => None,
    }
}

/// Windows' path list separator is `;`, Unix's `:`; parsed for the target
/// OS (not the host's) so the Windows rules are testable everywhere.
fn path_dirs(os: Os, path: &OsString) -> Vec<PathBuf> {
    let sep = if os == Os::Windows { ';' } else { ':' };
    path.to_string_lossy()
        .split(sep)
        .filter(|d| !d.trim().is_empty())
        .map(|d| PathBuf::from(d.trim().trim_matches('"')))
        .collect()
}

fn same_path_ci(a: &Path, b: &Path) -> bool {
    let norm = |p: &Path| {
        p.to_string_lossy()
            .replace('/', "\\")
            .trim_end_matches('\\')
            .to_lowercase()
    };
    norm(a) == norm(b)
}

/// Pick the shell (see the module docs for the order).
pub fn select(p: &Probe<'_>) -> Result<Shell, ShellError> {
    if let Some(raw) = (p.env)(SHELL_ENV).filter(|v| !v.is_empty()) {
        let program = PathBuf::from(&raw);
        let kind = kind_of(&program)
            .ok_or_else(|| ShellError::OverrideUnknown(program.display().to_string()))?;
        // A bare name (`bash`) is looked up on PATH when the command starts.
        if program.components().count() > 1 && !(p.is_file)(&program) {
            return Err(ShellError::OverrideMissing(program.display().to_string()));
        }
        return Ok(Shell { kind, program });
    }
    if p.os == Os::Unix {
        return Ok(Shell {
            kind: ShellKind::Bash,
            program: PathBuf::from("bash"),
        });
    }
    let found = |program: PathBuf, kind| (p.is_file)(&program).then_some(Shell { kind, program });
    // Git for Windows, where its installer puts it.
    for var in ["ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"] {
        if let Some(dir) = (p.env)(var) {
            let bash = PathBuf::from(dir).join("Git").join("bin").join("bash.exe");
            if let Some(s) = found(bash, ShellKind::Bash) {
                return Ok(s);
            }
        }
    }
    if let Some(dir) = (p.env)("LOCALAPPDATA") {
        let bash = PathBuf::from(dir)
            .join("Programs")
            .join("Git")
            .join("bin")
            .join("bash.exe");
        if let Some(s) = found(bash, ShellKind::Bash) {
            return Ok(s);
        }
    }
    let dirs = (p.env)("PATH")
        .map(|v| path_dirs(p.os, &v))
        .unwrap_or_default();
    let system32 = (p.env)("SystemRoot")
        .or_else(|| (p.env)("windir"))
        .map(|r| PathBuf::from(r).join("System32"));
    for dir in &dirs {
        if system32.as_deref().is_some_and(|s| same_path_ci(dir, s)) {
            continue; // WSL's launcher
        }
        if let Some(s) = found(dir.join("bash.exe"), ShellKind::Bash) {
            return Ok(s);
        }
    }
    for dir in &dirs {
        if let Some(s) = found(dir.join("pwsh.exe"), ShellKind::PowerShell) {
            return Ok(s);
        }
    }
    if let Some(sys) = &system32 {
        let ps = sys
            .join("WindowsPowerShell")
            .join("v1.0")
            .join("powershell.exe");
        if let Some(s) = found(ps, ShellKind::PowerShell) {
            return Ok(s);
        }
    }
    Err(ShellError::NotFound)
}

/// The shell of this process, chosen once.
pub fn current() -> Result<&'static Shell, ShellError> {
    static SHELL: OnceLock<Result<Shell, ShellError>> = OnceLock::new();
    SHELL
        .get_or_init(|| {
            select(&Probe {
                os: Os::current(),
                env: &|k| std::env::var_os(k),
                is_file: &|p| p.is_file(),
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn pick(os: Os, env: &[(&str, &str)], files: &[&str]) -> Result<Shell, ShellError> {
        let env: HashMap<String, OsString> = env
            .iter()
            .map(|(k, v)| ((*k).to_string(), OsString::from(v)))
            .collect();
        let files: HashSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        select(&Probe {
            os,
            env: &|k| env.get(k).cloned(),
            is_file: &|p| files.contains(p),
        })
    }

    fn win_env() -> Vec<(&'static str, &'static str)> {
        vec![
            ("ProgramFiles", r"C:\Program Files"),
            ("LOCALAPPDATA", r"C:\Users\me\AppData\Local"),
            ("SystemRoot", r"C:\Windows"),
            (
                "PATH",
                r"C:\Windows\System32;C:\Windows;C:\tools\bin;C:\Program Files\PowerShell\7",
            ),
        ]
    }

    fn join(parts: &[&str]) -> String {
        parts
            .iter()
            .map(PathBuf::from)
            .reduce(|a, b| a.join(b))
            .unwrap()
            .display()
            .to_string()
    }

    #[test]
    fn unix_runs_bash_from_path() {
        let s = pick(Os::Unix, &[], &[]).unwrap();
        assert_eq!(s.kind, ShellKind::Bash);
        assert_eq!(s.program, PathBuf::from("bash"));
        assert_eq!(s.args("ls"), ["-c", "ls"]);
    }

    #[test]
    fn windows_prefers_git_bash_over_everything() {
        let git = join(&[r"C:\Program Files", "Git", "bin", "bash.exe"]);
        let pwsh = join(&[r"C:\Program Files\PowerShell\7", "pwsh.exe"]);
        let s = pick(Os::Windows, &win_env(), &[&git, &pwsh]).unwrap();
        assert_eq!(s.kind, ShellKind::Bash);
        assert_eq!(s.program, PathBuf::from(&git));
    }

    #[test]
    fn windows_finds_a_per_user_git_install() {
        let git = join(&[
            r"C:\Users\me\AppData\Local",
            "Programs",
            "Git",
            "bin",
            "bash.exe",
        ]);
        let s = pick(Os::Windows, &win_env(), &[&git]).unwrap();
        assert_eq!(s.program, PathBuf::from(&git));
    }

    #[test]
    fn windows_never_picks_the_wsl_launcher() {
        let wsl = join(&[r"C:\Windows\System32", "bash.exe"]);
        let tools = join(&[r"C:\tools\bin", "bash.exe"]);
        let s = pick(Os::Windows, &win_env(), &[&wsl, &tools]).unwrap();
        assert_eq!(
            s.program,
            PathBuf::from(&tools),
            "System32 comes first on PATH and is skipped"
        );
        // Only the launcher: PowerShell (or nothing) rather than WSL.
        let err = pick(Os::Windows, &win_env(), &[&wsl]).unwrap_err();
        assert_eq!(err, ShellError::NotFound);
        // System32 spelled in another case and with a trailing separator.
        let mut env = win_env();
        env.retain(|(k, _)| *k != "PATH");
        env.push(("PATH", r"c:\windows\system32\;C:\tools\bin"));
        let wsl2 = join(&[r"c:\windows\system32\", "bash.exe"]);
        let s = pick(Os::Windows, &env, &[&wsl2, &tools]).unwrap();
        assert_eq!(s.program, PathBuf::from(&tools));
    }

    #[test]
    fn windows_falls_back_to_powershell_and_tells_the_engine() {
        let pwsh = join(&[r"C:\Program Files\PowerShell\7", "pwsh.exe"]);
        let s = pick(Os::Windows, &win_env(), &[&pwsh]).unwrap();
        assert_eq!(s.kind, ShellKind::PowerShell);
        assert_eq!(
            s.args("Get-ChildItem")[..4],
            ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]
        );
        assert!(s.describe().starts_with("PowerShell ("));
        let winps = join(&[
            r"C:\Windows",
            "System32",
            "WindowsPowerShell",
            "v1.0",
            "powershell.exe",
        ]);
        let s = pick(Os::Windows, &win_env(), &[&winps]).unwrap();
        assert_eq!(s.program, PathBuf::from(&winps));
    }

    #[test]
    fn windows_without_any_shell_says_what_to_install() {
        let err = pick(Os::Windows, &win_env(), &[]).unwrap_err();
        assert!(err.to_string().contains("Git for Windows"), "{err}");
    }

    #[test]
    fn the_override_wins_and_is_checked() {
        let mine = join(&[r"D:\msys64\usr\bin", "bash.exe"]);
        let git = join(&[r"C:\Program Files", "Git", "bin", "bash.exe"]);
        let mut env = win_env();
        env.push((SHELL_ENV, &mine));
        let s = pick(Os::Windows, &env, &[&mine, &git]).unwrap();
        assert_eq!(s.program, PathBuf::from(&mine));
        // A path that is not there is an error, not a silent fallback.
        let err = pick(Os::Windows, &env, &[&git]).unwrap_err();
        assert!(matches!(err, ShellError::OverrideMissing(_)), "{err:?}");
        // Something that is not a known shell.
        let err = pick(Os::Unix, &[(SHELL_ENV, "/bin/fish")], &["/bin/fish"]).unwrap_err();
        assert!(matches!(err, ShellError::OverrideUnknown(_)), "{err:?}");
        // A bare name is taken as is (looked up on PATH at spawn).
        let s = pick(Os::Unix, &[(SHELL_ENV, "pwsh")], &[]).unwrap();
        assert_eq!(s.kind, ShellKind::PowerShell);
    }
}
