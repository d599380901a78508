//! `mia-code serve` hardened, and data at rest only the user can read:
//! each test drives the real binary on a free loopback port (raw HTTP/1.1
//! over sockets, bounded waits, every process stopped).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    addr: String,
    token: String,
    home: PathBuf,
    mia_home: PathBuf,
    project: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_in(dir: tempfile::TempDir, extra: &[&str]) -> Server {
    let home = dir.path().join("home");
    let mia_home = home.join(".mia-code");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("mia-code"))
        .args(["serve", "--port", "0", "--no-ui"])
        .args(extra)
        .env("HOME", &home)
        // The user's home on Windows.
        .env("USERPROFILE", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("MIA_CODE_HOME", &mia_home)
        .env_remove("XDG_CONFIG_HOME")
        .current_dir(&project)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .strip_prefix("listening on http://")
        .unwrap()
        .to_string();
    let token = lines
        .next()
        .unwrap()
        .unwrap()
        .strip_prefix("token: ")
        .unwrap()
        .to_string();
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        addr,
        token,
        home,
        mia_home,
        project: project.canonicalize().unwrap(),
        _dir: dir,
    }
}

fn spawn() -> Server {
    spawn_in(tempfile::tempdir().unwrap(), &[])
}

/// One HTTP/1.1 exchange: (status, headers, body).
fn http(
    s: &Server,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(&s.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        s.addr,
        body.len()
    );
    if !extra
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        req.push_str(&format!("Authorization: Bearer {}\r\n", s.token));
    }
    for (k, v) in extra {
        if !v.is_empty() {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    if !body.is_empty() {
        req.push_str("Content-Type: application/json\r\n");
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn get(s: &Server, path: &str) -> (u16, String, String) {
    http(s, "GET", path, &[], "")
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn half_open_connections_do_not_stop_an_authorised_request() {
    let s = spawn();
    // 200 connections from a process without the token, each with a request
    // that never finishes its headers.
    let mut held = Vec::new();
    for _ in 0..200 {
        let mut c = TcpStream::connect(&s.addr).unwrap();
        c.write_all(b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .unwrap();
        held.push(c);
    }
    let start = Instant::now();
    let (status, _, body) = get(&s, "/api/sessions");
    assert_eq!(status, 200, "{body}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    drop(held);
}

#[test]
fn seven_hundred_idle_sockets_do_not_lock_the_token_holder_out() {
    let s = spawn();
    // More silent connections than the server has slots (MAX_CONNECTIONS
    // is 512): each connects and never sends a byte.
    let held: Vec<TcpStream> = (0..700)
        .map(|_| TcpStream::connect(&s.addr).unwrap())
        .collect();
    let start = Instant::now();
    let (status, _, body) = get(&s, "/api/sessions");
    assert_eq!(status, 200, "{body}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "answered after {:?}",
        start.elapsed()
    );
    // A connection that spoke is not the one closed for room: a second
    // request on a kept-alive connection after more silent ones arrive.
    let mut kept = TcpStream::connect(&s.addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let req = format!(
        "GET /api/sessions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
        s.addr, s.token
    );
    kept.write_all(req.as_bytes()).unwrap();
    let mut buf = [0u8; 4096];
    let n = kept.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let more: Vec<TcpStream> = (0..600)
        .map(|_| TcpStream::connect(&s.addr).unwrap())
        .collect();
    kept.write_all(req.as_bytes()).unwrap();
    let n = kept.read(&mut buf).unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
        "the kept-alive connection was closed for room"
    );
    drop((held, more));
}

#[test]
fn a_non_loopback_host_needs_allow_remote() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("mia-code"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--no-ui"])
        .env("HOME", dir.path())
        .env("MIA_CODE_HOME", dir.path().join(".mia-code"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow-remote") && err.contains("clear text"),
        "{err}"
    );
    assert!(!dir.path().join(".mia-code/server.json").exists());
}

#[test]
fn allowed_hosts_keep_the_host_check_on() {
    let s = spawn_in(
        tempfile::tempdir().unwrap(),
        &["--allow-remote", "--allowed-host", "devbox.lan"],
    );
    let (status, _, _) = http(&s, "GET", "/api/sessions", &[("Host", "")], "");
    assert_eq!(status, 200);
    // Raw requests with other Host values.
    for (host, want) in [
        ("devbox.lan:1", "200"),
        ("evil.example", "403"),
        ("devbox.lan.evil.example", "403"),
    ] {
        let mut c2 = TcpStream::connect(&s.addr).unwrap();
        c2.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            c2,
            "GET /api/sessions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
            s.token
        )
        .unwrap();
        let mut r = String::new();
        c2.read_to_string(&mut r).unwrap();
        assert!(r.starts_with(&format!("HTTP/1.1 {want}")), "{host}: {r}");
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_named_like_a_config_does_not_freeze_the_server() {
    let s = spawn();
    let dir = s.project.join("trap");
    std::fs::create_dir(&dir).unwrap();
    let fifo = dir.join("mia-code.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let path = format!("/api/agents?directory={}", dir.display());
    let (status, _, body) = get(&s, &path);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("not a regular file"), "{body}");
    let start = Instant::now();
    let (status, _, _) = get(&s, "/api/health");
    assert_eq!(status, 200);
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[cfg(unix)]
#[test]
fn sigterm_and_sigint_exit_promptly_with_a_stream_open_and_remove_the_token_file() {
    for signal in ["-TERM", "-INT"] {
        let mut s = spawn();
        let info = s.mia_home.join("server.json");
        assert!(info.exists());
        // An open event stream (the UI's).
        let mut stream = TcpStream::connect(&s.addr).unwrap();
        write!(
            stream,
            "GET /api/events?token={} HTTP/1.1\r\nHost: {}\r\n\r\n",
            s.token, s.addr
        )
        .unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut first = [0u8; 12];
        stream.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        let pid = s.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let start = Instant::now();
        let status = loop {
            if let Some(st) = s.child.try_wait().unwrap() {
                break st;
            }
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "{signal}: still running after 3 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{signal}: {status:?}");
        assert!(
            start.elapsed() < Duration::from_millis(1500),
            "{signal}: {:?}",
            start.elapsed()
        );
        assert!(!info.exists(), "{signal}: server.json left behind");
    }
}

#[test]
fn every_input_has_a_limit_and_every_rejection_the_documented_body() {
    let s = spawn();
    let dir = s.project.display().to_string();
    let (status, _, body) = http(
        &s,
        "POST",
        "/api/sessions",
        &[],
        &serde_json::json!({"directory": dir}).to_string(),
    );
    assert_eq!(status, 201, "{body}");
    let id = serde_json::from_str::<serde_json::Value>(&body).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let checks: Vec<(&str, String, String, &str)> = vec![
        (
            "PATCH",
            format!("/api/sessions/{id}"),
            serde_json::json!({"title": "t".repeat(1_900_000)}).to_string(),
            "title is",
        ),
        (
            "PUT",
            format!("/api/settings/keys/{}", "p".repeat(5000)),
            serde_json::json!({"key": "k"}).to_string(),
            "provider id is",
        ),
        (
            "PUT",
            "/api/settings".to_string(),
            serde_json::json!({"agent_models": {"../../x": "openai/gpt-5"}}).to_string(),
            "not a valid name",
        ),
        (
            "POST",
            format!("/api/sessions/{id}/agent"),
            serde_json::json!({"agent": "a".repeat(300)}).to_string(),
            "agent is",
        ),
        (
            "POST",
            "/api/sessions".to_string(),
            "{not json".to_string(),
            "",
        ),
    ];
    for (method, path, body, want) in checks {
        let (status, head, text) = http(&s, method, &path, &[], &body);
        assert_eq!(
            status,
            400,
            "{method} {}: {text}",
            &path[..path.len().min(60)]
        );
        let v: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains(want), "{msg}");
        assert!(head.contains("cache-control: no-store"), "{head}");
    }
    let (status, head, text) = get(&s, "/api/no-such-route");
    assert_eq!(status, 404);
    assert!(
        text.contains("\"error\"") && head.contains("application/json"),
        "{text}"
    );
    // The token in a URL only for the event stream.
    let (status, _, _) = http(
        &s,
        "GET",
        &format!("/api/sessions?token={}", s.token),
        &[("Authorization", "none")],
        "",
    );
    assert_eq!(status, 401);
    // A page elsewhere cannot change anything, even with the token.
    let (status, _, text) = http(
        &s,
        "POST",
        "/api/sessions",
        &[("Origin", "https://evil.example")],
        &serde_json::json!({"directory": dir}).to_string(),
    );
    assert_eq!(status, 403, "{text}");
    let (status, _, _) = http(
        &s,
        "POST",
        "/api/sessions",
        &[("Sec-Fetch-Site", "cross-site")],
        &serde_json::json!({"directory": dir}).to_string(),
    );
    assert_eq!(status, 403);
    let own = format!("http://{}", s.addr);
    let (status, _, text) = http(
        &s,
        "POST",
        "/api/sessions",
        &[("Origin", &own), ("Sec-Fetch-Site", "same-origin")],
        &serde_json::json!({"directory": dir}).to_string(),
    );
    assert_eq!(status, 201, "{text}");
}

#[test]
fn folders_that_are_not_projects_are_refused() {
    let s = spawn();
    let home = s.home.display().to_string();
    let mia = s.mia_home.display().to_string();
    // Each system's own system folders (Windows has no /etc).
    let system: &[&str] = if cfg!(windows) {
        &["C:/", "C:/Windows", "C:/Windows/System32"]
    } else {
        &["/", "/etc", "/proc"]
    };
    for dir in system.iter().copied().chain([home.as_str(), mia.as_str()]) {
        let (status, _, text) = http(
            &s,
            "POST",
            "/api/sessions",
            &[],
            &serde_json::json!({"directory": dir}).to_string(),
        );
        assert_eq!(status, 400, "{dir}: {text}");
        assert!(text.contains("not a project"), "{dir}: {text}");
        let (status, _, text) = get(&s, &format!("/api/files?directory={dir}"));
        assert_eq!(status, 400, "{dir}: {text}");
    }
}

#[cfg(unix)]
#[test]
fn data_at_rest_is_private_fresh_and_after_a_wide_home() {
    let s = spawn();
    // The database is open (WAL mode): its -wal and -shm exist.
    let db = s.mia_home.join("data.db");
    let paths = [
        s.mia_home.clone(),
        db.clone(),
        PathBuf::from(format!("{}-wal", db.display())),
        PathBuf::from(format!("{}-shm", db.display())),
        s.mia_home.join("server.json"),
        s.mia_home.join("logs"),
        s.mia_home.join("logs/mia-code.log"),
    ];
    for p in &paths {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(p), want, "{}", p.display());
    }
    drop(s);

    // A home an older version (or a umask) left readable.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mia_home = dir.path().join("home/.mia-code");
    std::fs::create_dir_all(mia_home.join("logs")).unwrap();
    std::fs::write(mia_home.join("credentials.json"), "{}").unwrap();
    for (p, m) in [
        (mia_home.clone(), 0o755),
        (mia_home.join("logs"), 0o755),
        (mia_home.join("credentials.json"), 0o644),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let s = spawn_in(dir, &[]);
    for p in [
        s.mia_home.clone(),
        s.mia_home.join("logs"),
        s.mia_home.join("credentials.json"),
        s.mia_home.join("data.db"),
    ] {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&p), want, "{}", p.display());
    }
    // `doctor` reports what others could read (and fixes it).
    std::fs::set_permissions(
        s.mia_home.join("credentials.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let doctor = Command::new(assert_cmd::cargo::cargo_bin("mia-code"))
        .args(["doctor"])
        .env("HOME", &s.home)
        .env("XDG_CONFIG_HOME", s.home.join(".config"))
        .env("MIA_CODE_HOME", &s.mia_home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("others could read") && text.contains("credentials.json"),
        "{text}"
    );
    assert_eq!(mode(&s.mia_home.join("credentials.json")), 0o600);
}
