//! "Open in editor": a project file in the user's editor.
//!
//! The command comes from the global config (`editor.command`, an argv run
//! without a shell; a project config may not set it), else the system's
//! opener. Only files inside the project open this way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{CoreError, Runtime};

/// The argv that opens `file` at `line`: the configured command with
/// `{file}` and `{line}` replaced, else the system's opener.
pub fn editor_argv(
    command: Option<&[String]>,
    file: &Path,
    line: u32,
) -> Result<Vec<String>, CoreError> {
    let file_s = file.display().to_string();
    match command {
        Some([]) => Err(CoreError::Invalid(
            "editor.command is empty; give the program and its arguments, e.g. [\"code\", \"--goto\", \"{file}:{line}\"]".into(),
        )),
        Some(cmd) => {
            let mut argv: Vec<String> = cmd
                .iter()
                .map(|a| a.replace("{file}", &file_s).replace("{line}", &line.to_string()))
                .collect();
            // A command that never names the file gets it at the end.
            if !cmd.iter().any(|a| a.contains("{file}")) {
                argv.push(file_s);
            }
            Ok(argv)
        }
        None => Ok(if cfg!(windows) {
            vec!["explorer".into(), file_s]
        } else if cfg!(target_os = "macos") {
            vec!["open".into(), file_s]
        } else {
            vec!["xdg-open".into(), file_s]
        }),
    }
}

impl Runtime {
    /// Open `path` (relative to `directory`, or absolute inside it) in the
    /// user's editor. Returns the command that was started.
    pub async fn open_in_editor(
        &self,
        directory: &Path,
        path: &str,
        line: Option<u32>,
    ) -> Result<String, CoreError> {
        crate::limits::check_len("path", path, crate::limits::MAX_PATH)?;
        let root = crate::limits::project_dir(directory, &self.options().paths)?;
        let spelled = Path::new(path);
        let abs: PathBuf = if spelled.is_absolute() {
            spelled.to_path_buf()
        } else {
            root.join(spelled)
        };
        let real = dunce::canonicalize(&abs)
            .map_err(|e| CoreError::NotFound(format!("{} cannot be opened: {e}", abs.display())))?;
        if !real.starts_with(&root) {
            return Err(CoreError::Refused(format!(
                "{path} is outside the project {}; only the project's files open from here",
                root.display()
            )));
        }
        let config = self.load_config(Some(root.clone())).await?;
        let command = config
            .merged
            .editor
            .as_ref()
            .and_then(|e| e.command.clone());
        let argv = editor_argv(command.as_deref(), &real, line.unwrap_or(1).max(1))?;
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| CoreError::Internal("no editor command".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                CoreError::Failed(format!(
                    "could not start `{program}` to open {}: {e}; set editor.command in your global config (e.g. [\"code\", \"--goto\", \"{{file}}:{{line}}\"])",
                    real.display()
                ))
            })?;
        // Reaped in the background: the editor may run for hours.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        tracing::info!(file = %real.display(), program = %program, "opened in the editor");
        Ok(argv.join(" "))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_configured_command_gets_the_file_and_line() {
        let f = Path::new("/p/src/main.rs");
        let cmd = vec!["code".to_string(), "--goto".into(), "{file}:{line}".into()];
        assert_eq!(
            editor_argv(Some(&cmd), f, 12).unwrap(),
            ["code", "--goto", "/p/src/main.rs:12"]
        );
        // No {file}: appended.
        let cmd = vec!["subl".to_string()];
        assert_eq!(
            editor_argv(Some(&cmd), f, 1).unwrap(),
            ["subl", "/p/src/main.rs"]
        );
        assert!(editor_argv(Some(&[]), f, 1).is_err());
        // Default: the system's opener.
        let d = editor_argv(None, f, 1).unwrap();
        assert_eq!(d.last().unwrap(), "/p/src/main.rs");
    }
}
