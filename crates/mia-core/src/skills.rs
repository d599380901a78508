//! Agent Skills: a folder with a `SKILL.md` whose front matter names the
//! skill and says when to use it; the body holds the instructions. mia-code
//! finds them in the project (`.mia-code/skills/*/SKILL.md`) and the global
//! config directory (`~/.config/mia-code/skills/*/SKILL.md`), lists name and
//! description in the system prompt (`{{skills}}`), and the agent reads a
//! skill's body with its read tool when a task calls for it.
//!
//! The front matter is read by hand: two scalar keys (`name`,
//! `description`, plain, quoted or a `>`/`|` block) do not warrant a YAML
//! dependency, and anything else in it is ignored.

use std::path::{Path, PathBuf};

/// Most skills listed in one prompt (the rest are named in a warning).
pub const MAX_SKILLS: usize = 100;
/// Longest description kept (the Agent Skills limit).
pub const MAX_DESCRIPTION: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The `SKILL.md` file.
    pub path: PathBuf,
}

/// Skills of the project, then of the global directory; a project skill
/// hides a global one of the same name. Invalid skills become warnings.
pub fn discover(project_root: &Path, global_dir: Option<&Path>) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut warnings = Vec::new();
    let dirs = std::iter::once(project_root.join(".mia-code").join("skills"))
        .chain(global_dir.map(Path::to_path_buf));
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path().join("SKILL.md"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        for path in found {
            match read_skill(&path) {
                Ok(s) if skills.iter().any(|k| k.name == s.name) => {}
                Ok(s) => skills.push(s),
                Err(e) => warnings.push(format!("skill {}: {e}", path.display())),
            }
        }
    }
    if skills.len() > MAX_SKILLS {
        let rest: Vec<String> = skills.drain(MAX_SKILLS..).map(|s| s.name).collect();
        warnings.push(format!(
            "more than {MAX_SKILLS} skills: not listed: {}",
            rest.join(", ")
        ));
    }
    (skills, warnings)
}

fn read_skill(path: &Path) -> Result<Skill, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    let (name, description) = front_matter(&text)?;
    let dir_name = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(format!(
            "name {name:?} must be 1-64 lowercase letters, digits or hyphens"
        ));
    }
    if name != dir_name {
        return Err(format!(
            "name {name:?} must match its directory name {dir_name:?}"
        ));
    }
    if description.trim().is_empty() {
        return Err("the front matter needs a description (when to use the skill)".into());
    }
    let mut description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if description.len() > MAX_DESCRIPTION {
        let mut cut = MAX_DESCRIPTION;
        while !description.is_char_boundary(cut) {
            cut -= 1;
        }
        description.truncate(cut);
    }
    Ok(Skill {
        name,
        description,
        path: path.to_path_buf(),
    })
}

/// `name` and `description` from a `---` front matter block.
fn front_matter(text: &str) -> Result<(String, String), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md must start with a `---` front matter block".into());
    }
    let mut block: Vec<&str> = Vec::new();
    let mut closed = false;
    for l in lines {
        if l.trim_end() == "---" {
            closed = true;
            break;
        }
        block.push(l);
    }
    if !closed {
        return Err("the front matter block has no closing `---`".into());
    }
    let value = |key: &str| -> Option<String> {
        let start = block.iter().position(|l| {
            l.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })?;
        let (_, raw) = block[start].split_once(':')?;
        let raw = raw.trim();
        if raw == ">" || raw == "|" || raw == ">-" || raw == "|-" {
            let body: Vec<&str> = block[start + 1..]
                .iter()
                .take_while(|l| l.starts_with(' ') || l.starts_with('\t') || l.is_empty())
                .map(|l| l.trim())
                .collect();
            return Some(body.join(" "));
        }
        let unquoted = raw
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .or_else(|| raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
            .unwrap_or(raw);
        Some(unquoted.to_string())
    };
    let name = value("name").ok_or("the front matter needs a name")?;
    let description = value("description").unwrap_or_default();
    Ok((name, description))
}

/// The `{{skills}}` text: one line per skill with the file to read.
pub fn render(skills: &[Skill], project_root: &Path) -> String {
    if skills.is_empty() {
        return "(no skills are installed)".into();
    }
    let mut s = String::from(
        "Skills hold instructions for particular tasks. When a task matches one, read its SKILL.md with the read tool first and follow it.\n",
    );
    for k in skills {
        // A project skill as a relative path with `/` on every system, as
        // the model writes paths for the read tool.
        let shown = k.path.strip_prefix(project_root).map_or_else(
            |_| k.path.display().to_string(),
            |p| {
                let parts: Vec<_> = p
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect();
                parts.join("/")
            },
        );
        s.push_str(&format!("- {}: {} ({shown})\n", k.name, k.description));
    }
    s.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write(p: &Path, s: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    }

    #[test]
    fn finds_project_and_global_skills_and_refuses_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        let global = dir.path().join("global");
        write(
            &root.join(".mia-code/skills/pdf-forms/SKILL.md"),
            "---\nname: pdf-forms\ndescription: \"Fill PDF forms. Use when the user mentions a form.\"\n---\n# Steps\n...",
        );
        write(
            &global.join("release/SKILL.md"),
            "---\nname: release\ndescription: >\n  Cut a release:\n  tag, changelog.\nlicense: MIT\n---\nbody",
        );
        write(
            &global.join("pdf-forms/SKILL.md"),
            "---\nname: pdf-forms\ndescription: the global one\n---\n",
        );
        write(
            &global.join("Bad_Name/SKILL.md"),
            "---\nname: Bad_Name\ndescription: x\n---\n",
        );
        write(
            &global.join("other/SKILL.md"),
            "---\nname: mismatch\ndescription: x\n---\n",
        );
        write(&global.join("nodesc/SKILL.md"), "---\nname: nodesc\n---\n");
        write(&global.join("nofm/SKILL.md"), "# no front matter");
        let (skills, warnings) = discover(&root, Some(&global));
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pdf-forms", "release"]);
        assert_eq!(
            skills[0].description,
            "Fill PDF forms. Use when the user mentions a form."
        );
        assert_eq!(skills[1].description, "Cut a release: tag, changelog.");
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("must match its directory"))
        );
        assert!(warnings.iter().any(|w| w.contains("needs a description")));
        let text = render(&skills, &root);
        assert!(text.contains("- pdf-forms: Fill PDF forms."), "{text}");
        assert!(
            text.contains(".mia-code/skills/pdf-forms/SKILL.md"),
            "{text}"
        );
        assert!(
            text.contains(
                &global
                    .join("release")
                    .join("SKILL.md")
                    .display()
                    .to_string()
            )
        );
        assert_eq!(render(&[], &root), "(no skills are installed)");
    }
}
