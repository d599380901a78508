#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error(transparent)]
    Store(#[from] mia_store::StoreError),
    #[error(transparent)]
    Config(#[from] mia_config::ConfigError),
    #[error("{0}")]
    Setup(String),
    #[error("unknown agent `{name}`; available: {available}")]
    UnknownAgent { name: String, available: String },
    #[error(
        "no model is configured; pass --model provider/model (e.g. anthropic/claude-sonnet-4-5) or set `model` in your config"
    )]
    NoModel,
    #[error("`{0}` is not a model reference; use provider/model, e.g. openai/gpt-5")]
    BadModel(String),
    #[error("a turn is already running in session {0}; wait for it or cancel it")]
    Busy(String),
    #[error("no pending permission request {0} in this session")]
    NoSuchRequest(String),
    #[error("internal error: {0}")]
    Internal(String),
}
