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
            let mut merged = serde_json::to_value(&cfg.merged)?;
            let mut origins = cfg.origins.clone();
            // A project's values that do not apply are shown apart, with
            // what applies instead (your own value, or none).
            let trusted = {
                let local = context::local(mia_core::RuntimeOptions::new(paths.clone()))?;
                local.block(local.core.workspace_trusted(&dir))?
            };
            let not_applied = cfg.not_applied_from_project(trusted);
            for (key, _, _) in &not_applied {
                match own_value(&cfg, key) {
                    Some((value, source)) => {
                        set(&mut merged, key, Some(value));
                        origins.insert(key.clone(), source);
                    }
                    None => {
                        set(&mut merged, key, None);
                        origins.remove(key);
                    }
                }
            }
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
                let not_applied: Vec<Value> = not_applied
                    .iter()
                    .map(|(key, source, why)| {
                        serde_json::json!({"key": key, "source": source, "why": why.why()})
                    })
                    .collect();
                return print_json(&serde_json::json!({
                    "config": merged,
                    "origins": origins,
                    "not_applied": not_applied,
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
            let width = origins.keys().map(String::len).max().unwrap_or(0);
            for (key, source) in &origins {
                if key == "permissions" || key.ends_with(".permissions") {
                    continue;
                }
                let value = lookup(&merged, key)
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                println!("  {key:<width$} = {value}    ({source})");
            }
            if !not_applied.is_empty() {
                println!("\nSet by the project but not applied:");
                for (key, source, why) in &not_applied {
                    println!("  {key}    ({source}: {})", why.why());
                }
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

/// `key`'s value in the highest of the person's own layers that sets it.
fn own_value(cfg: &mia_config::Config, key: &str) -> Option<(Value, String)> {
    cfg.layers
        .iter()
        .rev()
        .filter(|l| l.kind != mia_config::LayerKind::Project)
        .find_map(|l| {
            let v = serde_json::to_value(&l.file).ok()?;
            lookup(&v, key).cloned().map(|v| (v, l.source()))
        })
}

/// Set (or with `None` remove) the value at a dotted key.
fn set(value: &mut Value, dotted: &str, to: Option<Value>) {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut at = value;
    for p in parts {
        match at.get_mut(p) {
            Some(v) => at = v,
            None => return,
        }
    }
    if let Some(map) = at.as_object_mut() {
        match to {
            Some(v) => {
                map.insert(last.to_string(), v);
            }
            None => {
                map.remove(last);
            }
        }
    }
}
