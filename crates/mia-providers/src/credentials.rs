//! API keys: where they come from and where `mia-code auth` keeps them.
//!
//! Resolution order for one provider:
//! 1. an explicit `apiKey` in the (global) `providers` config, after
//!    `{env:VAR}` / `$VAR` / `${VAR}` expansion;
//! 2. the provider's environment variables (`ANTHROPIC_API_KEY`,
//!    `OPENAI_API_KEY`, `GEMINI_API_KEY` then `GOOGLE_API_KEY`, ...);
//! 3. the OS keychain (`keyring`), skipped with a debug log when the
//!    platform has none (headless Linux without a Secret Service);
//! 4. `$MIA_CODE_HOME/credentials.json` (mode 0600; refused if readable by
//!    others).
//!
//! All calls are blocking (the keychain may talk to D-Bus); call them from
//! `spawn_blocking` inside async code.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a key was found or stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    Config,
    Env(String),
    Keychain,
    File(PathBuf),
}

impl std::fmt::Display for CredentialSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config => write!(f, "providers config"),
            Self::Env(var) => write!(f, "environment variable {var}"),
            Self::Keychain => write!(f, "OS keychain"),
            Self::File(p) => write!(f, "file {}", p.display()),
        }
    }
}

/// A resolved key. `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct ResolvedKey {
    pub key: String,
    pub source: CredentialSource,
}

impl std::fmt::Debug for ResolvedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedKey")
            .field("key", &"<redacted>")
            .field("source", &self.source)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error(
        "the providers config for {provider} references ${var}, which is not set. Set it or remove the reference"
    )]
    MissingVariable { provider: String, var: String },
    #[error(
        "malformed variable reference in the providers config for {provider}: {value:?}. Use `{{env:NAME}}`, `$NAME` or `${{NAME}}`"
    )]
    BadReference { provider: String, value: String },
    #[error(
        "the OS keychain is not available: {0}. Use `--store file` to keep the key in a 0600 file instead"
    )]
    KeychainUnavailable(String),
    #[error(
        "{path} is readable by other users (mode {mode:o}); fix it with `chmod 600 {path}` — keys in it are not used until then"
    )]
    InsecureFile { path: String, mode: u32 },
    #[error("could not read or write {path}: {message}")]
    Io { path: String, message: String },
    #[error("{path} is not a valid credentials file ({message}); fix or delete it")]
    Corrupt { path: String, message: String },
    #[error("an API key cannot be empty")]
    EmptyKey,
}

/// The environment variables checked for a provider id, in order.
pub fn env_vars(provider: &str) -> Vec<String> {
    match provider {
        "anthropic" => vec!["ANTHROPIC_API_KEY".into()],
        "openai" => vec!["OPENAI_API_KEY".into()],
        "google" | "gemini" => vec!["GEMINI_API_KEY".into(), "GOOGLE_API_KEY".into()],
        // Forge tokens for pull requests (`mia-code pr`).
        "github" => vec!["GH_TOKEN".into(), "GITHUB_TOKEN".into()],
        "gitlab" => vec!["GITLAB_TOKEN".into()],
        other => {
            let name: String = other
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_uppercase()
                    } else {
                        '_'
                    }
                })
                .collect();
            vec![format!("{name}_API_KEY")]
        }
    }
}

/// mia-code's data directory ([`mia_config::data_home`]); `.mia-code` in
/// the working directory when neither a home nor `$MIA_CODE_HOME` is known.
pub fn mia_home() -> PathBuf {
    mia_config::data_home().unwrap_or_else(|| PathBuf::from(".mia-code"))
}

type EnvFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Expand `{env:VAR}`, `${VAR}` and a whole-value `$VAR` (mia-config's
/// rules). Text without a reference is returned as is.
pub fn expand_env_refs(
    provider: &str,
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, CredentialError> {
    mia_config::resolve_env_refs_with(value, &format!("providers.{provider}.apiKey"), env).map_err(
        |e| match e {
            mia_config::ConfigError::MissingEnv { var, .. } => CredentialError::MissingVariable {
                provider: provider.into(),
                var,
            },
            _ => CredentialError::BadReference {
                provider: provider.into(),
                value: value.into(),
            },
        },
    )
}

/// A place keys can be kept.
pub trait SecretStore: Send + Sync {
    fn get(&self, provider: &str) -> Result<Option<String>, CredentialError>;
    fn set(&self, provider: &str, key: &str) -> Result<(), CredentialError>;
    /// Returns whether a key was there.
    fn delete(&self, provider: &str) -> Result<bool, CredentialError>;
}

/// The OS keychain through `keyring` (service `mia-code`, account = provider id).
pub struct KeyringStore {
    service: String,
}

impl KeyringStore {
    pub fn new() -> Self {
        Self {
            service: "mia-code".into(),
        }
    }

    fn entry(&self, provider: &str) -> Result<keyring::Entry, CredentialError> {
        keyring::Entry::new(&self.service, provider)
            .map_err(|e| CredentialError::KeychainUnavailable(e.to_string()))
    }
}

impl Default for KeyringStore {
    fn default() -> Self {
        Self::new()
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, provider: &str) -> Result<Option<String>, CredentialError> {
        match self.entry(provider)?.get_password() {
            Ok(k) => Ok(Some(k)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(CredentialError::KeychainUnavailable(e.to_string())),
        }
    }

    fn set(&self, provider: &str, key: &str) -> Result<(), CredentialError> {
        self.entry(provider)?
            .set_password(key)
            .map_err(|e| CredentialError::KeychainUnavailable(e.to_string()))
    }

    fn delete(&self, provider: &str) -> Result<bool, CredentialError> {
        match self.entry(provider)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(CredentialError::KeychainUnavailable(e.to_string())),
        }
    }
}

/// `credentials.json` under the mia-code home, mode 0600.
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `credentials.json` in `home`.
    pub fn in_home(home: &Path) -> Self {
        Self::new(home.join("credentials.json"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, e: impl std::fmt::Display) -> CredentialError {
        CredentialError::Io {
            path: self.path.display().to_string(),
            message: e.to_string(),
        }
    }

    fn load(&self) -> Result<BTreeMap<String, String>, CredentialError> {
        let meta = match fs::metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(self.io(e)),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(CredentialError::InsecureFile {
                    path: self.path.display().to_string(),
                    mode,
                });
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        let text = fs::read_to_string(&self.path).map_err(|e| self.io(e))?;
        if text.trim().is_empty() {
            return Ok(BTreeMap::new());
        }
        #[derive(serde::Deserialize)]
        struct Stored {
            #[serde(default)]
            keys: BTreeMap<String, String>,
        }
        let stored: Stored = serde_json::from_str(&text).map_err(|e| CredentialError::Corrupt {
            path: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(stored.keys)
    }

    fn save(&self, keys: &BTreeMap<String, String>) -> Result<(), CredentialError> {
        let dir = self
            .path
            .parent()
            .ok_or_else(|| self.io("the path has no parent directory"))?;
        fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let text = serde_json::to_string_pretty(&serde_json::json!({"version": 1, "keys": keys}))
            .map_err(|e| self.io(e))?;
        // A unique temp file (0600 from creation), flushed, renamed over the
        // store, then the directory synced: a crash leaves the old or the
        // new file, never half of one.
        let mut tmp = tempfile::Builder::new()
            .prefix(".credentials-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| self.io(e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(fs::Permissions::from_mode(0o600))
                .map_err(|e| self.io(e))?;
        }
        tmp.write_all(text.as_bytes()).map_err(|e| self.io(e))?;
        tmp.as_file().sync_all().map_err(|e| self.io(e))?;
        tmp.persist(&self.path).map_err(|e| self.io(e.error))?;
        #[cfg(unix)]
        fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| self.io(e))?;
        Ok(())
    }
}

impl SecretStore for FileStore {
    fn get(&self, provider: &str) -> Result<Option<String>, CredentialError> {
        Ok(self.load()?.remove(provider))
    }

    fn set(&self, provider: &str, key: &str) -> Result<(), CredentialError> {
        let mut keys = self.load()?;
        keys.insert(provider.to_string(), key.to_string());
        self.save(&keys)
    }

    fn delete(&self, provider: &str) -> Result<bool, CredentialError> {
        let mut keys = self.load()?;
        let had = keys.remove(provider).is_some();
        if had {
            self.save(&keys)?;
        }
        Ok(had)
    }
}

/// Where `store` puts a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreTarget {
    /// The keychain when it works, else the file.
    Auto,
    Keychain,
    File,
}

/// What `list` reports for one provider: where keys exist (never the keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderKeys {
    pub provider: String,
    /// Every source holding a key, in resolution order; the first is used.
    pub sources: Vec<CredentialSource>,
    /// Sources that could not be checked, with the reason.
    pub unavailable: Vec<String>,
}

/// The credential chain.
pub struct Credentials {
    env: EnvFn,
    keychain: Option<Box<dyn SecretStore>>,
    file: FileStore,
}

impl Credentials {
    /// The real environment, the OS keychain and `$MIA_CODE_HOME/credentials.json`.
    pub fn system() -> Self {
        Self::new(
            Arc::new(|k: &str| std::env::var(k).ok()),
            Some(Box::new(KeyringStore::new())),
            FileStore::in_home(&mia_home()),
        )
    }

    pub fn new(env: EnvFn, keychain: Option<Box<dyn SecretStore>>, file: FileStore) -> Self {
        Self {
            env,
            keychain,
            file,
        }
    }

    pub fn file_store(&self) -> &FileStore {
        &self.file
    }

    /// The OS keychain, when this set of credentials uses one (other
    /// secrets, such as share secrets, are kept beside the API keys).
    pub fn keychain(&self) -> Option<&dyn SecretStore> {
        self.keychain.as_deref()
    }

    /// Find the key for `provider`. `configured` is the raw `apiKey` value
    /// from the global providers config, if any.
    pub fn resolve(
        &self,
        provider: &str,
        configured: Option<&str>,
    ) -> Result<Option<ResolvedKey>, CredentialError> {
        if let Some(raw) = configured.filter(|v| !v.trim().is_empty()) {
            let key = expand_env_refs(provider, raw.trim(), &*self.env)?;
            return Ok(Some(ResolvedKey {
                key,
                source: CredentialSource::Config,
            }));
        }
        for var in env_vars(provider) {
            if let Some(key) = (self.env)(&var).filter(|k| !k.trim().is_empty()) {
                return Ok(Some(ResolvedKey {
                    key: key.trim().to_string(),
                    source: CredentialSource::Env(var),
                }));
            }
        }
        if let Some(keychain) = &self.keychain {
            match keychain.get(provider) {
                Ok(Some(key)) => {
                    return Ok(Some(ResolvedKey {
                        key,
                        source: CredentialSource::Keychain,
                    }));
                }
                Ok(None) => {}
                Err(e) => tracing::debug!(provider, error = %e, "keychain skipped"),
            }
        }
        Ok(self.file.get(provider)?.map(|key| ResolvedKey {
            key,
            source: CredentialSource::File(self.file.path.clone()),
        }))
    }

    /// Store a key; returns where it went.
    pub fn store(
        &self,
        provider: &str,
        key: &str,
        target: StoreTarget,
    ) -> Result<CredentialSource, CredentialError> {
        let key = key.trim();
        if key.is_empty() {
            return Err(CredentialError::EmptyKey);
        }
        if target != StoreTarget::File {
            let attempt = match &self.keychain {
                Some(k) => k.set(provider, key).and_then(|()| {
                    // Some backends accept a write they cannot read back.
                    match k.get(provider)? {
                        Some(back) if back == key => Ok(()),
                        _ => Err(CredentialError::KeychainUnavailable(
                            "the key could not be read back after saving".into(),
                        )),
                    }
                }),
                None => Err(CredentialError::KeychainUnavailable(
                    "no keychain is configured".into(),
                )),
            };
            match attempt {
                Ok(()) => {
                    // Keep one copy: drop an older file entry.
                    let _ = self.file.delete(provider);
                    return Ok(CredentialSource::Keychain);
                }
                Err(e) if target == StoreTarget::Keychain => return Err(e),
                Err(e) => {
                    tracing::info!(provider, error = %e, "keychain unavailable; using the credentials file")
                }
            }
        }
        self.file.set(provider, key)?;
        Ok(CredentialSource::File(self.file.path.clone()))
    }

    /// Remove stored keys (keychain and file); returns where keys were removed.
    /// Environment variables and config are not touched.
    pub fn remove(&self, provider: &str) -> Result<Vec<CredentialSource>, CredentialError> {
        let mut removed = Vec::new();
        if let Some(k) = &self.keychain {
            match k.delete(provider) {
                Ok(true) => removed.push(CredentialSource::Keychain),
                Ok(false) => {}
                Err(e) => tracing::debug!(provider, error = %e, "keychain skipped"),
            }
        }
        if self.file.delete(provider)? {
            removed.push(CredentialSource::File(self.file.path.clone()));
        }
        Ok(removed)
    }

    /// Provider ids with a key in the credentials file (the keychain cannot
    /// be enumerated).
    pub fn stored_providers(&self) -> Result<Vec<String>, CredentialError> {
        Ok(self.file.load()?.into_keys().collect())
    }

    /// Where keys exist for each provider (never the keys themselves).
    pub fn list(&self, providers: &[&str]) -> Vec<ProviderKeys> {
        let file_keys = self.file.load();
        providers
            .iter()
            .map(|p| {
                let mut entry = ProviderKeys {
                    provider: p.to_string(),
                    sources: Vec::new(),
                    unavailable: Vec::new(),
                };
                for var in env_vars(p) {
                    if (self.env)(&var).is_some_and(|k| !k.trim().is_empty()) {
                        entry.sources.push(CredentialSource::Env(var));
                    }
                }
                match self.keychain.as_ref().map(|k| k.get(p)) {
                    Some(Ok(Some(_))) => entry.sources.push(CredentialSource::Keychain),
                    Some(Err(e)) => entry.unavailable.push(e.to_string()),
                    _ => {}
                }
                match &file_keys {
                    Ok(keys) if keys.contains_key(*p) => entry
                        .sources
                        .push(CredentialSource::File(self.file.path.clone())),
                    Err(e) => entry.unavailable.push(e.to_string()),
                    _ => {}
                }
                entry
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct MemStore(Mutex<BTreeMap<String, String>>);
    impl SecretStore for MemStore {
        fn get(&self, p: &str) -> Result<Option<String>, CredentialError> {
            Ok(self.0.lock().unwrap().get(p).cloned())
        }
        fn set(&self, p: &str, k: &str) -> Result<(), CredentialError> {
            self.0.lock().unwrap().insert(p.into(), k.into());
            Ok(())
        }
        fn delete(&self, p: &str) -> Result<bool, CredentialError> {
            Ok(self.0.lock().unwrap().remove(p).is_some())
        }
    }

    struct BrokenStore;
    impl SecretStore for BrokenStore {
        fn get(&self, _: &str) -> Result<Option<String>, CredentialError> {
            Err(CredentialError::KeychainUnavailable(
                "no secret service".into(),
            ))
        }
        fn set(&self, _: &str, _: &str) -> Result<(), CredentialError> {
            Err(CredentialError::KeychainUnavailable(
                "no secret service".into(),
            ))
        }
        fn delete(&self, _: &str) -> Result<bool, CredentialError> {
            Err(CredentialError::KeychainUnavailable(
                "no secret service".into(),
            ))
        }
    }

    fn env_of(pairs: &[(&str, &str)]) -> EnvFn {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Arc::new(move |k: &str| map.get(k).cloned())
    }

    #[test]
    fn expands_all_reference_forms() {
        let env = |k: &str| (k == "KEY").then(|| "v".to_string());
        assert_eq!(expand_env_refs("p", "{env:KEY}", &env).unwrap(), "v");
        assert_eq!(expand_env_refs("p", "$KEY", &env).unwrap(), "v");
        assert_eq!(expand_env_refs("p", "${KEY}", &env).unwrap(), "v");
        assert_eq!(
            expand_env_refs("p", "a-{env:KEY}-b", &env).unwrap(),
            "a-v-b"
        );
        assert_eq!(expand_env_refs("p", "plain", &env).unwrap(), "plain");
        assert!(matches!(
            expand_env_refs("p", "$NOPE", &env),
            Err(CredentialError::MissingVariable { .. })
        ));
        assert!(matches!(
            expand_env_refs("p", "{env:KEY", &env),
            Err(CredentialError::BadReference { .. })
        ));
    }

    #[test]
    fn order_is_config_env_keychain_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = FileStore::in_home(dir.path());
        file.set("anthropic", "from-file").unwrap();
        let keychain = MemStore(Mutex::new(BTreeMap::new()));
        keychain.set("anthropic", "from-keychain").unwrap();
        let creds = Credentials::new(
            env_of(&[("ANTHROPIC_API_KEY", "from-env"), ("MY", "from-config")]),
            Some(Box::new(keychain)),
            FileStore::in_home(dir.path()),
        );
        let r = creds
            .resolve("anthropic", Some("{env:MY}"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.key.as_str(), r.source),
            ("from-config", CredentialSource::Config)
        );
        let r = creds.resolve("anthropic", None).unwrap().unwrap();
        assert_eq!(r.key, "from-env");
        assert!(!format!("{r:?}").contains("from-env"), "Debug must redact");

        let keychain = MemStore(Mutex::new(BTreeMap::new()));
        keychain.set("anthropic", "from-keychain").unwrap();
        let creds = Credentials::new(
            env_of(&[]),
            Some(Box::new(keychain)),
            FileStore::in_home(dir.path()),
        );
        assert_eq!(
            creds.resolve("anthropic", None).unwrap().unwrap().key,
            "from-keychain"
        );

        let creds = Credentials::new(
            env_of(&[]),
            Some(Box::new(BrokenStore)),
            FileStore::in_home(dir.path()),
        );
        let r = creds.resolve("anthropic", None).unwrap().unwrap();
        assert_eq!(
            r.key, "from-file",
            "a broken keychain falls through to the file"
        );
        assert!(matches!(r.source, CredentialSource::File(_)));
        assert!(creds.resolve("openai", None).unwrap().is_none());
    }

    #[test]
    fn google_checks_gemini_then_google_key() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::new(
            env_of(&[("GOOGLE_API_KEY", "g"), ("GEMINI_API_KEY", "m")]),
            None,
            FileStore::in_home(dir.path()),
        );
        assert_eq!(creds.resolve("google", None).unwrap().unwrap().key, "m");
        assert_eq!(
            env_vars("my-gateway"),
            vec!["MY_GATEWAY_API_KEY".to_string()]
        );
    }

    #[test]
    fn store_falls_back_to_a_0600_file_and_remove_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::new(
            env_of(&[]),
            Some(Box::new(BrokenStore)),
            FileStore::in_home(&dir.path().join("home")),
        );
        let source = creds
            .store("openai", " sk-test \n", StoreTarget::Auto)
            .unwrap();
        assert!(matches!(source, CredentialSource::File(_)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(creds.file_store().path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(
            creds.resolve("openai", None).unwrap().unwrap().key,
            "sk-test"
        );
        assert!(matches!(
            creds.store("openai", "k", StoreTarget::Keychain),
            Err(CredentialError::KeychainUnavailable(_))
        ));
        assert_eq!(
            creds.stored_providers().unwrap(),
            vec!["openai".to_string()]
        );
        let listed = creds.list(&["openai", "anthropic"]);
        assert_eq!(listed[0].sources.len(), 1);
        assert!(listed[1].sources.is_empty());
        assert_eq!(
            listed[0].unavailable.len(),
            1,
            "keychain reported as unavailable"
        );
        let removed = creds.remove("openai").unwrap();
        assert_eq!(removed.len(), 1);
        assert!(creds.resolve("openai", None).unwrap().is_none());
        assert!(matches!(
            creds.store("openai", "  ", StoreTarget::File),
            Err(CredentialError::EmptyKey)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn world_readable_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = FileStore::in_home(dir.path());
        file.set("openai", "k").unwrap();
        fs::set_permissions(file.path(), fs::Permissions::from_mode(0o644)).unwrap();
        let err = file.get("openai").unwrap_err();
        assert!(err.to_string().contains("chmod 600"), "{err}");
    }

    #[test]
    fn real_keychain_works_or_degrades_cleanly() {
        // On a desktop this talks to the real keychain; on a headless box it
        // must fail with KeychainUnavailable (not panic or hang) and the
        // chain must still reach the file.
        let store = KeyringStore::new();
        let provider = format!("mia-test-{}", std::process::id());
        match store.get(&provider) {
            Ok(None) => {}
            Ok(Some(_)) => panic!("unexpected key for a fresh test account"),
            Err(e) => assert!(matches!(e, CredentialError::KeychainUnavailable(_)), "{e}"),
        }
        let dir = tempfile::tempdir().unwrap();
        let file = FileStore::in_home(dir.path());
        file.set(&provider, "file-key").unwrap();
        let creds = Credentials::new(
            env_of(&[]),
            Some(Box::new(KeyringStore::new())),
            FileStore::in_home(dir.path()),
        );
        assert_eq!(
            creds.resolve(&provider, None).unwrap().unwrap().key,
            "file-key"
        );
    }
}
