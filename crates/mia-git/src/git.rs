//! Running git: hooks off unless the user opted in, no prompts, C locale,
//! errors that carry git's own message.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::error::{GitError, Result};

/// One git invocation in `dir`.
pub(crate) struct Git<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) hooks: bool,
    pub(crate) env: Vec<(&'static str, String)>,
}

impl<'a> Git<'a> {
    pub(crate) fn new(dir: &'a Path, hooks: bool) -> Self {
        Self {
            dir,
            hooks,
            env: Vec::new(),
        }
    }

    pub(crate) fn with_env(mut self, k: &'static str, v: impl Into<String>) -> Self {
        self.env.push((k, v.into()));
        self
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        if !self.hooks {
            // The project's hooks never run by surprise (`worktree.runHooks` opts in).
            c.args(["-c", "core.hooksPath=/dev/null"]);
        }
        c.args(args)
            .current_dir(self.dir)
            .stdin(Stdio::null())
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Run; the output whatever the exit status.
    pub(crate) fn output(&self, args: &[&str]) -> Result<Output> {
        self.command(args)
            .output()
            .map_err(|e| GitError::io("run git in", self.dir, e))
    }

    /// Run; stdout on success, git's message on failure.
    pub(crate) fn ok(&self, args: &[&str]) -> Result<String> {
        let out = self.output(args)?;
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        Err(fail(args, &out))
    }

    /// Run with `input` on stdin; the output whatever the exit status.
    pub(crate) fn output_with_input(&self, args: &[&str], input: &[u8]) -> Result<Output> {
        use std::io::Write;
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| GitError::io("run git in", self.dir, e))?;
        // Written from a thread: git may fill its stdout pipe before it has
        // read all of stdin.
        let stdin = child.stdin.take();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || {
            if let Some(mut s) = stdin {
                let _ = s.write_all(&input);
            }
        });
        let out = child
            .wait_with_output()
            .map_err(|e| GitError::io("run git in", self.dir, e))?;
        let _ = writer.join();
        Ok(out)
    }

    /// Run; whether it exited 0 (for yes/no questions like `--is-ancestor`).
    pub(crate) fn yes(&self, args: &[&str]) -> Result<bool> {
        Ok(self.output(args)?.status.success())
    }
}

pub(crate) fn fail(args: &[&str], out: &Output) -> GitError {
    GitError::Git {
        args: args.join(" "),
        code: out
            .status
            .code()
            .map_or_else(|| "killed".to_string(), |c| format!("exit {c}")),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    }
}
