//! Custom slash commands (docs/configuration.md#commands): the files
//! `mia_config::commands` reads, listed for the front ends and expanded
//! when a prompt starts with `/name`.
//!
//! Expanding: `$ARGUMENTS` and `$1`…`$9` are substituted; `@path` includes
//! a project file the rules let the agent read; each `` !`cmd` `` becomes a
//! bash call the turn makes before the model is asked (judged by the
//! engine, run in the OS sandbox, snapshotted and shown as a card like any
//! other), whose output the model reads as that call's result.
//! `allowed-tools` become allow rules of the session for that turn only
//! (below the invariants and the agent's floor, like every session rule),
//! and from a project's file only in a trusted workspace.

use std::path::{Path, PathBuf};

use mia_config::Config;
use mia_config::commands::{self as files, CommandFile, CommandSource, Piece};
use mia_permission::{PathContext, PermissionAction, PermissionRule};
use mia_protocol::{CommandInfo, CommandList, CommandSourceView};

use crate::CoreError;
use crate::runtime::Runtime;

/// Largest file an `@path` includes.
const MAX_INCLUDE: u64 = 256 * 1024;

/// A prompt that invoked a command, expanded.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expanded {
    /// `/name args` as typed.
    pub(crate) invocation: String,
    /// The prompt the model reads.
    pub(crate) text: String,
    /// `` !`cmd` `` lines, run as the turn's first calls.
    pub(crate) shell: Vec<String>,
    pub(crate) agent: Option<String>,
    pub(crate) model: Option<String>,
    /// `allowed-tools`, for this turn.
    pub(crate) rules: Vec<PermissionRule>,
}

fn source_view(s: CommandSource) -> CommandSourceView {
    match s {
        CommandSource::Project => CommandSourceView::Project,
        CommandSource::Claude => CommandSourceView::Claude,
        CommandSource::Opencode => CommandSourceView::Opencode,
        CommandSource::User => CommandSourceView::User,
    }
}

fn info(c: &CommandFile) -> CommandInfo {
    CommandInfo {
        name: c.name.clone(),
        description: c.description.clone(),
        argument_hint: c.argument_hint.clone(),
        source: source_view(c.source),
        path: c.path.display().to_string(),
        error: c.error.clone(),
    }
}

impl Runtime {
    /// `mia-code commands list`, `GET /api/commands`: every command file
    /// of `directory` and the person's, in precedence order, each with its
    /// error when it is not used.
    pub async fn commands(&self, directory: PathBuf) -> Result<CommandList, CoreError> {
        let paths = self.inner.opts.paths.clone();
        let list =
            tokio::task::spawn_blocking(move || files::load_commands(&paths, Some(&directory)))
                .await
                .map_err(|e| CoreError::Internal(format!("listing commands failed: {e}")))?;
        Ok(CommandList {
            commands: list.iter().map(info).collect(),
        })
    }

    /// Expand `text` when it invokes a usable command of `dir`.
    pub(crate) async fn expand_command(
        &self,
        config: &Config,
        path_ctx: &PathContext,
        text: &str,
        trusted: bool,
    ) -> Result<Option<Expanded>, CoreError> {
        let Some((name, args)) = files::split_invocation(text) else {
            return Ok(None);
        };
        if files::BUILTIN_COMMANDS.contains(&name) {
            return Ok(None);
        }
        let paths = self.inner.opts.paths.clone();
        let dir = path_ctx.root.clone();
        let list = tokio::task::spawn_blocking(move || files::load_commands(&paths, Some(&dir)))
            .await
            .map_err(|e| CoreError::Internal(format!("reading commands failed: {e}")))?;
        let Some(cmd) = list.iter().find(|c| c.name == name) else {
            return Ok(None);
        };
        if let Some(e) = &cmd.error {
            return Err(CoreError::Invalid(format!(
                "/{name} ({}) cannot be used: {e}",
                cmd.path.display()
            )));
        }
        let body = files::substitute_arguments(&cmd.body, args);
        let policy = crate::permissions::PolicyRecipe::new(
            config,
            cmd.agent.as_deref().unwrap_or(config.default_agent()),
            &self.inner.opts.paths,
        )
        .project(Vec::new(), trusted)
        .compile();
        let mut out = Expanded {
            invocation: text.trim().to_string(),
            agent: cmd.agent.clone(),
            model: cmd.model.clone(),
            ..Default::default()
        };
        for piece in files::pieces(&body) {
            match piece {
                Piece::Text(t) => out.text.push_str(&t),
                Piece::Include(p) => out.text.push_str(&include(&policy, path_ctx, &p)),
                Piece::Shell(c) => {
                    out.text.push_str(&format!(
                        "`{c}` (its output is the result of the bash call that follows)"
                    ));
                    out.shell.push(c);
                }
            }
        }
        if !cmd.allowed_tools.is_empty() {
            if cmd.source.is_project() && !trusted {
                tracing::warn!(
                    command = name,
                    "allowed-tools of a project command are not applied: the workspace is not trusted"
                );
            } else {
                for spec in &cmd.allowed_tools {
                    match mia_config::import::claude_rule(spec, PermissionAction::Allow) {
                        Ok(r) => out.rules.extend(r),
                        Err(e) => {
                            return Err(CoreError::Invalid(format!(
                                "/{name} ({}): allowed-tools {e}",
                                cmd.path.display()
                            )));
                        }
                    }
                }
            }
        }
        Ok(Some(out))
    }
}

/// `@path`: the file's content in a fenced block, when the rules let the
/// agent read it without asking; else a note saying why it is not there.
fn include(policy: &mia_permission::Policy, path_ctx: &PathContext, raw: &str) -> String {
    let checker = mia_permission::Checker::new(policy, path_ctx);
    let path = Path::new(raw);
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else if let Some(rest) = raw.strip_prefix("~/") {
        path_ctx
            .home
            .as_ref()
            .map_or(path.to_path_buf(), |h| h.join(rest))
    } else {
        path_ctx.root.join(path)
    };
    let decision = checker.check(&crate::permissions::request_for(
        "read",
        &mia_tools::Target::Path(abs.clone()),
    ));
    if decision.decision != PermissionAction::Allow {
        return format!(
            "@{raw} [not included: reading it is not allowed without asking ({})]",
            decision.reason
        );
    }
    match std::fs::metadata(&abs) {
        Ok(m) if !m.is_file() => return format!("@{raw} [not included: not a file]"),
        Ok(m) if m.len() > MAX_INCLUDE => {
            return format!(
                "@{raw} [not included: {} bytes, over {MAX_INCLUDE}]",
                m.len()
            );
        }
        Ok(_) => {}
        Err(e) => return format!("@{raw} [not included: {e}]"),
    }
    match std::fs::read(&abs).map(String::from_utf8) {
        Ok(Ok(text)) => format!("@{raw}\n```\n{}\n```\n", text.trim_end()),
        Ok(Err(_)) => format!("@{raw} [not included: not UTF-8 text]"),
        Err(e) => format!("@{raw} [not included: {e}]"),
    }
}
