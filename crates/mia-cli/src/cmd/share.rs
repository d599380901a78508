//! `mia-code share ID [--server URL] [--yes] [--json] [--dry-run] [--update] [--export FILE.html]`,
//! `mia-code unshare ID`, `mia-code shares list [--json]` (spec 022).
//!
//! Without `--yes` the payload is shown first, exactly as it would be sent
//! (redactions highlighted), and the answer to "Share this session
//! publicly?" decides; without a terminal to ask on, `--yes` is required.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use mia_core::RuntimeOptions;
use mia_protocol::{RedactionPlace, SharePreview, ShareRequest, SharedPart};

use crate::context;
use crate::output::{datetime, plural, print_json};

#[derive(Debug, Args)]
pub struct ShareArgs {
    /// The session (id, unique id prefix or slug).
    id: String,
    /// The share server (default: share.endpoint of your global config).
    #[arg(long)]
    server: Option<String>,
    /// Share without the interactive preview (for scripts); redaction still applies.
    #[arg(long)]
    yes: bool,
    /// Print `{"url","id","expires_at"}`.
    #[arg(long)]
    json: bool,
    /// Print the payload that would be sent (redacted) and send nothing
    /// (with --json: the whole preview, redactions listed).
    #[arg(long, conflicts_with = "export")]
    dry_run: bool,
    /// Update the session's existing share (an error when it has none).
    #[arg(long)]
    update: bool,
    /// Write one self-contained HTML file instead (no network).
    #[arg(long, value_name = "FILE.html")]
    export: Option<PathBuf>,
    /// Leave these messages out (ids as `sessions show` lists them).
    #[arg(long = "exclude", value_name = "MESSAGE_ID")]
    exclude_messages: Vec<String>,
    /// Leave out the output of these tool calls.
    #[arg(long = "exclude-result", value_name = "CALL_ID")]
    exclude_results: Vec<String>,
}

