//! Agent generation (spec 013): the meta-agent (a one-shot completion)
//! proposes an agent from a description; the proposal is validated before
//! anyone sees it — its permissions are never broader than the creating
//! agent's (an allow the creator would be denied rejects the proposal; one
//! the creator would be asked about becomes ask), the key is unique — and
//! saved as a markdown agent file the config loads at once. A refinement
//! changes only the fields it names.

use std::path::{Path, PathBuf};

use mia_config::agent_file::{render_agent_file, valid_key};
use mia_config::{AgentConfig, AgentMode, Config};
use mia_permission::{Checker, PathContext, PermissionAction, PermissionRule, Request};
use mia_protocol::{AgentProposal, ProposedRule};
use mia_providers::{ChatMessage, ChatRequest, ChatRole, ContentPart, ModelRef};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::agents::Agents;
use crate::runtime::Runtime;

/// Where a generated agent is saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveTo {
    /// `~/.config/mia-code/agents/<key>.md`.
    Global,
    /// `<project>/.mia-code/agents/<key>.md`.
    Project,
}

/// The longest prompt a generated agent may have.
const MAX_PROMPT: usize = 20_000;

impl Runtime {
    /// Ask the meta-agent for an agent doing `description` (or, with
    /// `previous` and `refine`, for the changes `refine` asks for), as the
    /// `creator` agent of the project in `directory`.
    pub async fn propose_agent(
        &self,
        directory: &Path,
        description: &str,
        creator: Option<&str>,
        previous: Option<AgentProposal>,
        refine: Option<&str>,
    ) -> Result<AgentProposal, CoreError> {
        let directory = crate::limits::project_dir(directory, &self.options().paths)?;
        let config = self.load_config(Some(directory.clone())).await?;
        let creator = creator
            .map(str::to_string)
            .unwrap_or_else(|| config.default_agent().to_string());
        let agents = Agents::from_config(&config);
        let creator_def = agents.get(&creator)?.clone();
        let model_text = creator_def
            .model
            .clone()
            .or_else(|| config.merged.model.clone())
            .ok_or(CoreError::NoModel)?;
        let model: ModelRef = model_text
            .parse()
            .map_err(|_| CoreError::BadModel(model_text.clone()))?;
        let provider = self.provider(&config, &model.provider_id).await?;
        let catalog = mia_providers::catalog::builtin();
        let system = crate::prompt::builtin_template("agent-generator")
            .unwrap_or_default()
            .to_string();
        let ask = match (&previous, refine) {
            (Some(p), Some(r)) => format!(
                "The current definition:\n{}\n\nThe user asks: {r}\n\nAnswer with a JSON object holding ONLY the keys whose values change (e.g. {{\"prompt\": \"...\"}}); keys you leave out stay as they are.",
                serde_json::to_string_pretty(p).unwrap_or_default()
            ),
            _ => format!("Create an agent for this: {description}"),
        };
        let mut request = ChatRequest::new(
            catalog.wire_id(&model.provider_id, &model.model_id),
            vec![ChatMessage {
                role: ChatRole::User,
                content: vec![ContentPart::text(ask)],
            }],
        );
        request.system = system;
        let completion = crate::llm::complete_once(&provider, request, &CancellationToken::new())
            .await
            .map_err(|e| CoreError::Failed(format!("the agent generator failed: {e}")))?;
        let answer = json_object(&completion.text).ok_or_else(|| {
            CoreError::Failed(
                "the agent generator did not answer with a JSON object; try again or describe the agent differently"
                    .into(),
            )
        })?;
        let (raw, changed) = match previous {
            Some(mut p) if refine.is_some() => {
                let changed = merge(&mut p, &answer)?;
                p.notes.clear();
                (p, changed)
            }
            _ => (from_json(&answer)?, Vec::new()),
        };
        let mut proposal = self
            .validate_proposal(&directory, &config, &creator, raw)
            .await?;
        proposal.changed = changed;
        Ok(proposal)
    }

    /// [`Runtime::validate_proposal`] with the project's config (a
    /// proposal the user edited is checked again before it is saved).
    pub async fn check_proposal(
        &self,
        directory: &Path,
        creator: Option<&str>,
        proposal: AgentProposal,
    ) -> Result<AgentProposal, CoreError> {
        let directory = crate::limits::project_dir(directory, &self.options().paths)?;
        let config = self.load_config(Some(directory.clone())).await?;
        let creator = creator
            .map(str::to_string)
            .unwrap_or_else(|| config.default_agent().to_string());
        self.validate_proposal(&directory, &config, &creator, proposal)
            .await
    }

