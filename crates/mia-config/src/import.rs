//! Translating a Claude Code or OpenCode setup into mia-code's config
//! (`mia-code import claude|opencode`). Pure: settings in, a config patch,
//! command files and the list of what could not be translated out.

use std::collections::BTreeMap;

use mia_protocol::{PermissionAction, PermissionRule};
use serde_json::{Map, Value, json};

use crate::types::{HookEvent, HookMatcher};

/// What an import would change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    /// Rules, appended after the file's own.
    pub rules: Vec<PermissionRule>,
    /// Hook groups per event, appended to the file's.
    pub hooks: Map<String, Value>,
    /// MCP servers and agents, added when the file has none of the name.
    pub mcp: Map<String, Value>,
    pub agent: Map<String, Value>,
    /// `sandbox.env.set` entries.
    pub env_set: Map<String, Value>,
    /// Other top-level keys (`model`, `smallModel`), set when absent.
    pub scalars: Map<String, Value>,
    /// Command files to write: (name, markdown text).
    pub commands: Vec<(String, String)>,
    /// One line per translated item: `Bash(npm test:*) → allow bash npm test *`.
    pub translated: Vec<String>,
    /// One line per item left out, with why.
    pub skipped: Vec<String>,
}

impl Imported {
    fn push_rule(&mut self, from: &str, rule: PermissionRule) {
        self.translated.push(format!("{from} → {rule}"));
        self.rules.push(rule);
    }

