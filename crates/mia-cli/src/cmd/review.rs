//! `mia-code review add|list|send|clear` (comments on lines for the agent)
//! and `mia-code hunk list|stage|unstage|revert` (hunks of a checkout).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use mia_protocol::{NewReviewComment, Session};

use crate::cmd::run::Format;
use crate::context;
use crate::output::print_json;

#[derive(Debug, Args)]
pub struct SessionArg {
    /// The session (id, id prefix or slug).
    #[arg(long)]
    session: String,
    /// The project the session works in (checked; default: any).
    #[arg(long)]
    project: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Comment on a line (or lines) of a file, for the agent: kept until sent.
    Add {
        #[command(flatten)]
        session: SessionArg,
        /// The file, relative to the session's folder.
        #[arg(long)]
        file: String,
        #[arg(long)]
        line: u32,
        /// The last line of a range.
        #[arg(long)]
        end_line: Option<u32>,
        /// What is wrong, or what to change.
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// The session's review comments (`outdated`: their lines changed since).
    List {
        #[command(flatten)]
        session: SessionArg,
        #[arg(long)]
        json: bool,
    },
    /// Send the comments to the agent as one message and run the turn (as `run`).
    Send {
        #[command(flatten)]
        session: SessionArg,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Delete every review comment of the session.
    Clear {
        #[command(flatten)]
        session: SessionArg,
    },
}

#[derive(Debug, Args)]
pub struct Checkout {
    /// The project or worktree folder (default: the current directory).
    #[arg(long)]
    project: Option<PathBuf>,
    /// JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum HunkCommand {
    /// The work tree's hunks against the index (untracked files included), or --staged.
    List {
        #[arg(long)]
        staged: bool,
        #[command(flatten)]
        at: Checkout,
    },
    /// Stage one hunk (as `git add -p` does).
    Stage {
        id: String,
        #[command(flatten)]
        at: Checkout,
    },
    /// Unstage one staged hunk.
    Unstage {
        id: String,
        #[command(flatten)]
        at: Checkout,
    },
    /// Discard one hunk from the work tree (snapshotted first).
    Revert {
        id: String,
        /// Record it as a step of this session: `mia-code undo` brings it back.
        #[arg(long)]
        session: Option<String>,
        #[command(flatten)]
        at: Checkout,
    },
}

/// The session named, checked to work in `--project` when given.
fn session_of(local: &context::Local, arg: &SessionArg) -> anyhow::Result<Session> {
    let s = super::sessions::resolve(local, &arg.session)?;
    if let Some(p) = &arg.project {
        let project = context::project_dir(Some(p))?;
        let dir = dunce::canonicalize(&s.directory).unwrap_or_else(|_| PathBuf::from(&s.directory));
        if !dir.starts_with(&project) {
            anyhow::bail!(
                "session {} works in {}, not in {}",
                s.slug,
                dir.display(),
                project.display()
            );
        }
    }
    Ok(s)
}

pub fn review(cmd: ReviewCommand) -> anyhow::Result<ExitCode> {
    let local = context::local_headless()?;
    match cmd {
        ReviewCommand::Add {
            session,
            file,
            line,
            end_line,
            text,
            json,
        } => {
            let s = session_of(&local, &session)?;
            let c = local.block(local.core.review_add(
                s.id,
                NewReviewComment {
                    file,
                    line,
                    end_line,
                    text,
                },
            ))?;
            if json {
                print_json(&c)?;
            } else {
                println!(
                    "{} {}:{} {}",
                    c.id,
                    c.file,
                    range(c.line, c.end_line),
                    c.text
                );
            }
        }
        ReviewCommand::List { session, json } => {
            let s = session_of(&local, &session)?;
            let list = local.block(local.core.review_list(s.id))?;
            if json {
                print_json(&list)?;
            } else if list.comments.is_empty() {
                println!("no review comments");
            } else {
                for c in &list.comments {
                    println!(
                        "{} {}:{}{} {}",
                        c.id,
                        c.file,
                        range(c.line, c.end_line),
                        if c.outdated { " (outdated)" } else { "" },
                        c.text
                    );
                }
            }
        }
        ReviewCommand::Send { session, format } => {
            let s = session_of(&local, &session)?;
            let runtime = local.core.clone();
            return local.block(async move {
                let events = runtime.subscribe();
                let text = runtime.review_send(s.id, None, None).await?;
                if format == Format::Text {
                    eprintln!("session {} ({}): sent {}", s.slug, s.id, first_line(&text));
                }
                super::run::follow(&runtime, events, s.id, format).await
            });
        }
        ReviewCommand::Clear { session } => {
            let s = session_of(&local, &session)?;
            let n = local.block(local.core.review_clear(s.id))?;
            println!("{n} review comment(s) deleted");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn range(a: u32, b: u32) -> String {
    if b > a {
        format!("{a}-{b}")
    } else {
        a.to_string()
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

pub fn hunk(cmd: HunkCommand) -> anyhow::Result<ExitCode> {
    let local = context::local_headless()?;
    let core = &local.core;
    match cmd {
        HunkCommand::List { staged, at } => {
            let dir = context::project_dir(at.project.as_deref())?;
            let hunks = local.block(core.hunk_list(&dir, staged))?;
            if at.json {
                print_json(&mia_protocol::HunkList { hunks })?;
            } else if hunks.is_empty() {
                println!("no {} hunks", if staged { "staged" } else { "unstaged" });
            } else {
                for h in &hunks {
                    print_hunk(h);
                }
            }
        }
        HunkCommand::Stage { id, at } => {
            let dir = context::project_dir(at.project.as_deref())?;
            let h = local.block(core.hunk_stage(&dir, &id))?;
            done(&h, "staged", at.json)?;
        }
        HunkCommand::Unstage { id, at } => {
            let dir = context::project_dir(at.project.as_deref())?;
            let h = local.block(core.hunk_unstage(&dir, &id))?;
            done(&h, "unstaged", at.json)?;
        }
        HunkCommand::Revert { id, session, at } => {
            let dir = context::project_dir(at.project.as_deref())?;
            let sid = match &session {
                Some(s) => Some(super::sessions::resolve(&local, s)?.id),
                None => None,
            };
            let r = local.block(core.hunk_revert(&dir, &id, sid))?;
            if at.json {
                print_json(&r)?;
            } else {
                println!("discarded hunk {} of {}", r.hunk.id, r.hunk.file);
                match (&r.session_id, &r.restore_command) {
                    (Some(s), _) => println!(
                        "a step of session {s}: `mia-code undo --session {s}` brings it back"
                    ),
                    (None, Some(cmd)) => println!("to bring it back: {cmd}"),
                    (None, None) => {}
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_hunk(h: &mia_protocol::HunkView) {
    let what = if h.binary {
        " (binary, whole file)"
    } else if h.whole_file {
        " (whole file)"
    } else {
        ""
    };
    println!(
        "{} {} @@ -{},{} +{},{} @@{}{what}",
        h.id,
        h.file,
        h.old_start,
        h.old_lines,
        h.new_start,
        h.new_lines,
        if h.staged { " staged" } else { "" }
    );
    for l in &h.lines {
        println!("    {l}");
    }
}

fn done(h: &mia_protocol::HunkView, what: &str, json: bool) -> anyhow::Result<()> {
    if json {
        print_json(h)?;
    } else {
        println!("{what} hunk {} of {}", h.id, h.file);
    }
    Ok(())
}

/// The directory of `--worktree NAME` (a mia-code worktree of the project),
/// else the project's.
pub(crate) fn checkout_dir(
    local: &context::Local,
    project: Option<&std::path::Path>,
    worktree: Option<&str>,
) -> anyhow::Result<PathBuf> {
    let project = context::project_dir(project)?;
    match worktree {
        None | Some("main") => Ok(project),
        Some(name) => {
            let list = local.block(local.core.worktree_list(project.clone()))?;
            let w = list.into_iter().find(|w| w.name == name).with_context(|| {
                format!("no mia-code worktree named {name:?}; `mia-code worktree list` shows them")
            })?;
            Ok(PathBuf::from(w.path))
        }
    }
}
