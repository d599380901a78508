//! Installing npm plugins into `~/.mia-code/plugins` (spec 073): a lock file
//! (`$MIA_CODE_HOME/plugin-lock.json`, the spec's format plus `integrity`),
//! no registry contact while the lock is satisfied and the installed files
//! match it, the detected package manager run with an argv (never a shell),
//! `--ignore-scripts` unless allowed, a timeout per attempt and 3 attempts
//! with 1 s / 2 s backoff. The package manager's own configuration
//! (`.npmrc`: registry, proxy, CA) is what it uses.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::PluginError;
use crate::spec::{PluginRef, satisfies};

pub const LOCK_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockEntry {
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// `sha256-<base16>` over the installed package's files (paths and
    /// contents), so a changed or damaged install is noticed.
    pub integrity: String,
    pub installed_at: String,
    /// The range the config asked for when this was installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockFile {
    pub version: u32,
    #[serde(default)]
    pub plugins: BTreeMap<String, LockEntry>,
}

impl LockFile {
    pub fn load(path: &Path) -> Result<Self, PluginError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| PluginError::Lock {
                path: path.display().to_string(),
                message: format!("{e}; delete it to reinstall the plugins"),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self {
                version: LOCK_VERSION,
                plugins: BTreeMap::new(),
            }),
            Err(e) => Err(PluginError::Lock {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), PluginError> {
        let err = |e: &dyn std::fmt::Display| PluginError::Lock {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let dir = path.parent().ok_or_else(|| err(&"no parent directory"))?;
        std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".plugin-lock-")
            .tempfile_in(dir)
            .map_err(|e| err(&e))?;
        let text = serde_json::to_string_pretty(self).map_err(|e| err(&e))?;
        tmp.write_all(text.as_bytes()).map_err(|e| err(&e))?;
        tmp.write_all(b"\n").map_err(|e| err(&e))?;
        tmp.persist(path).map_err(|e| err(&e.error))?;
        Ok(())
    }
}

/// `sha256-…` over every file under `dir` (sorted relative paths and
/// contents; `node_modules` inside it excluded).
pub fn tree_integrity(dir: &Path) -> Result<String, std::io::Error> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            let p = e.path();
            let ft = e.file_type()?;
            if ft.is_dir() {
                if e.file_name() != "node_modules" {
                    walk(root, &p, out)?;
                }
            } else if ft.is_file() {
                out.push(p.strip_prefix(root).unwrap_or(&p).to_path_buf());
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(dir.join(&f))?);
        h.update([0]);
    }
    let digest = h.finalize();
    Ok(format!(
        "sha256-{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    ))
}

/// Which package manager installs into the plugins directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageManager {
    Npm,
    Pnpm,
    Bun,
}

impl PackageManager {
    pub fn detect(dir: &Path) -> Self {
        if dir.join("bun.lockb").exists() || dir.join("bun.lock").exists() {
            PackageManager::Bun
        } else if dir.join("pnpm-lock.yaml").exists() {
            PackageManager::Pnpm
        } else {
            PackageManager::Npm
        }
    }

    /// The argv installing `spec` (`name@version`).
    pub fn argv(self, spec: &str, scripts: bool) -> Vec<String> {
        let mut v: Vec<String> = match self {
            PackageManager::Npm => vec![
                "npm".into(),
                "install".into(),
                "--no-audit".into(),
                "--no-fund".into(),
                "--save-exact".into(),
                "--no-update-notifier".into(),
            ],
            PackageManager::Pnpm => vec!["pnpm".into(), "add".into(), "--save-exact".into()],
            PackageManager::Bun => vec!["bun".into(), "add".into(), "--exact".into()],
        };
        if !scripts {
            v.push("--ignore-scripts".into());
        }
        v.push("--".into());
        v.push(spec.to_string());
        v
    }

