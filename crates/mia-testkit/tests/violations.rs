#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A server dropped with unread violations fails the test.

use mia_testkit::{MockServer, Scenario};

async fn bad_request(server: &MockServer) {
    // Not streaming: a violation.
    let status = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .body(r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
}

#[tokio::test]
#[should_panic(expected = "mock LLM saw protocol violations")]
async fn dropping_with_unread_violations_panics() {
    let server = MockServer::start(Scenario::text(&["x"])).await.unwrap();
    bad_request(&server).await;
    drop(server);
}

#[tokio::test]
async fn taken_violations_are_handled() {
    let server = MockServer::start(Scenario::text(&["x"])).await.unwrap();
    bad_request(&server).await;
    let v = server.take_violations();
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("not streaming"), "{v:?}");
    assert!(server.violations().is_empty());
}

#[test]
fn bundled_scenarios_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let s = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.steps.is_empty(), "{}", path.display());
        n += 1;
    }
    assert!(n >= 2);
}
