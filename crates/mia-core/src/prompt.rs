//! System prompt assembly (spec 012): template → variables → tools →
//! permissions → skills → (custom prompt replaces the template) → unifier,
//! plus the project's own instructions (AGENTS.md, else CLAUDE.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::agents::{AgentDef, PromptSource};

/// The built-in templates, embedded at build time.
pub fn builtin_template(name: &str) -> Option<&'static str> {
    Some(match name {
        "build" => include_str!("../../../prompts/build.prompt.md"),
        "plan" => include_str!("../../../prompts/plan.prompt.md"),
        "explore" => include_str!("../../../prompts/explore.prompt.md"),
        "general" => include_str!("../../../prompts/general.prompt.md"),
        "compaction" => include_str!("../../../prompts/compaction.prompt.md"),
        "title" => include_str!("../../../prompts/title.prompt.md"),
        "unifier" => include_str!("../../../prompts/unifier.prompt.md"),
        "agent-generator" => include_str!("../../../prompts/agent-generator.prompt.md"),
        _ => return None,
    })
}

/// Replace `{{name}}` with `vars[name]`; unknown names become empty and are
/// reported back so the caller can warn.
pub fn interpolate(template: &str, vars: &BTreeMap<&str, String>) -> (String, Vec<String>) {
    let mut out = String::with_capacity(template.len());
    let mut unknown = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return (out, unknown);
        };
        let name = after[..end].trim();
        match vars.get(name) {
            Some(v) => out.push_str(v),
            None => unknown.push(name.to_string()),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    (out, unknown)
}

/// Inputs of one assembly.
pub struct PromptInputs<'a> {
    pub agent: &'a AgentDef,
    pub project_root: &'a Path,
    pub session_id: String,
    /// The date the session started (`2026-12-01`), fixed for the session.
    pub datetime: String,
    /// `- name: description` lines of the tools this agent may use.
    pub tools: String,
    /// Human-readable permission summary.
    pub permissions: String,
    /// The global skills directory (`~/.config/mia-code/skills`).
    pub global_skills: Option<PathBuf>,
    pub unifier: bool,
}

/// The assembled system prompt and any warnings (unknown variables, missing files).
pub fn assemble(inputs: &PromptInputs<'_>) -> (String, Vec<String>) {
    let mut warnings = Vec::new();
    let agent = inputs.agent;
    let project = project_summary(inputs.project_root);
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    vars.insert("agent_name", agent.name.clone());
    vars.insert("agent_description", agent.description.clone());
    vars.insert("tools", inputs.tools.clone());
    vars.insert("permissions", inputs.permissions.clone());
    vars.insert("project", project);
    let (skills, skill_warnings) =
        crate::skills::discover(inputs.project_root, inputs.global_skills.as_deref());
    warnings.extend(skill_warnings);
    let skills_text = crate::skills::render(&skills, inputs.project_root);
    vars.insert("skills", skills_text.clone());
    vars.insert("datetime", inputs.datetime.clone());
    vars.insert("os", std::env::consts::OS.to_string());
    vars.insert("cwd", inputs.project_root.display().to_string());
    vars.insert("session_id", inputs.session_id.clone());
    vars.insert(
        "mode_hint",
        if agent.caps.read_only {
            "plan mode: what the plan implies"
        } else {
            "build mode: what changed"
        }
        .into(),
    );

    // Steps 1-2, or 6: the custom prompt replaces the template.
    let base = match &agent.prompt {
        PromptSource::Builtin(name) => builtin_template(name).unwrap_or_default().to_string(),
        PromptSource::Inline(text) => text.clone(),
        PromptSource::File(path) => match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                // Checked when the agent was chosen; it vanished since.
                warnings.push(format!(
                    "agent {}: cannot read prompt file {}: {e}",
                    agent.name,
                    path.display()
                ));
                String::new()
            }
        },
        PromptSource::Refused(_) => String::new(),
    };
    let uses = |v: &str| base.contains(&format!("{{{{{v}}}}}"));
    let (mut prompt, unknown) = interpolate(&base, &vars);
    for name in unknown {
        warnings.push(format!(
            "prompt of agent {}: unknown variable {{{{{name}}}}} replaced by nothing",
            agent.name
        ));
    }
    // Steps 3-5 always reach the model, even with a custom prompt.
    if !uses("tools") && !inputs.tools.is_empty() {
        prompt.push_str(&format!("\n\n## Available tools\n{}", inputs.tools));
    }
    if !uses("permissions") && !inputs.permissions.is_empty() {
        prompt.push_str(&format!("\n\n## Permissions\n{}", inputs.permissions));
    }
    if !uses("skills") && !skills.is_empty() {
        prompt.push_str(&format!("\n\n## Skills\n{skills_text}"));
    }
    // Project instructions.
    for (path, text) in project_instructions(inputs.project_root) {
        prompt.push_str(&format!(
            "\n\n## Project instructions from {}\n{}",
            path.display(),
            text.trim()
        ));
    }
    // Step 7.
    if inputs.unifier && agent.is_primary() && !agent.hidden {
        let (unifier, _) = interpolate(builtin_template("unifier").unwrap_or_default(), &vars);
        prompt.push_str("\n\n");
        prompt.push_str(unifier.trim());
    }
    (prompt.trim().to_string() + "\n", warnings)
}

/// `AGENTS.md` (else `CLAUDE.md`) in the project root and each directory
/// above it, nearest last so it reads as the most specific.
pub fn project_instructions(root: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut dir = Some(root);
    while let Some(d) = dir {
        for name in ["AGENTS.md", "CLAUDE.md"] {
            let p = d.join(name);
            if let Ok(text) = std::fs::read_to_string(&p) {
                found.push((p, text));
                break;
            }
        }
        dir = d.parent();
    }
    found.reverse();
    found
}

/// Name, root, detected languages/frameworks and key files.
pub fn project_summary(root: &Path) -> String {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| root.display().to_string());
    let markers: [(&str, &str); 12] = [
        ("Cargo.toml", "Rust (cargo)"),
        ("package.json", "JavaScript/TypeScript (npm)"),
        ("tsconfig.json", "TypeScript"),
        ("pyproject.toml", "Python"),
        ("requirements.txt", "Python"),
        ("go.mod", "Go"),
        ("pom.xml", "Java (Maven)"),
        ("build.gradle", "Java/Kotlin (Gradle)"),
        ("Gemfile", "Ruby"),
        ("composer.json", "PHP"),
        ("CMakeLists.txt", "C/C++ (CMake)"),
        ("Makefile", "make"),
    ];
    let mut langs = Vec::new();
    let mut keys = Vec::new();
    for (file, lang) in markers {
        if root.join(file).exists() {
            keys.push(file);
            if !langs.contains(&lang) {
                langs.push(lang);
            }
        }
    }
    for extra in ["README.md", "AGENTS.md", ".git"] {
        if root.join(extra).exists() {
            keys.push(extra);
        }
    }
    format!(
        "Name: {name}\nRoot: {}\nDetected: {}\nKey files: {}",
        root.display(),
        if langs.is_empty() {
            "unknown".to_string()
        } else {
            langs.join(", ")
        },
        if keys.is_empty() {
            "none".to_string()
        } else {
            keys.join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_replaces_known_and_reports_unknown() {
        let mut vars = BTreeMap::new();
        vars.insert("a", "1".to_string());
        let (out, unknown) = interpolate("x {{a}} y {{ b }} z {{a", &vars);
        assert_eq!(out, "x 1 y  z {{a");
        assert_eq!(unknown, vec!["b"]);
    }
}
