//! `mia-code compact --session ID`: summarise a session's older messages now.

use std::process::ExitCode;

use clap::Args;
use mia_core::{OpResult, RuntimeOptions};
use mia_protocol::Op;

use crate::context;

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// The session (id, unique id prefix or slug).
    #[arg(long)]
    session: String,
    /// Print `{"compacted", "retained", "tokens_before", "tokens_after", "message_id"}`.
    #[arg(long)]
    json: bool,
}

pub fn run(args: CompactArgs) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let mut opts = RuntimeOptions::new(paths);
    opts.interactive = false;
    let local = context::local(opts)?;
    let session = super::sessions::resolve(&local, &args.session)?;
    let result = local.block(async {
        match local
            .core
            .submit(Op::Compact {
                session_id: session.id,
            })
            .await?
        {
            OpResult::Compacted(r) => Ok::<_, anyhow::Error>(r),
            _ => anyhow::bail!("unexpected answer from the runtime"),
        }
    })?;
    if args.json {
        crate::output::print_json(&result)?;
    } else {
        // Spec 019's words.
        println!(
            "Compacted {} messages into summary. {} recent messages retained. (~{} → ~{} tokens; the archived messages stay in `mia-code sessions show {} --all`)",
            result.compacted,
            result.retained,
            result.tokens_before,
            result.tokens_after,
            session.id
        );
    }
    Ok(ExitCode::SUCCESS)
}
