//! `mia-code acp`: an Agent Client Protocol agent on stdin/stdout for
//! editors (Zed, JetBrains IDEs, Neovim; docs/editors.md). Nothing but the
//! protocol is written to stdout; logs go to the log file.

use std::process::ExitCode;

use crate::context;

pub fn run() -> anyhow::Result<ExitCode> {
    let mut opts = mia_core::RuntimeOptions::new(context::paths()?);
    // Asks go to the editor (session/request_permission).
    opts.interactive = true;
    let local = context::local(opts)?;
    let served = local.block(mia_acp::serve_stdio(local.core.clone()));
    // Hooks and share syncs still running finish before the process ends.
    local.block(local.core.settle_background());
    served?;
    Ok(ExitCode::SUCCESS)
}
