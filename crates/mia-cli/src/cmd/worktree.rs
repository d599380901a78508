//! `mia-code worktree`: experiment worktrees and the comparison of attempts.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use mia_protocol::BetweenStatus;

use crate::context;
use crate::output::print_json;

#[derive(Debug, Args)]
pub struct Common {
    /// The project (any directory of the repository; default: the current one).
    #[arg(long, global = true)]
    project: Option<PathBuf>,
    /// JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// Make a worktree on a new `mia-code/<name>` branch (the main tree is never touched).
    Create {
        /// Its name (lowercase words with hyphens); default: a random adjective-noun.
        #[arg(long)]
        name: Option<String>,
        /// Start from this ref (branch, tag, commit), or `default` for the
        /// remote's default branch; default: the current HEAD.
        #[arg(long)]
        base: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// The mia-code worktrees: branch, base, status, size, sessions.
    List {
        #[command(flatten)]
        common: Common,
    },
    /// Remove a worktree and its branch (refused when work would be lost,
    /// unless --force, which keeps a copy in the trash first).
    Remove {
        name: String,
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Put a worktree back to its base (its changes and commits are dropped;
    /// a copy goes to the trash first).
    Reset {
        name: String,
        #[command(flatten)]
        common: Common,
    },
    /// Compare two attempts (worktree names, or `main`) against their common base.
    Compare {
        a: String,
        b: String,
        /// Run `worktree.checkCommand` in both first.
        #[arg(long)]
        check: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Copy what one attempt changed at a path into another (or `main`):
    /// never over the target's own version unless --force (a copy goes to the trash).
    Take {
        from: String,
        path: String,
        #[arg(long, default_value = "main")]
        into: String,
        /// Only this hunk of what FROM changed at PATH (an id from
        /// `worktree compare --json`, FROM against the base).
        #[arg(long)]
        hunk: Option<String>,
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        common: Common,
    },
    /// What forced operations and resets kept; `trash restore ID` brings one back.
    Trash {
        #[command(subcommand)]
        action: Option<TrashAction>,
        #[command(flatten)]
        common: Common,
    },
    /// Hand the winner over: merge its branch into its base branch, or keep the branch.
    Promote {
        name: String,
        /// Merge into the base branch (the default).
        #[arg(long, conflicts_with = "keep_branch")]
        merge: bool,
        /// Commit its changes on its branch and keep it (for a pull request).
        #[arg(long)]
        keep_branch: bool,
        /// Merge even over ignored files of the main checkout (a copy goes to the trash).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Debug, Subcommand)]
pub enum TrashAction {
    /// Bring an entry back: its files where they were (or --into DIR),
    /// never over a file that differs; its commits as the branch
    /// `mia-code-restored/<id>`.
    Restore {
        id: String,
        #[arg(long)]
        into: Option<PathBuf>,
    },
}

fn print_trash(t: &mia_protocol::TrashView) {
    println!(
        "{}  {} of {}, {}: {} file(s){}{}",
        t.id,
        t.operation,
        t.worktree,
        age(t.created_at),
        t.files.len(),
        if t.refs.is_empty() {
            String::new()
        } else {
            format!(", {} commit ref(s)", t.refs.len())
        },
        if t.submodule_commits.is_empty() {
            String::new()
        } else {
            format!(", {} submodule commit(s)", t.submodule_commits.len())
        }
    );
    for f in t.files.iter().take(20) {
        println!("    {f}");
    }
    if t.files.len() > 20 {
        println!("    … and {} more", t.files.len() - 20);
    }
}

fn age(ms: i64) -> String {
    let secs = (mia_protocol::now_ms() - ms).max(0) / 1000;
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / 1024.0 / 1024.0),
    }
}

pub fn run(cmd: WorktreeCommand) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let local = context::local_default(&paths)?;
    let core = local.core.clone();
    match cmd {
        WorktreeCommand::Create { name, base, common } => {
            let dir = context::project_dir(common.project.as_deref())?;
            let json = common.json;
            let mut events = core.subscribe();
            // Start scripts' lines as they come (stderr, so --json stays clean).
            let printer = local.rt.spawn(async move {
                while let Ok(e) = events.recv().await {
                    if let mia_protocol::Event::WorktreeLog { line, command, .. } = e {
                        eprintln!("[{command}] {line}");
                    }
                }
            });
            let created = local.block(core.worktree_create(dir, name, base, Default::default()));
            printer.abort();
            let created = created?;
            if json {
                print_json(&created)?;
            } else {
                println!(
                    "created {} on {} at {}",
                    created.name, created.branch, created.path
                );
                println!("base {}", created.base);
                if !created.included.is_empty() {
                    println!("copied (.worktreeinclude): {}", created.included.join(", "));
                }
                for s in &created.scripts {
                    match s.exit_code {
                        Some(0) => println!("start script ok: {}", s.command),
                        Some(c) => println!(
                            "start script failed (exit {c}): {} — the worktree is kept",
                            s.command
                        ),
                        None => {
                            println!("start script stopped: {} — the worktree is kept", s.command)
                        }
                    }
                }
            }
            let failed = created.scripts.iter().any(|s| s.exit_code != Some(0));
            Ok(if failed {
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            })
        }
        WorktreeCommand::List { common } => {
            let dir = context::project_dir(common.project.as_deref())?;
            let list = local.block(core.worktree_list(dir))?;
            if common.json {
                print_json(&list)?;
            } else if list.is_empty() {
                println!("No mia-code worktrees (`mia-code worktree create` makes one).");
            } else {
                for w in &list {
                    let state = match w.state {
                        mia_protocol::WorktreeState::Missing => {
                            "missing (moved or deleted by hand)".into()
                        }
                        mia_protocol::WorktreeState::BranchChanged => {
                            format!("on {} (made on {})", w.branch, w.recorded_branch)
                        }
                        mia_protocol::WorktreeState::Ok if !w.dirty.is_empty() => {
                            format!("dirty ({} changed)", w.dirty.len())
                        }
                        mia_protocol::WorktreeState::Ok if w.ahead > 0 => {
                            format!("{} commit(s) not merged", w.ahead)
                        }
                        mia_protocol::WorktreeState::Ok if !w.merged => "work to keep".into(),
                        mia_protocol::WorktreeState::Ok => "clean, merged".into(),
                    };
                    println!(
                        "{:<22} {:<32} {:>4} {:>9}  {}  base {}{}",
                        w.name,
                        w.branch,
                        age(w.created_at),
                        size(w.size_bytes),
                        state,
                        w.base_ref
                            .clone()
                            .unwrap_or_else(|| w.base.chars().take(10).collect()),
                        if w.sessions.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "  sessions: {}",
                                w.sessions
                                    .iter()
                                    .map(|s| s.title.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        }
                    );
                }
                let (done, rest): (Vec<_>, Vec<_>) = list.iter().partition(|w| w.merged);
                if !done.is_empty() {
                    println!(
                        "\nnothing to lose (merged and clean): {} — `mia-code worktree remove NAME`",
                        done.iter()
                            .map(|w| w.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
                for w in &rest {
                    if let Some(what) = &w.would_lose {
                        println!("{}: removing it would lose {what}", w.name);
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        WorktreeCommand::Remove {
            name,
            force,
            common,
        } => {
            let dir = context::project_dir(common.project.as_deref())?;
            let removed = local.block(core.worktree_remove(dir, name, force))?;
            if common.json {
                print_json(&removed)?;
            } else {
                println!(
                    "removed {}{}",
                    removed.name,
                    if removed.recorded_branch.is_empty() {
                        String::new()
                    } else {
                        format!(" and its branch {}", removed.recorded_branch)
                    }
                );
                if let Some(t) = &removed.trash {
                    println!(
                        "kept in the trash as {} (`mia-code worktree trash restore {}`)",
                        t.id, t.id
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        WorktreeCommand::Reset { name, common } => {
            let dir = context::project_dir(common.project.as_deref())?;
            let trash = local.block(core.worktree_reset(dir, name.clone()))?;
            if common.json {
                print_json(&serde_json::json!({ "trash": trash }))?;
            } else {
                println!("{name} is back at its base");
                if let Some(t) = &trash {
                    println!(
                        "what it dropped is in the trash as {} (`mia-code worktree trash restore {}`)",
                        t.id, t.id
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        WorktreeCommand::Trash { action, common } => {
            let dir = context::project_dir(common.project.as_deref())?;
            match action {
                None => {
                    let list = local.block(core.worktree_trash(dir))?;
                    if common.json {
                        print_json(&list)?;
                    } else if list.is_empty() {
                        println!("the trash is empty");
                    } else {
                        for t in &list {
                            print_trash(t);
                        }
                    }
                }
                Some(TrashAction::Restore { id, into }) => {
                    let into = into.map(|p| if p.is_absolute() { p } else { dir.join(p) });
                    let (t, to) = local.block(core.worktree_trash_restore(dir, id, into))?;
                    if common.json {
                        print_json(
                            &serde_json::json!({ "trash": t, "into": to.display().to_string() }),
                        )?;
                    } else {
                        println!("restored {} file(s) into {}", t.files.len(), to.display());
                        if !t.refs.is_empty() {
                            println!("its commits are on the branch mia-code-restored/{}", t.id);
                        }
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        WorktreeCommand::Compare {
            a,
            b,
            check,
            common,
        } => {
            let dir = context::project_dir(common.project.as_deref())?;
            let cmp = local.block(core.worktree_compare(
                dir,
                a,
                b,
                mia_core::worktrees::CompareOptions {
                    check,
                    hunks: common.json,
                },
            ))?;
            if common.json {
                print_json(&cmp)?;
                return Ok(ExitCode::SUCCESS);
            }
            println!("base {}", cmp.base);
            for x in [&cmp.a, &cmp.b] {
                println!(
                    "{}: {} file(s), +{} -{}; {} step(s), {} tokens{}{}",
                    x.name,
                    x.stats.files,
                    x.stats.additions,
                    x.stats.deletions,
                    x.usage.steps,
                    x.usage.input_tokens + x.usage.output_tokens,
                    x.usage
                        .cost
                        .map(|c| format!(", ${c:.4}"))
                        .unwrap_or_default(),
                    x.check
                        .as_ref()
                        .map(|c| format!(
                            "; check `{}`: {}",
                            c.command,
                            match c.exit_code {
                                Some(0) => "passed".to_string(),
                                Some(n) => format!("failed (exit {n})"),
                                None => "stopped".to_string(),
                            }
                        ))
                        .unwrap_or_default()
                );
            }
            for x in &cmp.between {
                let what = match x.status {
                    BetweenStatus::Same => "same in both".to_string(),
                    BetweenStatus::OnlyA => format!("only in {}", cmp.a.name),
                    BetweenStatus::OnlyB => format!("only in {}", cmp.b.name),
                    BetweenStatus::Differ => "both changed, differently".to_string(),
                };
                println!("  {:<50} {what}", x.path);
            }
            Ok(ExitCode::SUCCESS)
        }
        WorktreeCommand::Take {
            from,
            path,
            into,
            hunk,
            force,
            common,
        } => {
            let dir = context::project_dir(common.project.as_deref())?;
            let trash = local.block(core.worktree_take(
                dir,
                from.clone(),
                path.clone(),
                into.clone(),
                hunk.clone(),
                force,
            ))?;
            if common.json {
                print_json(&serde_json::json!({ "trash": trash, "hunk": hunk }))?;
            } else if let Some(h) = &hunk {
                println!("{path}: {into} now has {from}'s hunk {h}");
            } else {
                println!("{path}: {into} now has {from}'s version");
                if let Some(t) = &trash {
                    println!("{into}'s own version is in the trash as {}", t.id);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        WorktreeCommand::Promote {
            name,
            merge: _,
            keep_branch,
            force,
            common,
        } => {
            let dir = context::project_dir(common.project.as_deref())?;
            let p = local.block(core.worktree_promote(dir, name, keep_branch, force))?;
            if common.json {
                print_json(&p)?;
            } else {
                match (&p.merged_into, &p.commit) {
                    (Some(base), Some(c)) => println!(
                        "merged {} into {base} ({}, now {c}){}",
                        p.branch,
                        if p.fast_forward {
                            "fast-forward"
                        } else {
                            "merge commit"
                        },
                        if p.removed {
                            "; the worktree was removed"
                        } else {
                            ""
                        }
                    ),
                    _ => println!("{} is ready for a pull request at {}", p.branch, p.head),
                }
                if let Some(c) = &p.committed {
                    println!(
                        "its uncommitted changes were committed on {} as {c}",
                        p.branch
                    );
                }
                if let Some(why) = &p.kept {
                    println!("the worktree was kept: {why}");
                }
                if let Some(t) = &p.trash {
                    println!(
                        "ignored files the merge overwrote are in the trash as {}",
                        t.id
                    );
                }
                if !p.others.is_empty() {
                    println!(
                        "other attempts: {} — `mia-code worktree remove NAME` when you are done with them",
                        p.others.join(", ")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
