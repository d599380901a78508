//! `mia-code`: the headless front end of the mia-code runtime.
//!
//! A thin adapter: parse arguments, call the library crates, print for people
//! (default) or for scripts (`--json`). Errors go to stderr with exit code 1;
//! bad usage exits 2.

mod cmd;
mod context;
mod logging;
mod output;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// mia-code: an AI coding agent that reads, edits and runs code in your project, safely.
#[derive(Debug, Parser)]
#[command(name = "mia-code", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List, show and draw sessions.
    #[command(subcommand)]
    Sessions(cmd::sessions::SessionsCommand),
    /// Show the effective configuration or its JSON Schema.
    #[command(subcommand)]
    Config(cmd::config::ConfigCommand),
    /// Undo the session's last file-changing step.
    Undo(cmd::history::HistoryArgs),
    /// Redo the session's last undo or revert.
    Redo(cmd::history::HistoryArgs),
    /// Restore the files as they were before a message's first change.
    Revert(cmd::history::RevertArgs),
    /// The agents of the project's configuration.
    #[command(subcommand)]
    Agent(cmd::agent::AgentCommand),
    /// What a session cost, per agent and model, its subagents included.
    Cost(cmd::cost::CostArgs),
    /// Summarise a session's older messages now (they stay in the archive).
    Compact(cmd::compact::CompactArgs),
    /// Run one turn headless: send a message, stream the answer, exit.
    Run(cmd::run::RunArgs),
    /// Serve the runtime over HTTP + SSE (loopback, bearer token) for the browser UI and scripts.
    Serve(cmd::serve::ServeArgs),
    /// Manage stored provider API keys (set reads the key from stdin; keys are never printed).
    #[command(subcommand)]
    Auth(cmd::auth::AuthCommand),
    /// Check, explain and show permission rules; manage approvals and workspace trust.
    #[command(subcommand)]
    Permissions(cmd::permissions::PermissionsCommand),
    /// Check paths, the session database, config and provider keys.
    Doctor(cmd::doctor::DoctorArgs),
    /// Experiment worktrees: create, list, remove, reset, compare attempts, take a file, promote.
    #[command(subcommand)]
    Worktree(cmd::worktree::WorktreeCommand),
    #[command(flatten)]
    Snapshot(cmd::snapshot::Commands),
    /// Publish a session to a share server (redacted; previewed first unless --yes), or export it as HTML.
    Share(cmd::share::ShareArgs),
    /// Revoke a share (by share id or session).
    Unshare(cmd::share::UnshareArgs),
    /// The shares this machine created.
    #[command(subcommand)]
    Shares(cmd::share::SharesCommand),
    /// Plugins of the project: list, update to newer versions, remove.
    #[command(subcommand)]
    Plugin(cmd::plugin::PluginCommand),
    /// MCP servers of the project: state and tools.
    #[command(subcommand)]
    Mcp(cmd::mcp::McpCommand),
    /// Review comments on lines, for the agent: add, list, send (runs the turn), clear.
    #[command(subcommand)]
    Review(cmd::review::ReviewCommand),
    /// Hunks of the checkout: list, stage, unstage, revert (discard; snapshotted first).
    #[command(subcommand)]
    Hunk(cmd::review::HunkCommand),
    /// Commit what is staged (-m MESSAGE, or --draft to have one drafted).
    Commit(cmd::ship::CommitArgs),
    /// Push the branch with your git (to its upstream, or --remote R).
    Push(cmd::ship::PushArgs),
    /// Pull requests (GitHub) and merge requests (GitLab): create, status.
    #[command(subcommand)]
    Pr(cmd::ship::PrCommand),
    /// Be an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains IDEs, Neovim).
    Acp,
    /// Custom slash commands (.mia-code/commands, .claude/commands, .opencode/command, yours).
    #[command(subcommand)]
    Commands(cmd::commands::CommandsCommand),
    /// Bring a Claude Code or OpenCode setup: permissions, hooks, env, agents, MCP, commands.
    #[command(subcommand)]
    Import(cmd::import::ImportCommand),
    /// Print a shell completion script.
    Completions {
        /// bash, zsh, fish, powershell or elvish.
        shell: clap_complete::Shell,
    },
}

/// Exit code when the session is in use by another turn or process.
const EXIT_BUSY: u8 = 4;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _log = logging::init();
    let result = match cli.command {
        Command::Sessions(c) => cmd::sessions::run(c),
        Command::Config(c) => cmd::config::run(c),
        Command::Commands(c) => cmd::commands::run(c),
        Command::Acp => cmd::acp::run(),
        Command::Import(c) => cmd::import::run(c),
        Command::Undo(a) => cmd::history::run(cmd::history::Which::Undo(a)),
        Command::Redo(a) => cmd::history::run(cmd::history::Which::Redo(a)),
        Command::Revert(a) => cmd::history::run(cmd::history::Which::Revert(a)),
        Command::Compact(a) => cmd::compact::run(a),
        Command::Cost(a) => cmd::cost::run(a),
        Command::Agent(c) => cmd::agent::run(c),
        Command::Run(a) => cmd::run::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Auth(c) => cmd::auth::run(c),
        Command::Permissions(c) => cmd::permissions::run(c),
        Command::Doctor(a) => cmd::doctor::run(a),
        Command::Worktree(c) => cmd::worktree::run(c),
        Command::Snapshot(c) => cmd::snapshot::run(c),
        Command::Mcp(c) => cmd::mcp::run(c),
        Command::Plugin(c) => cmd::plugin::run(c),
        Command::Share(a) => cmd::share::share(a),
        Command::Unshare(a) => cmd::share::unshare(a),
        Command::Shares(c) => cmd::share::shares(c),
        Command::Review(c) => cmd::review::review(c),
        Command::Hunk(c) => cmd::review::hunk(c),
        Command::Commit(a) => cmd::ship::commit(a),
        Command::Push(a) => cmd::ship::push(a),
        Command::Pr(c) => cmd::ship::pr(c),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "mia-code",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("error: {err:#}");
            // The session is held by another turn, undo or delete (here or
            // in another process): its own code, so scripts can wait and retry.
            let busy = err.chain().any(|e| {
                matches!(
                    e.downcast_ref::<mia_core::CoreError>(),
                    Some(mia_core::CoreError::Busy { .. })
                )
            });
            ExitCode::from(if busy { EXIT_BUSY } else { 1 })
        }
    }
}
