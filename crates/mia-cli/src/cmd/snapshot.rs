//! `mia-code snapshot capture|diff|restore|gc` and the session-level
//! `snapshots` and `diff` commands (issue 7; `undo`/`redo`/`revert` go
//! through the runtime in `history.rs`). A thin adapter over the runtime's
//! snapshot queries.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand, ValueEnum};
use mia_core::project_snapshots::{RevertOutcome, diff_summary, render_terminal};
use mia_core::project_snapshots::{StepKind, StepRecord};
use mia_protocol::{DiffScope, FileDiff, Session};
use serde::Serialize;

use crate::context;
use crate::output::{datetime, print_json};

/// Exit code when a revert/restore was blocked by files changed outside
/// mia-code (nothing was changed; re-run with --force).
const EXIT_CONFLICT: u8 = 3;

/// The snapshot commands, flattened into the top-level command list.
#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Capture, diff and restore snapshots of a project (its store is under $MIA_CODE_HOME/snapshots).
    #[command(subcommand)]
    Snapshot(SnapshotCommand),
    /// List a session's snapshots (one per file-modifying step).
    Snapshots(SessionsArgs),
    /// Show what a session (or one of its messages) changed.
    Diff(SessionDiffArgs),
}

#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// Snapshot the project now.
    Capture {
        #[arg(long)]
        project: Option<PathBuf>,
        /// Record the snapshot in this session's index.
        #[arg(long)]
        session: Option<String>,
        /// Only refresh these paths on top of the latest snapshot.
        #[arg(long, num_args = 1..)]
        paths: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Diff snapshot A against B or the working tree.
    Diff {
        a: String,
        b: Option<String>,
        /// Compare with the working tree (the default without B).
        #[arg(long, conflicts_with = "b")]
        worktree: bool,
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Restore files from a snapshot (every differing file without --paths).
    Restore {
        hash: String,
        #[arg(long, num_args = 1..)]
        paths: Vec<PathBuf>,
        #[arg(long)]
        project: Option<PathBuf>,
        /// Overwrite files whose current content cannot be captured (a backup is kept).
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Prune snapshots beyond retention (last N per session + baselines) and reclaim space.
    Gc {
        #[arg(long)]
        project: Option<PathBuf>,
        /// Snapshots kept per session (default 100).
        #[arg(long)]
        keep: Option<usize>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Patch,
    Stat,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[arg(long)]
    session: String,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct SessionDiffArgs {
    #[arg(long)]
    session: String,
    /// Only what this message changed (before its first step → after its last).
    #[arg(long)]
    message: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(cmd: Commands) -> anyhow::Result<ExitCode> {
    match cmd {
        Commands::Snapshot(c) => snapshot(c),
        Commands::Snapshots(a) => list(a),
        Commands::Diff(a) => session_diff(a),
    }
}

/// The `snapshot capture --json` shape (stable: scripts rely on it).
#[derive(Serialize)]
struct CaptureJson<'a> {
    hash: &'a str,
    files: u64,
    excluded: &'a [mia_core::project_snapshots::ExcludedFile],
    ms: u64,
}

fn snapshot(cmd: SnapshotCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        SnapshotCommand::Capture {
            project,
            session,
            paths,
            json,
        } => {
            let local = context::local_default(&context::paths()?)?;
            let session = match &session {
                Some(s) => Some(crate::cmd::sessions::resolve(&local, s)?),
                None => None,
            };
            let project = match (&project, &session) {
                (None, Some(s)) => Some(PathBuf::from(&s.directory)),
                _ => project,
            };
            let dir = context::project_dir(project.as_deref())?;
            let snap = local.block(local.core.capture_project(
                &dir,
                session.as_ref().map(|s| s.id),
                &paths,
            ))?;
            if json {
                print_json(&CaptureJson {
                    hash: &snap.hash,
                    files: snap.files,
                    excluded: &snap.excluded,
                    ms: snap.ms,
                })?;
            } else {
                println!("{}", snap.hash);
                eprintln!(
                    "{} files in {} ms; {} excluded",
                    snap.files, snap.ms, snap.excluded_total
                );
                for e in &snap.excluded {
                    eprintln!("  excluded {} ({})", e.path, e.reason.as_str());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        SnapshotCommand::Diff {
            a,
            b,
            worktree: _,
            project,
            format,
        } => {
            let dir = context::project_dir(project.as_deref())?;
            let local = context::local_default(&context::paths()?)?;
            let diff = local.core.diff_snapshots(&dir, &a, b.as_deref())?;
            print_diffs(&diff.files, &diff.patch, format)?;
            Ok(ExitCode::SUCCESS)
        }
        SnapshotCommand::Restore {
            hash,
            paths,
            project,
            force,
            json,
        } => {
            let dir = context::project_dir(project.as_deref())?;
            let local = context::local_default(&context::paths()?)?;
            let outcome = local.core.restore_snapshot(&dir, &hash, &paths, force)?;
            report(&outcome, json)
        }
        SnapshotCommand::Gc {
            project,
            keep,
            json,
        } => gc(project, keep, json),
    }
}

fn print_diffs(diffs: &[FileDiff], patch: &str, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Json => print_json(&diffs)?,
        // Binary files as `GIT binary patch` sections: `git apply` takes it.
        Format::Patch => print!("{patch}"),
        Format::Stat => {
            for d in diffs {
                println!(
                    "{}  {}  +{} -{}",
                    d.status.as_str(),
                    d.file,
                    d.additions,
                    d.deletions
                );
            }
            println!("{}", diff_summary(diffs));
        }
        Format::Text => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            print!("{}", render_terminal(diffs, color));
        }
    }
    Ok(())
}

fn report(outcome: &RevertOutcome, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        print_json(outcome)?;
    } else if outcome.applied {
        println!("{}", outcome.message);
    } else {
        eprintln!("{}", outcome.message);
    }
    Ok(if outcome.applied {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CONFLICT)
    })
}

/// A session, the runtime over its store, and its step records.
struct SessionCtx {
    local: context::Local,
    session: Session,
    records: Vec<StepRecord>,
}

fn session_ctx(reference: &str) -> anyhow::Result<SessionCtx> {
    let local = context::local_default(&context::paths()?)?;
    let session = crate::cmd::sessions::resolve(&local, reference)?;
    let records = local.block(local.core.step_records(session.id))?;
    Ok(SessionCtx {
        local,
        session,
        records,
    })
}

#[derive(Serialize)]
struct ListedStep<'a> {
    index: usize,
    #[serde(flatten)]
    record: &'a StepRecord,
}

fn action_word(kind: mia_protocol::FileChangeKind) -> &'static str {
    match kind {
        mia_protocol::FileChangeKind::Added => "create",
        mia_protocol::FileChangeKind::Modified => "modify",
        mia_protocol::FileChangeKind::Deleted => "delete",
    }
}

