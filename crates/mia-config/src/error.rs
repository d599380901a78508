use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}{}", key_suffix(.key))]
    Invalid {
        path: PathBuf,
        /// Dotted key path such as `agent.plan.permissions[0].action`; empty at the top level.
        key: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "{path}:{line}: `{key}` may not be set in a project config: {why}; set it in your global config (~/.config/mia-code/config.json) instead"
    )]
    ForbiddenInProject {
        path: PathBuf,
        key: String,
        /// Why a project may not set it.
        why: &'static str,
        line: usize,
    },
    #[error(
        "{path}:{line}: `{key}` may not loosen the sandbox in a project config: a cloned repository must not be able to let commands write or connect where your settings do not; a project may only tighten it (mode \"read-only\", network \"deny\", packageCaches or registries false, more paths in protect). Set it in your global config (~/.config/mia-code/config.json) instead"
    )]
    LoosensSandbox {
        path: PathBuf,
        key: String,
        line: usize,
    },
    #[error(
        "environment variable {var} (referenced by `{key}`) is not set; export it or change the reference"
    )]
    MissingEnv { var: String, key: String },
    #[error(
        "`{key}` has a malformed environment reference in {value:?}; use $VAR, {{env:VAR}} or ${{VAR}} with letters, digits and _"
    )]
    BadEnvRef { key: String, value: String },
    #[error("cannot find your home directory; set HOME (or MIA_CODE_HOME for mia-code's data)")]
    NoHome,
}

fn key_suffix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!(" (at `{key}`)")
    }
}