    pub fn remove_argv(self, name: &str) -> Vec<String> {
        match self {
            PackageManager::Npm => vec![
                "npm".into(),
                "uninstall".into(),
                "--no-audit".into(),
                "--no-fund".into(),
                "--".into(),
                name.into(),
            ],
            PackageManager::Pnpm => vec!["pnpm".into(), "remove".into(), "--".into(), name.into()],
            PackageManager::Bun => vec!["bun".into(), "remove".into(), name.into()],
        }
    }
}

/// How installs run.
#[derive(Debug, Clone)]
pub struct Installer {
    /// `~/.mia-code/plugins`.
    pub dir: PathBuf,
    pub lock_path: PathBuf,
    pub attempt_timeout: Duration,
    pub attempts: u32,
    pub backoff: Vec<Duration>,
    /// Extra environment for the package manager (tests point npm at a
    /// registry with `npm_config_registry`); the rest is inherited.
    pub env: Vec<(String, String)>,
    /// Package names whose install scripts may run.
    pub allow_scripts: Vec<String>,
}

/// What `ensure` did for one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The lock and the installed files agree: nothing was fetched.
    Cached {
        version: String,
    },
    Installed {
        version: String,
    },
    /// Offline (or the registry failed) and nothing usable is installed.
    Skipped {
        reason: String,
    },
}

impl Installer {
    pub fn new(home: &Path) -> Self {
        Self {
            dir: home.join("plugins"),
            lock_path: home.join("plugin-lock.json"),
            attempt_timeout: Duration::from_secs(30),
            attempts: 3,
            backoff: vec![
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_secs(4),
            ],
            env: Vec::new(),
            allow_scripts: Vec::new(),
        }
    }

    /// Where an installed package lives.
    pub fn package_dir(&self, name: &str) -> PathBuf {
        self.dir.join("node_modules").join(name)
    }

