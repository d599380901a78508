use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::Value;

use crate::context;
use crate::output::print_json;

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The merged configuration and where each value came from.
    Show {
        /// Project directory (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of config files.
    Schema,
}

pub fn run(cmd: ConfigCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ConfigCommand::Schema => print!("{}", mia_config::json_schema()),
        ConfigCommand::Show { project, json } => {
            let paths = context::paths()?;
            let dir = context::project_dir(project.as_deref())?;
            let cfg = context::load_config(&paths, Some(&dir))?;
            let merged = serde_json::to_value(&cfg.merged)?;
            if json {
                let layers: Vec<Value> = cfg
                    .layers
                    .iter()
                    .map(|l| {
                        serde_json::json!({
                            "kind": l.kind,
                            "source": l.source(),
                            "permissions": l.file.permissions,
                        })
                    })
                    .collect();
                return print_json(&serde_json::json!({
                    "config": merged,
                    "origins": cfg.origins,
                    "layers": layers,
                    "unused": cfg.unused_settings().into_iter().map(|(k, _)| k).collect::<Vec<_>>(),
                }))
                .map(|()| ExitCode::SUCCESS);
            }
            println!("Layers (later wins):");
            for layer in &cfg.layers {
                println!(
                    "  {:<8} {}",
                    format!("{:?}", layer.kind).to_lowercase(),
                    layer.source()
                );
            }
            println!("\nValues:");
            let width = cfg.origins.keys().map(String::len).max().unwrap_or(0);
            for (key, source) in &cfg.origins {
                if key == "permissions" || key.ends_with(".permissions") {
                    continue;
                }
                let value = lookup(&merged, key)
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                println!("  {key:<width$} = {value}    ({source})");
            }
            let unused = cfg.unused_settings();
            if !unused.is_empty() {
                println!("\nAccepted but not used yet (no effect in this version):");
                for (key, source) in &unused {
                    println!("  {key}    ({source})");
                }
            }
            println!(
                "\nPermission rules (kept per layer; `mia-code permissions show` gives the compiled order):"
            );
            let mut any = false;
            for layer in &cfg.layers {
                for (i, rule) in layer.file.permissions.iter().flatten().enumerate() {
                    any = true;
                    println!("  {:<28} #{i} {rule}", layer.source());
                }
                for (agent, a) in layer.file.agent.iter().flatten() {
                    for (i, rule) in a.permissions.iter().flatten().enumerate() {
                        any = true;
                        println!("  {:<28} agent.{agent} #{i} {rule}", layer.source());
                    }
                }
            }
            if !any {
                println!("  (none configured; built-in defaults apply)");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn lookup<'a>(value: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted.split('.').try_fold(value, |v, k| v.get(k))
}
