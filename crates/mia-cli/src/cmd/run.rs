//! `mia-code run`: one turn, headless.
//!
//! Exit codes: 0 done, 1 error, 2 bad usage, 3 a permission was denied or the
//! turn was blocked, 130 cancelled (Ctrl-C).

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use mia_core::{OpResult, RuntimeOptions, SessionListQuery};
use mia_protocol::{Event, Op, PermissionAction, PermissionRule, TurnEnd};

use crate::context;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The answer on stdout, tool activity on stderr.
    Text,
    /// One JSON Event per line on stdout.
    Json,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The message to send; `-` reads it from stdin.
    prompt: String,
    /// Never contact a registry for plugins: use installed ones only.
    #[arg(long)]
    offline: bool,
    /// Primary agent (build, plan, or a custom one).
    #[arg(long)]
    agent: Option<String>,
    /// Model as provider/model, e.g. anthropic/claude-sonnet-4-5.
    #[arg(long)]
    model: Option<String>,
    /// Continue this session (id, id prefix or slug).
    #[arg(long, conflicts_with = "continue_last")]
    session: Option<String>,
    /// Continue the most recent session of the project.
    #[arg(long = "continue", short = 'c')]
    continue_last: bool,
    /// Project directory (default: the current directory).
    #[arg(long)]
    project: Option<PathBuf>,
    /// Run in this mia-code worktree of the project, or `new` to make one.
    #[arg(long, value_name = "NAME|new", conflicts_with_all = ["session", "continue_last"])]
    worktree: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Allow a permission without asking: PERMISSION or PERMISSION:PATTERN
    /// (e.g. `bash:npm test *`, `edit:src/**`). Repeatable.
    #[arg(long = "allow", value_parser = parse_allow)]
    allow: Vec<PermissionRule>,
}

fn parse_allow(s: &str) -> Result<PermissionRule, String> {
    let (permission, pattern) = match s.split_once(':') {
        Some((p, pat)) => (
            p.trim(),
            Some(pat.trim().to_string()).filter(|p| !p.is_empty()),
        ),
        None => (s.trim(), None),
    };
    if permission.is_empty() || permission.contains(char::is_whitespace) {
        return Err(format!(
            "`{s}` is not PERMISSION or PERMISSION:PATTERN (e.g. bash:npm test *)"
        ));
    }
    Ok(PermissionRule {
        permission: permission.to_string(),
        pattern,
        action: PermissionAction::Allow,
    })
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let prompt = if args.prompt == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading the prompt from stdin")?;
        s
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    let paths = context::paths()?;
    let project = context::project_dir(args.project.as_deref())?;
    let mut opts = RuntimeOptions::new(paths);
    opts.interactive = false;
    opts.allow = args.allow.clone();
    opts.offline = args.offline;
    // A one-shot turn has no next turn to pick up a plugin installed in
    // the background: wait for installs (each bounded by its timeout).
    opts.wait_for_plugins = true;
    let local = context::local(opts)?;
    // `--worktree`: the session works in that worktree's directory.
    let project = match args.worktree.as_deref() {
        None => project,
        Some("new") => {
            let created = local.block(local.core.worktree_create(
                project,
                None,
                None,
                Default::default(),
            ))?;
            if args.format == Format::Text {
                eprintln!(
                    "worktree {} on {} at {}",
                    created.name, created.branch, created.path
                );
            }
            PathBuf::from(created.path)
        }
        Some(name) => {
            let list = local.block(local.core.worktree_list(project.clone()))?;
            let w = list.into_iter().find(|w| w.name == name).with_context(|| {
                format!("no mia-code worktree named {name:?}; `mia-code worktree list` shows them, `--worktree new` makes one")
            })?;
            PathBuf::from(w.path)
        }
    };
    let existing = match (&args.session, args.continue_last) {
        (Some(reference), _) => Some(super::sessions::resolve(&local, reference)?),
        (None, true) => Some(
            local
                .block(local.core.session_items(SessionListQuery {
                    project: Some(project.display().to_string()),
                    limit: Some(1),
                    ..Default::default()
                }))?
                .into_iter()
                .next()
                .map(|i| i.session)
                .with_context(|| {
                    format!(
                        "there is no session to continue in {}; run without --continue to start one",
                        project.display()
                    )
                })?,
        ),
        (None, false) => None,
    };
    let runtime = local.core.clone();
    local.block(async move {
        let events = runtime.subscribe();
        let session = match existing {
            Some(s) => s,
            None => match runtime
                .submit(Op::CreateSession {
                    directory: project.display().to_string(),
                    title: Some(mia_core::title_from(&prompt)),
                    agent: args.agent.clone(),
                    model: args.model.clone(),
                })
                .await?
            {
                OpResult::Session(s) => s,
                _ => bail!("the session was not created"),
            },
        };
        if args.format == Format::Text {
            eprintln!("session {} ({})", session.slug, session.id);
        }
        runtime
            .submit(Op::UserMessage {
                session_id: session.id,
                text: prompt,
                agent: args.agent.clone(),
                model: args.model.clone(),
            })
            .await?;
        let code = follow(&runtime, events, session.id, args.format).await;
        runtime.end_session(session.id, "other").await;
        code
    })
}