    /// Check a proposal against the creator and the project's agents; the
    /// validated proposal, or why it cannot be used.
    pub async fn validate_proposal(
        &self,
        directory: &Path,
        config: &Config,
        creator: &str,
        mut p: AgentProposal,
    ) -> Result<AgentProposal, CoreError> {
        let agents = Agents::from_config(config);
        // Notes are about this check only.
        p.notes.clear();
        p.key = p.key.trim().to_lowercase();
        if !valid_key(&p.key) {
            return Err(CoreError::Invalid(format!(
                "`{}` is not a usable agent key (lowercase letters, digits and hyphens, 2-40 characters); refine the proposal or set the key",
                p.key
            )));
        }
        if agents.get(&p.key).is_ok() {
            let base = p.key.clone();
            let free = (2..100)
                .map(|n| format!("{base}-{n}"))
                .find(|k| agents.get(k).is_err())
                .ok_or_else(|| CoreError::Invalid(format!("no free key like `{base}`")))?;
            p.notes.push(format!(
                "`{base}` is taken by an existing agent: saved as `{free}`"
            ));
            p.key = free;
        }
        if !matches!(p.mode.as_str(), "primary" | "subagent" | "all") {
            p.notes
                .push(format!("mode `{}` is not a mode: subagent", p.mode));
            p.mode = "subagent".into();
        }
        if let Some(m) = &p.model
            && mia_config::model_ref::parse_model_ref(m).is_err()
        {
            p.notes.push(format!(
                "`{m}` is not a model reference: the session's model is used"
            ));
            p.model = None;
        }
        p.prompt = p.prompt.trim_end().to_string();
        if p.prompt.trim().is_empty() {
            return Err(CoreError::Invalid("the proposal has no prompt".into()));
        }
        if p.prompt.len() > MAX_PROMPT {
            return Err(CoreError::Refused(format!(
                "the proposed prompt has {} characters; at most {MAX_PROMPT}",
                p.prompt.len()
            )));
        }
        p.description = p.description.trim().to_string();

        // Never broader than the creating agent.
        let key = crate::worktrees::project_key(directory);
        let asked = creator.to_string();
        let (approvals, trusted) = self
            .inner
            .store
            .call(move |db| {
                Ok((
                    db.project_approval_rules(&key, &asked)?,
                    db.is_workspace_trusted(&key)?,
                ))
            })
            .await?;
        let home = self.options().paths.user_home.clone();
        let policy = crate::permissions::PolicyRecipe::new(config, creator, &self.options().paths)
            .project(approvals, trusted)
            .compile();
        let ctx = PathContext::new(directory, Some(home))
            .map_err(|e| CoreError::Failed(e.to_string()))?;
        let checker = Checker::new(&policy, &ctx);
        let mut broader = Vec::new();
        for r in &mut p.permissions {
            let action = match r.action.as_str() {
                "allow" => PermissionAction::Allow,
                "ask" => PermissionAction::Ask,
                "deny" => PermissionAction::Deny,
                other => {
                    return Err(CoreError::Invalid(format!(
                        "rule `{} {}` has action `{other}`; use allow, ask or deny",
                        r.permission,
                        r.pattern.as_deref().unwrap_or("")
                    )));
                }
            };
            if r.permission.trim().is_empty() {
                return Err(CoreError::Invalid(
                    "a proposed rule has no permission".into(),
                ));
            }
            if action != PermissionAction::Allow {
                continue;
            }
            let creator_may = match &r.pattern {
                Some(pat) if r.permission != "*" => {
                    // A command pattern (`pytest *`) is judged as the command it starts with.
                    let subject = if r.permission == "bash" {
                        pat.trim_end_matches('*').trim_end()
                    } else {
                        pat.as_str()
                    };
                    checker
                        .check(&Request::infer(&r.permission, Some(subject)))
                        .decision
                }
                _ => checker.availability(&r.permission),
            };
            match creator_may {
                PermissionAction::Deny => broader.push(format!(
                    "allow {}{} (the {creator} agent may not)",
                    r.permission,
                    r.pattern
                        .as_deref()
                        .map(|p| format!(" {p}"))
                        .unwrap_or_default()
                )),
                PermissionAction::Ask => {
                    p.notes.push(format!(
                        "allow {}{} became ask: the {creator} agent is asked for it too",
                        r.permission,
                        r.pattern
                            .as_deref()
                            .map(|p| format!(" {p}"))
                            .unwrap_or_default()
                    ));
                    r.action = "ask".into();
                }
                PermissionAction::Allow => {}
            }
        }
        if !broader.is_empty() {
            return Err(CoreError::Refused(format!(
                "the proposal is broader than the agent creating it: {}; ask for less, or create it from an agent that has these permissions",
                broader.join("; ")
            )));
        }
        Ok(p)
    }

