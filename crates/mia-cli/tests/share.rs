#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Sharing as a user does it, against a real share server (in-process, on
//! SQLite) and a mock model: secrets planted in the user's text, in tool
//! output (an `.env` file and a source file the agent read) and in a file
//! the agent wrote never reach the server — checked on the server's stored
//! payload and in its database file — and the preview lists each one.
//! Then: list, export, unshare (410), a share revocable after its session
//! was deleted, and the refusals (disabled, no server).

use std::path::PathBuf;

use assert_cmd::Command;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

const USER_SECRET: &str = "sk-ant-api03-USERtextPLANTED0123456789abcdef";
const ENV_PASSWORD: &str = "hunter2-PLANTED-pw";
const ENV_HOST: &str = "db-planted.internal";
const FILE_TOKEN: &str = "ghp_PLANTEDfileTOKEN0123456789abcdefghij";
const WRITTEN_KEY: &str = "AKIAPLANTED0WRITTEN1";

/// Credential shapes a careless session shows (a runbook the agent read):
/// (the secret, the line it stands in, the rule id the preview names).
const CORPUS: &[(&str, &str, &str)] = &[
    (
        "s3cr3t-PLANTED-curl",
        "curl -u deploy:s3cr3t-PLANTED-curl https://api.example.com/v1/deploy",
        "curl-auth-user",
    ),
    (
        "dXNlcjpQTEFOVEVEYmFzaWNQVw==",
        "Authorization: Basic dXNlcjpQTEFOVEVEYmFzaWNQVw==",
        "http-basic-auth",
    ),
    (
        "PLANTED-pgpass-9$x",
        "db.internal:5432:app:admin:PLANTED-pgpass-9$x",
        "pgpass-password",
    ),
    (
        "PLANTEDnetrcPW",
        "machine api.example.com login bot password PLANTEDnetrcPW",
        "netrc-password",
    ),
    (
        "Ym90OlBMQU5URURkb2NrZXJUT0tFTg==",
        r#"{"auths": {"ghcr.io": {"auth": "Ym90OlBMQU5URURkb2NrZXJUT0tFTg=="}}}"#,
        "docker-config-auth",
    ),
    (
        "xapp-1-A0PLANTED1-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "SLACK_APP_TOKEN=xapp-1-A0PLANTED1-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "slack-app-token",
    ),
    (
        "p@ss PLANTED w0rd$x",
        r#"password = "p@ss PLANTED w0rd$x""#,
        "password-assignment",
    ),
    (
        "PLANTEDcookie0123456789abcdef",
        "Set-Cookie: session=PLANTEDcookie0123456789abcdef; HttpOnly; Secure",
        "http-cookie",
    ),
];

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Env {
    fn new(llm: &MockServer, share: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = home.join("work/app");
        std::fs::create_dir_all(home.join(".mia-code")).unwrap();
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(
            home.join(".mia-code.json"),
            json!({
                "model": "anthropic/claude-sonnet-4-5",
                "providers": {"anthropic": {"baseURL": llm.anthropic_base_url(), "apiKey": "test"}},
                "unifier": {"enabled": false},
                "share": {"endpoint": share}
            })
            .to_string(),
        )
        .unwrap();
        std::fs::write(
            project.join(".env"),
            format!("DB_PASSWORD={ENV_PASSWORD}\nDB_HOST={ENV_HOST}\n"),
        )
        .unwrap();
        std::fs::write(
            project.join("src/app.js"),
            format!("const token = \"{FILE_TOKEN}\";\n"),
        )
        .unwrap();
        let runbook: String = CORPUS
            .iter()
            .map(|(_, line, _)| format!("{line}\n"))
            .collect();
        std::fs::write(project.join("RUNBOOK.md"), runbook).unwrap();
        let project = project.canonicalize().unwrap();
        Self {
            _dir: dir,
            home,
            project,
        }
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("MIA_CODE_HOME", self.home.join(".mia-code"))
            .current_dir(&self.project);
        c
    }

    async fn out(&self, args: &[&str]) -> std::process::Output {
        let mut c = self.cmd();
        c.args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }

    async fn ok(&self, args: &[&str]) -> String {
        let out = self.out(args).await;
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

fn planted() -> Vec<&'static str> {
    let mut v = vec![USER_SECRET, ENV_PASSWORD, ENV_HOST, FILE_TOKEN, WRITTEN_KEY];
    v.extend(CORPUS.iter().map(|(secret, _, _)| *secret));
    v
}

async fn llm(home_hint: &str) -> MockServer {
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "deploy"}, "response": {"events": [
            {"tool_call": {"id": "c1", "name": "read", "arguments": {"path": ".env"}}},
            {"tool_call": {"id": "c2", "name": "read", "arguments": {"path": "src/app.js"}}},
            {"tool_call": {"id": "c2b", "name": "read", "arguments": {"path": "RUNBOOK.md"}}}
        ]}},
        {"match": {"has_tool_result": "c2"}, "response": {"events": [
            {"tool_call": {"id": "c3", "name": "write", "arguments": {
                "path": "src/aws.js", "content": format!("export const id = \"{WRITTEN_KEY}\";\n")}}}
        ]}},
        {"match": {"has_tool_result": "c3"}, "response": {"events": [
            {"text": format!("Done. The project is in {home_hint}/work/app. <script>alert(1)</script>")}
        ]}}
    ]}))
    .unwrap();
    MockServer::start(scenario).await.unwrap()
}

