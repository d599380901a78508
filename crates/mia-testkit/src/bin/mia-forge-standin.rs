//! `mia-forge-standin --token TOKEN [--log FILE]`: the GitHub (`/api/v3`)
//! and GitLab (`/api/v4`) REST stand-ins on a free loopback port, for
//! end-to-end tests. Prints `listening on http://127.0.0.1:PORT` first;
//! appends each request to `--log` as a JSON line; runs until stdin closes.

use std::io::{Read as _, Write as _};

fn main() -> anyhow::Result<()> {
    let mut token = None;
    let mut log = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--token" => token = args.next(),
            "--log" => log = args.next().map(std::path::PathBuf::from),
            other => anyhow::bail!(
                "unknown argument {other}; usage: mia-forge-standin --token TOKEN [--log FILE]"
            ),
        }
    }
    let token = token.ok_or_else(|| anyhow::anyhow!("--token TOKEN is required"))?;
    let s = mia_testkit::forge::ForgeStandIn::start(&token, log);
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on http://127.0.0.1:{}", s.port)?;
    out.flush()?;
    drop(out);
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    Ok(())
}
