use std::path::{Path, PathBuf};

use crate::ConfigError;

/// Where mia-code keeps its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `$MIA_CODE_HOME`, default `~/.mia-code` (per platform: [`Paths::locate`]).
    pub home: PathBuf,
    /// The user's home directory.
    pub user_home: PathBuf,
    /// Global config files, lowest precedence first.
    pub global_configs: Vec<PathBuf>,
}

/// The platforms whose conventions [`Paths::locate`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux and the other Unix systems: `~/.mia-code`, `~/.config`.
    Unix,
    /// `~/Library/Application Support/mia-code`.
    MacOs,
    /// `%LOCALAPPDATA%\mia-code` (data), `%APPDATA%\mia-code` (config).
    Windows,
}

impl Platform {
    pub const fn current() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else if cfg!(target_os = "macos") {
            Self::MacOs
        } else {
            Self::Unix
        }
    }
}

/// This machine's name as mia-code records it with leases and locks
/// (`$HOSTNAME`, else `/etc/hostname`, else `localhost`): one rule, so a
/// lock written by one crate is recognised as this machine's by another.
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// mia-code's data directory, by the one rule every crate uses
/// ([`Paths::locate`]); when no home directory is known, `$MIA_CODE_HOME`
/// alone; `None` when neither is.
pub fn data_home() -> Option<PathBuf> {
    Paths::from_env().map(|p| p.home).ok().or_else(|| {
        std::env::var_os("MIA_CODE_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
    })
}

impl Paths {
    /// From the environment of this process ([`Paths::locate`]).
    /// The data directory alone ([`data_home`]).
    pub fn data_home() -> Option<PathBuf> {
        data_home()
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Self::locate(Platform::current(), &|k| std::env::var_os(k), &|p| {
            p.exists()
        })
    }

    /// Where mia-code keeps its files on `platform` (a pure function of the
    /// environment and an existence probe, so every platform's rules are
    /// tested everywhere):
    ///
    /// - data (`MIA_CODE_HOME` wins): `~/.mia-code` on Linux; on macOS
    ///   `~/Library/Application Support/mia-code`; on Windows
    ///   `%LOCALAPPDATA%\mia-code` (machine-local: the database and the
    ///   snapshots do not belong in a roaming profile). An existing
    ///   `~/.mia-code` is kept on every platform, so nothing moves under a
    ///   user who already has one.
    /// - global config (`XDG_CONFIG_HOME` wins everywhere):
    ///   `~/.config/mia-code/config.json` on Linux; on macOS
    ///   `~/Library/Application Support/mia-code/config.json` unless
    ///   `~/.config/mia-code` exists; on Windows
    ///   `%APPDATA%\mia-code\config.json`. Then `~/.mia-code.json` on all.
    pub fn locate(
        platform: Platform,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
        exists: &dyn Fn(&Path) -> bool,
    ) -> Result<Self, ConfigError> {
        let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let user_home = match platform {
            Platform::Windows => var("USERPROFILE").or_else(|| var("HOME")),
            _ => var("HOME").or_else(|| var("USERPROFILE")),
        }
        .ok_or(ConfigError::NoHome)?;
        let legacy = user_home.join(".mia-code");
        let home = var("MIA_CODE_HOME").unwrap_or_else(|| match platform {
            _ if exists(&legacy) => legacy.clone(),
            Platform::Unix => legacy.clone(),
            Platform::MacOs => user_home
                .join("Library")
                .join("Application Support")
                .join("mia-code"),
            Platform::Windows => var("LOCALAPPDATA")
                .unwrap_or_else(|| user_home.join("AppData").join("Local"))
                .join("mia-code"),
        });
        let xdg = user_home.join(".config");
        let config_dir = var("XDG_CONFIG_HOME").unwrap_or_else(|| match platform {
            Platform::Unix => xdg.clone(),
            Platform::MacOs if exists(&xdg.join("mia-code")) => xdg.clone(),
            Platform::MacOs => user_home.join("Library").join("Application Support"),
            Platform::Windows => {
                var("APPDATA").unwrap_or_else(|| user_home.join("AppData").join("Roaming"))
            }
        });
        Ok(Self::new(home, user_home, &config_dir))
    }

    pub fn new(home: PathBuf, user_home: PathBuf, config_dir: &Path) -> Self {
        Self {
            global_configs: vec![
                config_dir.join("mia-code").join("config.json"),
                user_home.join(".mia-code.json"),
            ],
            home,
            user_home,
        }
    }

    /// Global Agent Skills: `skills/` next to the first global config file
    /// (`~/.config/mia-code/skills`).
    /// Global markdown agent files (`~/.config/mia-code/agents/<key>.md`).
    pub fn global_agents_dir(&self) -> Option<PathBuf> {
        self.global_configs
            .first()
            .and_then(|c| c.parent())
            .map(|d| d.join("agents"))
    }

    pub fn global_skills_dir(&self) -> Option<PathBuf> {
        self.global_configs
            .first()
            .and_then(|c| c.parent())
            .map(|d| d.join("skills"))
    }

    pub fn data_db(&self) -> PathBuf {
        self.home.join("data.db")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.home.join("logs")
    }

    pub fn plugins_dir(&self) -> PathBuf {
        self.home.join("plugins")
    }

    /// The pre-SQLite session store, imported once (spec 018).
    pub fn legacy_sessions(&self) -> PathBuf {
        self.user_home.join(".mia-code-sessions.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};
    use std::ffi::OsString;

    fn locate(
        platform: Platform,
        env: &[(&str, &str)],
        existing: &[PathBuf],
    ) -> Result<Paths, ConfigError> {
        let env: HashMap<String, OsString> = env
            .iter()
            .map(|(k, v)| ((*k).to_string(), OsString::from(v)))
            .collect();
        let existing: HashSet<PathBuf> = existing.iter().cloned().collect();
        Paths::locate(platform, &|k| env.get(k).cloned(), &|p| {
            existing.contains(p)
        })
    }

    #[test]
    fn linux_paths_are_unchanged() {
        let p = locate(Platform::Unix, &[("HOME", "/home/me")], &[]).unwrap();
        assert_eq!(p.home, PathBuf::from("/home/me/.mia-code"));
        assert_eq!(
            p.global_configs,
            [
                PathBuf::from("/home/me/.config/mia-code/config.json"),
                PathBuf::from("/home/me/.mia-code.json")
            ]
        );
        let p = locate(
            Platform::Unix,
            &[
                ("HOME", "/home/me"),
                ("XDG_CONFIG_HOME", "/xdg"),
                ("MIA_CODE_HOME", "/data"),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(p.home, PathBuf::from("/data"));
        assert_eq!(
            p.global_configs[0],
            PathBuf::from("/xdg/mia-code/config.json")
        );
    }

    #[test]
    fn macos_uses_application_support_and_keeps_what_exists() {
        let p = locate(Platform::MacOs, &[("HOME", "/Users/me")], &[]).unwrap();
        let support = PathBuf::from("/Users/me")
            .join("Library")
            .join("Application Support");
        assert_eq!(p.home, support.join("mia-code"));
        assert_eq!(
            p.global_configs[0],
            support.join("mia-code").join("config.json")
        );
        // Someone who already has ~/.mia-code and ~/.config/mia-code keeps them.
        let p = locate(
            Platform::MacOs,
            &[("HOME", "/Users/me")],
            &[
                PathBuf::from("/Users/me/.mia-code"),
                PathBuf::from("/Users/me/.config/mia-code"),
            ],
        )
        .unwrap();
        assert_eq!(p.home, PathBuf::from("/Users/me/.mia-code"));
        assert_eq!(
            p.global_configs[0],
            PathBuf::from("/Users/me/.config/mia-code/config.json")
        );
    }

    #[test]
    fn windows_uses_appdata() {
        let env = [
            ("USERPROFILE", r"C:\Users\me"),
            ("HOME", "/c/Users/me"),
            ("LOCALAPPDATA", r"C:\Users\me\AppData\Local"),
            ("APPDATA", r"C:\Users\me\AppData\Roaming"),
        ];
        let p = locate(Platform::Windows, &env, &[]).unwrap();
        assert_eq!(
            p.user_home,
            PathBuf::from(r"C:\Users\me"),
            "USERPROFILE before a shell's HOME"
        );
        assert_eq!(
            p.home,
            PathBuf::from(r"C:\Users\me\AppData\Local").join("mia-code")
        );
        assert_eq!(
            p.global_configs[0],
            PathBuf::from(r"C:\Users\me\AppData\Roaming")
                .join("mia-code")
                .join("config.json")
        );
        assert_eq!(
            p.global_configs[1],
            PathBuf::from(r"C:\Users\me").join(".mia-code.json")
        );
        // Without the AppData variables: their usual places under the profile.
        let p = locate(Platform::Windows, &[("USERPROFILE", r"C:\Users\me")], &[]).unwrap();
        assert_eq!(
            p.home,
            PathBuf::from(r"C:\Users\me")
                .join("AppData")
                .join("Local")
                .join("mia-code")
        );
    }

    #[test]
    fn no_home_is_a_clear_error() {
        let err = locate(Platform::Unix, &[], &[]).unwrap_err();
        assert!(err.to_string().contains("HOME"), "{err}");
    }
}
