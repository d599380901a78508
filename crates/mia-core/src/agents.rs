//! Agents: built-in (build, plan, explore, general, and the hidden
//! compaction and title agents) merged with `agent.<name>` from config.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mia_config::{AgentMode, Config};

use crate::CoreError;

/// Where an agent's prompt comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptSource {
    /// One of the templates in `prompts/`, by name.
    Builtin(&'static str),
    /// Inline text from config (replaces the template, spec 012 step 6).
    Inline(String),
    /// `@path` from config, resolved against the config file's directory.
    File(PathBuf),
    /// An `@path` that may not be used (outside the directory of the config
    /// that named it, or unreadable): the agent cannot run; the message
    /// names the key and the file.
    Refused(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    pub mode: AgentMode,
    pub prompt: PromptSource,
    /// `provider/model`, overriding the configured default.
    pub model: Option<String>,
    pub temperature: Option<f64>,
    /// Most model steps in one turn.
    pub steps: u32,
    /// Seconds a delegation to it may run (spec 015; default 60).
    pub timeout_secs: u32,
    pub hidden: bool,
    pub builtin: bool,
    /// Behaviour follows these capabilities, never the agent's name.
    pub caps: Capabilities,
}

/// What an agent is, whatever it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Plans rather than changes (plan, explore): prompts speak of plan
    /// mode, and a switch from it to another agent tells the model it may
    /// now make changes. Its rules deny writes besides.
    pub read_only: bool,
    /// May be offered the `task` tool (its rules still decide).
    pub can_delegate: bool,
    /// Runs on the provider's fast model when it names none (explore).
    pub fast_model: bool,
}

impl Capabilities {
    /// A configured agent's: it may change things and delegate.
    pub const DEFAULT: Self = Self {
        read_only: false,
        can_delegate: true,
        fast_model: false,
    };
    const INTERNAL: Self = Self {
        read_only: false,
        can_delegate: false,
        fast_model: false,
    };
    const PLANNER: Self = Self {
        read_only: true,
        ..Self::DEFAULT
    };
}

impl AgentDef {
    pub fn is_primary(&self) -> bool {
        matches!(self.mode, AgentMode::Primary | AgentMode::All)
    }
}

/// Default step limit of one turn.
pub const DEFAULT_STEPS: u32 = 50;

/// How long a delegation may run by default (spec 015).
pub const DEFAULT_TIMEOUT_SECS: u32 = 60;

fn builtin(
    name: &str,
    description: &str,
    mode: AgentMode,
    prompt: &'static str,
    caps: Capabilities,
    hidden: bool,
) -> AgentDef {
    AgentDef {
        name: name.into(),
        description: description.into(),
        mode,
        prompt: PromptSource::Builtin(prompt),
        model: None,
        temperature: None,
        steps: DEFAULT_STEPS,
        timeout_secs: DEFAULT_TIMEOUT_SECS,
        hidden,
        builtin: true,
        caps,
    }
}

/// The agents of one project's configuration.
#[derive(Debug, Clone)]
pub struct Agents {
    agents: BTreeMap<String, AgentDef>,
}

impl Agents {
    pub fn from_config(config: &Config) -> Self {
        let mut agents: BTreeMap<String, AgentDef> = [
            builtin(
                "build",
                "Implements changes: reads, edits and runs code with full tool access.",
                AgentMode::Primary,
                "build",
                Capabilities::DEFAULT,
                false,
            ),
            builtin(
                "plan",
                "Plans changes without making them: read-only analysis.",
                AgentMode::Primary,
                "plan",
                Capabilities::PLANNER,
                false,
            ),
            builtin(
                "explore",
                "Searches the codebase quickly and reports findings (read-only).",
                AgentMode::Subagent,
                "explore",
                Capabilities {
                    fast_model: true,
                    ..Capabilities::PLANNER
                },
                false,
            ),
            builtin(
                "general",
                "General-purpose subagent for multi-step tasks.",
                AgentMode::Subagent,
                "general",
                Capabilities::DEFAULT,
                false,
            ),
            builtin(
                "compaction",
                "Summarises long sessions.",
                AgentMode::Primary,
                "compaction",
                Capabilities::INTERNAL,
                true,
            ),
            builtin(
                "title",
                "Names sessions.",
                AgentMode::Primary,
                "title",
                Capabilities::INTERNAL,
                true,
            ),
        ]
        .into_iter()
        .map(|a| (a.name.clone(), a))
        .collect();

        for (name, cfg) in config.merged.agent.iter().flatten() {
            if cfg.disable == Some(true) {
                agents.remove(name);
                continue;
            }
            let entry = agents.entry(name.clone()).or_insert_with(|| AgentDef {
                name: name.clone(),
                description: String::new(),
                mode: AgentMode::All,
                prompt: PromptSource::Builtin("general"),
                model: None,
                temperature: None,
                steps: DEFAULT_STEPS,
                timeout_secs: DEFAULT_TIMEOUT_SECS,
                hidden: false,
                builtin: false,
                caps: Capabilities::DEFAULT,
            });
            if let Some(d) = &cfg.description {
                entry.description = d.clone();
            }
            if let Some(m) = cfg.mode {
                entry.mode = m;
            }
            if let Some(m) = &cfg.model {
                entry.model = Some(m.clone());
            }
            if let Some(t) = cfg.temperature {
                entry.temperature = Some(t);
            }
            if let Some(s) = cfg.steps {
                entry.steps = s.max(1);
            }
            if let Some(h) = cfg.hidden {
                entry.hidden = h;
            }
            if let Some(t) = cfg.timeout {
                entry.timeout_secs = t.max(1);
            }
            if let Some(p) = &cfg.prompt {
                entry.prompt = match p.strip_prefix('@') {
                    Some(rel) => prompt_file(config, name, rel),
                    None => PromptSource::Inline(p.clone()),
                };
            }
        }
        Self { agents }
    }

