//! Error types of the permission engine.

use std::path::PathBuf;

/// A rule that could not be compiled. The loader reports it with the file and
/// rule index; every permission the rule names is disabled (denied) until it is fixed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("invalid permission rule #{} in {source_label}: {reason} (fix or remove the rule; until then {} is disabled)", .index + 1, disabled_label(.permission))]
pub struct RuleError {
    /// Where the rule came from: a config file path or `built-in`.
    #[serde(rename = "source")]
    pub source_label: String,
    /// Zero-based position of the rule in its source list.
    pub index: usize,
    /// The rule's permission name (`*` disables every tool).
    pub permission: String,
    /// What is wrong.
    pub reason: String,
}

/// A path that cannot be canonicalised (and so can never be allowed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path {0:?} contains a NUL byte; paths with NUL cannot be checked and are refused")]
    Nul(String),
    #[error(
        "path {0:?} contains control or invisible formatting characters; rename the file or spell the path without them"
    )]
    ControlCharacter(String),
    #[error("path is empty; give a file or directory path")]
    Empty,
    #[error("path {0:?} uses `~user`, which is not supported; spell the absolute path instead")]
    OtherUserHome(String),
    #[error(
        "path {0:?} starts with `~` but no home directory is known; spell the absolute path instead"
    )]
    NoHome(String),
    #[error("path {0:?} resolves through more than 40 symbolic links")]
    SymlinkLoop(String),
    #[error(
        "project root {0:?} cannot be resolved: {1}; pass an existing directory as the project root"
    )]
    ProjectRoot(PathBuf, String),
}

/// Errors of the reply handling (answers to `ask`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("\"always\" is not offered for this request ({0}); answer yes (once) or no instead")]
    AlwaysNotOffered(String),
    #[error("the request was not an ask (decision was {0}); only asks take replies")]
    NotAnAsk(String),
}

fn disabled_label(permission: &str) -> String {
    if permission.trim().is_empty() || permission == "*" {
        "every tool".to_string()
    } else {
        format!("`{permission}`")
    }
}
