use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::types::{
    CompactionConfig, ConfigFile, NetworkSetting, SandboxModeSetting, ShareConfig, ShareMode,
    SnapshotConfig, UnifierConfig, WorktreeConfig,
};
use crate::{ConfigError, Paths};

/// Project config file names, in the order they are looked for. When both
/// exist, `mia-code.json` is read first and `.mia-code.json` wins.
pub const PROJECT_FILE_NAMES: [&str; 2] = ["mia-code.json", ".mia-code.json"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerKind {
    Builtin,
    Global,
    Project,
}

/// One loaded layer: where it came from and what it said.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Layer {
    pub kind: LayerKind,
    /// The file, or `None` for the built-in defaults.
    pub path: Option<PathBuf>,
    pub file: ConfigFile,
}

impl Layer {
    /// `built-in` or the file path, for messages such as "matched rule ... from X".
    pub fn source(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "built-in".to_string(),
        }
    }
}

/// The effective configuration: every layer, the merged view, and where each
/// merged value came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub layers: Vec<Layer>,
    pub merged: ConfigFile,
    /// Dotted key → source (`built-in` or a file path) of the value in `merged`.
    pub origins: BTreeMap<String, String>,
}

/// Top-level keys the schema accepts (they belong to features still to
/// come) but nothing reads yet. `mia-code config show` says so when a file
/// sets one; docs/configuration.md lists them apart.
/// A project's markdown agent files (`.mia-code/agents/<key>.md`).
pub const PROJECT_AGENTS_DIR: &str = ".mia-code/agents";

pub const NOT_YET_USED: &[&str] = &[];

/// Keys only the person's own config sets: a project's value never applies.
pub const PROJECT_NEVER: &[&str] = &[
    "plugin.allowScripts",
    "plugin.allowGit",
    "plugin.env",
    "plugin.installTimeout",
    "plugin.timeout",
    "plugin.offline",
    "plugin.writable",
];

/// Keys a project's config sets that apply once the workspace is trusted.
pub const PROJECT_ONCE_TRUSTED: &[&str] = &[
    "worktree.startScripts",
    "worktree.checkCommand",
    "worktree.runHooks",
    "worktree.directory",
    "worktree.branchPrefix",
    "hooks",
];

/// Why a project's value does not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotApplied {
    /// Only the person's own config sets it.
    YoursOnly,
    /// It applies once the workspace is trusted.
    UntilTrusted,
}

impl NotApplied {
    pub fn why(self) -> &'static str {
        match self {
            Self::YoursOnly => "only your own config sets this; a project's value never applies",
            Self::UntilTrusted => {
                "applies once you trust the workspace (`mia-code permissions trust`)"
            }
        }
    }
}

/// `share` as the share client uses it (docs/sharing.md).
#[derive(Debug, Clone, PartialEq)]
pub struct ShareSettings {
    pub mode: ShareMode,
    pub endpoint: Option<String>,
    /// False when any layer says false: a project may leave more out, never
    /// put more in.
    pub include_tool_results: bool,
    pub include_diffs: bool,
    /// Every layer's patterns (a project cannot remove yours).
    pub redact_patterns: Vec<String>,
    pub ttl_days: u32,
}

impl Config {
    pub fn share_settings(&self) -> ShareSettings {
        let merged = self.merged.share.clone().unwrap_or_default();
        let layers = || self.layers.iter().filter_map(|l| l.file.share.as_ref());
        let mut redact_patterns = Vec::new();
        for l in layers() {
            for p in l.redact_patterns.iter().flatten() {
                if !redact_patterns.contains(p) {
                    redact_patterns.push(p.clone());
                }
            }
        }
        ShareSettings {
            mode: merged.mode.unwrap_or(ShareMode::Ask),
            endpoint: merged.endpoint.filter(|e| !e.trim().is_empty()),
            include_tool_results: layers().all(|l| l.include_tool_results != Some(false)),
            include_diffs: layers().all(|l| l.include_diffs != Some(false)),
            redact_patterns,
            ttl_days: merged.ttl_days.unwrap_or(30).clamp(1, 3650),
        }
    }

