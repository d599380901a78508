use std::path::{Path, PathBuf};

use crate::ConfigError;

/// Where mia-code keeps its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `$MIA_CODE_HOME`, default `~/.mia-code`.
    pub home: PathBuf,
    /// The user's home directory.
    pub user_home: PathBuf,
    /// Global config files, lowest precedence first.
    pub global_configs: Vec<PathBuf>,
}

impl Paths {
    /// From `MIA_CODE_HOME`, `HOME` (`USERPROFILE` on Windows) and `XDG_CONFIG_HOME`.
    pub fn from_env() -> Result<Self, ConfigError> {
        let user_home = std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or(ConfigError::NoHome)?;
        let home = std::env::var_os("MIA_CODE_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| user_home.join(".mia-code"));
        let config_dir = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| user_home.join(".config"));
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
