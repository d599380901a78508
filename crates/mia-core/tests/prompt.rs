#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! What the model is told: the assembled system prompts, snapshotted with
//! paths and times redacted.

use mia_config::{Config, Layer, LayerKind, builtin_defaults};
use mia_core::agents::Agents;
use mia_core::prompt::{PromptInputs, assemble};

fn config_with(agent_json: serde_json::Value) -> Config {
    let file: mia_config::ConfigFile = serde_json::from_value(agent_json).unwrap();
    Config::from_layers(vec![
        Layer {
            kind: LayerKind::Builtin,
            path: None,
            file: builtin_defaults(),
        },
        Layer {
            kind: LayerKind::Global,
            path: Some("/home/u/.config/mia-code/config.json".into()),
            file,
        },
    ])
    .unwrap()
}

fn prompt_for(agent: &str, config: &Config, project: &std::path::Path, unifier: bool) -> String {
    let agents = Agents::from_config(config);
    let def = agents.get(agent).unwrap();
    let (text, warnings) = assemble(&PromptInputs {
        global_skills: None,
        agent: def,
        project_root: project,
        session_id: "SESSION".into(),
        datetime: "2025-01-23".into(),
        tools: "- read: Read a text file.\n- bash: Run a shell command.".into(),
        permissions:
            "- Reading files: ALLOWED\n- Shell commands: ASK — requires the user's permission"
                .into(),
        unifier,
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    // A path under the project is shown with the system's separator.
    let under = format!("{}{}", project.display(), std::path::MAIN_SEPARATOR);
    text.replace(&under, "[PROJECT]/")
        .replace(&project.display().to_string(), "[PROJECT]")
        .replace(std::env::consts::OS, "[OS]")
}

struct Project {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl Project {
    fn path(&self) -> &std::path::Path {
        &self.root
    }
}

fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("myapp");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(
        root.join("AGENTS.md"),
        "Run `cargo test` before you finish.\n",
    )
    .unwrap();
    Project { _dir: dir, root }
}

#[test]
fn build_prompt() {
    let dir = project();
    insta::assert_snapshot!(prompt_for(
        "build",
        &config_with(serde_json::json!({})),
        dir.path(),
        true
    ));
}

#[test]
fn plan_prompt() {
    let dir = project();
    insta::assert_snapshot!(prompt_for(
        "plan",
        &config_with(serde_json::json!({})),
        dir.path(),
        true
    ));
}

#[test]
fn custom_prompt_still_gets_tools_and_permissions() {
    let dir = project();
    let cfg = config_with(serde_json::json!({"agent": {"reviewer": {
        "description": "Reviews diffs", "mode": "primary",
        "prompt": "You are {{agent_name}}. Review carefully. {{nonexistent}}"}}}));
    let agents = Agents::from_config(&cfg);
    let (text, warnings) = assemble(&PromptInputs {
        global_skills: None,
        agent: agents.get("reviewer").unwrap(),
        project_root: dir.path(),
        session_id: "S".into(),
        datetime: "T".into(),
        tools: "- read: Read a text file.".into(),
        permissions: "- Editing files: DENIED".into(),
        unifier: false,
    });
    assert!(
        text.starts_with("You are reviewer. Review carefully."),
        "{text}"
    );
    assert!(
        text.contains("## Available tools\n- read: Read a text file."),
        "{text}"
    );
    assert!(
        text.contains("## Permissions\n- Editing files: DENIED"),
        "{text}"
    );
    assert!(
        text.contains("Run `cargo test`"),
        "project instructions included"
    );
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("{{nonexistent}}"), "{warnings:?}");
}

#[test]
fn prompt_files_stay_inside_the_directory_of_the_config_that_names_them() {
    use mia_core::agents::Agents;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(project.join("prompts")).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "SECRET FROM OUTSIDE").unwrap();
    std::fs::write(project.join("prompts/review.md"), "Review carefully.").unwrap();
    std::fs::write(
        project.join("mia-code.json"),
        r#"{"agent": {"build": {"prompt": "@../outside.txt"},
                      "review": {"mode": "primary", "prompt": "@prompts/review.md"},
                      "gone": {"mode": "primary", "prompt": "@prompts/missing.md"}}}"#,
    )
    .unwrap();
    let paths = mia_config::Paths::new(home.join(".mia-code"), home.clone(), &home.join(".config"));
    let config = mia_config::Config::load(&paths, Some(&project)).unwrap();
    let agents = Agents::from_config(&config);
    let err = agents.session_agent("build").unwrap_err().to_string();
    assert!(err.contains("agent.build.prompt"), "{err}");
    assert!(
        err.contains("outside.txt") && err.contains("inside the project"),
        "{err}"
    );
    let err = agents.session_agent("gone").unwrap_err().to_string();
    assert!(
        err.contains("cannot read prompt file") && err.contains("missing.md"),
        "{err}"
    );
    let review = agents.session_agent("review").unwrap();
    assert!(
        matches!(&review.prompt, mia_core::agents::PromptSource::File(p) if p.ends_with("prompts/review.md"))
    );
}

/// `{{skills}}` lists the installed Agent Skills (project and global), and a
/// custom prompt that does not use it still gets them appended.
#[test]
fn skills_are_listed_with_the_file_to_read() {
    let p = project();
    let skill = p.path().join(".mia-code/skills/release-notes/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nname: release-notes\ndescription: Write release notes from the git log.\n---\n1. Run git log.\n",
    )
    .unwrap();
    let config = config_with(serde_json::json!({}));
    let text = prompt_for("build", &config, p.path(), false);
    assert!(
        text.contains("## Skills\nSkills hold instructions")
            && text.contains(
                "- release-notes: Write release notes from the git log. (.mia-code/skills/release-notes/SKILL.md)"
            ),
        "{text}"
    );
    assert!(
        !text.contains("1. Run git log."),
        "the body is read on demand"
    );
    let custom = config_with(
        serde_json::json!({"agent": {"terse": {"mode": "primary", "description": "Terse", "prompt": "Be terse."}}}),
    );
    let text = prompt_for("terse", &custom, p.path(), false);
    assert!(
        text.contains("## Skills") && text.contains("release-notes"),
        "{text}"
    );
}
