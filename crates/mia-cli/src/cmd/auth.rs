//! `mia-code auth set|list|remove PROVIDER`: manage stored API keys.
//! Keys are read from standard input and never printed. The logic lives in
//! `mia_core::credentials`; this is the adapter.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Subcommand, ValueEnum};
use mia_core::credentials::{
    CredentialSource, Credentials, FileStore, KeyringStore, StoreTarget, env_vars,
};
use serde::Serialize;

use crate::context;

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Store an API key for PROVIDER, read from standard input
    /// (e.g. `mia-code auth set anthropic < key.txt`).
    Set {
        provider: String,
        /// Where to keep it: the OS keychain when available, else a 0600 file.
        #[arg(long, value_enum, default_value_t = Store::Auto)]
        store: Store,
    },
    /// Show where a key is found for each provider (never the key).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove the stored key for PROVIDER from the keychain and the credentials file.
    Remove { provider: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Store {
    Auto,
    Keychain,
    File,
}

pub fn run(command: AuthCommand) -> anyhow::Result<ExitCode> {
    let paths = context::paths()?;
    let env = |k: &str| std::env::var(k).ok();
    let creds = Credentials::new(
        Arc::new(env),
        Some(Box::new(KeyringStore::new())),
        FileStore::in_home(&paths.home),
    );
    let stdin = std::io::stdin();
    if matches!(command, AuthCommand::Set { .. }) && stdin.is_terminal() {
        eprintln!("Paste the API key, press Enter, then Ctrl-D:");
    }
    let mut out = std::io::stdout().lock();
    execute(command, &creds, &mut stdin.lock(), &mut out, &env)?;
    Ok(ExitCode::SUCCESS)
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

#[derive(Debug, Serialize)]
struct ListEntry {
    provider: String,
    /// Sources holding a key, in resolution order (the first is used).
    sources: Vec<String>,
    /// Sources that could not be checked, with the reason.
    unavailable: Vec<String>,
}

fn env_note(provider: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    env_vars(provider)
        .into_iter()
        .find(|v| env(v).is_some_and(|k| !k.trim().is_empty()))
}

fn execute(
    command: AuthCommand,
    creds: &Credentials,
    input: &mut dyn Read,
    out: &mut dyn Write,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<()> {
    match command {
        AuthCommand::Set { provider, store } => {
            valid_provider(&provider)?;
            let mut key = String::new();
            input
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
            writeln!(out, "Saved the {provider} key in the {source}.")?;
            if let Some(var) = env_note(&provider, env) {
                writeln!(out, "Note: {var} is set and is used before the stored key.")?;
            }
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
                writeln!(out, "{}", serde_json::to_string_pretty(&entries)?)?;
            } else {
                for e in &entries {
                    let found = if e.sources.is_empty() {
                        "no key".to_string()
                    } else {
                        e.sources.join(", then ")
                    };
                    writeln!(out, "{:<12} {found}", e.provider)?;
                }
                let mut notes: Vec<&String> = entries.iter().flat_map(|e| &e.unavailable).collect();
                notes.sort();
                notes.dedup();
                for n in notes {
                    writeln!(out, "note: {n}")?;
                }
            }
        }
        AuthCommand::Remove { provider } => {
            valid_provider(&provider)?;
            let removed = creds.remove(&provider)?;
            if removed.is_empty() {
                writeln!(out, "No stored key for {provider}.")?;
            } else {
                let places: Vec<String> = removed.iter().map(ToString::to_string).collect();
                writeln!(
                    out,
                    "Removed the {provider} key from the {}.",
                    places.join(" and the ")
                )?;
            }
            if let Some(var) = env_note(&provider, env) {
                writeln!(out, "Note: {var} is still set in the environment.")?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sk-ant-very-secret-123";

    fn creds(dir: &std::path::Path) -> Credentials {
        // No keychain: the file store is the target, as on a headless box.
        Credentials::new(Arc::new(|_: &str| None), None, FileStore::in_home(dir))
    }

    fn exec(c: &Credentials, cmd: AuthCommand, stdin: &str) -> anyhow::Result<String> {
        let mut out = Vec::new();
        execute(cmd, c, &mut stdin.as_bytes(), &mut out, &|k: &str| {
            (k == "OPENAI_API_KEY").then(|| "env-key".to_string())
        })?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn set_list_remove_never_print_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let c = creds(dir.path());
        let set = AuthCommand::Set {
            provider: "anthropic".into(),
            store: Store::Auto,
        };
        let out = exec(&c, set, &format!("{SECRET}\n")).unwrap();
        assert!(out.contains("Saved the anthropic key in the file"), "{out}");
        assert_eq!(
            c.resolve("anthropic", None).unwrap().unwrap().key,
            SECRET,
            "stored"
        );

        let out = exec(&c, AuthCommand::List { json: false }, "").unwrap();
        assert!(
            out.contains("anthropic") && out.contains("credentials.json"),
            "{out}"
        );
        assert!(out.contains("google       no key"), "{out}");
        let json = exec(&c, AuthCommand::List { json: true }, "").unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v[0]["provider"], "anthropic");
        assert_eq!(v[0]["sources"].as_array().unwrap().len(), 1);

        let out = exec(
            &c,
            AuthCommand::Remove {
                provider: "anthropic".into(),
            },
            "",
        )
        .unwrap();
        assert!(out.contains("Removed the anthropic key"), "{out}");
        assert!(c.resolve("anthropic", None).unwrap().is_none());
        let out = exec(
            &c,
            AuthCommand::Remove {
                provider: "anthropic".into(),
            },
            "",
        )
        .unwrap();
        assert!(out.contains("No stored key"), "{out}");

        // The secret never reaches the output.
        for cmd in [
            AuthCommand::List { json: true },
            AuthCommand::List { json: false },
        ] {
            assert!(!exec(&c, cmd, "").unwrap().contains(SECRET));
        }
    }

    #[test]
    fn rejects_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let c = creds(dir.path());
        let set = |p: &str| AuthCommand::Set {
            provider: p.into(),
            store: Store::Auto,
        };
        assert!(exec(&c, set("anthropic"), "  \n").is_err(), "empty key");
        assert!(exec(&c, set("anthropic"), "a\nb\n").is_err(), "two lines");
        assert!(exec(&c, set("../etc"), "k").is_err(), "bad id");
        let keychain_only = AuthCommand::Set {
            provider: "openai".into(),
            store: Store::Keychain,
        };
        let err = exec(&c, keychain_only, "k").unwrap_err().to_string();
        assert!(err.contains("--store file"), "{err}");
    }

    #[test]
    fn env_var_precedence_is_explained() {
        let dir = tempfile::tempdir().unwrap();
        let c = creds(dir.path());
        let set = AuthCommand::Set {
            provider: "openai".into(),
            store: Store::File,
        };
        let out = exec(&c, set, "sk-x").unwrap();
        assert!(out.contains("OPENAI_API_KEY is set"), "{out}");
    }
}