    /// Whether there is anything to write.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.hooks.is_empty()
            && self.mcp.is_empty()
            && self.agent.is_empty()
            && self.env_set.is_empty()
            && self.scalars.is_empty()
            && self.commands.is_empty()
    }

    /// Merge into a config document (a JSON object); lines saying what was
    /// left as the document had it are added to `skipped`.
    pub fn merge_into(&mut self, doc: &mut Map<String, Value>) {
        if !self.rules.is_empty() {
            let list = doc.entry("permissions").or_insert_with(|| json!([]));
            if let Value::Array(list) = list {
                for r in &self.rules {
                    if let Ok(v) = serde_json::to_value(r)
                        && !list.contains(&v)
                    {
                        list.push(v);
                    }
                }
            }
        }
        if !self.hooks.is_empty() {
            let hooks = doc.entry("hooks").or_insert_with(|| json!({}));
            if let Value::Object(hooks) = hooks {
                for (event, groups) in &self.hooks {
                    let list = hooks.entry(event.clone()).or_insert_with(|| json!([]));
                    if let (Value::Array(list), Value::Array(groups)) = (list, groups) {
                        for g in groups {
                            if !list.contains(g) {
                                list.push(g.clone());
                            }
                        }
                    }
                }
            }
        }
        for (key, entries) in [("mcp", &self.mcp), ("agent", &self.agent)] {
            if entries.is_empty() {
                continue;
            }
            let map = doc.entry(key).or_insert_with(|| json!({}));
            if let Value::Object(map) = map {
                for (name, v) in entries {
                    if map.contains_key(name) {
                        self.skipped.push(format!(
                            "{key}.{name}: already in the config; left as it is"
                        ));
                    } else {
                        map.insert(name.clone(), v.clone());
                    }
                }
            }
        }
        if !self.env_set.is_empty() {
            let sandbox = doc.entry("sandbox").or_insert_with(|| json!({}));
            if let Value::Object(sandbox) = sandbox {
                let env = sandbox.entry("env").or_insert_with(|| json!({}));
                if let Value::Object(env) = env {
                    let set = env.entry("set").or_insert_with(|| json!({}));
                    if let Value::Object(set) = set {
                        for (k, v) in &self.env_set {
                            set.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
        }
        for (k, v) in &self.scalars {
            if doc.contains_key(k) {
                self.skipped
                    .push(format!("{k}: already in the config; left as it is"));
            } else {
                doc.insert(k.clone(), v.clone());
            }
        }
    }
}

fn rule(permission: &str, pattern: Option<String>, action: PermissionAction) -> PermissionRule {
    PermissionRule {
        permission: permission.to_string(),
        pattern,
        action,
    }
}

/// A Claude Code path specifier as a mia-code path pattern: `./x` and
/// `/x` are relative to the project (the settings file's), `//x` is the
/// absolute `/x`, `~/x` stays.
fn claude_path(spec: &str) -> String {
    if let Some(abs) = spec.strip_prefix("//") {
        format!("/{abs}")
    } else if let Some(rel) = spec.strip_prefix("./") {
        rel.to_string()
    } else if spec.starts_with('~') {
        spec.to_string()
    } else if let Some(rel) = spec.strip_prefix('/') {
        rel.to_string()
    } else {
        spec.to_string()
    }
}

/// One Claude Code permission rule (`Bash(npm test:*)`, `Read(./secrets/**)`,
/// `WebFetch(domain:x)`, `mcp__server__tool`) as mia-code rules.
pub fn claude_rule(spec: &str, action: PermissionAction) -> Result<Vec<PermissionRule>, String> {
    let spec = spec.trim();
    let (tool, arg) = match spec.find('(') {
        Some(i) if spec.ends_with(')') => (&spec[..i], Some(spec[i + 1..spec.len() - 1].trim())),
        Some(_) => return Err(format!("`{spec}`: unbalanced parenthesis")),
        None => (spec, None),
    };
    let arg = arg.filter(|a| !a.is_empty() && *a != "*");
    let path_rules = |perms: &[&str]| -> Vec<PermissionRule> {
        perms
            .iter()
            .map(|p| rule(p, arg.map(claude_path), action))
            .collect()
    };
    let rules = match tool {
        "Bash" => {
            let pattern = arg.map(|a| match a.strip_suffix(":*") {
                Some(prefix) => format!("{} *", prefix.trim()),
                None => a.to_string(),
            });
            vec![rule("bash", pattern, action)]
        }
        "Read" => path_rules(&["read"]),
        // Claude Code's Edit rules cover every tool that edits files.
        "Edit" | "MultiEdit" => path_rules(&["edit", "write"]),
        "Write" => path_rules(&["write"]),
        "Glob" => path_rules(&["glob"]),
        "Grep" => path_rules(&["grep"]),
        "LS" => path_rules(&["glob"]),
        "WebFetch" => {
            let pattern = match arg {
                None => None,
                Some(a) => Some(
                    a.strip_prefix("domain:")
                        .ok_or_else(|| {
                            format!("`{spec}`: WebFetch rules name a host as `domain:HOST`")
                        })?
                        .to_string(),
                ),
            };
            vec![rule("fetch", pattern, action)]
        }
        "TodoWrite" | "TodoRead" => vec![rule("todo", None, action)],
        "Task" | "Agent" => vec![rule("task", None, action)],
        t if t.starts_with("mcp__") => {
            if arg.is_some() {
                return Err(format!("`{spec}`: MCP rules take no argument"));
            }
            let parts: Vec<&str> = t.splitn(3, "__").collect();
            let perm = match parts.as_slice() {
                [_, server] => format!("mcp__{server}__*"),
                [_, server, "*"] => format!("mcp__{server}__*"),
                [_, _, _] => t.to_string(),
                _ => return Err(format!("`{spec}`: not an MCP tool name")),
            };
            vec![rule(&perm, None, action)]
        }
        "WebSearch" | "NotebookEdit" | "NotebookRead" | "BashOutput" | "KillShell"
        | "SlashCommand" | "ExitPlanMode" => {
            return Err(format!("`{spec}`: mia-code has no {tool} tool"));
        }
        _ => return Err(format!("`{spec}`: unknown tool `{tool}`")),
    };
    Ok(rules)
}

const CLAUDE_ACTIONS: [(&str, PermissionAction); 3] = [
    ("deny", PermissionAction::Deny),
    ("ask", PermissionAction::Ask),
    ("allow", PermissionAction::Allow),
];

/// A Claude Code `settings.json` (project or user). `user` says which:
/// `env` goes to `sandbox.env.set`, which only the person's config sets.
pub fn from_claude_settings(v: &Value, user: bool) -> Imported {
    let mut out = Imported::default();
    let Some(obj) = v.as_object() else {
        out.skipped
            .push("the settings file is not a JSON object".into());
        return out;
    };
    for (key, value) in obj {
        match key.as_str() {
            "permissions" => claude_permissions(value, &mut out),
            "hooks" => hooks(value, "hooks", &mut out),
            "env" => claude_env(value, user, &mut out),
            "$schema" => {}
            other => out
                .skipped
                .push(format!("`{other}`: mia-code has no equivalent setting")),
        }
    }
    out
}

fn claude_permissions(v: &Value, out: &mut Imported) {
    let Some(obj) = v.as_object() else {
        out.skipped.push("`permissions` is not an object".into());
        return;
    };
    // Deny first: mia-code checks rules in order and the first match wins,
    // as Claude Code's deny > ask > allow.
    for (name, action) in CLAUDE_ACTIONS {
        for spec in obj
            .get(name)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(spec) = spec.as_str() else {
                out.skipped
                    .push(format!("permissions.{name}: {spec} is not a string"));
                continue;
            };
            match claude_rule(spec, action) {
                Ok(rules) => {
                    for r in rules {
                        out.push_rule(spec, r);
                    }
                }
                Err(e) => out.skipped.push(format!("permissions.{name}: {e}")),
            }
        }
    }
    for (k, v) in obj {
        if !CLAUDE_ACTIONS.iter().any(|(n, _)| n == k) {
            out.skipped.push(format!(
                "permissions.{k} ({v}): mia-code has no equivalent (its sandbox and rules decide)"
            ));
        }
    }
}

fn claude_env(v: &Value, user: bool, out: &mut Imported) {
    let Some(obj) = v.as_object() else {
        out.skipped.push("`env` is not an object".into());
        return;
    };
    if !user {
        for k in obj.keys() {
            out.skipped.push(format!(
                "env.{k}: sandbox.env.set is set in your own config only (a repository must not set your commands' environment); run `mia-code import claude` on ~/.claude/settings.json or add it to ~/.config/mia-code/config.json"
            ));
        }
        return;
    }
    let mut set = Map::new();
    for (k, val) in obj {
        match val {
            Value::String(s) => {
                set.insert(k.clone(), Value::String(s.clone()));
                out.translated
                    .push(format!("env.{k} → sandbox.env.set.{k}"));
            }
            Value::Number(_) | Value::Bool(_) => {
                set.insert(k.clone(), Value::String(val.to_string()));
                out.translated
                    .push(format!("env.{k} → sandbox.env.set.{k}"));
            }
            _ => out.skipped.push(format!("env.{k}: not a string")),
        }
    }
    out.env_set.extend(set);
}

/// Hooks in Claude Code's format are mia-code's format: each event's
/// groups are checked and kept.
fn hooks(v: &Value, key: &str, out: &mut Imported) {
    let Some(obj) = v.as_object() else {
        out.skipped.push(format!("`{key}` is not an object"));
        return;
    };
    let mut kept: BTreeMap<String, Value> = BTreeMap::new();
    for (event, groups) in obj {
        let parsed: Result<HookEvent, _> = serde_json::from_value(Value::String(event.clone()));
        if parsed.is_err() {
            out.skipped
                .push(format!("{key}.{event}: mia-code has no such hook event"));
            continue;
        }
        match serde_json::from_value::<Vec<HookMatcher>>(groups.clone()) {
            Ok(list) => {
                for g in &list {
                    for h in &g.hooks {
                        out.translated.push(format!(
                            "{key}.{event}[{}]: {}",
                            g.matcher.as_deref().unwrap_or("*"),
                            h.command
                        ));
                    }
                }
                kept.insert(event.clone(), groups.clone());
            }
            Err(e) => out.skipped.push(format!("{key}.{event}: {e}")),
        }
    }
    out.hooks.extend(kept);
}

/// OpenCode's permission values: `"allow"`, `"ask"`, `"deny"`.
fn opencode_action(v: &Value) -> Option<PermissionAction> {
    match v.as_str()? {
        "allow" => Some(PermissionAction::Allow),
        "ask" => Some(PermissionAction::Ask),
        "deny" => Some(PermissionAction::Deny),
        _ => None,
    }
}

fn opencode_permission_name(key: &str) -> Option<&'static str> {
    Some(match key {
        "edit" => "edit",
        "write" => "write",
        "bash" => "bash",
        "webfetch" => "fetch",
        "read" => "read",
        "glob" => "glob",
        "grep" => "grep",
        "list" => "glob",
        "task" => "task",
        "todowrite" | "todoread" => "todo",
        "external_directory" => "external_directory",
        _ => return None,
    })
}

/// OpenCode's `permission` object as mia-code rules (more specific
/// patterns first, the catch-all last: OpenCode's last match wins).
pub fn opencode_permissions(
    v: &Value,
    at: &str,
    out: &mut Vec<PermissionRule>,
    notes: &mut Imported,
) {
    let Some(obj) = v.as_object() else {
        notes.skipped.push(format!("{at}: not an object"));
        return;
    };
    for (key, val) in obj {
        let Some(perm) = opencode_permission_name(key) else {
            notes
                .skipped
                .push(format!("{at}.{key}: mia-code has no such permission"));
            continue;
        };
        if let Some(action) = opencode_action(val) {
            notes
                .translated
                .push(format!("{at}.{key}: {val} → {action} {perm}"));
            out.push(rule(perm, None, action));
            continue;
        }
        let Some(patterns) = val.as_object() else {
            notes
                .skipped
                .push(format!("{at}.{key}: {val} is not allow/ask/deny"));
            continue;
        };
        let mut catch_all = None;
        for (pattern, a) in patterns.iter().rev() {
            let Some(action) = opencode_action(a) else {
                notes
                    .skipped
                    .push(format!("{at}.{key}.{pattern}: {a} is not allow/ask/deny"));
                continue;
            };
            if pattern == "*" {
                catch_all = Some(action);
                continue;
            }
            let r = rule(perm, Some(pattern.clone()), action);
            notes.translated.push(format!("{at}.{key}.{pattern} → {r}"));
            out.push(r);
        }
        if let Some(action) = catch_all {
            let r = rule(perm, None, action);
            notes.translated.push(format!("{at}.{key}.* → {r}"));
            out.push(r);
        }
    }
}

/// An `opencode.json`.
pub fn from_opencode(v: &Value) -> Imported {
    let mut out = Imported::default();
    let Some(obj) = v.as_object() else {
        out.skipped.push("the file is not a JSON object".into());
        return out;
    };
    for (key, value) in obj {
        match key.as_str() {
            "permission" => {
                let mut rules = Vec::new();
                opencode_permissions(value, "permission", &mut rules, &mut out);
                out.rules.extend(rules);
            }
            "agent" => opencode_agents(value, &mut out),
            "mcp" => opencode_mcp(value, &mut out),
            "command" => opencode_commands(value, &mut out),
            "model" | "small_model" => match value.as_str() {
                Some(m) if m.contains('/') => {
                    let k = if key == "model" {
                        "model"
                    } else {
                        "smallModel"
                    };
                    out.scalars.insert(k.into(), Value::String(m.into()));
                    out.translated.push(format!("{key}: {m} → {k}"));
                }
                _ => out
                    .skipped
                    .push(format!("{key}: {value} is not provider/model")),
            },
            "$schema" => {}
            other => out
                .skipped
                .push(format!("`{other}`: mia-code has no equivalent setting")),
        }
    }
    out
}

fn opencode_agents(v: &Value, out: &mut Imported) {
    let Some(obj) = v.as_object() else {
        out.skipped.push("agent: not an object".into());
        return;
    };
    for (name, a) in obj {
        let Some(a) = a.as_object() else {
            out.skipped.push(format!("agent.{name}: not an object"));
            continue;
        };
        let mut agent = Map::new();
        for (k, val) in a {
            match k.as_str() {
                "description" | "model" | "prompt" | "temperature" | "mode" | "disable" => {
                    agent.insert(k.clone(), val.clone());
                }
                "steps" | "maxSteps" => {
                    agent.insert("steps".into(), val.clone());
                }
                "permission" => {
                    let mut rules = Vec::new();
                    opencode_permissions(val, &format!("agent.{name}.permission"), &mut rules, out);
                    push_agent_rules(&mut agent, &rules);
                }
                "tools" => {
                    let mut rules = Vec::new();
                    for (tool, on) in val.as_object().into_iter().flatten() {
                        match (opencode_permission_name(tool), on.as_bool()) {
                            (Some(p), Some(false)) => {
                                out.translated
                                    .push(format!("agent.{name}.tools.{tool}: false → deny {p}"));
                                rules.push(rule(p, None, PermissionAction::Deny));
                            }
                            (Some(_), Some(true)) => {}
                            _ => out
                                .skipped
                                .push(format!("agent.{name}.tools.{tool}: not translated")),
                        }
                    }
                    push_agent_rules(&mut agent, &rules);
                }
                other => out.skipped.push(format!(
                    "agent.{name}.{other}: mia-code has no such agent key"
                )),
            }
        }
        out.translated.push(format!("agent.{name} → agent.{name}"));
        out.agent.insert(name.clone(), Value::Object(agent));
    }
}

fn push_agent_rules(agent: &mut Map<String, Value>, rules: &[PermissionRule]) {
    if rules.is_empty() {
        return;
    }
    let list = agent
        .entry("permissions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = list {
        list.extend(rules.iter().filter_map(|r| serde_json::to_value(r).ok()));
    }
}

fn opencode_mcp(v: &Value, out: &mut Imported) {
    let Some(obj) = v.as_object() else {
        out.skipped.push("mcp: not an object".into());
        return;
    };
    for (name, s) in obj {
        let kind = s.get("type").and_then(Value::as_str).unwrap_or("local");
        let mut server = Map::new();
        match kind {
            "local" => {
                let Some(cmd) = s.get("command").and_then(Value::as_array) else {
                    out.skipped.push(format!("mcp.{name}: no command"));
                    continue;
                };
                let words: Vec<String> = cmd
                    .iter()
                    .filter_map(|w| w.as_str().map(String::from))
                    .collect();
                let Some((program, args)) = words.split_first() else {
                    out.skipped.push(format!("mcp.{name}: empty command"));
                    continue;
                };
                server.insert("type".into(), json!("stdio"));
                server.insert("command".into(), json!(program));
                if !args.is_empty() {
                    server.insert("args".into(), json!(args));
                }
                if let Some(env) = s.get("environment") {
                    server.insert("env".into(), env.clone());
                }
            }
            "remote" => {
                let Some(url) = s.get("url").and_then(Value::as_str) else {
                    out.skipped.push(format!("mcp.{name}: no url"));
                    continue;
                };
                server.insert("type".into(), json!("http"));
                server.insert("url".into(), json!(url));
                if let Some(h) = s.get("headers") {
                    server.insert("headers".into(), h.clone());
                }
            }
            other => {
                out.skipped
                    .push(format!("mcp.{name}: type {other:?} is not local or remote"));
                continue;
            }
        }
        if let Some(e) = s.get("enabled") {
            server.insert("enabled".into(), e.clone());
        }
        out.translated.push(format!("mcp.{name} → mcp.{name}"));
        out.mcp.insert(name.clone(), Value::Object(server));
    }
}

fn opencode_commands(v: &Value, out: &mut Imported) {
    let Some(obj) = v.as_object() else {
        out.skipped.push("command: not an object".into());
        return;
    };
    for (name, c) in obj {
        let Some(template) = c.get("template").and_then(Value::as_str) else {
            out.skipped.push(format!("command.{name}: no template"));
            continue;
        };
        let mut front = String::new();
        for key in ["description", "agent", "model"] {
            if let Some(val) = c.get(key).and_then(Value::as_str) {
                front.push_str(&format!("{key}: {}\n", yaml_string(val)));
            }
        }
        let text = if front.is_empty() {
            format!("{}\n", template.trim_end())
        } else {
            format!("---\n{front}---\n{}\n", template.trim_end())
        };
        out.translated
            .push(format!("command.{name} → .mia-code/commands/{name}.md"));
        out.commands.push((name.clone(), text));
    }
}

fn yaml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn one(spec: &str) -> String {
        claude_rule(spec, PermissionAction::Allow)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }

    #[test]
    fn claude_rules_translate() {
        assert_eq!(one("Bash(npm test:*)"), "allow bash npm test *");
        assert_eq!(one("Bash(git status)"), "allow bash git status");
        assert_eq!(one("Bash"), "allow bash");
        assert_eq!(one("Read(./secrets/**)"), "allow read secrets/**");
        assert_eq!(one("Read(//etc/hosts)"), "allow read /etc/hosts");
        assert_eq!(one("Read(~/.zshrc)"), "allow read ~/.zshrc");
        assert_eq!(one("Edit(src/**)"), "allow edit src/**; allow write src/**");
        assert_eq!(one("WebFetch(domain:docs.rs)"), "allow fetch docs.rs");
        assert_eq!(
            one("mcp__github__create_issue"),
            "allow mcp__github__create_issue"
        );
        assert_eq!(one("mcp__github"), "allow mcp__github__*");
        assert!(claude_rule("WebSearch", PermissionAction::Allow).is_err());
        assert!(claude_rule("Frobnicate(x)", PermissionAction::Allow).is_err());
        assert!(claude_rule("WebFetch(docs.rs)", PermissionAction::Allow).is_err());
    }
}

