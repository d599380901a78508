//! `mia-code plugin list|update|remove [--json]`: the project's plugins
//! (every config layer's `plugin`), installed and started to show their
//! state; `update` is the only way to a newer version than the lock's.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use mia_core::RuntimeOptions;

use crate::context;
use crate::output::print_json;

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Every plugin with its state, version, tools and hooks (installs what is missing).
    List {
        #[arg(long)]
        project: Option<PathBuf>,
        /// Never contact a registry.
        #[arg(long)]
        offline: bool,
        #[arg(long)]
        json: bool,
    },
    /// Install the newest versions the configured ranges allow and update the lock file.
    Update {
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Uninstall an npm plugin and drop it from the lock file (remove it from your config too).
    Remove {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: PluginCommand) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let mut opts = RuntimeOptions::new(paths);
    opts.interactive = false;
    let (project, json, update) = match &cmd {
        PluginCommand::List {
            project,
            offline,
            json,
        } => {
            opts.offline = *offline;
            (project.clone(), *json, false)
        }
        PluginCommand::Update { project, json } => (project.clone(), *json, true),
        PluginCommand::Remove { name, json } => {
            let local = context::local(opts)?;
            let removed = local.block(local.core.remove_plugin(name))?;
            if *json {
                print_json(&serde_json::json!({"name": name, "removed": removed}))?;
            } else if removed {
                println!(
                    "Removed plugin {name}. Take it out of your config's `plugin` list too, or it is installed again."
                );
            } else {
                println!("Plugin {name} was not installed.");
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    let dir = context::project_dir(project.as_deref())?;
    let local = context::local(opts)?;
    let plugins = local.block(local.core.plugins(dir, update))?;
    if json {
        print_json(&plugins)?;
    } else if plugins.is_empty() {
        println!("No plugins: list them under `plugin` in your config.");
    } else {
        for p in &plugins {
            let version = p
                .version
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default();
            println!("{}{version}  {}", p.name, p.state);
            println!("    {} (from {})", p.entry, p.source);
            if !p.tools.is_empty() {
                println!("    tools: {}", p.tools.join(", "));
            }
            if !p.hooks.is_empty() {
                println!("    hooks: {}", p.hooks.join(", "));
            }
            if let Some(e) = &p.error {
                println!("    {e}");
            }
        }
    }
    let failed = plugins
        .iter()
        .any(|p| matches!(p.state.as_str(), "failed" | "refused"));
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