    pub fn get(&self, name: &str) -> Result<&AgentDef, CoreError> {
        self.agents
            .get(name)
            .ok_or_else(|| CoreError::UnknownAgent {
                name: name.to_string(),
                available: self
                    .agents
                    .values()
                    .filter(|a| !a.hidden)
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The one check every path uses for a session's agent (create,
    /// message, switch, settings, the config's `defaultAgent`): a visible
    /// primary agent. Subagents run only when delegated to; hidden agents
    /// (compaction, title) are never user-invocable.
    pub fn session_agent(&self, name: &str) -> Result<&AgentDef, CoreError> {
        let def = self.get(name)?;
        if let PromptSource::Refused(why) = &def.prompt {
            return Err(CoreError::Refused(why.clone()));
        }
        if def.hidden || !def.is_primary() {
            let what = if def.hidden {
                "an internal agent"
            } else {
                "a subagent"
            };
            return Err(CoreError::Refused(format!(
                "{name} is {what}, not a session's agent; use a primary agent ({})",
                self.primary()
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(def)
    }

    /// Visible primary agents (what Tab cycles through).
    pub fn primary(&self) -> Vec<&AgentDef> {
        self.agents
            .values()
            .filter(|a| a.is_primary() && !a.hidden)
            .collect()
    }

    pub fn all(&self) -> impl Iterator<Item = &AgentDef> {
        self.agents.values()
    }
}

/// An agent's `@file` prompt, relative to the config file that named it and
/// kept inside that file's directory: the project root for a project config
/// (an untrusted clone cannot make mia-code read `../outside.txt` into every
/// request), the global config directory for a global one.
fn prompt_file(config: &Config, agent: &str, rel: &str) -> PromptSource {
    let key = format!("agent.{agent}.prompt");
    let Some(origin) = config.origins.get(&key).map(PathBuf::from) else {
        return PromptSource::Refused(format!(
            "config key {key}: `@{rel}` names a prompt file, but no config file set it"
        ));
    };
    let kind = config
        .layers
        .iter()
        .find(|l| l.path.as_deref() == Some(origin.as_path()))
        .map(|l| l.kind);
    let where_ = match kind {
        Some(mia_config::LayerKind::Project) => "the project",
        _ => "the directory of that config file",
    };
    let refuse = |why: String| {
        PromptSource::Refused(format!(
            "config key {key} in {}: {why}; a prompt file must be inside {where_}",
            origin.display()
        ))
    };
    let Some(base) = origin.parent() else {
        return refuse("the config file has no directory".into());
    };
    let Ok(root) = dunce::canonicalize(base) else {
        return refuse(format!("{} is not accessible", base.display()));
    };
    let path = match dunce::canonicalize(base.join(rel)) {
        Ok(p) => p,
        Err(e) => {
            return refuse(format!(
                "cannot read prompt file {}: {e}",
                base.join(rel).display()
            ));
        }
    };
    if !path.starts_with(&root) {
        return refuse(format!(
            "prompt file {} is outside {}",
            path.display(),
            root.display()
        ));
    }
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => PromptSource::File(path),
        Ok(_) => refuse(format!("{} is not a file", path.display())),
        Err(e) => refuse(format!("cannot read prompt file {}: {e}", path.display())),
    }
}
