//! `mia-code cost --session ID`: what a session cost, per agent and model,
//! its subagents included.

use std::process::ExitCode;

use clap::Args;

use crate::context;

#[derive(Debug, Args)]
pub struct CostArgs {
    /// The session (id, unique id prefix or slug).
    #[arg(long)]
    session: String,
    #[arg(long)]
    json: bool,
}

pub fn run(args: CostArgs) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let local = context::local_default(&paths)?;
    let session = super::sessions::resolve(&local, &args.session)?;
    let cost = local.block(local.core.cost(session.id))?;
    if args.json {
        crate::output::print_json(&cost)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<12} {:<40} {:>8} {:>10} {:>10} {:>10} {:>10}",
        "AGENT", "MODEL", "REQUESTS", "INPUT", "OUTPUT", "CACHED", "COST"
    );
    for l in &cost.lines {
        println!(
            "{:<12} {:<40} {:>8} {:>10} {:>10} {:>10} {:>10}",
            l.agent,
            l.model,
            l.requests,
            l.input_tokens,
            l.output_tokens,
            l.cache_read_tokens + l.cache_write_tokens,
            format!("${:.4}", l.cost_usd)
        );
    }
    println!(
        "session ${:.4}; with {} subagent session(s) ${:.4}",
        cost.session.cost_usd,
        cost.subagent_sessions.len(),
        cost.total.cost_usd
    );
    Ok(ExitCode::SUCCESS)
}
