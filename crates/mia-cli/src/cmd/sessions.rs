use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use chrono::{Local, NaiveDate, TimeZone};
use clap::{Args, Subcommand};
use mia_core::OpResult;
use mia_core::SessionListQuery;
use mia_protocol::{ForkTreeNode, Message, Op, PartContent, Session, SessionStatus};

use crate::context;
use crate::output::{datetime, plural, print_json};

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, newest first.
    List(ListArgs),
    /// Show one session with its messages.
    Show {
        /// Session id, a unique id prefix (4+ characters) or the slug.
        id: String,
        #[arg(long)]
        json: bool,
        /// Include messages replaced by a compaction summary.
        #[arg(long)]
        all: bool,
    },
    /// Draw the fork hierarchy of a project's sessions.
    Tree {
        /// Project directory (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Fork a session at a message (default: its last): prints the new session's id.
    Fork {
        /// Session id, a unique id prefix (4+ characters) or the slug.
        id: String,
        /// The fork point: a message id of the session (`sessions show` lists them).
        #[arg(long)]
        message: Option<String>,
        /// Also fork the files: the fork works in a new worktree holding the
        /// project as it was at the fork point (needs a git repository).
        #[arg(long)]
        with_files: bool,
        /// Print the new session as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The forks of one session, as a tree.
    Forks {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Make a fork a top-level session (its fork metadata is kept).
    Promote { id: String },
    /// Archive a session (hidden from lists, nothing deleted).
    Archive { id: String },
    /// Delete a session with all its messages.
    Delete {
        id: String,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only sessions of this project directory.
    #[arg(long)]
    project: Option<PathBuf>,
    /// Only sessions created on or after this local date (YYYY-MM-DD).
    #[arg(long, value_parser = parse_date)]
    since: Option<i64>,
    /// Only sessions with this status.
    #[arg(long, value_parser = parse_status)]
    status: Option<SessionStatus>,
    /// Include archived sessions.
    #[arg(long)]
    archived: bool,
    /// At most this many.
    #[arg(long)]
    limit: Option<u32>,
    #[arg(long)]
    json: bool,
}

fn parse_date(s: &str) -> Result<i64, String> {
    let date = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| format!("`{s}` is not a date; use YYYY-MM-DD, e.g. 2025-01-23"))?;
    let midnight = date.and_hms_opt(0, 0, 0).ok_or("invalid date")?;
    Local
        .from_local_datetime(&midnight)
        .earliest()
        .map(|t| t.timestamp_millis())
        .ok_or_else(|| format!("`{s}` has no local midnight"))
}

fn parse_status(s: &str) -> Result<SessionStatus, String> {
    SessionStatus::parse(s)
        .ok_or_else(|| format!("`{s}` is not a status; use idle, busy or compacting"))
}

pub fn run(cmd: SessionsCommand) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let local = context::local_default(&paths)?;
    match cmd {
        SessionsCommand::List(args) => list(&local, args)?,
        SessionsCommand::Show { id, json, all } => show(&local, &id, json, all)?,
        SessionsCommand::Tree { project, json } => tree(&local, project, json)?,
        SessionsCommand::Fork {
            id,
            message,
            with_files,
            json,
        } => fork(&local, &id, message, with_files, json)?,
        SessionsCommand::Forks { id, json } => forks(&local, &id, json)?,
        SessionsCommand::Promote { id } => {
            let s = resolve(&local, &id)?;
            let promoted = local.block(local.core.submit(Op::Promote { session_id: s.id }))?;
            if let OpResult::Session(p) = promoted {
                println!(
                    "promoted {} ({}) to a top-level session",
                    display_title(&p),
                    p.id
                );
            }
        }
        SessionsCommand::Archive { id } => {
            let s = resolve(&local, &id)?;
            local.block(local.core.submit(Op::UpdateSession {
                session_id: s.id,
                title: None,
                archived: Some(true),
            }))?;
            println!("archived {} ({})", s.slug, s.id);
        }
        SessionsCommand::Delete { id, yes } => {
            let s = resolve(&local, &id)?;
            if !yes {
                bail!(
                    "deleting session {} ({}) removes its {} for good; run again with --yes to confirm",
                    s.slug,
                    s.id,
                    plural(
                        local.block(local.core.message_count(s.id))?,
                        "message",
                        "messages"
                    )
                );
            }
            // Claims the session: refused while it runs here or elsewhere.
            local.block(local.core.submit(Op::DeleteSession { session_id: s.id }))?;
            println!("deleted {} ({})", s.slug, s.id);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Find a session by full id, unique id prefix (4+ characters) or slug.
pub fn resolve(local: &context::Local, reference: &str) -> anyhow::Result<Session> {
    Ok(local.block(local.core.resolve_session(reference))?)
}

fn list(local: &context::Local, args: ListArgs) -> anyhow::Result<()> {
    let project = args
        .project
        .as_deref()
        .map(|p| context::project_dir(Some(p)))
        .transpose()?;
    let items = local.block(local.core.session_items(SessionListQuery {
        project: project.as_ref().map(|p| p.display().to_string()),
        since: args.since,
        status: args.status,
        archived: args.archived,
        limit: args.limit,
    }))?;
    if args.json {
        return print_json(&items);
    }
    if items.is_empty() {
        println!("No sessions.");
        return Ok(());
    }
    println!(
        "{:<36}  {:<16}  {:>5}  {:<10}  TITLE",
        "ID", "UPDATED", "MSGS", "STATUS"
    );
    for item in &items {
        let s = &item.session;
        let mut title = display_title(s);
        if s.archived_at.is_some() {
            title.push_str(" (archived)");
        }
        println!(
            "{:<36}  {:<16}  {:>5}  {:<10}  {title}",
            s.id.to_string(),
            datetime(s.updated_at),
            item.message_count,
            s.status.as_str(),
        );
        if project.is_none() {
            println!("{:<36}  {}", "", s.directory);
        }
    }
    Ok(())
}

fn display_title(s: &Session) -> String {
    if s.title.trim().is_empty() {
        s.slug.clone()
    } else {
        s.title.clone()
    }
}

fn show(local: &context::Local, reference: &str, json: bool, all: bool) -> anyhow::Result<()> {
    let session = resolve(local, reference)?;
    let messages = local.block(local.core.session_messages(session.id, all))?;
    if json {
        #[derive(serde::Serialize)]
        struct Shown<'a> {
            session: &'a Session,
            messages: &'a [Message],
        }
        return print_json(&Shown {
            session: &session,
            messages: &messages,
        });
    }
    println!("{}  ({})", display_title(&session), session.slug);
    println!("  id        {}", session.id);
    println!("  project   {}", session.directory);
    println!(
        "  status    {}{}",
        session.status.as_str(),
        if session.archived_at.is_some() {
            ", archived"
        } else {
            ""
        }
    );
    if let Some(agent) = &session.agent {
        println!("  agent     {agent}");
    }
    if let Some(model) = &session.model {
        println!("  model     {model}");
    }
    println!(
        "  created   {} · updated {} · {}",
        datetime(session.created_at),
        datetime(session.updated_at),
        plural(messages.len() as u64, "message", "messages")
    );
    if let Some(fork) = &session.fork {
        println!(
            "  forked    from {} at message {} (depth {})",
            fork.source_session_id, fork.source_message_id, fork.fork_depth
        );
    }
    for m in &messages {
        let mut head = format!("{} · {}", m.role.as_str(), datetime(m.created_at));
        if m.message_type != mia_protocol::MessageType::Normal {
            head.push_str(&format!(" · {}", m.message_type.as_str()));
        }
        if let Some(model) = &m.metadata.model {
            head.push_str(&format!(" · {model}"));
            if let Some(src) = m
                .metadata
                .extra
                .get("model_source")
                .and_then(|v| v.as_str())
            {
                head.push_str(&format!(" ({src})"));
            }
        }
        if let Some(t) = &m.metadata.tokens {
            head.push_str(&format!(" · {} in / {} out tokens", t.input, t.output));
        }
        if let Some(cost) = m.metadata.cost_usd {
            head.push_str(&format!(" · ${cost:.4}"));
        }
        if m.compacted_by.is_some() {
            head.push_str(" · compacted");
        }
        println!("\n── {head}");
        for part in &m.parts {
            print_part(&part.content);
        }
    }
    Ok(())
}

fn print_part(content: &PartContent) {
    match content {
        PartContent::Text { text, .. } => println!("{text}"),
        PartContent::Reasoning { text, .. } => println!("(thinking) {text}"),
        PartContent::Commentary { perspective, text } => println!("[{perspective}] {text}"),
        PartContent::ToolCall { tool, input, .. } => println!("  ▸ {tool} {input}"),
        PartContent::ToolResult {
            tool,
            output,
            is_error,
            duration_ms,
            ..
        } => {
            let first: String = output.lines().take(3).collect::<Vec<_>>().join("\n    ");
            let more = output.lines().count().saturating_sub(3);
            println!(
                "  ◂ {tool} {}{}\n    {first}{}",
                if *is_error { "failed" } else { "ok" },
                duration_ms
                    .map(|d| format!(" ({d} ms)"))
                    .unwrap_or_default(),
                if more > 0 {
                    format!("\n    … {more} more lines")
                } else {
                    String::new()
                }
            );
        }
        PartContent::ToolContent { items, .. } => {
            for item in items {
                match item {
                    mia_protocol::ResultContent::Image { media_type, .. } => {
                        println!("    [image {media_type}]")
                    }
                    mia_protocol::ResultContent::ResourceLink { uri, name, .. } => {
                        println!("    [link {name}: {uri}]")
                    }
                    mia_protocol::ResultContent::Resource { uri, .. } => {
                        println!("    [resource {uri}]")
                    }
                }
            }
        }
        PartContent::Error { kind, message, .. } => println!("  ✗ {kind}: {message}"),
        PartContent::Image { media_type, .. } => println!("  [image {media_type}]"),
        PartContent::File { path, .. } => println!("  [file {path}]"),
        PartContent::Snapshot {
            hash,
            files,
            unavailable,
            ..
        } => match unavailable {
            Some(reason) => println!("  ⚠ snapshot unavailable: {reason}"),
            None => println!(
                "  ⎘ snapshot {} ({})",
                &hash[..hash.len().min(8)],
                plural(files.len() as u64, "file changed", "files changed")
            ),
        },
        PartContent::Revert {
            restored, removed, ..
        } => println!(
            "  ↶ reverted: {} restored, {} removed",
            restored.len(),
            removed.len()
        ),
        PartContent::CompactionSummary {
            summary,
            compacted_messages,
        } => println!("  ⧉ summary of {compacted_messages} messages:\n{summary}"),
        PartContent::Subagent {
            agent,
            description,
            status,
            ..
        } => println!("  ⇢ @{agent}: {description} ({status})"),
        PartContent::Unknown { kind, .. } => println!("  [{kind} part from a newer mia-code]"),
    }
}

fn tree(local: &context::Local, project: Option<PathBuf>, json: bool) -> anyhow::Result<()> {
    let dir = context::project_dir(project.as_deref())?;
    let dir_text = dir.display().to_string();
    let roots = local
        .block(local.core.fork_tree(&dir, false))
        .context("listing sessions")?;
    if json {
        return print_json(&roots);
    }
    print!("{}", render_tree(&dir_text, &roots));
    Ok(())
}

/// `sessions forks ID`: the forks of one session (spec 020's `/forks`).
fn forks(local: &context::Local, reference: &str, json: bool) -> anyhow::Result<()> {
    let session = resolve(local, reference)?;
    // The tree of the session's project (a worktree's is its main project's).
    let root = PathBuf::from(&session.directory);
    let roots = local
        .block(local.core.fork_tree(&root, true))
        .context("listing sessions")?;
    fn find(nodes: Vec<ForkTreeNode>, id: mia_protocol::SessionId) -> Option<ForkTreeNode> {
        for n in nodes {
            if n.summary.session.id == id {
                return Some(n);
            }
            if let Some(found) = find(n.children, id) {
                return Some(found);
            }
        }
        None
    }
    let children = find(roots, session.id)
        .map(|n| n.children)
        .unwrap_or_default();
    if json {
        return print_json(&children);
    }
    if children.is_empty() {
        println!(
            "No forks of {}; `mia-code sessions fork {}` makes one.",
            display_title(&session),
            session.id
        );
        return Ok(());
    }
    println!("Session forks:");
    let mut out = String::new();
    draw_children(&mut out, &children, "  ");
    print!("{out}");
    Ok(())
}

fn tree_line(node: &ForkTreeNode) -> String {
    let s = &node.summary.session;
    let mut line = format!(
        "{} — {} — {}",
        display_title(s),
        datetime(s.created_at),
        plural(node.summary.message_count, "message", "messages")
    );
    if node.own_worktree
        && let Some(w) = &node.summary.worktree
    {
        line.push_str(&format!(" — worktree {w}"));
    }
    line
}

fn draw_children(out: &mut String, nodes: &[ForkTreeNode], prefix: &str) {
    for (i, node) in nodes.iter().enumerate() {
        let last = i + 1 == nodes.len();
        out.push_str(&format!(
            "{prefix}{}{}\n",
            if last { "└─ " } else { "├─ " },
            tree_line(node)
        ));
        let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
        draw_children(out, &node.children, &deeper);
    }
}

/// The spec 020 drawing: roots indented by two, children with ├─ / └─.
pub fn render_tree(directory: &str, roots: &[ForkTreeNode]) -> String {
    let mut out = format!("Sessions for {directory}:\n");
    if roots.is_empty() {
        out.push_str("  (none)\n");
    }
    for root in roots {
        out.push_str(&format!("  {}\n", tree_line(root)));
        draw_children(&mut out, &root.children, "    ");
    }
    out
}

fn fork(
    local: &context::Local,
    reference: &str,
    message: Option<String>,
    with_files: bool,
    json: bool,
) -> anyhow::Result<()> {
    let session = resolve(local, reference)?;
    let message_id = message
        .map(|m| {
            m.parse::<mia_protocol::MessageId>().map_err(|e| {
                anyhow::anyhow!(
                    "--message {m}: not a message id ({e}); `mia-code sessions show {}` lists the messages with their ids",
                    session.id
                )
            })
        })
        .transpose()?;
    let forked = match local.block(local.core.submit(Op::Fork {
        session_id: session.id,
        message_id,
        with_files,
    }))? {
        OpResult::Forked(f) => f,
        _ => bail!("the fork returned no session"),
    };
    if json {
        return print_json(&forked);
    }
    println!("{}", forked.session.id);
    eprintln!(
        "forked {} into {} ({})",
        display_title(&session),
        display_title(&forked.session),
        forked.session.slug
    );
    if let Some(f) = &forked.files {
        eprintln!(
            "files: worktree {} at {} (branch {}), the project as it was at the fork point",
            f.worktree, f.path, f.branch
        );
        for l in &f.left_out {
            eprintln!("  not carried over: {l}");
        }
    }
    Ok(())
}