    /// Keys a project's config sets that do not apply, with the file and
    /// why: plugin options (a repository may list plugins, never widen what
    /// they get), and until the workspace is trusted the worktree commands
    /// and places. `config show` leaves them out of what applies.
    pub fn not_applied_from_project(&self, trusted: bool) -> Vec<(String, String, NotApplied)> {
        let project: Vec<String> = self
            .layers
            .iter()
            .filter(|l| l.kind == LayerKind::Project)
            .map(Layer::source)
            .collect();
        let under = |k: &str, p: &str| k == p || k.starts_with(&format!("{p}."));
        self.origins
            .iter()
            .filter(|(_, src)| project.contains(src))
            .filter_map(|(k, src)| {
                let why = if PROJECT_NEVER.iter().any(|p| under(k, p)) {
                    NotApplied::YoursOnly
                } else if !trusted && PROJECT_ONCE_TRUSTED.iter().any(|p| under(k, p)) {
                    NotApplied::UntilTrusted
                } else {
                    return None;
                };
                Some((k.clone(), src.clone(), why))
            })
            .collect()
    }

    /// Keys set by a file (not the built-in defaults) that have no effect yet,
    /// with the file that set each.
    pub fn unused_settings(&self) -> Vec<(String, String)> {
        self.origins
            .iter()
            .filter(|(k, src)| {
                let top = k.split('.').next().unwrap_or(k);
                NOT_YET_USED.contains(&top) && src.as_str() != "built-in"
            })
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect()
    }
}

/// The built-in defaults layer.
pub fn builtin_defaults() -> ConfigFile {
    ConfigFile {
        default_agent: Some("build".into()),
        compaction: Some(CompactionConfig {
            enabled: Some(true),
            auto_trigger: Some(true),
            threshold: Some(50),
            retain_count: Some(20),
            token_ratio: Some(0.8),
            reserved: None,
            model: None,
        }),
        share: Some(ShareConfig {
            mode: Some(ShareMode::Ask),
            endpoint: None,
            include_tool_results: Some(true),
            include_diffs: Some(true),
            redact_patterns: None,
            ttl_days: Some(30),
        }),
        snapshot: Some(SnapshotConfig {
            enabled: Some(true),
            max_file_size: Some(10 * 1024 * 1024),
            retention: Some(100),
            capture_budget_ms: Some(2000),
            exclude: None,
            max_age_days: std::num::NonZeroU32::new(30),
        }),
        unifier: Some(UnifierConfig {
            enabled: Some(true),
        }),
        worktree: Some(WorktreeConfig {
            directory: Some(".mia-code/worktrees".into()),
            auto_cleanup: Some(true),
            branch_prefix: Some("mia-code/".into()),
            run_hooks: Some(false),
            start_scripts: None,
            check_command: None,
        }),
        ..ConfigFile::default()
    }
}

impl Config {
    /// Load built-in, global and (when given) project layers.
    pub fn load(paths: &Paths, project: Option<&Path>) -> Result<Self, ConfigError> {
        let mut layers = vec![Layer {
            kind: LayerKind::Builtin,
            path: None,
            file: builtin_defaults(),
        }];
        for path in &paths.global_configs {
            if let Some(file) = read_layer(path, LayerKind::Global)? {
                layers.push(Layer {
                    kind: LayerKind::Global,
                    path: Some(path.clone()),
                    file,
                });
            }
        }
        // Markdown agent files, after the config files of their level.
        if let Some(dir) = paths.global_agents_dir() {
            for (path, file) in crate::agent_file::read_agent_dir(&dir)? {
                layers.push(Layer {
                    kind: LayerKind::Global,
                    path: Some(path),
                    file,
                });
            }
        }
        if let Some(root) = project {
            for name in PROJECT_FILE_NAMES {
                let path = root.join(name);
                if let Some(file) = read_layer(&path, LayerKind::Project)? {
                    layers.push(Layer {
                        kind: LayerKind::Project,
                        path: Some(path),
                        file,
                    });
                }
            }
            // Claude Code's subagents first: `.mia-code/agents/` wins.
            for (path, file) in crate::agent_file::read_claude_agents(
                &root.join(crate::agent_file::CLAUDE_AGENTS_DIR),
            ) {
                layers.push(Layer {
                    kind: LayerKind::Project,
                    path: Some(path),
                    file,
                });
            }
            for (path, file) in crate::agent_file::read_agent_dir(&root.join(PROJECT_AGENTS_DIR))? {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                check_project_restrictions(&path, &text, &file)?;
                layers.push(Layer {
                    kind: LayerKind::Project,
                    path: Some(path),
                    file,
                });
            }
        }
        Self::from_layers(layers)
    }

