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

/// `---` YAML `---` body, as agent, command and subagent files have it:
/// the YAML and the body (the closing line and the blank lines after it
/// removed). `Ok(None)` when the text has no front matter.
pub(crate) fn split_front_matter(text: &str) -> Result<Option<(&str, &str)>, &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok(None);
    };
    let end = rest
        .find("\n---\n")
        .or_else(|| rest.find("\n---\r\n"))
        .or_else(|| rest.strip_suffix("\n---").map(str::len))
        .ok_or("the front matter block has no closing `---`")?;
    let body = rest[end..]
        .trim_start_matches('\n')
        .trim_start_matches("---")
        .trim_start_matches(['\r', '\n']);
    Ok(Some((&rest[..end], body)))
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
    let (yaml, body) = match split_front_matter(text) {
        Ok(Some(parts)) => parts,
        Ok(None) => {
            return Err(invalid(
                1,
                "an agent file starts with a `---` front matter block (its settings), then the prompt"
                    .into(),
            ));
        }
        Err(e) => return Err(invalid(1, e.into())),
    };
    let body = body.to_string();
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

/// A project's Claude Code subagents (`.claude/agents/<name>.md`).
pub const CLAUDE_AGENTS_DIR: &str = ".claude/agents";

/// Claude Code's subagent front matter.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ClaudeAgent {
    name: String,
    description: String,
    #[serde(default)]
    tools: Option<ClaudeTools>,
    /// `sonnet`, `opus`, `haiku`, `inherit`, or a `provider/model`.
    #[serde(default)]
    model: Option<String>,
    /// Shown by Claude Code only.
    #[serde(default)]
    #[allow(dead_code)]
    color: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum ClaudeTools {
    One(String),
    Many(Vec<String>),
}

/// mia-code's tool permissions a Claude Code subagent's `tools` list
/// leaves out are denied to it.
const TOOL_PERMISSIONS: [&str; 9] = [
    "read", "write", "edit", "glob", "grep", "bash", "fetch", "todo", "task",
];

/// Parse a Claude Code subagent file as a subagent: its `name`, the
/// `description`, the body as prompt; a `tools` list denies the tools it
/// does not name; a `model` alias (`sonnet`, `inherit`) leaves the model
/// to the config.
pub fn parse_claude_agent(text: &str) -> Result<(String, AgentConfig), String> {
    let (yaml, body) = split_front_matter(text)?.ok_or("no `---` front matter")?;
    let front: ClaudeAgent =
        serde_yaml_ng::from_str(yaml).map_err(|e| format!("front matter: {e}"))?;
    if !valid_key(&front.name) {
        return Err(format!("`{}` is not an agent name", front.name));
    }
    let body = body.trim().to_string();
    let mut cfg = AgentConfig {
        description: Some(front.description),
        mode: Some(crate::AgentMode::Subagent),
        prompt: (!body.is_empty()).then_some(body),
        model: front.model.filter(|m| m.contains('/')),
        ..Default::default()
    };
    if let Some(tools) = front.tools {
        let list = match tools {
            ClaudeTools::One(s) => crate::commands::split_tool_list(&s),
            ClaudeTools::Many(v) => v,
        };
        let mut allowed: Vec<String> = Vec::new();
        for t in &list {
            if let Ok(rules) = crate::import::claude_rule(t, mia_protocol::PermissionAction::Allow)
            {
                allowed.extend(rules.into_iter().map(|r| r.permission));
            }
        }
        cfg.permissions = Some(
            TOOL_PERMISSIONS
                .iter()
                .filter(|p| !allowed.iter().any(|a| a == *p))
                .map(|p| mia_protocol::PermissionRule {
                    permission: (*p).to_string(),
                    pattern: None,
                    action: mia_protocol::PermissionAction::Deny,
                })
                .collect(),
        );
    }
    Ok((front.name, cfg))
}

/// The project's `.claude/agents/*.md` as config layers; a file that does
/// not parse is skipped with a warning (it is Claude Code's file).
pub(crate) fn read_claude_agents(dir: &Path) -> Vec<(PathBuf, ConfigFile)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= MAX_AGENT_FILE => std::fs::read_to_string(&path),
            _ => continue,
        };
        let parsed = text
            .map_err(|e| e.to_string())
            .and_then(|t| parse_claude_agent(&t));
        match parsed {
            Ok((key, cfg)) => {
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
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "a Claude Code subagent file is not read as an agent");
            }
        }
    }
    out
}
