//! `mia-code serve`: the runtime over HTTP + SSE.

use std::io::Write as _;
use std::net::IpAddr;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use mia_core::RuntimeOptions;

use crate::context;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Anything but loopback needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Listen on a non-loopback --host. The token then travels in clear text
    /// (plain HTTP): use it only on a network you trust, or behind TLS.
    #[arg(long)]
    allow_remote: bool,
    /// A host name remote clients use to reach this server (repeatable; the
    /// Host check stays on, the bound address is always accepted).
    #[arg(long = "allowed-host", value_name = "NAME", requires = "allow_remote")]
    allowed_hosts: Vec<String>,
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Serve the web UI from this directory (the build of `ui/`, i.e. `ui/dist`).
    /// Default: $MIA_CODE_UI_DIR, else `ui/dist` of the source tree this binary was built in.
    #[arg(long, value_name = "DIR")]
    ui: Option<std::path::PathBuf>,
    /// Only the API, no web UI.
    #[arg(long, conflicts_with = "ui")]
    no_ui: bool,
    /// The project folder the UI opens first.
    #[arg(long, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
    /// Label the UI as a scripted demo (used by `scripts/demo` with the mock model).
    #[arg(long, hide = true)]
    demo: bool,
}

/// Where the web UI's build is, if anywhere.
fn ui_dir(args: &ServeArgs) -> anyhow::Result<Option<std::path::PathBuf>> {
    if args.no_ui {
        return Ok(None);
    }
    if let Some(dir) = &args.ui {
        if !dir.join("index.html").is_file() {
            anyhow::bail!(
                "{} has no index.html: build the UI first (`npm --prefix ui ci && npm --prefix ui run build`) or pass --no-ui",
                dir.display()
            );
        }
        return Ok(Some(dir.clone()));
    }
    let candidates = [
        std::env::var_os("MIA_CODE_UI_DIR").map(std::path::PathBuf::from),
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist")),
    ];
    Ok(candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("index.html").is_file()))
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    if !args.host.is_loopback() && !args.allow_remote {
        anyhow::bail!(
            "--host {} is not a loopback address: anyone who can reach it could try the token, which travels in clear text. Pass --allow-remote (and --allowed-host NAME for the names clients use) if you mean it, or keep the default 127.0.0.1",
            args.host
        );
    }
    for h in &args.allowed_hosts {
        if h.is_empty()
            || h.len() > 253
            || !h
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
        {
            anyhow::bail!("--allowed-host {h:?} is not a host name");
        }
    }
    let paths = context::paths()?;
    let local = context::local(RuntimeOptions {
        watch_attempts: true,
        ..RuntimeOptions::new(paths.clone())
    })?;
    let token = match std::env::var("MIA_CODE_SERVE_TOKEN") {
        Ok(t) if !t.is_empty() => checked_token(&t)?,
        _ => mia_server::new_token(),
    };
    let ui = ui_dir(&args)?;
    let project = match &args.project {
        Some(p) => Some(
            dunce::canonicalize(p)
                .with_context(|| format!("project folder {}", p.display()))?
                .display()
                .to_string(),
        ),
        None => None,
    };
    let runtime = local.core.clone();
    local.block(async move {
        let listener = tokio::net::TcpListener::bind((args.host, args.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
        let addr = listener.local_addr()?;
        let url = format!("http://{addr}");
        let stop = stop_signal();
        let info = paths.home.join("server.json");
        write_private(
            &info,
            &serde_json::to_string_pretty(&serde_json::json!({
                "url": url, "token": token, "pid": std::process::id()
            }))?,
        )?;
        if !args.host.is_loopback() {
            eprintln!("WARNING: listening on {} with --allow-remote: plain HTTP, so the token and every transcript travel in clear text, and anyone who can reach this address and learns the token can run commands in your projects. Use a trusted network or put TLS in front.", args.host);
        }
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {url}")?;
        writeln!(out, "token: {token}")?;
        writeln!(out, "(also in {}, mode 0600; OpenAPI at {url}/api/openapi.json)", info.display())?;
        match &ui {
            Some(_) => writeln!(out, "open: {url}/#token={token}")?,
            None => writeln!(out, "no web UI (build it with `npm --prefix ui run build`, or pass --ui DIR)")?,
        }
        out.flush()?;
        drop(out);
        tracing::info!(%url, "serving");
        let opts = mia_server::ServerOptions {
            token,
            check_host: true,
            ui_dir: ui,
            demo: args.demo,
            project,
            allowed_hosts: args.allowed_hosts.clone(),
        };
        let served = mia_server::serve_with(listener, runtime, opts, stop).await;
        // The token is void once the server stops: never leave it on disk.
        let _ = std::fs::remove_file(&info);
        served?;
        Ok(ExitCode::SUCCESS)
    })
}

/// A token given in `MIA_CODE_SERVE_TOKEN` (so a restarted server keeps the
/// one open pages use): long and URL-safe, or refused with what to do.
fn checked_token(t: &str) -> anyhow::Result<String> {
    if t.len() < 32
        || !t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
    {
        anyhow::bail!(
            "MIA_CODE_SERVE_TOKEN must be at least 32 characters of letters, digits, - and _ (e.g. the output of `openssl rand -hex 32`); unset it to get a fresh token"
        );
    }
    Ok(t.to_string())
}

/// Ctrl-C (SIGINT) or SIGTERM. The handlers are installed when this is
/// called (before `server.json` announces the server), not when the future
/// is first polled: a signal in between would otherwise kill the process
/// with its token file left behind.
fn stop_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let int = signal(SignalKind::interrupt());
        let term = signal(SignalKind::terminate());
        async move {
            match (int, term) {
                (Ok(mut int), Ok(mut term)) => {
                    tokio::select! {
                        _ = int.recv() => {}
                        _ = term.recv() => {}
                    }
                }
                (Ok(mut int), Err(_)) => {
                    let _ = int.recv().await;
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

fn write_private(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).write(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(text.as_bytes())?;
    Ok(())
}
