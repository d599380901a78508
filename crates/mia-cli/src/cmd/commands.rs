//! `mia-code commands list [--json] [--project DIR]`: the custom slash
//! commands of the project and the person, in precedence order, each file
//! with its error when it is not used.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::context;
use crate::output::print_json;

#[derive(Debug, Subcommand)]
pub enum CommandsCommand {
    /// Every command file: name, description, argument hint, source, path, error.
    List {
        /// Project directory (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: CommandsCommand) -> anyhow::Result<ExitCode> {
    let CommandsCommand::List { project, json } = cmd;
    let dir = context::project_dir(project.as_deref())?;
    let local = context::local_headless()?;
    let list = local.block(local.core.commands(dir))?;
    if json {
        print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.commands.is_empty() {
        println!(
            "No custom commands: add Markdown files to .mia-code/commands/ (or ~/.config/mia-code/commands/); .claude/commands/ and .opencode/command/ are read too."
        );
        return Ok(ExitCode::SUCCESS);
    }
    for c in &list.commands {
        let hint = c
            .argument_hint
            .as_deref()
            .map(|h| format!(" {h}"))
            .unwrap_or_default();
        let source = serde_json::to_value(c.source)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        match &c.error {
            None => println!(
                "/{}{hint}  {}  [{source}]",
                c.name,
                c.description.as_deref().unwrap_or("")
            ),
            Some(e) => println!("/{}  NOT USED: {e}  [{source}: {}]", c.name, c.path),
        }
    }
    Ok(ExitCode::SUCCESS)
}
