#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The `mia-mock-llm` binary as scripts use it: start with port 0, read the
//! chosen port from the first line of stdout, send real requests, stop it,
//! read the record file and the exit status.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

fn start(scenario: &str, dir: &std::path::Path) -> (std::process::Child, String) {
    let path = dir.join("scenario.json");
    std::fs::write(&path, scenario).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mia-mock-llm"))
        .args([
            "--scenario",
            path.to_str().unwrap(),
            "--port",
            "0",
            "--exit-on-stdin-eof",
        ])
        .arg("--record")
        .arg(dir.join("record.json"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && !url.ends_with(":0"),
        "{url}"
    );
    (child, url)
}

fn stop(mut child: std::process::Child) -> (i32, String) {
    drop(child.stdin.take());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        assert!(std::time::Instant::now() < deadline, "mock did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn binary_serves_all_three_apis_and_records() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = start(
        r#"{"steps": [
            {"match": {"provider": "openai"}, "response": {"events": [{"text": "hi from openai"}]}},
            {"match": {"provider": "anthropic"}, "response": {"events": [{"text": "hi from claude"}]}},
            {"match": {"provider": "google"}, "response": {"events": [{"text": "hi from gemini"}]}}
        ]}"#,
        dir.path(),
    );
    let http = reqwest::Client::new();
    let body = http
        .post(format!("{url}/v1/chat/completions"))
        .header("authorization", "Bearer secret-key")
        .body(r#"{"model": "gpt-4.1", "stream": true, "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "hello"}]}"#)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("\"content\":\"hi from openai\""), "{body}");
    assert!(body.contains("\"usage\":{"), "{body}");
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");

    let resp = http
        .post(format!("{url}/v1/messages"))
        .header("x-api-key", "secret-key")
        .header("anthropic-version", "2023-06-01")
        .body(r#"{"model": "claude-sonnet-4-20250514", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hello"}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let body = resp.text().await.unwrap();
    assert!(body.starts_with("event: message_start\n"), "{body}");
    assert!(body.contains("\"text\":\"hi from claude\""), "{body}");
    assert!(
        body.trim_end()
            .ends_with("data: {\"type\":\"message_stop\"}"),
        "{body}"
    );

    let body = http
        .post(format!(
            "{url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        ))
        .header("x-goog-api-key", "secret-key")
        .body(r#"{"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}"#)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        body.contains("hi from gemini") && body.contains("\"finishReason\":\"STOP\""),
        "{body}"
    );

    let live = http
        .get(format!("{url}/__mock/requests"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let live: serde_json::Value = serde_json::from_str(&live).unwrap();
    assert_eq!(live.as_array().unwrap().len(), 3, "live request log");

    let (code, stderr) = stop(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("3 requests, 0 violations, 0 unused steps"),
        "{stderr}"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("record.json")).unwrap())
            .unwrap();
    let requests = record["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2]["model"], "gemini-2.5-flash");
    let text = record.to_string();
    assert!(!text.contains("secret-key"), "keys are redacted in records");
}

#[tokio::test]
async fn binary_exits_3_on_protocol_violations() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url) = start(
        r#"{"steps": [{"response": {"events": [{"text": "x"}]}}]}"#,
        dir.path(),
    );
    let http = reqwest::Client::new();
    // Not streaming, and the tool result answers nothing.
    let status = http
        .post(format!("{url}/v1/chat/completions"))
        .body(r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "nope", "content": "x"}]}"#)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    let (code, stderr) = stop(child);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("not streaming") && stderr.contains("nope"),
        "{stderr}"
    );
}

#[test]
fn bad_scenario_fails_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, r#"{"steps": [{"respons": {}}]}"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mia-mock-llm"))
        .args(["--scenario", path.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("respons") && err.contains("README"), "{err}");
    let _ = std::io::stdout().flush();
}
