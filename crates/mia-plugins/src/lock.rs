//! The plugin lock (`$MIA_CODE_HOME/plugin-lock.json`, version 2): per
//! plugin, the registry's `integrity` (the tarball's SHA-512, as npm
//! verified and recorded it) of the package and of every package it
//! depends on, and a hash of each one's installed files, so an edited
//! `node_modules/dep` is noticed offline and a registry that serves other
//! bytes for a version already installed is refused. A version-1 lock
//! (a files hash of the package alone) is migrated without asking: from
//! npm's own lockfile when the installed files still match it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::PluginError;

pub const LOCK_VERSION: u32 = 2;

/// One installed package: the plugin itself or one of its dependencies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Locked {
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// The registry's `integrity` (`sha512-…`); `None` for a package that
    /// has none (a git dependency, pinned by the commit in `resolved`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<String>,
    /// `sha256-…` over its installed files (`node_modules` inside left out).
    pub files: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockEntry {
    #[serde(flatten)]
    pub package: Locked,
    pub installed_at: String,
    /// The range the config asked for when this was installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// Every package it depends on, by its place under the plugins
    /// directory (`node_modules/dep`, `node_modules/a/node_modules/b`).
    /// `None`: not known (a migrated entry npm had no record of).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<BTreeMap<String, Locked>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockFile {
    pub version: u32,
    #[serde(default)]
    pub plugins: BTreeMap<String, LockEntry>,
    /// Read from a version-1 file (to be written back as version 2).
    #[serde(skip)]
    pub migrated: bool,
}

/// A version-1 entry, as read for migration.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct V1Entry {
    version: String,
    #[serde(default)]
    resolved: Option<String>,
    integrity: String,
    installed_at: String,
    #[serde(default)]
    range: Option<String>,
}

#[derive(Deserialize)]
struct V1File {
    #[serde(default)]
    plugins: BTreeMap<String, V1Entry>,
}

impl LockFile {
    /// Read the lock; a version-1 lock is migrated (see [`migrate`]) with
    /// npm's records under `plugins_dir`.
    pub fn load(path: &Path, plugins_dir: &Path) -> Result<Self, PluginError> {
        let bad = |message: String| PluginError::Lock {
            path: path.display().to_string(),
            message,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    version: LOCK_VERSION,
                    plugins: BTreeMap::new(),
                    migrated: false,
                });
            }
            Err(e) => return Err(bad(e.to_string())),
        };
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| bad(format!("{e}; delete it to reinstall the plugins")))?;
        match value.get("version").and_then(serde_json::Value::as_u64) {
            Some(1) => {
                let v1: V1File = serde_json::from_value(value)
                    .map_err(|e| bad(format!("{e}; delete it to reinstall the plugins")))?;
                Ok(migrate(v1, plugins_dir))
            }
            Some(2) => serde_json::from_value(value)
                .map_err(|e| bad(format!("{e}; delete it to reinstall the plugins"))),
            other => Err(bad(format!(
                "version {} is not one this mia-code reads (1 or 2); update mia-code, or delete the file to reinstall the plugins",
                other.map_or("(none)".into(), |v| v.to_string())
            ))),
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
        tmp.as_file().sync_all().map_err(|e| err(&e))?;
        tmp.persist(path).map_err(|e| err(&e.error))?;
        Ok(())
    }
}

/// Version 1 → 2: each entry whose installed files still match its
/// version-1 hash gets the registry integrity of itself and its
/// dependencies from npm's lockfile; one that does not keeps only what
/// version 1 knew (the next install checks and records the rest).
fn migrate(v1: V1File, plugins_dir: &Path) -> LockFile {
    let npm = NpmLock::read(plugins_dir);
    let mut plugins = BTreeMap::new();
    for (name, e) in v1.plugins {
        let here = format!("node_modules/{name}");
        let files_now = tree_integrity(&plugins_dir.join(&here)).ok();
        let intact = files_now.as_deref() == Some(e.integrity.as_str());
        let (integrity, dependencies) = match (&npm, intact) {
            (Some(npm), true) => (
                npm.packages.get(&here).and_then(|p| p.integrity.clone()),
                npm.closure(&here, plugins_dir).ok(),
            ),
            _ => (None, None),
        };
        plugins.insert(
            name,
            LockEntry {
                package: Locked {
                    version: e.version,
                    resolved: e.resolved,
                    integrity,
                    files: e.integrity,
                },
                installed_at: e.installed_at,
                range: e.range,
                dependencies,
            },
        );
    }
    LockFile {
        version: LOCK_VERSION,
        plugins,
        migrated: true,
    }
}

/// npm's lockfile (`package-lock.json`, else `node_modules/.package-lock.json`).
#[derive(Debug, Deserialize)]
pub struct NpmLock {
    #[serde(default)]
    pub packages: BTreeMap<String, NpmPackage>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NpmPackage {
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub resolved: Option<String>,
    #[serde(default)]
    pub integrity: Option<String>,
    #[serde(default)]
    pub dependencies: BTreeMap<String, String>,
    #[serde(default)]
    pub optional_dependencies: BTreeMap<String, String>,
    #[serde(default)]
    pub peer_dependencies: BTreeMap<String, String>,
}

impl NpmLock {
    pub fn read(plugins_dir: &Path) -> Option<Self> {
        ["package-lock.json", "node_modules/.package-lock.json"]
            .iter()
            .find_map(|f| {
                let text = std::fs::read_to_string(plugins_dir.join(f)).ok()?;
                serde_json::from_str(&text).ok()
            })
    }

