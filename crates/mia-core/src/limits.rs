//! Limits on what front ends may send, checked once for every Op and query:
//! lengths, names, and directories that can be opened as projects.

use std::path::{Path, PathBuf};

use mia_protocol::Op;

use crate::CoreError;

/// A session title.
pub const MAX_TITLE: usize = 500;
/// Agent names and provider ids.
pub const MAX_NAME: usize = 64;
/// `provider/model`.
pub const MAX_MODEL: usize = 200;
/// A directory path.
pub const MAX_PATH: usize = 4096;
/// One user message (bytes).
pub const MAX_MESSAGE: usize = 1024 * 1024;

fn too_long(field: &str, len: usize, max: usize) -> CoreError {
    CoreError::Invalid(format!(
        "{field} is {len} bytes long; at most {max} are accepted"
    ))
}

/// `value` is at most `max` bytes.
pub fn check_len(field: &str, value: &str, max: usize) -> Result<(), CoreError> {
    if value.len() > max {
        return Err(too_long(field, value.len(), max));
    }
    Ok(())
}

/// An agent name or provider id: 1-64 of letters, digits, `-`, `_`, `.`.
pub fn check_name(field: &str, value: &str) -> Result<(), CoreError> {
    check_len(field, value, MAX_NAME)?;
    if value.is_empty()
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(CoreError::Invalid(format!(
            "{field} {value:?} is not a valid name: use letters, digits, `-`, `_` and `.`"
        )));
    }
    Ok(())
}

/// The lengths and names of an Op's fields.
pub fn check_op(op: &Op) -> Result<(), CoreError> {
    let model = |m: &Option<String>| match m {
        Some(m) => check_len("model", m, MAX_MODEL),
        None => Ok(()),
    };
    let agent = |a: &Option<String>| match a {
        Some(a) => check_name("agent", a),
        None => Ok(()),
    };
    match op {
        Op::CreateSession {
            directory,
            title,
            agent: a,
            model: m,
        } => {
            check_len("directory", directory, MAX_PATH)?;
            if let Some(t) = title {
                check_len("title", t, MAX_TITLE)?;
            }
            agent(a)?;
            model(m)
        }
        Op::UserMessage {
            text,
            agent: a,
            model: m,
            ..
        } => {
            check_len("message", text, MAX_MESSAGE)?;
            agent(a)?;
            model(m)
        }
        Op::UpdateSession { title: Some(t), .. } => check_len("title", t, MAX_TITLE),
        Op::SwitchAgent { agent: a, .. } => check_name("agent", a),
        Op::SetModel { model: m, .. } => model(m),
        _ => Ok(()),
    }
}

/// Top-level system directories that are never a project (nor is anything
/// under `/proc`, `/sys`, `/dev`).
const SYSTEM_DIRS: &[&str] = &[
    "/etc", "/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
    "/libx32", "/var", "/run", "/srv", "/opt", "/root", "/home", "/Users", "/System", "/Library",
    "/private", "/Volumes", "/mnt", "/media", "/tmp",
];

/// A directory a front end may open as a project: it exists, is a
/// directory, and is not `/`, a system directory, the home directory or
/// mia-code's own data directory (or inside those that are never projects).
pub fn project_dir(dir: &Path, mia_home: &Path) -> Result<PathBuf, CoreError> {
    check_len("directory", &dir.to_string_lossy(), MAX_PATH)?;
    let canon = dunce::canonicalize(dir).map_err(|e| {
        CoreError::Invalid(format!(
            "project directory {} is not accessible: {e}",
            dir.display()
        ))
    })?;
    if !canon.is_dir() {
        return Err(CoreError::Invalid(format!(
            "{} is not a directory: open the project folder",
            canon.display()
        )));
    }
    let refuse = |what: &str| {
        Err(CoreError::Invalid(format!(
            "{} is {what}, not a project: open a project folder instead",
            canon.display()
        )))
    };
    if canon.parent().is_none() {
        return refuse("the filesystem root");
    }
    let s = canon.to_string_lossy();
    if SYSTEM_DIRS.contains(&s.as_ref())
        || ["/proc/", "/sys/", "/dev/"]
            .iter()
            .any(|p| s.starts_with(p))
    {
        return refuse("a system directory");
    }
    for var in ["HOME", "USERPROFILE"] {
        if let Some(home) = std::env::var_os(var) {
            let home = PathBuf::from(home);
            if dunce::canonicalize(&home).unwrap_or(home) == canon {
                return refuse("your home directory");
            }
        }
    }
    let mia = dunce::canonicalize(mia_home).unwrap_or_else(|_| mia_home.to_path_buf());
    if canon.starts_with(&mia) {
        return refuse("mia-code's data directory");
    }
    Ok(canon)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn not_projects_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mia = dir.path().join("mia");
        std::fs::create_dir_all(mia.join("logs")).unwrap();
        let proj = dir.path().join("proj");
        std::fs::create_dir(&proj).unwrap();
        assert!(project_dir(&proj, &mia).is_ok());
        for bad in ["/", "/etc", "/proc", "/proc/self", "/usr"] {
            let e = project_dir(Path::new(bad), &mia).unwrap_err().to_string();
            assert!(e.contains("not a project"), "{bad}: {e}");
        }
        assert!(project_dir(&mia, &mia).is_err());
        assert!(project_dir(&mia.join("logs"), &mia).is_err());
        let file = proj.join("f");
        std::fs::write(&file, "").unwrap();
        assert!(
            project_dir(&file, &mia)
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
        let long = "a".repeat(MAX_PATH + 1);
        assert!(
            project_dir(Path::new(&long), &mia)
                .unwrap_err()
                .to_string()
                .contains("at most")
        );
        assert!(check_name("agent", "build").is_ok());
        assert!(check_name("agent", "../x").is_err());
        assert!(check_name("agent", &"a".repeat(65)).is_err());
    }
}
