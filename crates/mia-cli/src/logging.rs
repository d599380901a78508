//! Logs go to `$MIA_CODE_HOME/logs/mia-code.log` (mode 0600); `MIA_LOG` sets
//! the level (default `info`). Logging never stops the command: if the file
//! cannot be opened, nothing is logged.

use std::fs::OpenOptions;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

pub struct LogGuard;

pub fn init() -> Option<LogGuard> {
    let paths = mia_config::Paths::from_env().ok()?;
    let dir = paths.logs_dir();
    mia_core::ensure_private_dir(&dir).ok()?;
    let mut opts = OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let file = opts.open(dir.join("mia-code.log")).ok()?;
    #[cfg(unix)]
    {
        // An older file may have been created with wider permissions.
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    let filter = EnvFilter::try_from_env("MIA_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // A line when a turn, a step, a tool call (and, at debug, a store
    // request) ends, with its session and how long it took.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(Mutex::new(file))
        .try_init()
        .ok()?;
    Some(LogGuard)
}