    /// Where Node finds `dep` from the package at `from`: its own
    /// `node_modules`, then each enclosing one up to the top.
    fn locate(&self, from: &str, dep: &str) -> Option<String> {
        let mut base = from.to_string();
        loop {
            let candidate = if base.is_empty() {
                format!("node_modules/{dep}")
            } else {
                format!("{base}/node_modules/{dep}")
            };
            if self.packages.contains_key(&candidate) {
                return Some(candidate);
            }
            if base.is_empty() {
                return None;
            }
            // Up one `node_modules/<name>` (a scoped name is two parts).
            base = match base.rfind("node_modules/") {
                Some(i) => base[..i].trim_end_matches('/').to_string(),
                None => String::new(),
            };
        }
    }

    /// Every package `root` (`node_modules/<plugin>`) depends on, directly
    /// or not, with its registry integrity and the hash of its files.
    pub fn closure(
        &self,
        root: &str,
        plugins_dir: &Path,
    ) -> Result<BTreeMap<String, Locked>, String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![root.to_string()];
        let mut out = BTreeMap::new();
        while let Some(at) = todo.pop() {
            let Some(pkg) = self.packages.get(&at) else {
                continue;
            };
            let required = pkg.dependencies.keys().map(|d| (d, true));
            let optional = pkg
                .optional_dependencies
                .keys()
                .chain(pkg.peer_dependencies.keys())
                .map(|d| (d, false));
            for (dep, needed) in required.chain(optional) {
                match self.locate(&at, dep) {
                    Some(found) if seen.insert(found.clone()) => todo.push(found),
                    Some(_) => {}
                    None if needed => {
                        return Err(format!("{at} needs {dep}, which npm did not install"));
                    }
                    None => {}
                }
            }
        }
        for at in seen {
            let Some(pkg) = self.packages.get(&at) else {
                continue;
            };
            let files = tree_integrity(&plugins_dir.join(&at)).map_err(|e| format!("{at}: {e}"))?;
            out.insert(
                at,
                Locked {
                    version: pkg.version.clone().unwrap_or_default(),
                    resolved: pkg.resolved.clone(),
                    integrity: pkg.integrity.clone(),
                    files,
                },
            );
        }
        Ok(out)
    }
}

