//! `mia-share-server [--host H] [--port P] [--db FILE | --database-url URL]`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mia_share_server::{AppState, Settings, Store};

/// The self-hostable share server for mia-code sessions.
#[derive(Debug, Parser)]
#[command(name = "mia-share-server", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", env = "MIA_SHARE_HOST")]
    host: String,
    /// Port (0: any free port; the first line printed says which).
    #[arg(long, default_value_t = 8787, env = "MIA_SHARE_PORT")]
    port: u16,
    /// SQLite file to keep shares in (created if missing). The default store.
    #[arg(long, conflicts_with = "database_url", env = "MIA_SHARE_DB")]
    db: Option<PathBuf>,
    /// PostgreSQL instead of SQLite (`postgres://user:pass@host:5432/db`):
    /// run any number of instances on one database.
    #[arg(long, env = "MIA_SHARE_DATABASE_URL")]
    database_url: Option<String>,
    /// The URL shares are reached at (default: http://HOST:PORT this server
    /// listens on; never a request's Host header).
    #[arg(long, env = "MIA_SHARE_PUBLIC_URL")]
    public_url: Option<String>,
    /// Largest payload accepted, in bytes.
    #[arg(long, default_value_t = 10 * 1024 * 1024)]
    max_payload_bytes: usize,
    /// Creates, updates and deletes per client IP per minute (0: unlimited).
    #[arg(long, default_value_t = 60)]
    write_rate_limit: u32,
    /// Page and payload reads per client IP per minute (0: unlimited).
    #[arg(long, default_value_t = 600)]
    read_rate_limit: u32,
    /// Bytes of live shares one client address may keep (0: unlimited).
    #[arg(long, default_value_t = 200 * 1024 * 1024, env = "MIA_SHARE_BYTES_PER_UPLOADER")]
    bytes_per_uploader: u64,
    /// Lifetime of a share when the client asks for none, in days.
    #[arg(long, default_value_t = 30)]
    default_ttl_days: u32,
    /// Longest lifetime a client may ask for, in days.
    #[arg(long, default_value_t = 365)]
    max_ttl_days: u32,
    /// Behind a reverse proxy: take the client IP from X-Forwarded-For and
    /// the scheme/host from X-Forwarded-Proto/-Host.
    #[arg(long)]
    trust_proxy: bool,
    /// Seconds between purges of expired shares.
    #[arg(long, default_value_t = 60)]
    purge_interval: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MIA_SHARE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    if args.max_ttl_days == 0
        || args.default_ttl_days == 0
        || args.default_ttl_days > args.max_ttl_days
    {
        return Err(format!(
            "--default-ttl-days ({}) must be between 1 and --max-ttl-days ({})",
            args.default_ttl_days, args.max_ttl_days
        ));
    }
    let store = match (&args.db, &args.database_url) {
        (_, Some(url)) => Store::postgres(url).await.map_err(|e| e.to_string())?,
        (Some(path), None) => Store::sqlite(path).await.map_err(|e| e.to_string())?,
        (None, None) => Store::sqlite(&PathBuf::from("shares.db"))
            .await
            .map_err(|e| e.to_string())?,
    };
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", args.host, args.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let host = if addr.is_ipv6() {
        format!("[{}]", addr.ip())
    } else {
        addr.ip().to_string()
    };
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on http://{host}:{}", addr.port());
        let _ = out.flush();
    }
    tracing::info!(database = store.kind(), "share server ready");
    let state = AppState::new(
        store,
        Settings {
            max_payload_bytes: args.max_payload_bytes,
            write_limit: args.write_rate_limit,
            read_limit: args.read_rate_limit,
            bytes_per_uploader: args.bytes_per_uploader,
            default_ttl_days: args.default_ttl_days,
            max_ttl_days: args.max_ttl_days,
            trust_proxy: args.trust_proxy,
            public_url: args.public_url,
            purge_every: Duration::from_secs(args.purge_interval.max(1)),
        },
    );
    let purger = mia_share_server::spawn_purger(state.clone());
    let shutdown = async {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(s) => s,
                    Err(_) => {
                        let _ = ctrl_c.await;
                        return;
                    }
                };
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = ctrl_c.await;
    };
    let result = mia_share_server::serve(listener, state, shutdown).await;
    purger.abort();
    result.map_err(|e| e.to_string())
}
