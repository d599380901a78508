//! `mia-code undo|redo|revert --session ID`: point-and-click undo from the shell.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use mia_core::{OpResult, RuntimeOptions};
use mia_protocol::{MessageId, Op, RevertSummary};

use crate::context;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The session (id, unique id prefix or slug).
    #[arg(long)]
    session: String,
    /// Overwrite files changed outside mia-code since the step (their current
    /// content is kept as a backup next to them).
    #[arg(long)]
    force: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct RevertArgs {
    #[command(flatten)]
    common: HistoryArgs,
    /// Restore the state before this message's first change.
    #[arg(long)]
    message: String,
}

pub enum Which {
    Undo(HistoryArgs),
    Redo(HistoryArgs),
    Revert(RevertArgs),
}

pub fn run(which: Which) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let mut opts = RuntimeOptions::new(paths);
    opts.interactive = false;
    let local = context::local(opts)?;
    let common = match &which {
        Which::Undo(a) | Which::Redo(a) => a,
        Which::Revert(r) => &r.common,
    };
    let session = super::sessions::resolve(&local, &common.session)?;
    let (force, json) = (common.force, common.json);
    let op = match &which {
        Which::Undo(_) => Op::Undo {
            session_id: session.id,
            step: None,
            force,
        },
        Which::Redo(_) => Op::Redo {
            session_id: session.id,
            force,
        },
        Which::Revert(r) => Op::Revert {
            session_id: session.id,
            message_id: r.message.parse::<MessageId>().with_context(|| {
                format!(
                    "--message {}: use a message id from `mia-code sessions show`",
                    r.message
                )
            })?,
            force,
        },
    };
    let summary: RevertSummary = local.block(async {
        match local.core.submit(op).await? {
            OpResult::Reverted(s) => Ok::<_, anyhow::Error>(s),
            _ => anyhow::bail!("unexpected answer from the runtime"),
        }
    })?;
    if json {
        crate::output::print_json(&summary)?;
    } else if summary.applied {
        print!("{}", summary.message);
        if !summary.message.ends_with('\n') {
            println!();
        }
    } else {
        eprintln!("Nothing was changed: these files changed outside mia-code since the step:");
        for c in &summary.conflicts {
            eprintln!("  - {}: {}", c.path, c.reason);
        }
        eprintln!(
            "Run again with --force to overwrite them (their current content is kept as a backup)."
        );
    }
    Ok(if summary.applied {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
