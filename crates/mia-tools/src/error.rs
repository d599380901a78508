use std::path::PathBuf;

/// A tool failure. The `Display` text is what the model reads, so each message
/// says what went wrong and what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("invalid arguments for {tool}: {message}")]
    InvalidInput { tool: String, message: String },
    #[error("unknown tool `{name}`; available tools: {known}")]
    UnknownTool { name: String, known: String },
    #[error("{0}")]
    Invalid(String),
    /// `path` as shown to the model (relative to the project root when inside it).
    #[error("file not found: {path}{hint}")]
    NotFound { path: String, hint: String },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cancelled")]
    Cancelled,
}

impl ToolError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
