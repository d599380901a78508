//! `mia-code import claude|opencode [--project DIR] [--dry-run]`: translate
//! a Claude Code or OpenCode setup into mia-code's config, printing each
//! change and what could not be translated. Never prompts.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use mia_config::import::{ImportSource, plan_import, write_import};

use crate::context;

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// `.claude/settings.json` (+ `settings.local.json`) into the project's
    /// `.mia-code.json`, `~/.claude/settings.json` into your config.
    Claude(ImportArgs),
    /// `opencode.json` into the project's `.mia-code.json` (its commands
    /// into `.mia-code/commands/`), `~/.config/opencode/opencode.json` into
    /// your config.
    Opencode(ImportArgs),
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Project directory (default: the current directory).
    #[arg(long)]
    project: Option<PathBuf>,
    /// Print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(cmd: ImportCommand) -> anyhow::Result<ExitCode> {
    let (source, args, name) = match cmd {
        ImportCommand::Claude(a) => (ImportSource::Claude, a, "Claude Code"),
        ImportCommand::Opencode(a) => (ImportSource::Opencode, a, "OpenCode"),
    };
    let project = context::project_dir(args.project.as_deref())?;
    let paths = context::paths()?;
    let targets = plan_import(source, &paths, &project);
    if targets.is_empty() {
        println!("No {name} settings found (looked in the project and your home directory).");
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = false;
    for t in &targets {
        println!("{} → {}", t.from.display(), t.to.display());
        for line in &t.imported.translated {
            println!("  + {line}");
        }
        for (path, _) in &t.command_files {
            println!("  + {}", path.display());
        }
        for line in &t.imported.skipped {
            println!("  not translated: {line}");
        }
        if let Some(e) = &t.error {
            failed = true;
            println!("  error: {e}");
        }
    }
    if args.dry_run {
        println!("(dry run: nothing was written)");
        return Ok(ExitCode::SUCCESS);
    }
    let written = write_import(&targets)?;
    for w in &written {
        println!("wrote {}", w.display());
    }
    if written.is_empty() && !failed {
        println!("Nothing to write.");
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