    fn installed_version(&self, name: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.package_dir(name).join("package.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.get("version")?.as_str().map(str::to_string)
    }

    fn ensure_dir(&self) -> Result<(), PluginError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| PluginError::Install {
            name: "(plugins directory)".into(),
            message: format!("cannot create {}: {e}", self.dir.display()),
        })?;
        let pkg = self.dir.join("package.json");
        if !pkg.exists() {
            std::fs::write(
                &pkg,
                "{\n  \"name\": \"mia-code-plugins\",\n  \"private\": true,\n  \"description\": \"Plugins installed by mia-code\",\n  \"dependencies\": {}\n}\n",
            )
            .map_err(|e| PluginError::Install {
                name: "(plugins directory)".into(),
                message: format!("cannot write {}: {e}", pkg.display()),
            })?;
        }
        Ok(())
    }

    /// Whether the lock's entry for `name` is usable as is for `range`.
    pub fn lock_hit(&self, lock: &LockFile, name: &str, range: &str) -> bool {
        let Some(e) = lock.plugins.get(name) else {
            return false;
        };
        if !(satisfies(range, &e.version) || e.range.as_deref() == Some(range)) {
            return false;
        }
        if self.installed_version(name).as_deref() != Some(e.version.as_str()) {
            return false;
        }
        tree_integrity(&self.package_dir(name)).is_ok_and(|i| i == e.integrity)
    }

    /// Make `name@range` installed: from the lock when it is satisfied (no
    /// network), else (unless `offline`) from the registry. `update`: ask
    /// the registry for the newest version in range even when the lock is
    /// satisfied. `progress` gets the user-facing lines.
    pub async fn ensure(
        &self,
        name: &str,
        range: &str,
        offline: bool,
        update: bool,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Outcome, PluginError> {
        let mut lock = LockFile::load(&self.lock_path)?;
        if !update && self.lock_hit(&lock, name, range) {
            let version = lock.plugins[name].version.clone();
            return Ok(Outcome::Cached { version });
        }
        if offline {
            let reason = match lock.plugins.get(name) {
                Some(_) if self.installed_version(name).is_some() => format!(
                    "Plugin {name}'s installed files do not match the lock file, and installing is off (offline mode)"
                ),
                _ => format!("Plugin {name} not cached, skipping (offline mode)"),
            };
            return Ok(Outcome::Skipped { reason });
        }
        self.ensure_dir()?;
        // Files that do not match the lock: removed first, or the package
        // manager (which trusts its own records) would keep them.
        if lock.plugins.contains_key(name) && self.package_dir(name).exists() {
            let _ = std::fs::remove_dir_all(self.package_dir(name));
        }
        // A satisfied lock with damaged files reinstalls the locked version.
        let target = match lock.plugins.get(name) {
            Some(e) if !update && satisfies(range, &e.version) => e.version.clone(),
            _ => range.to_string(),
        };
        let spec = format!("{name}@{target}");
        progress(format!("Installing plugin {spec}..."));
        let pm = PackageManager::detect(&self.dir);
        let argv = pm.argv(&spec, self.allow_scripts.iter().any(|a| a == name));
        self.run_with_retries(name, &argv).await?;
        let version = self
            .installed_version(name)
            .ok_or_else(|| PluginError::Install {
                name: name.to_string(),
                message: format!(
                    "{} finished but {} has no package.json",
                    argv[0],
                    self.package_dir(name).display()
                ),
            })?;
        let integrity =
            tree_integrity(&self.package_dir(name)).map_err(|e| PluginError::Install {
                name: name.to_string(),
                message: e.to_string(),
            })?;
        lock.version = LOCK_VERSION;
        lock.plugins.insert(
            name.to_string(),
            LockEntry {
                version: version.clone(),
                resolved: self.resolved(name),
                integrity,
                installed_at: now_rfc3339(),
                range: Some(range.to_string()),
            },
        );
        lock.save(&self.lock_path)?;
        progress(format!("✓ Installed plugin {name}@{version}"));
        Ok(Outcome::Installed { version })
    }

    /// A `git+https:` plugin (allowed by `plugin.allowGit`): installed by
    /// the package manager (which clones with the user's git), locked under
    /// its package name with the URL as its range. Returns the package name.
    pub async fn ensure_git(
        &self,
        url: &str,
        offline: bool,
        update: bool,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(String, Outcome), PluginError> {
        let mut lock = LockFile::load(&self.lock_path)?;
        let locked = lock
            .plugins
            .iter()
            .find(|(_, e)| e.range.as_deref() == Some(url))
            .map(|(n, _)| n.clone());
        if let Some(name) = &locked
            && !update
            && self.lock_hit(&lock, name, url)
        {
            let version = lock.plugins[name].version.clone();
            return Ok((name.clone(), Outcome::Cached { version }));
        }
        if offline {
            return Ok((
                url.to_string(),
                Outcome::Skipped {
                    reason: format!("Plugin {url} not cached, skipping (offline mode)"),
                },
            ));
        }
        self.ensure_dir()?;
        if let Some(name) = &locked {
            let _ = std::fs::remove_dir_all(self.package_dir(name));
        }
        progress(format!("Installing plugin {url}..."));
        let argv = PackageManager::detect(&self.dir).argv(url, false);
        self.run_with_retries(url, &argv).await?;
        // The name is what the package manager recorded for the URL.
        let pkg: serde_json::Value = std::fs::read_to_string(self.dir.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let bare = url.trim_start_matches("git+");
        let name = pkg["dependencies"]
            .as_object()
            .and_then(|deps| {
                deps.iter()
                    .find(|(_, v)| {
                        v.as_str()
                            .is_some_and(|v| v == url || v.trim_start_matches("git+") == bare)
                    })
                    .map(|(k, _)| k.clone())
            })
            .ok_or_else(|| PluginError::Install {
                name: url.to_string(),
                message: "installed, but its package name is not in the plugins' package.json"
                    .into(),
            })?;
        let version = self
            .installed_version(&name)
            .ok_or_else(|| PluginError::Install {
                name: url.to_string(),
                message: format!("{} has no package.json", self.package_dir(&name).display()),
            })?;
        let integrity =
            tree_integrity(&self.package_dir(&name)).map_err(|e| PluginError::Install {
                name: url.to_string(),
                message: e.to_string(),
            })?;
        lock.version = LOCK_VERSION;
        lock.plugins.insert(
            name.clone(),
            LockEntry {
                version: version.clone(),
                resolved: self.resolved(&name),
                integrity,
                installed_at: now_rfc3339(),
                range: Some(url.to_string()),
            },
        );
        lock.save(&self.lock_path)?;
        progress(format!("✓ Installed plugin {name}@{version} from {url}"));
        Ok((name, Outcome::Installed { version }))
    }

    /// npm's record of where the tarball came from.
    fn resolved(&self, name: &str) -> Option<String> {
        let text =
            std::fs::read_to_string(self.dir.join("node_modules/.package-lock.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.get("packages")?
            .get(format!("node_modules/{name}"))?
            .get("resolved")?
            .as_str()
            .map(str::to_string)
    }

    async fn run_with_retries(&self, name: &str, argv: &[String]) -> Result<(), PluginError> {
        let mut last = String::new();
        for attempt in 0..self.attempts.max(1) {
            if attempt > 0 {
                let wait = self
                    .backoff
                    .get(attempt as usize - 1)
                    .copied()
                    .unwrap_or(Duration::from_secs(4));
                tokio::time::sleep(wait).await;
            }
            match self.run_once(argv).await {
                Ok(()) => return Ok(()),
                Err(e) => {
                    tracing::warn!(plugin = name, attempt = attempt + 1, error = %e, "plugin install attempt failed");
                    last = e;
                }
            }
        }
        Err(PluginError::Install {
            name: name.to_string(),
            message: format!(
                "{last} (after {} attempts). Plugin disabled for this session",
                self.attempts.max(1)
            ),
        })
    }

    async fn run_once(&self, argv: &[String]) -> Result<(), String> {
        let Some((prog, args)) = argv.split_first() else {
            return Err("empty command".into());
        };
        // npm and pnpm are `.cmd` scripts on Windows (not found without the suffix).
        let program = if cfg!(windows) && matches!(prog.as_str(), "npm" | "pnpm") {
            format!("{prog}.cmd")
        } else {
            prog.clone()
        };
        let mut cmd = tokio::process::Command::new(&program);
        cmd.args(args)
            .current_dir(&self.dir)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {prog}: {e} (is it installed and on PATH?)"))?;
        match tokio::time::timeout(self.attempt_timeout, child.wait_with_output()).await {
            Err(_) => Err(format!(
                "network timeout: {prog} did not finish within {} s",
                self.attempt_timeout.as_secs()
            )),
            Ok(Err(e)) => Err(format!("{prog} failed: {e}")),
            Ok(Ok(out)) if out.status.success() => Ok(()),
            Ok(Ok(out)) => {
                let err = String::from_utf8_lossy(&out.stderr);
                let line = err
                    .lines()
                    .rev()
                    .find(|l| l.contains("ERR") || l.contains("error"))
                    .or_else(|| err.lines().last())
                    .unwrap_or("")
                    .trim()
                    .to_string();
                Err(format!("{prog} exited with {}: {line}", out.status))
            }
        }
    }

    /// Uninstall and forget a plugin.
    pub async fn remove(&self, name: &str) -> Result<bool, PluginError> {
        let mut lock = LockFile::load(&self.lock_path)?;
        let known = lock.plugins.remove(name).is_some() || self.package_dir(name).exists();
        if self.dir.join("package.json").exists() && self.package_dir(name).exists() {
            let argv = PackageManager::detect(&self.dir).remove_argv(name);
            self.run_once(&argv)
                .await
                .map_err(|message| PluginError::Install {
                    name: name.to_string(),
                    message,
                })?;
        }
        lock.save(&self.lock_path)?;
        Ok(known)
    }
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// A resolved plugin reference's directory, for loading.
pub fn plugin_dir(installer: &Installer, r: &PluginRef) -> Option<PathBuf> {
    match r {
        PluginRef::Npm { name, .. } => Some(installer.package_dir(name)),
        PluginRef::Local { path } => Some(path.clone()),
        PluginRef::Git { .. } => None,
    }
}
