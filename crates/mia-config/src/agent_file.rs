//! Agents as markdown files (like peers'): `.mia-code/agents/<key>.md` in a
//! project, `~/.config/mia-code/agents/<key>.md` globally. YAML front matter
//! holds the `agent.<key>` settings (camelCase, as in the JSON config); the
//! body is the prompt. Loaded as their own config layers (a project's only
//! tightens until the workspace is trusted, like any project config).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::ConfigError;
use crate::types::{AgentConfig, ConfigFile};

/// Largest agent file read (the prompt is its body).
const MAX_AGENT_FILE: u64 = 256 * 1024;

/// An agent key: lowercase letters, digits and hyphens, 2-40 characters,
/// starting with a letter.
pub fn valid_key(key: &str) -> bool {
    (2..=40).contains(&key.len())
        && key.starts_with(|c: char| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Parse one agent file's text.
pub fn parse_agent_file(path: &Path, text: &str) -> Result<(String, AgentConfig), ConfigError> {
    let invalid = |line: usize, message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        key: String::new(),
        line,
        column: 0,
        message,
    };
    let key = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if !valid_key(&key) {
        return Err(invalid(
            0,
            format!(
                "`{key}` is not an agent key: name the file with lowercase letters, digits and hyphens, e.g. code-reviewer.md"
            ),
        ));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Err(invalid(
            1,
            "an agent file starts with a `---` front matter block (its settings), then the prompt"
                .into(),
        ));
    };
    let Some(end) = rest
        .find("\n---\n")
        .or_else(|| rest.find("\n---\r\n"))
        .or_else(|| rest.strip_suffix("\n---").map(str::len))
    else {
        return Err(invalid(
            1,
            "the front matter block has no closing `---`".into(),
        ));
    };
    let yaml = &rest[..end];
    let body = rest[end..]
        .trim_start_matches('\n')
        .trim_start_matches("---")
        .trim_start_matches(['\r', '\n'])
        .to_string();
    let mut cfg: AgentConfig = if yaml.trim().is_empty() {
        AgentConfig::default()
    } else {
        serde_yaml_ng::from_str(yaml).map_err(|e| {
            let line = e.location().map_or(0, |l| l.line() + 1);
            invalid(line, format!("front matter: {e}"))
        })?
    };
    if cfg.prompt.is_some() {
        return Err(invalid(
            1,
            "`prompt` is the file's body, not a front matter key".into(),
        ));
    }
    // The prompt without trailing blank lines (as rendered).
    if !body.trim().is_empty() {
        cfg.prompt = Some(body.trim_end().to_string());
    }
    Ok((key, cfg))
}

/// Render an agent as a markdown agent file (the inverse of [`parse_agent_file`]).
pub fn render_agent_file(cfg: &AgentConfig) -> Result<String, String> {
    let mut front = cfg.clone();
    let prompt = front.prompt.take().unwrap_or_default();
    let yaml = serde_yaml_ng::to_string(&front).map_err(|e| e.to_string())?;
    let yaml = if yaml.trim() == "{}" {
        String::new()
    } else {
        yaml
    };
    Ok(format!("---\n{yaml}---\n{}\n", prompt.trim_end()))
}

/// The agent files of a directory, as config layers (sorted by key).
pub(crate) fn read_agent_dir(dir: &Path) -> Result<Vec<(PathBuf, ConfigFile)>, ConfigError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let meta = std::fs::metadata(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        if !meta.is_file() || meta.len() > MAX_AGENT_FILE {
            return Err(ConfigError::Read {
                path: path.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "an agent file must be a regular file of at most {MAX_AGENT_FILE} bytes"
                    ),
                ),
            });
        }
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        let (key, cfg) = parse_agent_file(&path, &text)?;
        let mut agent = BTreeMap::new();
        agent.insert(key, cfg);
        out.push((
            path,
            ConfigFile {
                agent: Some(agent),
                ..Default::default()
            },
        ));
    }
    Ok(out)
}