/// Which tool's setup is imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportSource {
    Claude,
    Opencode,
}

/// One settings file and the config file it goes to.
#[derive(Debug, Clone)]
pub struct ImportTarget {
    pub from: std::path::PathBuf,
    pub to: std::path::PathBuf,
    pub kind: crate::LayerKind,
    pub imported: Imported,
    /// The config file as it would be written (checked by the loader).
    pub new_text: Option<String>,
    /// Command files to write beside it: (path, text).
    pub command_files: Vec<(std::path::PathBuf, String)>,
    /// Why this target cannot be written (nothing of it is).
    pub error: Option<String>,
}

fn read_json(path: &std::path::Path) -> Result<Option<Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => {
            let mut t = t;
            if json_strip_comments::strip(&mut t).is_err() {
                return Err(format!("{}: not JSON", path.display()));
            }
            serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The project config file an import writes: the one that exists
/// (`.mia-code.json` wins, as when loading), else `.mia-code.json`.
fn project_config_file(root: &std::path::Path) -> std::path::PathBuf {
    let dot = root.join(crate::PROJECT_FILE_NAMES[1]);
    let plain = root.join(crate::PROJECT_FILE_NAMES[0]);
    if !dot.exists() && plain.exists() {
        plain
    } else {
        dot
    }
}

/// What `mia-code import claude|opencode` would do for `project` and the
/// person's own settings. Reads only.
pub fn plan_import(
    source: ImportSource,
    paths: &crate::Paths,
    project: &std::path::Path,
) -> Vec<ImportTarget> {
    let global = paths.global_configs.first().cloned().unwrap_or_default();
    let home = &paths.user_home;
    let sources: Vec<(std::path::PathBuf, crate::LayerKind)> = match source {
        ImportSource::Claude => vec![
            (home.join(".claude/settings.json"), crate::LayerKind::Global),
            (
                project.join(".claude/settings.json"),
                crate::LayerKind::Project,
            ),
            (
                project.join(".claude/settings.local.json"),
                crate::LayerKind::Project,
            ),
        ],
        ImportSource::Opencode => vec![
            (
                home.join(".config/opencode/opencode.json"),
                crate::LayerKind::Global,
            ),
            (project.join("opencode.json"), crate::LayerKind::Project),
            (project.join("opencode.jsonc"), crate::LayerKind::Project),
        ],
    };
    let mut out = Vec::new();
    for (from, kind) in sources {
        let to = match kind {
            crate::LayerKind::Project => project_config_file(project),
            _ => global.clone(),
        };
        let mut target = ImportTarget {
            from: from.clone(),
            to,
            kind,
            imported: Imported::default(),
            new_text: None,
            command_files: Vec::new(),
            error: None,
        };
        match read_json(&from) {
            Ok(None) => continue,
            Err(e) => target.error = Some(e),
            Ok(Some(v)) => {
                target.imported = match source {
                    ImportSource::Claude => {
                        from_claude_settings(&v, kind != crate::LayerKind::Project)
                    }
                    ImportSource::Opencode => from_opencode(&v),
                };
                let dir = match kind {
                    crate::LayerKind::Project => project.join(".mia-code/commands"),
                    _ => global
                        .parent()
                        .map(|d| d.join("commands"))
                        .unwrap_or_default(),
                };
                for (name, text) in &target.imported.commands {
                    let path = dir.join(format!("{}.md", name.replace(':', "/")));
                    if path.exists() {
                        target.imported.skipped.push(format!(
                            "command.{name}: {} exists; left as it is",
                            path.display()
                        ));
                    } else {
                        target.command_files.push((path, text.clone()));
                    }
                }
                if let Err(e) = render(&mut target) {
                    target.error = Some(e);
                }
            }
        }
        out.push(target);
    }
    // Two project files (settings and settings.local) go to one config:
    // the second merges into what the first would write.
    merge_same_targets(out)
}

/// The target's config file with the import merged in, checked by the loader.
fn render(target: &mut ImportTarget) -> Result<(), String> {
    let old = match std::fs::read_to_string(&target.to) {
        Ok(s) => Some(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("{}: {e}", target.to.display())),
    };
    let mut doc: Map<String, Value> = match old.as_deref().map(str::trim) {
        None | Some("") => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(format!("{} is not a JSON object", target.to.display())),
            Err(_) => {
                return Err(format!(
                    "{} has comments or is not plain JSON; nothing is written there so nothing in it is lost: merge by hand what is listed above",
                    target.to.display()
                ));
            }
        },
    };
    target.imported.merge_into(&mut doc);
    let text = serde_json::to_string_pretty(&Value::Object(doc)).map_err(|e| e.to_string())? + "\n";
    crate::parse_file(&target.to, &text, target.kind)
        .map_err(|e| format!("the merged config would not load, so nothing is written: {e}"))?;
    target.new_text = Some(text);
    Ok(())
}

