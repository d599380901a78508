#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `/api/openapi.json` describes exactly the routes the server answers.
//!
//! The routes are asked of a running server, not of the document: every
//! path the document names and every path-like string literal in the
//! server's sources (where a route's path is written) is tried with each
//! method, and a route "is served" unless the server answers 405 or its
//! own "no such route" 404. A route added without documenting it (a plain
//! `Router::route`, a `hidden` operation, a router merged in from outside
//! aide) is served but not in the document, and the test names it.

use std::collections::BTreeSet;
use std::sync::Arc;

use mia_config::Paths;
use mia_core::{Runtime, RuntimeOptions};
use mia_providers::credentials::{Credentials, FileStore};
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

struct Server {
    _dir: tempfile::TempDir,
    _mock: MockServer,
    base: String,
    token: String,
    http: reqwest::Client,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    let mock = MockServer::start(serde_json::from_value::<Scenario>(json!({"steps": []})).unwrap())
        .await
        .unwrap();
    let cfg = json!({
        "model": "openai/gpt-5",
        "providers": {"openai": {"baseURL": mock.openai_base_url(), "apiKey": "k"}},
        "unifier": {"enabled": false}
    });
    std::fs::write(home.join(".config/mia-code/config.json"), cfg.to_string()).unwrap();
    let paths = Paths::new(home.join(".mia-code"), home.clone(), &home.join(".config"));
    let mut opts = RuntimeOptions::new(paths.clone());
    opts.credentials = Arc::new(Credentials::new(
        Arc::new(|_: &str| None),
        None,
        FileStore::in_home(&paths.home),
    ));
    let runtime = Runtime::open(opts).unwrap().0;
    let token = mia_server::new_token();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let t = token.clone();
    tokio::spawn(async move {
        mia_server::serve(listener, runtime, t, std::future::pending())
            .await
            .unwrap();
    });
    Server {
        _dir: dir,
        _mock: mock,
        base,
        token,
        http: reqwest::Client::new(),
    }
}

impl Server {
    /// Whether the server has a route for `method` on `path`: anything but
    /// 405 (a route with other methods) and its own 404 for no route at all.
    /// No body is sent, so a route that takes one refuses before its handler
    /// runs (415), and path parameters are `0`, which no session has.
    async fn answers(&self, method: &str, path: &str) -> bool {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        match r.status().as_u16() {
            405 => false,
            404 => {
                let text = r.text().await.unwrap_or_default();
                let error = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v["error"].as_str().map(str::to_string))
                    .unwrap_or(text);
                !(error.is_empty() || error == "Not Found" || error.starts_with("no API route"))
            }
            _ => true,
        }
    }
}

/// `(METHOD, path)` of every operation in the document.
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let method = method.to_ascii_uppercase();
            if METHODS.contains(&method.as_str()) {
                ops.insert((method, path.clone()));
            }
        }
    }
    ops
}

/// Path-like string literals in the server's sources: `"/…"` made only of
/// characters a route template has. More than the routes (a catch-all, a
/// path in a message) is fine: what is not a route is not served.
fn source_paths() -> BTreeSet<String> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = BTreeSet::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("\"/") {
            let rest = &text[at + 1..];
            let Some(end) = rest.find('"') else { continue };
            let literal = &rest[..end];
            let route_like = literal
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/{}_.-".contains(c));
            if route_like {
                paths.insert(literal.to_string());
            }
        }
    }
    paths
}

/// A concrete path for a template: every `{param}` becomes `0`.
fn concrete(template: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in template.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push('0');
            }
            '}' => in_param = false,
            _ if !in_param => out.push(c),
            _ => {}
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_is_in_openapi_json() {
    let s = start().await;
    let doc: Value = s
        .http
        .get(format!("{}/api/openapi.json", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let documented = operations(&doc);
    assert!(documented.len() >= 50, "too few operations: {documented:?}");

    let sources = source_paths();
    assert!(
        sources.contains("/api/sessions/{id}/fork") && sources.contains("/api/health"),
        "the sources' route paths were not found: {sources:?}"
    );
    let mut templates = sources;
    templates.extend(documented.iter().map(|(_, p)| p.clone()));
    let mut served = BTreeSet::new();
    for template in &templates {
        let path = concrete(template);
        for method in METHODS {
            if s.answers(method, &path).await {
                served.insert((method.to_string(), template.clone()));
            }
        }
    }
    let undocumented: Vec<_> = served.difference(&documented).collect();
    let unserved: Vec<_> = documented.difference(&served).collect();
    assert!(
        undocumented.is_empty(),
        "served but missing from /api/openapi.json: {undocumented:?}"
    );
    assert!(
        unserved.is_empty(),
        "in /api/openapi.json but not served: {unserved:?}"
    );
}

/// Each operation says what it is, declares its path's parameters, answers
/// something on success, and needs the token unless it is public; every
/// schema it refers to is in the document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_is_described() {
    let doc = mia_server::openapi();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let public = ["/api/health", "/api/openapi.json"];
    for (path, item) in doc["paths"].as_object().unwrap() {
        let params: Vec<&str> = path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{} {path}", method.to_ascii_uppercase());
            assert!(op["summary"].is_string(), "{at}: no summary");
            for name in &params {
                let declared = op["parameters"].as_array().is_some_and(|ps| {
                    ps.iter()
                        .any(|p| p["in"] == "path" && p["name"] == *name && p["required"] == true)
                });
                assert!(declared, "{at}: path parameter {name} not declared");
            }
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses.keys().any(|k| k.starts_with('2')),
                "{at}: no success response"
            );
            assert!(responses.contains_key("default"), "{at}: no error answer");
            let secured = op["security"] == json!([{"bearer": []}]);
            assert_eq!(secured, !public.contains(&path.as_str()), "{at}: security");
        }
    }
    let text = doc.to_string();
    for (at, _) in text.match_indices("\"$ref\":\"#/components/schemas/") {
        let rest = &text[at + "\"$ref\":\"#/components/schemas/".len()..];
        let name = &rest[..rest.find('"').unwrap()];
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "$ref to a missing schema {name}"
        );
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let renamed: Vec<_> = schemas
        .keys()
        .filter(|k| k.ends_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(
        renamed.is_empty(),
        "two types share a schema name (one got a number): {renamed:?}"
    );
    for name in ["Op", "Event", "Session", "Error", "CreateSession", "Fork"] {
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "no schema {name}"
        );
    }
}
