//! Shared sessions, pure: building a share payload from a stored session
//! ([`payload`]), redacting secrets from it ([`redact`], with the rules of
//! [`rules`]) and rendering the
//! inert viewer page ([`render`]). The client's preview and offline export
//! and the share server use the same code, so what is previewed, exported
//! and served is one thing.

mod joined;
mod keywords;
pub mod payload;
pub mod redact;
pub mod render;
pub mod rules;

pub use payload::{BuildOptions, build, env_file_calls};
pub use redact::{RedactOptions, Redactor, is_env_file, mask, title_from};
pub use render::{PageMeta, RENDERER_VERSION, csp, escape, markdown, page, stylesheet};
pub use rules::{RULES, Rule};

#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    #[error(
        "share.redactPatterns[{index}] ({pattern:?}) is not a usable regular expression: {message}. Fix or remove it in your config"
    )]
    BadPattern {
        index: usize,
        pattern: String,
        message: String,
    },
    #[error("internal error in the share redactor: {0}")]
    Internal(String),
}

/// Check a payload a server received: version, sizes. Returns what is wrong.
pub fn validate(payload: &mia_protocol::SharePayload) -> Result<(), String> {
    let major = payload.version.split('.').next().unwrap_or_default();
    if major != "1" {
        return Err(format!(
            "payload version {:?} is not supported (this server reads 1.x)",
            payload.version
        ));
    }
    if payload.session.id.trim().is_empty() {
        return Err("session.id is empty".into());
    }
    Ok(())
}
