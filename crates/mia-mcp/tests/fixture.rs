#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Against the fixture server written with the official Python MCP SDK
//! (tests/fixtures/mcp/server.py), over stdio and streamable HTTP: the
//! handshake, tools, text/image/link results, an error result, a timeout, a
//! cancel, `list_changed`, stderr kept, custom headers. Python with `mcp`
//! comes from `MIA_TEST_PYTHON` (scripts/test sets up a venv); in CI a
//! missing one fails instead of skipping.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use mia_mcp::{Connection, Content, Transport};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn python() -> Option<String> {
    let py = std::env::var("MIA_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args(["-c", "import mcp.server.fastmcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(py);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "no Python with the MCP SDK ({py}); scripts/test sets MIA_TEST_PYTHON"
    );
    eprintln!("skipped: no Python with the `mcp` package (set MIA_TEST_PYTHON)");
    None
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/mcp/server.py")
}

fn env() -> BTreeMap<String, String> {
    ["PATH", "HOME", "LANG"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .chain([("FIXTURE_NAME".to_string(), "stdio-fixture".to_string())])
        .collect()
}

async fn exercise(c: &Connection, who: &str) {
    let tools = c.tools(Duration::from_secs(10)).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for t in [
        "echo",
        "add",
        "picture",
        "docs_link",
        "fail",
        "slow",
        "unlock",
    ] {
        assert!(names.contains(&t), "{who}: {t} missing from {names:?}");
    }
    assert!(!names.contains(&"bonus"));
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.input_schema["properties"]["text"]["type"], "string");

    let never = CancellationToken::new();
    let t = Duration::from_secs(10);
    let out = c
        .call("echo", json!({"text": "hi"}), t, &never)
        .await
        .unwrap();
    assert!(out.text().ends_with(": hi"), "{who}: {}", out.text());
    assert!(!out.is_error);
    let out = c
        .call("add", json!({"a": 2, "b": 40}), t, &never)
        .await
        .unwrap();
    assert_eq!(out.text(), "42");
    let out = c.call("picture", json!({}), t, &never).await.unwrap();
    assert!(
        matches!(&out.content[0], Content::Image { media_type, data } if media_type == "image/png" && !data.is_empty()),
        "{:?}",
        out.content
    );
    assert!(out.text().contains("[image image/png"));
    let out = c.call("docs_link", json!({}), t, &never).await.unwrap();
    assert!(
        out.content.iter().any(
            |x| matches!(x, Content::ResourceLink { uri, .. } if uri == "https://example.com/docs")
        ),
        "{:?}",
        out.content
    );
    let out = c.call("fail", json!({}), t, &never).await.unwrap();
    assert!(
        out.is_error && out.text().contains("failed on purpose"),
        "{:?}",
        out
    );

    // A call past its timeout, and one cancelled by the turn.
    let err = c
        .call(
            "slow",
            json!({"seconds": 5}),
            Duration::from_millis(300),
            &never,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, mia_mcp::McpError::Timeout(_)), "{err}");
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let err = c
        .call("slow", json!({"seconds": 5}), t, &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, mia_mcp::McpError::Cancelled), "{err}");

    // list_changed: the next listing has the new tool.
    c.call("unlock", json!({}), t, &never).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !c.tools_changed() {
        assert!(
            std::time::Instant::now() < deadline,
            "{who}: no list_changed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let names: Vec<String> = c
        .tools(t)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&"bonus".to_string()), "{who}: {names:?}");
    assert_eq!(
        c.call("bonus", json!({}), t, &never).await.unwrap().text(),
        "bonus!"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_server() {
    let Some(py) = python() else { return };
    let transport = Transport::Stdio {
        command: py,
        args: vec![fixture().display().to_string(), "stdio".into()],
        env: env(),
        cwd: std::env::temp_dir(),
        confine: None,
    };
    let c = Connection::connect("fixture", &transport, Duration::from_secs(30))
        .await
        .unwrap();
    assert!(c.server_version().unwrap().starts_with("fixture "));
    exercise(&c, "stdio").await;
    let out = c
        .call(
            "echo",
            json!({"text": "x"}),
            Duration::from_secs(10),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        out.text(),
        "echo from stdio-fixture: x",
        "the configured env reached the server"
    );
    // Its stderr is kept.
    assert!(
        c.stderr()
            .iter()
            .any(|l| l.contains("fixture MCP server starting (stdio)")),
        "{:?}",
        c.stderr()
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_and_a_crashing_server_are_clear_errors() {
    let Some(py) = python() else { return };
    let bad = Transport::Stdio {
        command: "/nonexistent/mcp-server".into(),
        args: vec![],
        env: env(),
        cwd: std::env::temp_dir(),
        confine: None,
    };
    let err = Connection::connect("bad", &bad, Duration::from_secs(10))
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("cannot start `/nonexistent/mcp-server`"),
        "{err}"
    );
    let crash = Transport::Stdio {
        command: py,
        args: vec![
            "-c".into(),
            "import sys; print('boom: no config', file=sys.stderr); sys.exit(3)".into(),
        ],
        env: env(),
        cwd: std::env::temp_dir(),
        confine: None,
    };
    let err = Connection::connect("crash", &crash, Duration::from_secs(10))
        .await
        .err()
        .unwrap();
    let text = err.to_string();
    assert!(text.contains("handshake"), "{text}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_server_with_a_header() {
    let Some(py) = python() else { return };
    let port = free_port();
    let mut child = tokio::process::Command::new(&py)
        .arg(fixture())
        .args(["http", &port.to_string()])
        .env("FIXTURE_TOKEN", "s3cret")
        .env("FIXTURE_NAME", "http-fixture")
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Wait for the port (a condition, not a sleep).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP fixture did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Without the header the server refuses: a clear error.
    let no_header = Transport::Http {
        url: url.clone(),
        headers: BTreeMap::new(),
    };
    let err = Connection::connect("web", &no_header, Duration::from_secs(10))
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("handshake"), "{err}");
    let t = Transport::Http {
        url,
        headers: BTreeMap::from([("X-Fixture-Token".to_string(), "s3cret".to_string())]),
    };
    let c = Connection::connect("web", &t, Duration::from_secs(30))
        .await
        .unwrap();
    exercise(&c, "http").await;
    c.close().await;
    let _ = child.kill().await;
}