fn list(args: SessionsArgs) -> anyhow::Result<ExitCode> {
    let ctx = session_ctx(&args.session)?;
    let unavailable: Vec<_> = ctx
        .local
        .block(ctx.local.core.snapshot_rows(ctx.session.id))?
        .into_iter()
        .filter(|s| s.snapshot.unavailable.is_some())
        .collect();
    if args.json {
        let steps: Vec<ListedStep<'_>> = ctx
            .records
            .iter()
            .enumerate()
            .map(|(i, record)| ListedStep {
                index: i + 1,
                record,
            })
            .collect();
        print_json(&serde_json::json!({
            "session": ctx.session.id.to_string(),
            "steps": steps,
            "unavailable": unavailable,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("Snapshots:");
    if ctx.records.is_empty() {
        println!("  (none: this session has not changed any file)");
    }
    for (i, r) in ctx.records.iter().enumerate() {
        let files = if r.changes.is_empty() {
            "(no changes)".to_string()
        } else {
            r.changes
                .iter()
                .map(|c| format!("{} ({})", c.path, action_word(c.kind)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let label = match &r.kind {
            StepKind::Tool => String::new(),
            StepKind::Revert { .. } => "[revert] ".into(),
            StepKind::Redo { .. } => "[redo] ".into(),
        };
        println!(
            "  #{:<3} {}  {}  {}{}",
            i + 1,
            r.message_id,
            datetime(r.created_at),
            label,
            files
        );
    }
    for s in unavailable {
        println!(
            "  --   {}  {}  undo unavailable: {}",
            s.snapshot.message_id.as_deref().unwrap_or("-"),
            datetime(s.created_at),
            s.snapshot.unavailable.as_deref().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn session_diff(args: SessionDiffArgs) -> anyhow::Result<ExitCode> {
    let ctx = session_ctx(&args.session)?;
    let scope = match &args.message {
        Some(m) => {
            if !ctx
                .records
                .iter()
                .any(|r| &r.message_id == m && r.kind == StepKind::Tool)
            {
                bail!("message {m} changed no files in session {}", ctx.session.id);
            }
            DiffScope::Message {
                message_id: m.clone(),
            }
        }
        None => {
            let has_baseline = ctx
                .local
                .block(ctx.local.core.snapshot_rows(ctx.session.id))?
                .iter()
                .any(|s| {
                    s.snapshot.kind == mia_core::SnapshotKind::Baseline
                        && s.snapshot.unavailable.is_none()
                });
            if !has_baseline && ctx.records.is_empty() {
                bail!(
                    "session {} has no snapshot yet: nothing to diff",
                    ctx.session.id
                );
            }
            DiffScope::Session
        }
    };
    let view = ctx
        .local
        .block(ctx.local.core.diff(ctx.session.id, scope))?;
    print_diffs(&view.files, &view.patch, args.format)?;
    Ok(ExitCode::SUCCESS)
}

/// `mia-code snapshot gc`: apply retention from the session index, drop
/// the refs of pruned snapshots and let git reclaim the space.
pub fn gc(project: Option<PathBuf>, keep: Option<usize>, json: bool) -> anyhow::Result<ExitCode> {
    let dir = context::project_dir(project.as_deref())?;
    let paths = context::paths()?;
    let keep = keep.unwrap_or(mia_core::store_config(&paths).keep_per_session);
    let local = context::local_default(&paths)?;
    // `sessions.retentionDays` first: what it deletes frees snapshots too.
    let sessions = local.block(local.core.prune_sessions())?;
    let mia_core::GcSummary {
        pruned,
        kept,
        report,
    } = local.block(local.core.snapshot_gc(dir, keep))?;
    let database = local.block(local.core.compact_store())?;
    if json {
        print_json(&serde_json::json!({
            "pruned_snapshots": pruned,
            "kept_snapshots": kept,
            "gc": report,
            "sessions": {
                "retention_days": sessions.retention_days,
                "deleted": sessions.deleted.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "skipped": sessions.skipped.iter().map(|(s, why)| serde_json::json!({"id": s.to_string(), "why": why})).collect::<Vec<_>>(),
            },
            "database": database,
        }))?;
    } else {
        if let Some(days) = sessions.retention_days {
            println!(
                "deleted {} session(s) untouched for {days} days (sessions.retentionDays){}",
                sessions.deleted.len(),
                if sessions.skipped.is_empty() {
                    String::new()
                } else {
                    format!("; {} in use kept for now", sessions.skipped.len())
                }
            );
        }
        println!(
            "session database: {} -> {} bytes{}",
            database.bytes_before,
            database.bytes_after,
            if database.vacuumed {
                " (free space given back)"
            } else {
                ""
            }
        );
        println!(
            "pruned {pruned} snapshot(s), kept {}; removed {} ref(s); {} -> {} bytes in {} ms{}",
            kept,
            report.refs_removed,
            report.bytes_before,
            report.bytes_after,
            report.ms,
            report
                .skipped
                .as_deref()
                .map(|s| format!(" (git gc skipped: {s})"))
                .unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}
