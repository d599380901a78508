//! Installing npm plugins into `~/.mia-code/plugins` (spec 073): a lock file
//! ([`crate::lock`]: the registry's integrity of the package and every
//! dependency, and their installed files' hashes), no registry contact
//! while the lock is satisfied and every installed file matches it, the
//! detected package manager run with an argv (never a shell), every
//! invocation with `--ignore-scripts` (a package the person's own config
//! allows gets its own scripts run afterwards, `npm rebuild <name>`, and no
//! one else's), a timeout per attempt that kills the whole process group,
//! and 3 attempts with 1 s / 2 s backoff. The package manager's own
//! configuration (`.npmrc`: registry, proxy, CA) is what it uses.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::PluginError;
use crate::lock::{LOCK_VERSION, LockEntry, LockFile, Locked, NpmLock, differs, tree_integrity};
use crate::spec::{PluginRef, satisfies};

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

    /// The argv installing `spec` (`name@version`): never running
    /// anyone's install scripts.
    pub fn argv(self, spec: &str) -> Vec<String> {
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
        v.push("--ignore-scripts".into());
        v.push("--".into());
        v.push(spec.to_string());
        v
    }

    /// The argv running `name`'s own install scripts (and no one else's):
    /// for a package the person's global config allows scripts for.
    pub fn scripts_argv(self, name: &str) -> Vec<String> {
        match self {
            PackageManager::Npm => vec![
                "npm".into(),
                "rebuild".into(),
                "--no-update-notifier".into(),
                "--".into(),
                name.into(),
            ],
            PackageManager::Pnpm => vec!["pnpm".into(), "rebuild".into(), "--".into(), name.into()],
            PackageManager::Bun => vec!["bun".into(), "pm".into(), "trust".into(), name.into()],
        }
    }

    /// The argv uninstalling `name`: without running scripts, which npm
    /// would otherwise run for any package it reinstalls on the way.
    pub fn remove_argv(self, name: &str) -> Vec<String> {
        match self {
            PackageManager::Npm => vec![
                "npm".into(),
                "uninstall".into(),
                "--no-audit".into(),
                "--no-fund".into(),
                "--no-update-notifier".into(),
                "--ignore-scripts".into(),
                "--".into(),
                name.into(),
            ],
            PackageManager::Pnpm => vec![
                "pnpm".into(),
                "remove".into(),
                "--ignore-scripts".into(),
                "--".into(),
                name.into(),
            ],
            PackageManager::Bun => vec![
                "bun".into(),
                "remove".into(),
                "--ignore-scripts".into(),
                name.into(),
            ],
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

    /// The lock; a version-1 lock is written back migrated at once.
    fn load_lock(&self) -> Result<LockFile, PluginError> {
        let mut lock = LockFile::load(&self.lock_path, &self.dir)?;
        if lock.migrated {
            lock.save(&self.lock_path)?;
            lock.migrated = false;
        }
        Ok(lock)
    }

    /// Why the lock's entry for `name` is not usable as is for `range`
    /// (`None`: it is — the version in range and every installed file of
    /// the package and its dependencies as recorded).
    pub fn lock_miss(&self, lock: &LockFile, name: &str, range: &str) -> Option<String> {
        let Some(e) = lock.plugins.get(name) else {
            return Some(format!("{name} is not in the lock"));
        };
        let version = &e.package.version;
        if !(satisfies(range, version) || e.range.as_deref() == Some(range)) {
            return Some(format!("the lock has {name}@{version}, not in {range}"));
        }
        if self.installed_version(name).as_deref() != Some(version.as_str()) {
            return Some(format!("node_modules/{name} is not version {version}"));
        }
        differs(e, name, &self.dir)
    }

    /// Whether the lock's entry for `name` is usable as is for `range`.
    pub fn lock_hit(&self, lock: &LockFile, name: &str, range: &str) -> bool {
        self.lock_miss(lock, name, range).is_none()
    }

    /// Installed files that do not match the lock: removed (the package
    /// and each changed dependency), or the package manager, which trusts
    /// its own records, would keep them.
    fn remove_changed(&self, name: &str, e: &LockEntry) {
        let here = self.package_dir(name);
        if tree_integrity(&here).ok().as_deref() != Some(e.package.files.as_str()) {
            let _ = std::fs::remove_dir_all(&here);
        }
        for (at, dep) in e.dependencies.iter().flatten() {
            let dir = self.dir.join(at);
            if tree_integrity(&dir).ok().as_deref() != Some(dep.files.as_str()) {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        // npm's cache of the tree: read again from the files.
        let _ = std::fs::remove_file(self.dir.join("node_modules/.package-lock.json"));
    }

    /// The lock entry for what is installed now: the registry's integrity
    /// of the package and every dependency as npm recorded them (npm
    /// checked each tarball against it), and their files' hashes.
    fn record(&self, name: &str, range: &str) -> Result<LockEntry, PluginError> {
        let err = |message: String| PluginError::Install {
            name: name.to_string(),
            message,
        };
        let version = self.installed_version(name).ok_or_else(|| {
            err(format!(
                "the package manager finished but {} has no package.json",
                self.package_dir(name).display()
            ))
        })?;
        let files = tree_integrity(&self.package_dir(name)).map_err(|e| err(e.to_string()))?;
        let here = format!("node_modules/{name}");
        let (resolved, integrity, dependencies) = match NpmLock::read(&self.dir) {
            Some(npm) => {
                let own = npm.packages.get(&here);
                (
                    own.and_then(|p| p.resolved.clone()),
                    own.and_then(|p| p.integrity.clone()),
                    npm.closure(&here, &self.dir).map_err(err)?,
                )
            }
            // pnpm or bun: their lockfiles are their own; the files only.
            None => (
                None,
                None,
                crate::lock::fs_closure(&self.dir, name).map_err(err)?,
            ),
        };
        Ok(LockEntry {
            package: Locked {
                version,
                resolved,
                integrity,
                files,
            },
            installed_at: now_rfc3339(),
            range: Some(range.to_string()),
            dependencies: Some(dependencies),
        })
    }

    /// After an install: refused when a version the lock had came with
    /// other bytes (the registry changed it, or another registry served
    /// it); what was installed is removed, the lock stays as it was.
    fn check_same_bytes(
        &self,
        name: &str,
        old: &LockEntry,
        new: &LockEntry,
    ) -> Result<(), PluginError> {
        let mut changed = Vec::new();
        let mut compare = |what: &str, a: &Locked, b: &Locked| {
            if a.version == b.version
                && let (Some(x), Some(y)) = (&a.integrity, &b.integrity)
                && x != y
            {
                changed.push(format!(
                    "{what}@{}: the lock has {x}, the registry gave {y}",
                    a.version
                ));
            }
        };
        compare(name, &old.package, &new.package);
        for (at, dep) in new.dependencies.iter().flatten() {
            if let Some(was) = old.dependencies.as_ref().and_then(|d| d.get(at)) {
                compare(at, was, dep);
            }
        }
        if changed.is_empty() {
            return Ok(());
        }
        let _ = std::fs::remove_dir_all(self.package_dir(name));
        Err(PluginError::IntegrityChanged {
            name: name.to_string(),
            changes: changed.join("; "),
        })
    }

    /// Install `spec` (checked, scripts only where allowed) and record it
    /// under its name (`name_hint`, or for a git URL what the package
    /// manager recorded), with `range` as the range asked for.
    async fn install(
        &self,
        lock: &mut LockFile,
        name_hint: &str,
        spec: &str,
        range: &str,
        git: bool,
    ) -> Result<(String, String), PluginError> {
        let pm = PackageManager::detect(&self.dir);
        // npm's own records as they were: put back if what came is refused
        // (or npm would hold the refused integrity against the right bytes).
        let records: Vec<(PathBuf, Option<Vec<u8>>)> = ["package.json", "package-lock.json"]
            .iter()
            .map(|f| (self.dir.join(f), std::fs::read(self.dir.join(f)).ok()))
            .collect();
        self.run_with_retries(name_hint, &pm.argv(spec)).await?;
        let name = if git {
            self.git_name(spec)?
        } else {
            name_hint.to_string()
        };
        let entry = self.record(&name, range)?;
        if let Some(old) = lock.plugins.get(&name)
            && let Err(e) = self.check_same_bytes(&name, old, &entry)
        {
            // Nothing of what came runs: its dependencies that differ
            // from what the lock has go too.
            self.remove_changed(&name, old);
            for (path, bytes) in &records {
                let _ = match bytes {
                    Some(b) => std::fs::write(path, b),
                    None => std::fs::remove_file(path),
                };
            }
            let _ = std::fs::remove_file(self.dir.join("node_modules/.package-lock.json"));
            return Err(e);
        }
        let entry = if self.allow_scripts.contains(&name) {
            self.run_once(&pm.scripts_argv(&name))
                .await
                .map_err(|message| PluginError::Install {
                    name: name.clone(),
                    message: format!(
                        "its install scripts (allowed by plugin.allowScripts): {message}"
                    ),
                })?;
            // What its scripts built belongs to what the lock checks.
            LockEntry {
                installed_at: entry.installed_at.clone(),
                ..self.record(&name, range)?
            }
        } else {
            entry
        };
        let version = entry.package.version.clone();
        lock.version = LOCK_VERSION;
        lock.plugins.insert(name.clone(), entry);
        lock.save(&self.lock_path)?;
        Ok((name, version))
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
        let mut lock = self.load_lock()?;
        let miss = if update {
            Some("update".to_string())
        } else {
            self.lock_miss(&lock, name, range)
        };
        let Some(why) = miss else {
            let version = lock.plugins[name].package.version.clone();
            return Ok(Outcome::Cached { version });
        };
        if offline {
            let reason = match lock.plugins.get(name) {
                Some(_) if self.installed_version(name).is_some() => format!(
                    "Plugin {name}'s installed files do not match the lock file ({why}), and installing is off (offline mode)"
                ),
                _ => format!("Plugin {name} not cached, skipping (offline mode)"),
            };
            return Ok(Outcome::Skipped { reason });
        }
        self.ensure_dir()?;
        if let Some(e) = lock.plugins.get(name) {
            self.remove_changed(name, e);
        }
        // A satisfied lock with damaged files reinstalls the locked version.
        let target = match lock.plugins.get(name) {
            Some(e) if !update && satisfies(range, &e.package.version) => e.package.version.clone(),
            _ => range.to_string(),
        };
        let spec = format!("{name}@{target}");
        progress(format!("Installing plugin {spec}..."));
        let (_, version) = self.install(&mut lock, name, &spec, range, false).await?;
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
        let mut lock = self.load_lock()?;
        let locked = lock
            .plugins
            .iter()
            .find(|(_, e)| e.range.as_deref() == Some(url))
            .map(|(n, _)| n.clone());
        if let Some(name) = &locked
            && !update
            && self.lock_hit(&lock, name, url)
        {
            let version = lock.plugins[name].package.version.clone();
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
        if let Some(name) = &locked
            && let Some(e) = lock.plugins.get(name)
        {
            self.remove_changed(name, e);
        }
        progress(format!("Installing plugin {url}..."));
        let (name, version) = self.install(&mut lock, url, url, url, true).await?;
        progress(format!("✓ Installed plugin {name}@{version} from {url}"));
        Ok((name, Outcome::Installed { version }))
    }

    /// The name the package manager recorded for a git URL.
    fn git_name(&self, url: &str) -> Result<String, PluginError> {
        let pkg: serde_json::Value = std::fs::read_to_string(self.dir.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let bare = url.trim_start_matches("git+");
        pkg["dependencies"]
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
            })
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
        // Its own process group: a timeout ends npm and everything it started.
        #[cfg(unix)]
        cmd.process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {prog}: {e} (is it installed and on PATH?)"))?;
        let pid = child.id();
        match tokio::time::timeout(self.attempt_timeout, child.wait_with_output()).await {
            Err(_) => {
                kill_tree(pid);
                Err(format!(
                    "network timeout: {prog} did not finish within {} s",
                    self.attempt_timeout.as_secs()
                ))
            }
            Ok(Err(e)) => Err(format!("{prog} failed: {e}")),
            Ok(Ok(out)) if out.status.success() => Ok(()),
            Ok(Ok(out)) => Err(format!(
                "{prog} exited with {}: {}",
                out.status,
                error_lines(&String::from_utf8_lossy(&out.stderr))
            )),
        }
    }

    /// Uninstall and forget a plugin.
    pub async fn remove(&self, name: &str) -> Result<bool, PluginError> {
        let mut lock = self.load_lock()?;
        let listed = std::fs::read_to_string(self.dir.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| v["dependencies"].get(name).is_some());
        let known = lock.plugins.remove(name).is_some() || self.package_dir(name).exists();
        if listed || (self.dir.join("package.json").exists() && self.package_dir(name).exists()) {
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

/// What a package manager said went wrong: its error lines (npm's code
/// and summary, not the pointer to its log), at most three.
fn error_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| (l.contains("ERR") || l.contains("error")) && !l.contains("complete log"))
        .filter(|l| !l.trim_start_matches("npm error").trim().is_empty())
        .take(3)
        .collect();
    if lines.is_empty() {
        stderr.lines().last().unwrap_or("").trim().to_string()
    } else {
        lines.join(" / ")
    }
}

/// End a timed-out install: its whole process group (it was started as
/// the leader), so no child (a git clone, a script) keeps running.
fn kill_tree(pid: Option<u32>) {
    let Some(pid) = pid else { return };
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pid)
        && pid > 1
    {
        use nix::sys::signal::{Signal, killpg};
        let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    #[cfg(windows)]
    {
        // The tree below npm.cmd (node, git): taskkill walks it.
        let _ = std::process::Command::new("taskkill")
            .args(["/T", "/F", "/PID", &pid.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
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
