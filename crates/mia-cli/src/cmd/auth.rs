//! `mia-code auth set|list|remove PROVIDER`: manage stored API keys.
//! Keys are read from stdin and never printed.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Subcommand, ValueEnum};
use mia_providers::credentials::{CredentialSource, Credentials, FileStore, KeyringStore, StoreTarget};
use serde::Serialize;

use crate::context;

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Store an API key for PROVIDER, read from standard input
    /// (e.g. `mia-code auth set anthropic < key.txt`).
    Set {
        provider: String,
        /// Where to keep it: the OS keychain when available, else a 0600 file (auto).
        #[arg(long, value_enum, default_value_t = Store::Auto)]
        store: Store,
    },
    /// Show where keys are found for each provider (never the keys).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove the stored key for PROVIDER from the keychain and the credentials file.
    Remove { provider: String },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Store {
    Auto,
    Keychain,
    File,
}

fn credentials() -> anyhow::Result<Credentials> {
    let paths = context::paths()?;
    Ok(Credentials::new(
        std::sync::Arc::new(|k: &str| std::env::var(k).ok()),
        Some(Box::new(KeyringStore::new())),
        FileStore::in_home(&paths.home),
    ))
}

fn valid_provider(id: &str) -> anyhow::Result<()> {
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        anyhow::bail!(
            "{id:?} is not a provider id; use letters, digits, `-`, `_` or `.` (e.g. anthropic, openai, google)"
        );
    }
    Ok(())
}

#[derive(Serialize)]
struct ListEntry {
    provider: String,
    /// Sources holding a key, in resolution order (the first is used).
    sources: Vec<String>,
    unavailable: Vec<String>,
}

pub fn run(command: AuthCommand) -> anyhow::Result<ExitCode> {
    let creds = credentials()?;
    match command {
        AuthCommand::Set { provider, store } => {
            valid_provider(&provider)?;
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("Paste the API key for {provider}, then press Enter and Ctrl-D:");
            }
            let mut key = String::new();
            stdin
                .lock()
                .read_to_string(&mut key)
                .context("reading the key from standard input")?;
            let key = key.trim();
            if key.lines().count() > 1 {
                anyhow::bail!("the input has several lines; give exactly one API key");
            }
            let target = match store {
                Store::Auto => StoreTarget::Auto,
                Store::Keychain => StoreTarget::Keychain,
                Store::File => StoreTarget::File,
            };
            let source = creds.store(&provider, key, target)?;
            println!("Saved the {provider} key in the {source}.");
            let env_vars = mia_providers::credentials::env_vars(&provider);
            if let Some(var) = env_vars.iter().find(|v| std::env::var_os(v).is_some()) {
                println!("Note: {var} is set and takes precedence over the stored key.");
            }
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::List { json } => {
            let mut ids: Vec<String> = ["anthropic", "openai", "google"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            for id in creds.stored_providers().unwrap_or_default() {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            let entries: Vec<ListEntry> = creds
                .list(&refs)
                .into_iter()
                .map(|p| ListEntry {
                    provider: p.provider,
                    sources: p.sources.iter().map(CredentialSource::to_string).collect(),
                    unavailable: p.unavailable,
                })
                .collect();
            if json {
                crate::output::print_json(&entries)?;
            } else {
                for e in &entries {
                    let found = if e.sources.is_empty() {
                        "no key".to_string()
                    } else {
                        e.sources.join(", then ")
                    };
                    println!("{:<12} {found}", e.provider);
                }
                let mut notes: Vec<&String> = entries.iter().flat_map(|e| &e.unavailable).collect();
                notes.dedup();
                for n in notes {
                    eprintln!("note: {n}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Remove { provider } => {
            valid_provider(&provider)?;
            let removed = creds.remove(&provider)?;
            if removed.is_empty() {
                println!("No stored key for {provider}.");
            } else {
                let places: Vec<String> = removed.iter().map(ToString::to_string).collect();
                println!("Removed the {provider} key from the {}.", places.join(" and the "));
            }
            let env_vars = mia_providers::credentials::env_vars(&provider);
            if let Some(var) = env_vars.iter().find(|v| std::env::var_os(v).is_some()) {
                println!("Note: {var} is still set in the environment.");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
