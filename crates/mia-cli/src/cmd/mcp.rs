//! `mia-code mcp list [--json] [--project DIR]`: the project's MCP servers
//! (config `mcp` of every layer and `.mcp.json`), started to show their
//! state and tools.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use mia_core::RuntimeOptions;

use crate::context;
use crate::output::print_json;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Every server with its state and tools.
    List {
        /// Project directory (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: McpCommand) -> anyhow::Result<ExitCode> {
    let McpCommand::List { project, json } = cmd;
    let dir = context::project_dir(project.as_deref())?;
    let paths = context::paths()?;
    let mut opts = RuntimeOptions::new(paths);
    opts.interactive = false;
    let local = context::local(opts)?;
    let servers = local.block(local.core.mcp_servers(dir))?;
    if json {
        print_json(&servers)?;
        return Ok(ExitCode::SUCCESS);
    }
    if servers.is_empty() {
        println!(
            "No MCP servers: add them under `mcp` in your config or in the project's .mcp.json."
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = false;
    for s in &servers {
        println!("{}  {}  ({})", s.name, s.state, s.transport);
        println!("    from {}", s.source);
        if let Some(v) = &s.server {
            println!("    server {v}");
        }
        if !s.tools.is_empty() {
            println!("    tools: {}", s.tools.join(", "));
        }
        if let Some(e) = &s.error {
            println!("    {e}");
        }
        if s.state == mia_protocol::McpState::Failed {
            failed = true;
            for l in &s.stderr {
                println!("    stderr: {l}");
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
