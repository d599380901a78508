//! `mia-code agent list`: every agent of the project's configuration.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::context;
use crate::output::print_json;

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Every visible agent with its mode, model, source file and whether it is read-only.
    List {
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: AgentCommand) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let local = context::local_default(&paths)?;
    match cmd {
        AgentCommand::List { project, json } => {
            let dir = context::project_dir(project.as_deref())?;
            let agents = local.core.agents(&dir)?;
            if json {
                print_json(&agents)?;
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "{:<14} {:<9} {:<36} {:<10} SOURCE",
                "AGENT", "MODE", "MODEL", "ACCESS"
            );
            for a in &agents {
                let mode = serde_json::to_value(&a.mode)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                println!(
                    "{:<14} {:<9} {:<36} {:<10} {}",
                    a.name,
                    mode,
                    a.model.as_deref().unwrap_or("(session's)"),
                    if a.read_only {
                        "read-only"
                    } else {
                        "read-write"
                    },
                    a.source
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
