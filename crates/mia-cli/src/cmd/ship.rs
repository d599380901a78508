//! `mia-code commit`, `mia-code push` and `mia-code pr create|status`.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use mia_protocol::ForgeKind;

use crate::cmd::review::checkout_dir;
use crate::context;
use crate::output::print_json;

#[derive(Debug, Args)]
pub struct Where {
    /// The project (default: the current directory).
    #[arg(long)]
    project: Option<PathBuf>,
    /// Work in this mia-code worktree of the project.
    #[arg(long)]
    worktree: Option<String>,
    /// JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct CommitArgs {
    /// The commit message.
    #[arg(short = 'm', long = "message", conflicts_with = "draft")]
    message: Option<String>,
    /// Have the small model draft the message from the staged diff, in the
    /// style of the repository's log; your editor opens on it before
    /// anything is written (without a terminal: printed, nothing written).
    #[arg(long)]
    draft: bool,
    #[command(flatten)]
    at: Where,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// Push there (the branch then tracks it when it had no upstream).
    #[arg(long)]
    remote: Option<String>,
    #[command(flatten)]
    at: Where,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    Github,
    Gitlab,
}

impl From<Provider> for ForgeKind {
    fn from(p: Provider) -> Self {
        match p {
            Provider::Github => ForgeKind::Github,
            Provider::Gitlab => ForgeKind::Gitlab,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum PrCommand {
    /// Open a pull request (GitHub) or merge request (GitLab) for the pushed branch.
    Create {
        /// The remote whose repository gets it (default: the branch's push remote, else origin).
        #[arg(long)]
        remote: Option<String>,
        /// The branch to merge into (default: the repository's default branch).
        #[arg(long)]
        base: Option<String>,
        #[arg(long)]
        draft: bool,
        #[arg(long)]
        title: Option<String>,
        #[arg(long, conflicts_with = "generate")]
        body: Option<String>,
        /// Draft the title and body from the commits and the session.
        #[arg(long)]
        generate: bool,
        /// The session whose work it is (for --generate).
        #[arg(long)]
        session: Option<String>,
        /// Which forge (default: the remote's host decides).
        #[arg(long, value_enum)]
        provider: Option<Provider>,
        #[command(flatten)]
        at: Where,
    },
    /// The branch's pull request: state, review decision, checks.
    Status {
        #[arg(long)]
        remote: Option<String>,
        #[arg(long, value_enum)]
        provider: Option<Provider>,
        #[command(flatten)]
        at: Where,
    },
}

fn terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

pub fn commit(args: CommitArgs) -> anyhow::Result<ExitCode> {
    let local = context::local_headless()?;
    let dir = checkout_dir(
        &local,
        args.at.project.as_deref(),
        args.at.worktree.as_deref(),
    )?;
    let (message, edit) = match (args.message, args.draft) {
        (Some(m), _) => (m, false),
        (None, true) => {
            let d = local.block(local.core.draft_commit_message(&dir))?;
            let text = if d.body.is_empty() {
                d.title.clone()
            } else {
                format!("{}\n\n{}", d.title, d.body)
            };
            if !terminal() {
                // Nothing is written without a person to look at it first.
                if args.at.json {
                    print_json(&d)?;
                } else {
                    println!("{text}");
                }
                return Ok(ExitCode::SUCCESS);
            }
            (text, true)
        }
        (None, false) if terminal() => (String::new(), true),
        (None, false) => {
            anyhow::bail!("no commit message: pass -m MESSAGE, or --draft to have one drafted")
        }
    };
    let c = local.block(local.core.commit(&dir, &message, edit))?;
    if args.at.json {
        print_json(&c)?;
    } else {
        let out = c.output.trim();
        if !out.is_empty() {
            eprintln!("{out}");
        }
        println!(
            "[{} {}] {}",
            c.branch,
            &c.commit[..c.commit.len().min(12)],
            c.summary
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn push(args: PushArgs) -> anyhow::Result<ExitCode> {
    let local = context::local_headless()?;
    let dir = checkout_dir(
        &local,
        args.at.project.as_deref(),
        args.at.worktree.as_deref(),
    )?;
    let interactive = std::io::stdin().is_terminal();
    let quiet = args.at.json;
    let p = local.block(
        local
            .core
            .push(&dir, args.remote, interactive, move |line| {
                if !quiet {
                    eprintln!("{line}");
                }
            }),
    )?;
    if args.at.json {
        print_json(&p)?;
    } else {
        println!(
            "pushed {} to {}{}",
            p.branch,
            p.remote,
            if p.upstream_set {
                format!(" (it now tracks {}/{})", p.remote, p.branch)
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn pr(cmd: PrCommand) -> anyhow::Result<ExitCode> {
    let local = context::local_headless()?;
    match cmd {
        PrCommand::Create {
            remote,
            base,
            draft,
            title,
            body,
            generate,
            session,
            provider,
            at,
        } => {
            let dir = checkout_dir(&local, at.project.as_deref(), at.worktree.as_deref())?;
            let session = match &session {
                Some(s) => Some(super::sessions::resolve(&local, s)?.id),
                None => None,
            };
            let req = mia_core::ship::PrRequest {
                remote,
                base,
                draft,
                title,
                body,
                generate,
                provider: provider.map(Into::into),
                session,
            };
            let pr = local.block(local.core.pr_create(&dir, req))?;
            if at.json {
                print_json(&serde_json::json!({
                    "number": pr.number,
                    "url": pr.url,
                    "state": pr.state,
                    "provider": pr.provider,
                    "title": pr.title,
                    "draft": pr.draft,
                }))?;
            } else {
                println!("{}", pr.url);
            }
        }
        PrCommand::Status {
            remote,
            provider,
            at,
        } => {
            let dir = checkout_dir(&local, at.project.as_deref(), at.worktree.as_deref())?;
            let pr = local.block(local.core.pr_status(&dir, remote, provider.map(Into::into)))?;
            match (pr, at.json) {
                (None, true) => print_json(&serde_json::Value::Null)?,
                (None, false) => {
                    println!("this branch has no pull request (`mia-code pr create` opens one)")
                }
                (Some(pr), true) => print_json(&pr)?,
                (Some(pr), false) => {
                    println!(
                        "#{} {} ({:?}{})",
                        pr.number,
                        pr.title,
                        pr.state,
                        if pr.draft { ", draft" } else { "" }
                    );
                    println!("{}", pr.url);
                    if let Some(d) = pr.review_decision {
                        println!("review: {d:?}");
                    }
                    if let Some(c) = pr.checks {
                        println!(
                            "checks: {:?} ({} passed, {} failed, {} pending of {})",
                            c.state, c.passed, c.failed, c.pending, c.total
                        );
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
