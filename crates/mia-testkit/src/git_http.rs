//! A real git remote over HTTP for tests: `git http-backend` (git's own
//! smart-HTTP CGI program) behind a small HTTP/1.1 server on a free port.
//! One request per connection (the answers say `Connection: close`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A running server over the repositories under `root`.
pub struct GitHttp {
    pub host: IpAddr,
    pub port: u16,
    pub root: PathBuf,
}

impl GitHttp {
    /// Serve the bare repositories under `root` on `host`.
    pub fn start(root: &Path, host: IpAddr) -> Self {
        let l = TcpListener::bind((host, 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        let dir = root.to_path_buf();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    let _ = serve(s, &dir);
                });
            }
        });
        Self {
            host,
            port,
            root: root.to_path_buf(),
        }
    }

    /// The clone URL of `name` (`repo.git`).
    pub fn url(&self, name: &str) -> String {
        format!("http://{}:{}/{name}", self.host, self.port)
    }
}

fn serve(s: TcpStream, root: &Path) -> std::io::Result<()> {
    let mut r = BufReader::new(s.try_clone()?);
    let mut w = s;
    let mut line = String::new();
    r.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("GET").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let mut headers: Vec<(String, String)> = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    if header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            if n == 0 {
                let mut end = String::new();
                r.read_line(&mut end)?;
                break;
            }
            let mut chunk = vec![0u8; n + 2];
            r.read_exact(&mut chunk)?;
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = header("content-length").and_then(|n| n.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut cmd = Command::new("git");
    cmd.arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(t) = header("content-type") {
        cmd.env("CONTENT_TYPE", t);
    }
    if let Some(e) = header("content-encoding") {
        cmd.env("HTTP_CONTENT_ENCODING", e);
    }
    if let Some(p) = header("git-protocol") {
        cmd.env("GIT_PROTOCOL", p);
    }
    let mut child = cmd.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&body)?;
    }
    let out = child.wait_with_output()?;
    let text = out.stdout;
    let split = text
        .windows(4)
        .position(|x| x == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| text.windows(2).position(|x| x == b"\n\n").map(|i| (i, 2)));
    let (head, rest) = match split {
        Some((i, n)) => (&text[..i], &text[i + n..]),
        None => (&text[..0], &text[..]),
    };
    let head = String::from_utf8_lossy(head);
    let mut status = "200 OK".to_string();
    let mut out_headers = String::new();
    for l in head.lines() {
        if let Some(v) = l.strip_prefix("Status:") {
            status = v.trim().to_string();
        } else if !l.trim().is_empty() {
            out_headers.push_str(l.trim_end());
            out_headers.push_str("\r\n");
        }
    }
    write!(
        w,
        "HTTP/1.1 {status}\r\n{out_headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        rest.len()
    )?;
    w.write_all(rest)?;
    w.flush()
}