fn merge_same_targets(targets: Vec<ImportTarget>) -> Vec<ImportTarget> {
    let mut out: Vec<ImportTarget> = Vec::new();
    for mut t in targets {
        if let Some(prev) = out
            .iter()
            .find(|p| p.to == t.to && p.error.is_none() && t.error.is_none())
            && let Some(text) = &prev.new_text
        {
            // Render on top of the earlier target's result.
            let mut doc: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
            t.imported.merge_into(&mut doc);
            match serde_json::to_string_pretty(&Value::Object(doc)) {
                Ok(s) => t.new_text = Some(s + "\n"),
                Err(e) => t.error = Some(e.to_string()),
            }
            if let Some(text) = &t.new_text
                && let Err(e) = crate::parse_file(&t.to, text, t.kind)
            {
                t.error = Some(format!(
                    "the merged config would not load, so nothing is written: {e}"
                ));
                t.new_text = None;
            }
        }
        out.push(t);
    }
    out
}

/// Write the targets that have no error (config files atomically, then
/// their command files). Returns the files written.
pub fn write_import(targets: &[ImportTarget]) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    // The last target of each config file holds everything merged.
    for (i, t) in targets.iter().enumerate() {
        if t.error.is_some() {
            continue;
        }
        let later_same = targets[i + 1..]
            .iter()
            .any(|u| u.to == t.to && u.error.is_none() && u.new_text.is_some());
        if let Some(text) = &t.new_text
            && !later_same
            && !t.imported.is_empty()
        {
            if let Some(dir) = t.to.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = t.to.with_extension("json.import-tmp");
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, &t.to)?;
            written.push(t.to.clone());
        }
        for (path, text) in &t.command_files {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, text)?;
            written.push(path.clone());
        }
    }
    Ok(written)
}