    /// Merge already-parsed layers (lowest precedence first).
    pub fn from_layers(layers: Vec<Layer>) -> Result<Self, ConfigError> {
        let mut merged = Value::Object(Map::new());
        let mut origins = BTreeMap::new();
        for layer in &layers {
            let value = serde_json::to_value(&layer.file).map_err(|e| ConfigError::Invalid {
                path: layer.path.clone().unwrap_or_default(),
                key: String::new(),
                line: 0,
                column: 0,
                message: e.to_string(),
            })?;
            record_origins(&value, String::new(), &layer.source(), &mut origins);
            deep_merge(&mut merged, value);
        }
        let merged: ConfigFile =
            serde_json::from_value(merged).map_err(|e| ConfigError::Invalid {
                path: PathBuf::from("(merged config)"),
                key: String::new(),
                line: 0,
                column: 0,
                message: e.to_string(),
            })?;
        Ok(Self {
            layers,
            merged,
            origins,
        })
    }

    pub fn default_agent(&self) -> &str {
        self.merged.default_agent.as_deref().unwrap_or("build")
    }

    /// Whether any project layer is present.
    pub fn has_project_layer(&self) -> bool {
        self.layers.iter().any(|l| l.kind == LayerKind::Project)
    }
}

/// Largest config file read (a config is a few KB; this stops a huge file from being loaded).
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

fn read_layer(path: &Path, kind: LayerKind) -> Result<Option<ConfigFile>, ConfigError> {
    // Only regular files: opening a FIFO (or a device) named like a config
    // file would block the reader forever.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a regular file (a config must be a JSON file)",
                ),
            });
        }
        Ok(m) if m.len() > MAX_CONFIG_BYTES => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "{} bytes; a config file may have at most {MAX_CONFIG_BYTES}",
                        m.len()
                    ),
                ),
            });
        }
        _ => {}
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse_file(path, &text, kind).map(Some)
}

/// Parse one JSONC config file. `kind` decides which keys are allowed.
pub fn parse_file(path: &Path, text: &str, kind: LayerKind) -> Result<ConfigFile, ConfigError> {
    let mut stripped = text.to_string();
    if json_strip_comments::strip(&mut stripped).is_err() {
        return Err(ConfigError::Invalid {
            path: path.to_path_buf(),
            key: String::new(),
            line: text.lines().count().max(1),
            column: 1,
            message: "unterminated comment or string".into(),
        });
    }
    if stripped.trim().is_empty() {
        return Ok(ConfigFile::default());
    }
    let de = &mut serde_json::Deserializer::from_str(&stripped);
    let file: ConfigFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let inner = e.into_inner();
        let message = strip_position(&inner.to_string());
        ConfigError::Invalid {
            path: path.to_path_buf(),
            key: if key == "." { String::new() } else { key },
            line: inner.line(),
            column: inner.column(),
            message,
        }
    })?;
    if kind == LayerKind::Project {
        check_project_restrictions(path, &stripped, &file)?;
    }
    Ok(file)
}