/// Print a turn's Events (subscribed before it started) until it ends; the
/// exit code says how it ended. Ctrl-C cancels the turn.
pub(crate) async fn follow(
    runtime: &mia_core::Runtime,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    session_id: mia_protocol::SessionId,
    format: Format,
) -> anyhow::Result<ExitCode> {
    let mut printer = Printer::new(format);
    let mut cancelled_by_user = false;
    let end = loop {
        tokio::select! {
            ev = events.recv() => {
                let ev = match ev {
                    Ok(ev) => ev,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        eprintln!("warning: {n} events were dropped (output too fast)");
                        continue;
                    }
                    Err(_) => bail!("the runtime stopped"),
                };
                if ev.session_id().is_some_and(|id| id != session_id) {
                    continue;
                }
                printer.print(&ev)?;
                if let Event::TurnFinished { end, .. } = ev {
                    break end;
                }
            }
            _ = tokio::signal::ctrl_c(), if !cancelled_by_user => {
                cancelled_by_user = true;
                runtime.submit(Op::Cancel { session_id }).await?;
            }
        }
    };
    // share.mode "auto": the turn's sync finishes before the process ends.
    runtime.settle_background().await;
    Ok(match end {
        TurnEnd::Cancelled => ExitCode::from(130),
        TurnEnd::Error => ExitCode::from(1),
        TurnEnd::Blocked => ExitCode::from(3),
        _ if printer.denied => ExitCode::from(3),
        _ => ExitCode::SUCCESS,
    })
}

struct Printer {
    format: Format,
    denied: bool,
    text_open: bool,
}

impl Printer {
    fn new(format: Format) -> Self {
        Self {
            format,
            denied: false,
            text_open: false,
        }
    }

    fn print(&mut self, ev: &Event) -> anyhow::Result<()> {
        if let Event::PermissionResolved { decision, .. } = ev
            && *decision == mia_protocol::Resolution::Deny
        {
            self.denied = true;
        }
        if self.format == Format::Json {
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, ev)?;
            writeln!(out)?;
            return Ok(out.flush()?);
        }
        let mut out = std::io::stdout().lock();
        match ev {
            Event::TextDelta { text, .. } => {
                write!(out, "{text}")?;
                out.flush()?;
                self.text_open = !text.ends_with('\n');
            }
            Event::ToolCall { tool, input, .. } => {
                self.close_text(&mut out)?;
                eprintln!("▸ {tool} {}", short(&input.to_string(), 120));
            }
            Event::ToolResult {
                tool,
                output,
                is_error: true,
                ..
            } => {
                eprintln!(
                    "✗ {tool}: {}",
                    short(output.lines().next().unwrap_or(""), 200)
                );
            }
            Event::PermissionResolved {
                decision, reason, ..
            } if *decision == mia_protocol::Resolution::Deny => {
                eprintln!("denied: {reason}");
            }
            Event::Retrying {
                attempt,
                delay_ms,
                reason,
                ..
            } => {
                eprintln!("retrying (attempt {attempt}, in {delay_ms} ms): {reason}");
            }
            Event::Error { message, .. } => {
                self.close_text(&mut out)?;
                eprintln!("error: {message}");
            }
            Event::Notice { message, .. } => {
                self.close_text(&mut out)?;
                eprintln!("{message}");
            }
            Event::HookRan { run, .. } => {
                self.close_text(&mut out)?;
                let exit = run
                    .exit_code
                    .map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}"));
                let what = match (&run.outcome, run.message.is_empty()) {
                    (Some(o), true) => format!(": {o}"),
                    (Some(o), false) => format!(": {o}: {}", short(&run.message, 200)),
                    (None, _) => String::new(),
                };
                eprintln!(
                    "hook {} `{}` ({exit}, {} ms){what}",
                    run.event,
                    short(&run.command, 80),
                    run.duration_ms
                );
            }
            Event::TurnFinished {
                end,
                steps,
                usage,
                cost_usd,
                ..
            } => {
                self.close_text(&mut out)?;
                eprintln!(
                    "({:?}: {steps} steps, {} in / {} out tokens, {})",
                    end,
                    usage.input,
                    usage.output,
                    mia_core::format_cost(*cost_usd)
                );
            }
            _ => {}
        }
        Ok(())
    }

    fn close_text(&mut self, out: &mut impl std::io::Write) -> anyhow::Result<()> {
        if self.text_open {
            writeln!(out)?;
            self.text_open = false;
        }
        Ok(())
    }
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}