#[derive(Debug, Args)]
pub struct UnshareArgs {
    /// A share id (`shares list`) or a session (id, prefix or slug). A share id may start
    /// with `-` (servers before this one made such ids): it is taken as the id, not an option.
    #[arg(allow_hyphen_values = true)]
    id: String,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SharesCommand {
    /// Every share this machine created (also of sessions deleted since).
    List {
        #[arg(long)]
        json: bool,
    },
}

fn local() -> anyhow::Result<context::Local> {
    let paths = context::paths()?;
    let mut opts = RuntimeOptions::new(paths);
    opts.interactive = false;
    context::local(opts)
}

pub fn share(args: ShareArgs) -> anyhow::Result<ExitCode> {
    let local = local()?;
    let session = super::sessions::resolve(&local, &args.id)?;
    let req = ShareRequest {
        exclude_messages: args.exclude_messages.clone(),
        exclude_tool_results: args.exclude_results.clone(),
        server: args.server.clone(),
    };
    if let Some(file) = &args.export {
        let (html, preview) = local.block(local.core.share_export(session.id, req))?;
        write_file(file, &html)?;
        if args.json {
            print_json(&serde_json::json!({
                "file": file.display().to_string(),
                "bytes": html.len(),
                "redactions": preview.redactions.len(),
            }))?;
        } else {
            println!(
                "Exported to {} ({}, {} redacted).",
                file.display(),
                plural(html.len() as u64, "byte", "bytes"),
                plural(preview.redactions.len() as u64, "item", "items")
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let preview = local.block(local.core.share_preview(session.id, req.clone()))?;
    if args.dry_run {
        // --json: the whole preview (payload, redactions, server, size).
        if args.json {
            print_json(&preview)?;
        } else {
            print_json(&preview.payload)?;
        }
        eprintln!("{}", redaction_summary(&preview));
        return Ok(ExitCode::SUCCESS);
    }
    if preview.mode == "disabled" {
        bail!(
            "sharing is disabled (share.mode is \"disabled\"); set it to \"ask\" in your config to share"
        );
    }
    if preview.server.is_none() {
        let global = context::paths()?
            .global_configs
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "~/.mia-code.json".into());
        bail!(
            "no share server is configured: set share.endpoint in your global config ({global}), or pass --server URL"
        );
    }
    if args.update && preview.existing.is_none() {
        bail!(
            "session {} is not shared yet; run `mia-code share {}` without --update",
            session.id,
            args.id
        );
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            bail!(
                "refusing to share without showing the payload first: run in a terminal, pass --yes (redaction still applies) or --dry-run to see what would be sent"
            );
        }
        show_preview(&preview);
        let target = preview.server.as_deref().unwrap_or_default();
        let verb = if preview.existing.is_some() {
            "Update the public share of this session"
        } else {
            "Share this session publicly"
        };
        eprint!("{verb} on {target}? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            eprintln!("Nothing was shared.");
            return Ok(ExitCode::from(1));
        }
    }
    let updated = preview.existing.is_some();
    let record = local.block(local.core.share_publish(session.id, req))?;
    if args.json {
        print_json(&serde_json::json!({
            "url": record.url,
            "id": record.id,
            "expires_at": record.expires_at,
        }))?;
    } else {
        if updated {
            println!("Share updated: {}", record.url);
        } else {
            println!("Session shared: {}", record.url);
        }
        if let Some(e) = record.expires_at {
            println!(
                "Expires {}. Revoke with `mia-code unshare {}`.",
                datetime(e),
                record.id
            );
        }
        eprintln!("{}", redaction_summary(&preview));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn unshare(args: UnshareArgs) -> anyhow::Result<ExitCode> {
    let local = local()?;
    let record = local.block(local.core.revoke_share(&args.id))?;
    if args.json {
        print_json(&record)?;
    } else {
        println!("Share revoked. {} is no longer accessible.", record.url);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn shares(cmd: SharesCommand) -> anyhow::Result<ExitCode> {
    let SharesCommand::List { json } = cmd;
    let local = local()?;
    let list = local.block(local.core.shares())?;
    if json {
        print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        println!("You have not shared any session.");
        return Ok(ExitCode::SUCCESS);
    }
    for s in &list {
        let session = if s.session_deleted {
            format!("{} (deleted locally)", s.session_title)
        } else {
            s.session_title.clone()
        };
        println!("{}  {}", s.id, s.url);
        println!(
            "    {session} · created {} · updated {} · {}",
            datetime(s.created_at),
            datetime(s.updated_at),
            s.expires_at
                .map(|e| format!("expires {}", datetime(e)))
                .unwrap_or_else(|| "no expiry".into())
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn write_file(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| std::path::Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".mia-export-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn redaction_summary(p: &SharePreview) -> String {
    let home = p
        .redactions
        .iter()
        .filter(|r| r.kind == "home-path")
        .count();
    let secrets = p.redactions.len() - home;
    format!(
        "{} redacted, home directory replaced {} ({} of payload).",
        plural(secrets as u64, "secret", "secrets"),
        plural(home as u64, "time", "times"),
        plural(p.bytes, "byte", "bytes")
    )
}

/// The payload as text, every redaction marked (reverse video on a
/// terminal), then the list of what was redacted.
fn show_preview(p: &SharePreview) {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mark = |s: &str| {
        let mut out = s.to_string();
        for tag in ["[REDACTED:"] {
            if color {
                let mut marked = String::new();
                let mut rest = out.as_str();
                while let Some(i) = rest.find(tag) {
                    let end = rest[i..].find(']').map(|e| i + e + 1).unwrap_or(rest.len());
                    marked.push_str(&rest[..i]);
                    marked.push_str("\x1b[7m");
                    marked.push_str(&rest[i..end]);
                    marked.push_str("\x1b[0m");
                    rest = &rest[end..];
                }
                marked.push_str(rest);
                out = marked;
            }
        }
        out
    };
    let e = &mut std::io::stderr();
    let _ = writeln!(e, "── What will be sent ──────────────────────────────");
    let _ = writeln!(e, "Title: {}", mark(&p.payload.session.title));
    for m in &p.payload.messages {
        let _ = writeln!(e, "\n[{}] {}", m.role, m.id);
        for part in &m.parts {
            match part {
                SharedPart::Text { content } | SharedPart::Summary { content } => {
                    let _ = writeln!(e, "{}", mark(content));
                }
                SharedPart::Reasoning { content } => {
                    let _ = writeln!(e, "(thinking) {}", mark(content));
                }
                SharedPart::ToolCall { name, args, .. } => {
                    let _ = writeln!(e, "→ {name} {}", mark(&args.to_string()));
                }
                SharedPart::ToolResult {
                    output, omitted, ..
                } => {
                    if *omitted {
                        let _ = writeln!(e, "← (output not shared)");
                    } else {
                        let _ = writeln!(e, "← {}", mark(output));
                    }
                }
                SharedPart::Error { message } => {
                    let _ = writeln!(e, "! {}", mark(message));
                }
            }
        }
    }
    for d in &p.payload.diffs {
        let _ = writeln!(e, "\n── {} (+{} −{})", d.file, d.additions, d.deletions);
        let _ = writeln!(e, "{}", mark(&d.patch));
    }
    let _ = writeln!(e, "───────────────────────────────────────────────────");
    if p.redactions.is_empty() {
        let _ = writeln!(e, "Nothing was redacted.");
    } else {
        let _ = writeln!(e, "Redacted:");
        for r in &p.redactions {
            let place = match &r.place {
                RedactionPlace::Title => "the title".to_string(),
                RedactionPlace::Message { message_id, part } => {
                    format!("message {message_id}, part {}", part + 1)
                }
                RedactionPlace::Diff { file } => format!("the diff of {file}"),
            };
            let _ = writeln!(e, "  {:<18} in {place} ({})", r.kind, r.hint);
        }
    }
    let _ = writeln!(e, "{}", redaction_summary(p));
}

#[cfg(test)]
mod tests {
    use super::UnshareArgs;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Unshare {
        #[command(flatten)]
        args: UnshareArgs,
    }

    #[test]
    fn a_share_id_starting_with_a_dash_is_an_id_not_an_option() {
        let cli = Unshare::try_parse_from(["unshare", "-JeoDoNXu7-ecJZPBYhFLQ", "--json"])
            .expect("parses");
        assert_eq!(cli.args.id, "-JeoDoNXu7-ecJZPBYhFLQ");
        assert!(cli.args.json);
    }
}
