//! `mia-mock-llm --scenario FILE [--port N] [--host ADDR] [--record FILE]`
//!
//! Serves the Anthropic, OpenAI and Gemini streaming endpoints from a
//! scenario file. Prints `listening on http://HOST:PORT` as its first line of
//! stdout once it accepts connections (port 0 picks a free port). Runs until
//! SIGINT/SIGTERM or until stdin closes when `--exit-on-stdin-eof` is given;
//! then writes the recorded requests and violations to `--record` and exits
//! with status 3 if any protocol invariant was violated.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use mia_testkit::{MockServer, Scenario};

#[derive(Parser, Debug)]
#[command(
    name = "mia-mock-llm",
    about = "Mock LLM server speaking the Anthropic, OpenAI and Gemini streaming APIs"
)]
struct Args {
    /// Scenario JSON file (format: crates/mia-testkit/README.md).
    #[arg(long)]
    scenario: PathBuf,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to bind (loopback by default).
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Write recorded requests and violations as JSON here on exit.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Also stop when standard input reaches end of file.
    #[arg(long)]
    exit_on_stdin_eof: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let scenario = Scenario::from_file(&args.scenario)?;
    let server = MockServer::start_on(scenario, SocketAddr::new(args.host, args.port))
        .await
        .with_context(|| format!("could not listen on {}:{}", args.host, args.port))?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {}", server.url())?;
        out.flush()?;
    }
    eprintln!(
        "mia-mock-llm: base URLs: anthropic {} | openai {} | google {}",
        server.anthropic_base_url(),
        server.openai_base_url(),
        server.gemini_base_url()
    );
    wait_for_stop(args.exit_on_stdin_eof).await;
    let requests = server.requests();
    let violations = server.take_violations();
    let unused = server.unused_steps();
    if let Some(path) = &args.record {
        let report = serde_json::json!({
            "requests": requests,
            "violations": violations,
            "unused_steps": unused,
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("could not write {}", path.display()))?;
    }
    server.shutdown().await;
    eprintln!(
        "mia-mock-llm: {} requests, {} violations, {} unused steps",
        requests.len(),
        violations.len(),
        unused.len()
    );
    for v in &violations {
        eprintln!("  violation: {v}");
    }
    if !violations.is_empty() {
        std::process::exit(3);
    }
    Ok(())
}

async fn wait_for_stop(stdin_eof: bool) {
    let stdin = async {
        if stdin_eof {
            use tokio::io::AsyncReadExt;
            let mut buf = [0u8; 1024];
            let mut input = tokio::io::stdin();
            while let Ok(n) = input.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        } else {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = async {
            match signal(SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term => {}
            _ = stdin => {}
        }
    }
    #[cfg(not(unix))]
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = stdin => {}
    }
}