/// Every package the plugin `name` depends on, found on disk as Node
/// finds them (for pnpm and bun, whose lockfiles are their own): their
/// files' hashes, without a registry integrity.
pub fn fs_closure(plugins_dir: &Path, name: &str) -> Result<BTreeMap<String, Locked>, String> {
    let deps_of = |at: &str| -> Vec<String> {
        let Ok(text) = std::fs::read_to_string(plugins_dir.join(at).join("package.json")) else {
            return Vec::new();
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        ["dependencies", "optionalDependencies"]
            .iter()
            .filter_map(|k| v.get(k).and_then(serde_json::Value::as_object))
            .flat_map(|m| m.keys().cloned())
            .collect()
    };
    let locate = |from: &str, dep: &str| -> Option<String> {
        let mut base = from.to_string();
        loop {
            let candidate = if base.is_empty() {
                format!("node_modules/{dep}")
            } else {
                format!("{base}/node_modules/{dep}")
            };
            if plugins_dir.join(&candidate).join("package.json").is_file() {
                return Some(candidate);
            }
            if base.is_empty() {
                return None;
            }
            base = match base.rfind("node_modules/") {
                Some(i) => base[..i].trim_end_matches('/').to_string(),
                None => String::new(),
            };
        }
    };
    let mut seen = BTreeSet::new();
    let mut todo = vec![format!("node_modules/{name}")];
    while let Some(at) = todo.pop() {
        for dep in deps_of(&at) {
            if let Some(found) = locate(&at, &dep)
                && seen.insert(found.clone())
            {
                todo.push(found);
            }
        }
    }
    let mut out = BTreeMap::new();
    for at in seen {
        let dir = plugins_dir.join(&at);
        let version = std::fs::read_to_string(dir.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| {
                v.get("version")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_default();
        let files = tree_integrity(&dir).map_err(|e| format!("{at}: {e}"))?;
        out.insert(
            at,
            Locked {
                version,
                resolved: None,
                integrity: None,
                files,
            },
        );
    }
    Ok(out)
}

/// `sha256-…` over every file under `dir` (sorted relative paths and
/// contents; `node_modules` inside it excluded: those are packages of
/// their own).
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
            } else if ft.is_file() || ft.is_symlink() {
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
        let p = dir.join(&f);
        match std::fs::read_link(&p) {
            Ok(target) => {
                h.update(b"symlink:");
                h.update(target.to_string_lossy().as_bytes());
            }
            Err(_) => h.update(std::fs::read(&p)?),
        }
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

/// What differs between the lock and the installed files, if anything:
/// the first difference, said for a person.
pub fn differs(entry: &LockEntry, name: &str, plugins_dir: &Path) -> Option<String> {
    let here = plugins_dir.join("node_modules").join(name);
    if tree_integrity(&here).ok().as_deref() != Some(entry.package.files.as_str()) {
        return Some(format!("node_modules/{name} was changed or removed"));
    }
    let Some(deps) = &entry.dependencies else {
        return Some(format!(
            "the lock does not record {name}'s dependencies yet"
        ));
    };
    for (at, dep) in deps {
        if tree_integrity(&plugins_dir.join(at)).ok().as_deref() != Some(dep.files.as_str()) {
            return Some(format!(
                "{at} (a dependency of {name}) was changed or removed"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lock(packages: serde_json::Value) -> NpmLock {
        serde_json::from_value(json!({ "packages": packages })).unwrap()
    }

    #[test]
    fn dependencies_are_found_where_node_finds_them() {
        let l = lock(json!({
            "": {},
            "node_modules/p": {"version": "1.0.0", "dependencies": {"a": "^1", "@s/b": "^2"}},
            "node_modules/a": {"version": "1.0.0", "dependencies": {"c": "^3"}},
            "node_modules/a/node_modules/c": {"version": "3.0.0"},
            "node_modules/c": {"version": "9.0.0"},
            "node_modules/@s/b": {"version": "2.0.0", "dependencies": {"c": "^9"}},
            "node_modules/unrelated": {"version": "1.0.0"}
        }));
        assert_eq!(
            l.locate("node_modules/a", "c").unwrap(),
            "node_modules/a/node_modules/c"
        );
        assert_eq!(
            l.locate("node_modules/@s/b", "c").unwrap(),
            "node_modules/c"
        );
        assert_eq!(l.locate("node_modules/p", "a").unwrap(), "node_modules/a");
        let dir = tempfile::tempdir().unwrap();
        for p in [
            "node_modules/a/node_modules/c",
            "node_modules/c",
            "node_modules/@s/b",
            "node_modules/a",
        ] {
            std::fs::create_dir_all(dir.path().join(p)).unwrap();
        }
        let deps = l.closure("node_modules/p", dir.path()).unwrap();
        let keys: Vec<&String> = deps.keys().collect();
        assert_eq!(
            keys,
            [
                "node_modules/@s/b",
                "node_modules/a",
                "node_modules/a/node_modules/c",
                "node_modules/c"
            ]
        );
        let missing = lock(json!({"node_modules/p": {"dependencies": {"gone": "1"}}}));
        assert!(
            missing
                .closure("node_modules/p", dir.path())
                .unwrap_err()
                .contains("gone")
        );
    }

    #[test]
    fn a_version_1_lock_is_migrated_from_npms_records() {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        let pkg = plugins.join("node_modules/p");
        let dep = plugins.join("node_modules/d");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::create_dir_all(&dep).unwrap();
        std::fs::write(pkg.join("index.js"), "p").unwrap();
        std::fs::write(dep.join("index.js"), "d").unwrap();
        std::fs::write(
            plugins.join("package-lock.json"),
            json!({"packages": {
                "node_modules/p": {"version": "1.0.0", "integrity": "sha512-P", "dependencies": {"d": "1"}},
                "node_modules/d": {"version": "1.0.0", "integrity": "sha512-D"}
            }})
            .to_string(),
        )
        .unwrap();
        let files = tree_integrity(&pkg).unwrap();
        let path = dir.path().join("plugin-lock.json");
        std::fs::write(
            &path,
            json!({"version": 1, "plugins": {
                "p": {"version": "1.0.0", "integrity": files, "installedAt": "t", "range": "^1"},
                "q": {"version": "2.0.0", "integrity": "sha256-stale", "installedAt": "t"}
            }})
            .to_string(),
        )
        .unwrap();
        let l = LockFile::load(&path, &plugins).unwrap();
        assert_eq!(l.version, 2);
        assert!(l.migrated);
        let p = &l.plugins["p"];
        assert_eq!(p.package.integrity.as_deref(), Some("sha512-P"));
        assert_eq!(p.package.files, files);
        let d = &p.dependencies.as_ref().unwrap()["node_modules/d"];
        assert_eq!(d.integrity.as_deref(), Some("sha512-D"));
        assert_eq!(differs(p, "p", &plugins), None);
        // q's files do not match: migrated with what version 1 knew.
        assert_eq!(l.plugins["q"].package.integrity, None);
        assert!(l.plugins["q"].dependencies.is_none());
        // An edited dependency is a difference.
        std::fs::write(dep.join("index.js"), "edited").unwrap();
        assert!(
            differs(p, "p", &plugins)
                .unwrap()
                .contains("node_modules/d")
        );
        // Unknown versions are refused with the way out.
        std::fs::write(&path, r#"{"version": 9}"#).unwrap();
        let e = LockFile::load(&path, &plugins).unwrap_err().to_string();
        assert!(e.contains("version 9") && e.contains("delete"), "{e}");
    }
}