    /// Save a validated proposal as a markdown agent file; returns its path.
    pub fn save_agent(
        &self,
        directory: &Path,
        proposal: &AgentProposal,
        to: SaveTo,
    ) -> Result<PathBuf, CoreError> {
        let dir = match to {
            SaveTo::Global => self.options().paths.global_agents_dir().ok_or_else(|| {
                CoreError::Invalid("no global config directory to save the agent in".into())
            })?,
            SaveTo::Project => crate::limits::project_dir(directory, &self.options().paths)?
                .join(mia_config::PROJECT_AGENTS_DIR),
        };
        let path = dir.join(format!("{}.md", proposal.key));
        if path.exists() {
            return Err(CoreError::Conflict(format!(
                "{} exists already; pick another key or remove that file",
                path.display()
            )));
        }
        let text = render_agent_file(&to_config(proposal)?).map_err(CoreError::Invalid)?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| CoreError::Failed(format!("cannot create {}: {e}", dir.display())))?;
        std::fs::write(&path, text)
            .map_err(|e| CoreError::Failed(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }
}

/// The agent settings a proposal stands for (what is saved and loaded).
pub fn to_config(p: &AgentProposal) -> Result<AgentConfig, CoreError> {
    let mode = match p.mode.as_str() {
        "primary" => AgentMode::Primary,
        "all" => AgentMode::All,
        _ => AgentMode::Subagent,
    };
    let permissions = p
        .permissions
        .iter()
        .map(|r| {
            let action = match r.action.as_str() {
                "allow" => PermissionAction::Allow,
                "ask" => PermissionAction::Ask,
                _ => PermissionAction::Deny,
            };
            PermissionRule {
                permission: r.permission.clone(),
                pattern: r.pattern.clone(),
                action,
            }
        })
        .collect::<Vec<_>>();
    Ok(AgentConfig {
        description: Some(p.description.clone()),
        mode: Some(mode),
        model: p.model.clone(),
        prompt: Some(p.prompt.clone()),
        permissions: (!permissions.is_empty()).then_some(permissions),
        ..Default::default()
    })
}

/// The first `{ … }` object in a model's answer (code fences allowed).
fn json_object(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    serde_json::from_str(text.get(start..=end)?).ok()
}

fn from_json(v: &Value) -> Result<AgentProposal, CoreError> {
    let s = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let permissions = v
        .get("permissions")
        .and_then(Value::as_array)
        .map(|rules| rules.iter().map(rule_of).collect::<Result<Vec<_>, _>>())
        .transpose()?
        .unwrap_or_default();
    Ok(AgentProposal {
        key: s("key"),
        name: s("name"),
        description: s("description"),
        mode: v
            .get("mode")
            .and_then(Value::as_str)
            .unwrap_or("subagent")
            .to_string(),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
        model_reason: s("model_reason"),
        prompt: s("prompt"),
        permissions,
        notes: Vec::new(),
        changed: Vec::new(),
    })
}

fn rule_of(r: &Value) -> Result<ProposedRule, CoreError> {
    serde_json::from_value(r.clone()).map_err(|e| {
        CoreError::Invalid(format!(
            "a proposed permission rule is malformed ({e}): {r}"
        ))
    })
}

/// Apply a refinement's changed keys; returns their names.
fn merge(p: &mut AgentProposal, v: &Value) -> Result<Vec<String>, CoreError> {
    let Some(obj) = v.as_object() else {
        return Ok(Vec::new());
    };
    let mut changed = Vec::new();
    let before = serde_json::to_value(&*p).unwrap_or_default();
    for (k, val) in obj {
        // A key sent back with the value it had is not a change.
        if before.get(k) == Some(val) {
            continue;
        }
        let text = || val.as_str().unwrap_or_default().to_string();
        match k.as_str() {
            "key" => p.key = text(),
            "name" => p.name = text(),
            "description" => p.description = text(),
            "mode" => p.mode = text(),
            "model" => p.model = val.as_str().map(str::to_string),
            "model_reason" => p.model_reason = text(),
            "prompt" => p.prompt = text(),
            "permissions" => {
                p.permissions = val
                    .as_array()
                    .map(|rules| rules.iter().map(rule_of).collect::<Result<Vec<_>, _>>())
                    .transpose()?
                    .unwrap_or_default();
            }
            _ => continue,
        }
        changed.push(k.clone());
    }
    Ok(changed)
}
