//! `mia-code permissions check|explain|show|approvals|trust|untrust`: a thin
//! adapter over the runtime's permission queries (the agent's policy by the
//! one recipe every turn uses, approvals, workspace trust).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand};
use mia_core::permissions::AgentPolicy;

use crate::context;
use crate::output::{datetime, print_json};

#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// Judge one request and print the decision (exit 0 whatever the decision).
    Check(CheckArgs),
    /// Judge one request and explain the decision for people.
    Explain(CheckArgs),
    /// Print an agent's compiled, layered ruleset with the source of every rule.
    Show(ShowArgs),
    /// "Always for this project" approvals.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Trust this workspace: its project config may then also allow, not only deny or ask.
    Trust(ProjectArg),
    /// Withdraw trust from this workspace.
    Untrust(ProjectArg),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Permission to check (read, write, edit, bash, fetch, ... or any tool id).
    #[arg(long, required_unless_present = "command")]
    permission: Option<String>,
    /// Target path (relative to --project), URL for fetch, or text for other permissions.
    #[arg(long, conflicts_with = "command")]
    pattern: Option<String>,
    /// A shell command (implies --permission bash).
    #[arg(long)]
    command: Option<String>,
    /// Agent whose rules apply (default: the configured default agent).
    #[arg(long)]
    agent: Option<String>,
    /// Project directory (default: the current directory).
    #[arg(long)]
    project: Option<PathBuf>,
    /// Nobody can answer: asks become denials.
    #[arg(long)]
    headless: bool,
    /// Print the stable JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Agent whose rules to show (default: the configured default agent).
    #[arg(long)]
    agent: Option<String>,
    /// Project directory (default: the current directory).
    #[arg(long)]
    project: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ProjectArg {
    /// Project directory (default: the current directory).
    #[arg(long)]
    project: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// List approvals of this project (or of every project with --all).
    List {
        #[arg(long, conflicts_with = "all")]
        project: Option<PathBuf>,
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Revoke one approval by id (see `approvals list`).
    Revoke { id: i64 },
}

fn load(agent: Option<&str>, project: Option<&Path>) -> anyhow::Result<AgentPolicy> {
    let paths = context::paths()?;
    let dir = context::project_dir(project)?;
    let local = context::local_default(&paths)?;
    let policy = local.block(local.core.agent_policy(&dir, agent))?;
    for e in policy.errors() {
        eprintln!("warning: {e}");
    }
    Ok(policy)
}

fn check(args: &CheckArgs, explain: bool) -> anyhow::Result<ExitCode> {
    let permission = match (&args.command, &args.permission) {
        (Some(_), Some(p)) if p != "bash" => {
            bail!("--command implies --permission bash (got --permission {p})")
        }
        (Some(_), _) => "bash".to_string(),
        (None, Some(p)) => p.clone(),
        (None, None) => bail!("give --permission (and --pattern) or --command"),
    };
    if permission.trim().is_empty() {
        bail!("--permission must not be empty");
    }
    let subject = args.command.as_deref().or(args.pattern.as_deref());
    let loaded = load(args.agent.as_deref(), args.project.as_deref())?;
    let report = loaded.check(&permission, subject, args.headless);
    if args.json && !explain {
        println!("{}", serde_json::to_string(&report.json)?);
    } else if args.json {
        print_json(&serde_json::json!({
            "check": report.json,
            "explanation": report.explanation,
            "lint": loaded.lint_json(),
        }))?;
    } else if explain {
        print!("{}", report.explanation);
        for w in loaded.lint_messages() {
            println!("  warning: {w}");
        }
    } else {
        println!("{}: {}", report.decision, report.reason);
    }
    Ok(ExitCode::SUCCESS)
}

fn show(args: &ShowArgs) -> anyhow::Result<ExitCode> {
    let loaded = load(args.agent.as_deref(), args.project.as_deref())?;
    if args.json {
        print_json(&loaded.show_json())?;
    } else {
        print!("{}", loaded.render());
    }
    Ok(ExitCode::SUCCESS)
}

fn approvals(cmd: &ApprovalsCommand) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let local = context::local_default(&paths)?;
    match cmd {
        ApprovalsCommand::List { project, all, json } => {
            let list = if *all {
                local.block(local.core.project_approvals(None))?
            } else {
                let dir = context::project_dir(project.as_deref())?;
                local.block(local.core.project_approvals(Some(dir)))?
            };
            if *json {
                print_json(&list)?;
            } else if list.is_empty() {
                println!("No \"always for this project\" approvals.");
            } else {
                for a in &list {
                    println!(
                        "{:>5}  {:<40} {:<10} {}  {}",
                        a.id,
                        a.rule.to_string(),
                        a.agent,
                        datetime(a.created_at),
                        a.project
                    );
                }
            }
        }
        ApprovalsCommand::Revoke { id } => {
            let a = local.block(local.core.revoke_approval_id(*id))?;
            println!("Revoked #{}: {} (project {})", a.id, a.rule, a.project);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn trust(project: Option<&Path>, trust: bool) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let dir = context::project_dir(project)?;
    let local = context::local_default(&paths)?;
    let changed = local.block(local.core.set_workspace_trust(&dir, trust))?;
    if trust {
        println!(
            "Trusted {}: its project config may now allow as well as deny or ask, and its hooks (as they are now) run; a changed hook set waits for `mia-code permissions trust` again.",
            dir.display()
        );
    } else if changed {
        println!(
            "{} is no longer trusted: its project config may only deny or ask.",
            dir.display()
        );
    } else {
        println!("{} was not trusted.", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(cmd: PermissionsCommand) -> anyhow::Result<ExitCode> {
    match &cmd {
        PermissionsCommand::Check(a) => check(a, false),
        PermissionsCommand::Explain(a) => check(a, true),
        PermissionsCommand::Show(a) => show(a),
        PermissionsCommand::Approvals(c) => approvals(c),
        PermissionsCommand::Trust(p) => trust(p.project.as_deref(), true),
        PermissionsCommand::Untrust(p) => trust(p.project.as_deref(), false),
    }
}