struct ShareServer {
    base: String,
    db: PathBuf,
    _dir: tempfile::TempDir,
}

async fn share_server() -> ShareServer {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shares.db");
    let store = mia_share_server::Store::sqlite(&db).await.unwrap();
    let state = mia_share_server::AppState::new(store, mia_share_server::Settings::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(mia_share_server::serve(
        listener,
        state,
        std::future::pending(),
    ));
    ShareServer {
        base,
        db,
        _dir: dir,
    }
}

/// Every byte the share server keeps (the database and its WAL).
fn server_bytes(s: &ShareServer) -> String {
    let mut all = Vec::new();
    for suffix in ["", "-wal"] {
        let mut p = s.db.clone().into_os_string();
        p.push(suffix);
        if let Ok(b) = std::fs::read(PathBuf::from(p)) {
            all.extend(b);
        }
    }
    String::from_utf8_lossy(&all).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_secrets_never_reach_the_share_server() {
    let share = share_server().await;
    // The user's message names the home directory (planted below).
    let server = llm("HOME_PLACEHOLDER").await;
    let env = Env::new(&server, &share.base);
    let home = env.home.canonicalize().unwrap().display().to_string();
    let out = env
        .out(&[
            "run",
            &format!("deploy with key {USER_SECRET} from {home}/work/app"),
            "--allow",
            "read:**",
            "--allow",
            "write:**",
        ])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sessions: Value =
        serde_json::from_str(&env.ok(&["sessions", "list", "--json"]).await).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    // The secrets are really in the session (so the test can fail).
    let shown = env.ok(&["sessions", "show", &id, "--json"]).await;
    for s in [USER_SECRET, ENV_PASSWORD, FILE_TOKEN, WRITTEN_KEY] {
        assert!(shown.contains(s), "{s} is not in the session: {shown}");
    }
    assert!(
        shown.contains("PLANTEDnetrcPW"),
        "the runbook was not read: {shown}"
    );

    // The preview: exactly the payload, and every redaction listed.
    let preview: Value =
        serde_json::from_str(&env.ok(&["share", &id, "--dry-run", "--json"]).await).unwrap();
    let payload_text = preview["payload"].to_string();
    for s in planted() {
        assert!(!payload_text.contains(s), "{s} in the preview payload");
    }
    assert!(
        !payload_text.contains(&home),
        "the home path is in the payload"
    );
    let kinds: Vec<&str> = preview["redactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    for k in [
        "anthropic-api-key",
        "env-value",
        "github-pat",
        "aws-access-token",
        "home-path",
    ]
    .into_iter()
    .chain(CORPUS.iter().map(|(_, _, rule)| *rule))
    {
        assert!(kinds.contains(&k), "{k} not listed: {kinds:?}");
    }
    assert_eq!(preview["server"], share.base);
    assert_eq!(preview["mode"], "ask");

    // Without --yes and without a terminal: refused, nothing sent.
    let out = env.out(&["share", &id]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert!(
        !server_bytes(&share).contains("\"session\""),
        "something was sent"
    );

    let made: Value =
        serde_json::from_str(&env.ok(&["share", &id, "--yes", "--json"]).await).unwrap();
    let mut keys: Vec<&String> = made.as_object().unwrap().keys().collect();
    // The key set is the contract, not the order.
    keys.sort();
    assert_eq!(keys, ["expires_at", "id", "url"]);
    let url = made["url"].as_str().unwrap();
    let share_id = made["id"].as_str().unwrap();
    assert_eq!(url, format!("{}/s/{share_id}", share.base));

    // What the server stores and serves.
    let http = reqwest::Client::new();
    let stored = http
        .get(format!("{}/api/sessions/{share_id}", share.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(stored.contains("[REDACTED:anthropic-api-key]"), "{stored}");
    assert!(
        stored.contains("src/aws.js"),
        "the diff is shared: {stored}"
    );
    let page = http.get(url).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let everything = format!("{stored}{page}{}", server_bytes(&share));
    for s in planted() {
        assert!(!everything.contains(s), "{s} reached the share server");
    }
    assert!(
        !everything.contains(&home),
        "the home path reached the share server"
    );

    // A second share of the same session updates the same link.
    let again: Value =
        serde_json::from_str(&env.ok(&["share", &id, "--yes", "--json", "--update"]).await)
            .unwrap();
    assert_eq!(again["url"], made["url"]);

    // The offline export: the same redacted payload, one inert file.
    let file = env.project.join("export.html");
    env.ok(&["share", &id, "--export", file.to_str().unwrap()])
        .await;
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(html.contains("Content-Security-Policy") && html.contains("Exported from mia-code"));
    assert!(
        !html.to_lowercase().contains("<script"),
        "the export carries a script"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    for s in planted() {
        assert!(!html.contains(s), "{s} in the export");
    }

    // My shares, then the session is deleted: the share stays revocable.
    let list: Value = serde_json::from_str(&env.ok(&["shares", "list", "--json"]).await).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["session_id"], id);
    env.ok(&["sessions", "delete", &id, "--yes"]).await;
    let list: Value = serde_json::from_str(&env.ok(&["shares", "list", "--json"]).await).unwrap();
    assert_eq!(list[0]["session_deleted"], true);
    let text = env.ok(&["unshare", share_id]).await;
    assert!(text.contains("Share revoked"), "{text}");
    assert_eq!(http.get(url).send().await.unwrap().status(), 410);
    let list: Value = serde_json::from_str(&env.ok(&["shares", "list", "--json"]).await).unwrap();
    assert_eq!(list, json!([]));
    // The secret is gone from this machine too.
    let secrets =
        std::fs::read_to_string(env.home.join(".mia-code/share-secrets.json")).unwrap_or_default();
    assert!(!secrets.contains(share_id), "{secrets}");
    server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_mode_and_a_missing_server_are_refused_clearly() {
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "hello"}, "response": {"events": [{"text": "hi"}]}}
    ]}))
    .unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let env = Env::new(&server, "http://127.0.0.1:9");
    env.ok(&["run", "hello"]).await;
    let sessions: Value =
        serde_json::from_str(&env.ok(&["sessions", "list", "--json"]).await).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_string();

    // An unreachable server: a clear error, nothing recorded.
    let out = env.out(&["share", &id, "--yes"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot reach the share server http://127.0.0.1:9"),
        "{err}"
    );
    assert_eq!(env.ok(&["shares", "list", "--json"]).await.trim(), "[]");

    // A project may turn sharing off.
    std::fs::write(
        env.project.join("mia-code.json"),
        r#"{"share": {"mode": "disabled"}}"#,
    )
    .unwrap();
    let out = env.out(&["share", &id, "--yes"]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sharing is disabled"));
    // ... but not point it elsewhere, nor turn on auto sharing.
    std::fs::write(
        env.project.join("mia-code.json"),
        r#"{"share": {"endpoint": "https://evil.example"}}"#,
    )
    .unwrap();
    let out = env.out(&["share", &id, "--dry-run"]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("share.endpoint"));
    std::fs::remove_file(env.project.join("mia-code.json")).unwrap();

    // No server configured at all.
    std::fs::write(
        env.home.join(".mia-code.json"),
        json!({"model": "anthropic/claude-sonnet-4-5", "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}}}).to_string(),
    )
    .unwrap();
    let out = env.out(&["share", &id, "--yes"]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no share server is configured"));
    // Export needs none.
    let file = env.project.join("x.html");
    env.ok(&["share", &id, "--export", file.to_str().unwrap()])
        .await;
    assert!(std::fs::read_to_string(file).unwrap().contains("hi"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_shares_after_each_turn() {
    let share = share_server().await;
    let scenario: Scenario = serde_json::from_value(json!({"steps": [
        {"match": {"last_message_contains": "first"}, "response": {"events": [{"text": "one"}]}},
        {"match": {"last_message_contains": "second"}, "response": {"events": [{"text": "two"}]}}
    ]}))
    .unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let env = Env::new(&server, &share.base);
    std::fs::write(
        env.home.join(".mia-code.json"),
        json!({
            "model": "anthropic/claude-sonnet-4-5",
            "providers": {"anthropic": {"baseURL": server.anthropic_base_url(), "apiKey": "test"}},
            "unifier": {"enabled": false},
            "share": {"endpoint": share.base, "mode": "auto"}
        })
        .to_string(),
    )
    .unwrap();
    env.ok(&["run", "first"]).await;
    let list: Value = serde_json::from_str(&env.ok(&["shares", "list", "--json"]).await).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let sid = list[0]["session_id"].as_str().unwrap().to_string();
    env.ok(&["run", "second", "--session", &sid]).await;
    let list: Value = serde_json::from_str(&env.ok(&["shares", "list", "--json"]).await).unwrap();
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "the same share is updated"
    );
    let page = reqwest::get(list[0]["url"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("one") && page.contains("two"), "{page}");
}