/// A project config may not redirect credentials or transcripts.
fn check_project_restrictions(
    path: &Path,
    text: &str,
    file: &ConfigFile,
) -> Result<(), ConfigError> {
    const REDIRECTS: &str =
        "a cloned repository must not be able to redirect API keys or transcripts";
    let forbidden_because =
        |key: String, needle: &str, why: &'static str| ConfigError::ForbiddenInProject {
            path: path.to_path_buf(),
            line: line_of(text, needle),
            key,
            why,
        };
    let forbidden = |key: String, needle: &str| forbidden_because(key, needle, REDIRECTS);
    for (id, p) in file.providers.iter().flatten() {
        if p.api_key.is_some() {
            return Err(forbidden(format!("providers.{id}.apiKey"), "\"apiKey\""));
        }
        if p.base_url.is_some() {
            return Err(forbidden(format!("providers.{id}.baseURL"), "\"baseURL\""));
        }
        if p.headers.is_some() {
            return Err(forbidden(format!("providers.{id}.headers"), "\"headers\""));
        }
    }
    if let Some(share) = &file.share {
        if share.endpoint.is_some() {
            let needle = if text.contains("\"endpoint\"") {
                "\"endpoint\""
            } else {
                "\"url\""
            };
            return Err(forbidden("share.endpoint".into(), needle));
        }
        if share.mode == Some(ShareMode::Auto) {
            return Err(forbidden_because(
                "share.mode".into(),
                "\"auto\"",
                "a cloned repository must not publish your sessions; set share.mode \"auto\" in your global config if you want it",
            ));
        }
    }
    // A click must not run a command a cloned repository chose.
    if file.editor.is_some() {
        return Err(forbidden_because(
            "editor".into(),
            "\"editor\"",
            "a cloned repository must not choose a command that runs when you click \"Open in editor\"",
        ));
    }
    // The person's forge token must not be sent where a cloned repository says.
    for (key, set) in [("github", &file.github), ("gitlab", &file.gitlab)] {
        if set.is_some() {
            return Err(forbidden_because(
                format!("{key}.apiURL"),
                &format!("\"{key}\""),
                "a cloned repository must not choose where your token is sent; set it in your global config",
            ));
        }
    }
    // How long your history is kept is yours: a repository must not
    // delete your sessions.
    if file.sessions.is_some() {
        return Err(forbidden_because(
            "sessions".into(),
            "\"sessions\"",
            "how long your session history is kept is yours to decide, not a repository's; set it in your global config",
        ));
    }
    // Whether this machine looks for updates is the user's, not a project's.
    if file.updates.is_some() {
        return Err(forbidden_because(
            "updates".into(),
            "\"updates\"",
            "whether this machine looks for updates is yours to decide, not a repository's",
        ));
    }
    let loosens = |key: String, needle: &str| ConfigError::LoosensSandbox {
        path: path.to_path_buf(),
        line: line_of(text, needle),
        key,
    };
    let mode_loosens =
        |m: Option<SandboxModeSetting>| m.is_some_and(|m| m != SandboxModeSetting::ReadOnly);
    let net_loosens = |n: Option<NetworkSetting>| n.is_some_and(|n| n != NetworkSetting::Deny);
    if let Some(sb) = &file.sandbox {
        if mode_loosens(sb.mode) {
            return Err(loosens("sandbox.mode".into(), "\"mode\""));
        }
        if net_loosens(sb.network) {
            return Err(loosens("sandbox.network".into(), "\"network\""));
        }
        if sb.writable.as_ref().is_some_and(|w| !w.is_empty()) {
            return Err(loosens("sandbox.writable".into(), "\"writable\""));
        }
        if sb.package_caches == Some(true) {
            return Err(loosens("sandbox.packageCaches".into(), "\"packageCaches\""));
        }
        if sb.unix_sockets.as_ref().is_some_and(|w| !w.is_empty()) {
            return Err(loosens("sandbox.unixSockets".into(), "\"unixSockets\""));
        }
        if sb.allow_localhost == Some(true) {
            return Err(loosens(
                "sandbox.allowLocalhost".into(),
                "\"allowLocalhost\"",
            ));
        }
        if sb.registries == Some(true) {
            return Err(loosens("sandbox.registries".into(), "\"registries\""));
        }
        if sb.env.is_some() {
            return Err(loosens("sandbox.env".into(), "\"env\""));
        }
    }
    for (name, a) in file.agent.iter().flatten() {
        if let Some(sb) = &a.sandbox {
            if mode_loosens(sb.mode) {
                return Err(loosens(format!("agent.{name}.sandbox.mode"), "\"sandbox\""));
            }
            if net_loosens(sb.network) {
                return Err(loosens(
                    format!("agent.{name}.sandbox.network"),
                    "\"sandbox\"",
                ));
            }
        }
    }
    Ok(())
}

fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map(|at| text[..at].matches('\n').count() + 1)
        .unwrap_or(1)
}

/// serde_json appends " at line L column C"; we report those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        deep_merge(existing, v)
                    }
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn record_origins(value: &Value, prefix: String, source: &str, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                record_origins(v, key, source, out);
            }
        }
        _ if !prefix.is_empty() => {
            out.insert(prefix, source.to_string());
        }
        _ => {}
    }
}
