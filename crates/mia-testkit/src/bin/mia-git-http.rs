//! `mia-git-http ROOT`: the bare repositories under ROOT served over git's
//! smart HTTP (`git http-backend`) on a free loopback port, for end-to-end
//! tests. Prints `listening on http://127.0.0.1:PORT` first; runs until
//! stdin closes.

use std::io::{Read as _, Write as _};

fn main() -> anyhow::Result<()> {
    let root = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: mia-git-http ROOT"))?;
    let s = mia_testkit::git_http::GitHttp::start(
        std::path::Path::new(&root),
        std::net::IpAddr::from([127, 0, 0, 1]),
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on http://127.0.0.1:{}", s.port)?;
    out.flush()?;
    drop(out);
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    Ok(())
}
