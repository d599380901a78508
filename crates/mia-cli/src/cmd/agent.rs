//! `mia-code agent list` (every agent of the project's configuration) and
//! `mia-code agent create` (generate one from a description, spec 013).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::context;
use crate::output::print_json;

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Generate an agent from a description (spec 013): shows the proposal;
    /// `--yes` saves it as a markdown agent file, usable at once.
    Create {
        /// What the agent should do, in your words.
        #[arg(long, required_unless_present = "from")]
        description: Option<String>,
        /// Where to save it: `project` (.mia-code/agents/) or `global` (~/.config/mia-code/agents/).
        #[arg(long, default_value = "project", value_parser = ["project", "global"])]
        save: String,
        /// Save without asking again (without it, nothing is written).
        #[arg(long)]
        yes: bool,
        /// A proposal as printed by `--json` (edited or not): checked again, then shown or saved.
        #[arg(long)]
        from: Option<PathBuf>,
        /// With `--from`: what to change ("also allow running the tests"); only that changes.
        #[arg(long, requires = "from")]
        refine: Option<String>,
        /// The agent creating it (its permissions bound the new agent's); default: the default agent.
        #[arg(long)]
        agent: Option<String>,
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
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
        AgentCommand::Create {
            description,
            save,
            yes,
            from,
            refine,
            agent,
            project,
            json,
        } => {
            let dir = context::project_dir(project.as_deref())?;
            let proposal = match &from {
                Some(file) => {
                    let text = std::fs::read_to_string(file)
                        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
                    let previous: mia_protocol::AgentProposal = serde_json::from_str(&text)
                        .map_err(|e| {
                            anyhow::anyhow!(
                                "{} is not a proposal ({e}); write one with `mia-code agent create --description ... --json`",
                                file.display()
                            )
                        })?;
                    match &refine {
                        Some(r) => local.block(local.core.propose_agent(
                            &dir,
                            "",
                            agent.as_deref(),
                            Some(previous),
                            Some(r),
                        ))?,
                        None => local.block(local.core.check_proposal(
                            &dir,
                            agent.as_deref(),
                            previous,
                        ))?,
                    }
                }
                None => local.block(local.core.propose_agent(
                    &dir,
                    description.as_deref().unwrap_or_default(),
                    agent.as_deref(),
                    None,
                    None,
                ))?,
            };
            let saved = if yes {
                let to = if save == "global" {
                    mia_core::agentgen::SaveTo::Global
                } else {
                    mia_core::agentgen::SaveTo::Project
                };
                Some(local.core.save_agent(&dir, &proposal, to)?)
            } else {
                None
            };
            if json {
                #[derive(serde::Serialize)]
                struct Out<'a> {
                    #[serde(flatten)]
                    proposal: &'a mia_protocol::AgentProposal,
                    #[serde(skip_serializing_if = "Option::is_none")]
                    saved: Option<String>,
                }
                print_json(&Out {
                    proposal: &proposal,
                    saved: saved.as_ref().map(|p| p.display().to_string()),
                })?;
                return Ok(ExitCode::SUCCESS);
            }
            print_proposal(&proposal);
            match saved {
                Some(path) => println!(
                    "\nSaved to {}; usable now (Tab, or @{} as a subagent).",
                    path.display(),
                    proposal.key
                ),
                None => println!(
                    "\nNot saved. Save it with --yes (and --save project|global); or print it with --json, edit it, and pass it back with --from FILE (--refine \"...\" to change one part)."
                ),
            }
        }
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
                let mode = serde_json::to_value(a.mode)
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

fn print_proposal(p: &mia_protocol::AgentProposal) {
    println!("Generated agent: {} ({})", p.name, p.key);
    println!("  {}", p.description);
    println!("  mode   {}", p.mode);
    println!(
        "  model  {}{}",
        p.model.as_deref().unwrap_or("(the session's)"),
        if p.model_reason.is_empty() {
            String::new()
        } else {
            format!(" — {}", p.model_reason)
        }
    );
    println!("  permissions:");
    for r in &p.permissions {
        println!(
            "    {} {}{}{}",
            r.action,
            r.permission,
            r.pattern
                .as_deref()
                .map(|x| format!(" {x}"))
                .unwrap_or_default(),
            if r.reason.is_empty() {
                String::new()
            } else {
                format!(" — {}", r.reason)
            }
        );
    }
    println!("  prompt:");
    for l in p.prompt.lines().take(6) {
        println!("    {l}");
    }
    if p.prompt.lines().count() > 6 {
        println!("    …");
    }
    for n in &p.notes {
        println!("  note: {n}");
    }
    if !p.changed.is_empty() {
        println!("  changed: {}", p.changed.join(", "));
    }
}
