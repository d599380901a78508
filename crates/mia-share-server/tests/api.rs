#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The share server's API, driven over real HTTP against SQLite and against
//! a real PostgreSQL server (`MIA_SHARE_TEST_POSTGRES`: the admin URL of a
//! throwaway cluster, which scripts/test starts; each test gets its own
//! database). In CI a missing PostgreSQL fails the PostgreSQL half instead
//! of skipping it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use mia_protocol::{SHARE_PAYLOAD_VERSION, SharePayload, SharedMessage, SharedPart, SharedSession};
use mia_share_server::{AppState, Settings, Store};
use serde_json::Value;

const DAY: i64 = 86_400_000;

#[derive(Clone, Copy, Debug)]
enum Db {
    Sqlite,
    Postgres,
}

struct Server {
    base: String,
    clock: Arc<AtomicI64>,
    state: AppState,
    _dir: tempfile::TempDir,
    url: Option<String>,
}

fn postgres_admin() -> Option<String> {
    match std::env::var("MIA_SHARE_TEST_POSTGRES") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "MIA_SHARE_TEST_POSTGRES is not set: scripts/test starts a throwaway PostgreSQL for these tests"
            );
            eprintln!("skipping the PostgreSQL half: MIA_SHARE_TEST_POSTGRES is not set");
            None
        }
    }
}

/// A fresh database on the throwaway cluster.
async fn fresh_pg_db(admin: &str) -> String {
    let (client, conn) = tokio_postgres::connect(admin, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let name = format!(
        "share_test_{}",
        mia_share_server::new_id().to_lowercase().replace('-', "_")
    );
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let (prefix, _) = admin.rsplit_once('/').unwrap();
    format!("{prefix}/{name}")
}

async fn open(db: Db, dir: &tempfile::TempDir, url: Option<&str>) -> Store {
    match db {
        Db::Sqlite => Store::sqlite(&dir.path().join("shares.db")).await.unwrap(),
        Db::Postgres => Store::postgres(url.unwrap()).await.unwrap(),
    }
}

async fn start(db: Db, settings: Settings) -> Option<Server> {
    let dir = tempfile::tempdir().unwrap();
    let url = match db {
        Db::Sqlite => None,
        Db::Postgres => Some(fresh_pg_db(&postgres_admin()?).await),
    };
    let store = open(db, &dir, url.as_deref()).await;
    Some(start_on(store, settings, dir, url).await)
}

async fn start_on(
    store: Store,
    settings: Settings,
    dir: tempfile::TempDir,
    url: Option<String>,
) -> Server {
    let clock = Arc::new(AtomicI64::new(1_800_000_000_000));
    let c = clock.clone();
    let state = AppState::with_clock(store, settings, Arc::new(move || c.load(Ordering::SeqCst)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let s = state.clone();
    tokio::spawn(async move {
        let _ = mia_share_server::serve(listener, s, std::future::pending()).await;
    });
    Server {
        base,
        clock,
        state,
        _dir: dir,
        url,
    }
}

fn payload(title: &str) -> SharePayload {
    SharePayload {
        version: SHARE_PAYLOAD_VERSION.into(),
        session: SharedSession {
            id: "019a0000-0000-7000-8000-000000000001".into(),
            title: title.into(),
            project: "app".into(),
            created_at: 1_799_999_000_000,
            updated_at: None,
            model: Some("mock/model".into()),
            agent: Some("build".into()),
        },
        messages: vec![SharedMessage {
            id: "m1".into(),
            role: "user".into(),
            parts: vec![SharedPart::Text {
                content: "Fix the **bug**".into(),
            }],
            metadata: None,
            created_at: 1_799_999_001_000,
        }],
        diffs: vec![],
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn create(s: &Server, p: &SharePayload) -> Value {
    let r = http()
        .post(format!("{}/api/sessions", s.base))
        .json(p)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    r.json().await.unwrap()
}

async fn each_db(f: impl AsyncFn(Db)) {
    f(Db::Sqlite).await;
    f(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_view_update_revoke() {
    each_db(async |db| {
        let Some(s) = start(db, Settings::default()).await else {
            return;
        };
        let c = http();
        let made = create(&s, &payload("First title")).await;
        let id = made["id"].as_str().unwrap();
        let secret = made["secret"].as_str().unwrap();
        assert_eq!(id.len(), 22, "{db:?}");
        assert_eq!(made["url"], format!("{}/s/{id}", s.base));
        assert_eq!(made["expires_at"], 1_800_000_000_000i64 + 30 * DAY);

        let page = c.get(format!("{}/s/{id}", s.base)).send().await.unwrap();
        assert_eq!(page.status(), 200);
        let h = page.headers().clone();
        assert_eq!(h["x-robots-tag"], "noindex, nofollow");
        assert!(
            h["content-security-policy"]
                .to_str()
                .unwrap()
                .starts_with("default-src 'none'; style-src 'sha256-")
        );
        assert!(h["content-type"].to_str().unwrap().starts_with("text/html"));
        let html = page.text().await.unwrap();
        assert!(html.contains("First title") && html.contains("<strong>bug</strong>"));

        let stored: SharePayload = c
            .get(format!("{}/api/sessions/{id}", s.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(stored, payload("First title"));

        let put = |auth: Option<&str>, p: SharePayload| {
            let mut r = c.put(format!("{}/api/sessions/{id}", s.base)).json(&p);
            if let Some(a) = auth {
                r = r.bearer_auth(a);
            }
            r.send()
        };
        assert_eq!(put(None, payload("x")).await.unwrap().status(), 401);
        assert_eq!(
            put(Some("not-the-secret"), payload("x"))
                .await
                .unwrap()
                .status(),
            403
        );
        let mut other = payload("x");
        other.session.id = "another-session".into();
        assert_eq!(put(Some(secret), other).await.unwrap().status(), 422);
        let r = put(Some(secret), payload("Second title")).await.unwrap();
        assert_eq!(r.status(), 200);
        let html = c
            .get(format!("{}/s/{id}", s.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(html.contains("Second title") && !html.contains("First title"));

        let del = |auth: &str| {
            c.delete(format!("{}/api/sessions/{id}", s.base))
                .bearer_auth(auth)
                .send()
        };
        assert_eq!(del("wrong").await.unwrap().status(), 403);
        assert_eq!(del(secret).await.unwrap().status(), 204);
        assert_eq!(
            c.get(format!("{}/s/{id}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            410
        );
        assert_eq!(
            c.get(format!("{}/api/sessions/{id}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            410
        );
        assert_eq!(del(secret).await.unwrap().status(), 410);
        assert_eq!(
            put(Some(secret), payload("again")).await.unwrap().status(),
            410
        );
        let metrics = c
            .get(format!("{}/metrics", s.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            metrics.contains("mia_share_shares_created_total 1"),
            "{metrics}"
        );
        assert!(
            metrics.contains("mia_share_shares_revoked_total 1"),
            "{metrics}"
        );
        assert!(metrics.contains("mia_share_live_shares 0"), "{metrics}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_ids_are_404_and_bad_input_is_explained() {
    each_db(async |db| {
        let Some(s) = start(db, Settings::default()).await else {
            return;
        };
        let c = http();
        for id in [
            "AAAAAAAAAAAAAAAAAAAAAA",
            "short",
            "..%2F..%2Fetc",
            "a'or'1'='1aaaaaaaaaaaaa",
        ] {
            assert_eq!(
                c.get(format!("{}/s/{id}", s.base))
                    .send()
                    .await
                    .unwrap()
                    .status(),
                404,
                "{id}"
            );
            assert_eq!(
                c.get(format!("{}/api/sessions/{id}", s.base))
                    .send()
                    .await
                    .unwrap()
                    .status(),
                404,
                "{id}"
            );
        }
        let r = c
            .post(format!("{}/api/sessions", s.base))
            .body("{not json")
            .header("content-type", "application/json")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        assert!(r.text().await.unwrap().contains("not a share payload"));
        let mut p = payload("x");
        p.version = "2.0".into();
        let r = c
            .post(format!("{}/api/sessions", s.base))
            .json(&p)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        for ttl in ["0", "366"] {
            let r = c
                .post(format!("{}/api/sessions?ttl_days={ttl}", s.base))
                .json(&payload("x"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "ttl {ttl}");
        }
        let r = c
            .post(format!("{}/api/sessions?ttl_days=2", s.base))
            .json(&payload("x"))
            .send()
            .await
            .unwrap();
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["expires_at"], 1_800_000_000_000i64 + 2 * DAY);
        let health: Value = c
            .get(format!("{}/healthz", s.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(health["status"], "ok");
        assert_eq!(
            health["database"],
            match db {
                Db::Sqlite => "sqlite",
                Db::Postgres => "postgresql",
            }
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shares_expire_and_are_purged() {
    each_db(async |db| {
        let Some(s) = start(db, Settings::default()).await else {
            return;
        };
        let c = http();
        let a = create(&s, &payload("short")).await;
        let r = c
            .post(format!("{}/api/sessions?ttl_days=10", s.base))
            .json(&payload("long"))
            .send()
            .await
            .unwrap();
        let b: Value = r.json().await.unwrap();
        let (a, b) = (
            a["id"].as_str().unwrap().to_string(),
            b["id"].as_str().unwrap().to_string(),
        );
        s.clock.fetch_add(10 * DAY + 1, Ordering::SeqCst);
        // Past its time a share is gone at once, before any purge.
        assert_eq!(
            c.get(format!("{}/s/{b}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            410
        );
        assert_eq!(
            c.get(format!("{}/s/{a}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
        let (expired, forgotten) = s.state.purge().await.unwrap();
        assert_eq!((expired, forgotten), (1, 0));
        assert_eq!(
            c.get(format!("{}/api/sessions/{b}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            410
        );
        // Tombstones are forgotten after 90 days: then the id is unknown.
        s.clock.fetch_add(91 * DAY, Ordering::SeqCst);
        let (expired, forgotten) = s.state.purge().await.unwrap();
        assert_eq!((expired, forgotten), (1, 1));
        assert_eq!(
            c.get(format!("{}/s/{b}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            404
        );
        assert_eq!(
            c.get(format!("{}/s/{a}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            410
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn size_and_rate_limits_answer_clearly() {
    each_db(async |db| {
        let settings = Settings {
            max_payload_bytes: 4096,
            write_limit: 3,
            read_limit: 5,
            ..Default::default()
        };
        let Some(s) = start(db, settings).await else {
            return;
        };
        let c = http();
        let mut big = payload("big");
        big.messages[0].parts = vec![SharedPart::Text {
            content: "x".repeat(5000),
        }];
        let r = c
            .post(format!("{}/api/sessions", s.base))
            .json(&big)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 413);
        assert!(r.text().await.unwrap().contains("4096 bytes"));
        let made = create(&s, &payload("ok")).await;
        let id = made["id"].as_str().unwrap();
        let r = c
            .post(format!("{}/api/sessions", s.base))
            .json(&payload("ok"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let r = c
            .post(format!("{}/api/sessions", s.base))
            .json(&payload("ok"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429, "the fourth write in a minute");
        let retry: u64 = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=20).contains(&retry), "{retry}");
        assert!(r.text().await.unwrap().contains("too many requests"));
        for _ in 0..5 {
            assert_eq!(
                c.get(format!("{}/s/{id}", s.base))
                    .send()
                    .await
                    .unwrap()
                    .status(),
                200
            );
        }
        assert_eq!(
            c.get(format!("{}/s/{id}", s.base))
                .send()
                .await
                .unwrap()
                .status(),
            429
        );
        // Health and metrics are never limited (probes).
        for _ in 0..10 {
            assert_eq!(
                c.get(format!("{}/healthz", s.base))
                    .send()
                    .await
                    .unwrap()
                    .status(),
                200
            );
        }
        let metrics = c
            .get(format!("{}/metrics", s.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            metrics.contains("mia_share_rate_limited_total 2"),
            "{metrics}"
        );
        assert!(
            metrics.contains("mia_share_payload_too_large_total 1"),
            "{metrics}"
        );
    })
    .await;
}

/// Two instances on one database are one service: any of them serves and
/// revokes what another created (no state outside the database).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_one_database() {
    each_db(async |db| {
        let Some(a) = start(db, Settings::default()).await else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let store_b = match db {
            Db::Sqlite => Store::sqlite(&a._dir.path().join("shares.db"))
                .await
                .unwrap(),
            Db::Postgres => Store::postgres(a.url.as_deref().unwrap()).await.unwrap(),
        };
        let b = start_on(store_b, Settings::default(), dir, None).await;
        let c = http();
        // Concurrent creates through both.
        let mut tasks = Vec::new();
        for i in 0..20 {
            let base = if i % 2 == 0 {
                a.base.clone()
            } else {
                b.base.clone()
            };
            let p = payload(&format!("t{i}"));
            let c = c.clone();
            tasks.push(tokio::spawn(async move {
                let r = c
                    .post(format!("{base}/api/sessions"))
                    .json(&p)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201);
                r.json::<Value>().await.unwrap()
            }));
        }
        let mut made = Vec::new();
        for t in tasks {
            made.push(t.await.unwrap());
        }
        let ids: std::collections::HashSet<&str> =
            made.iter().map(|m| m["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), 20);
        for m in &made {
            let id = m["id"].as_str().unwrap();
            assert_eq!(
                c.get(format!("{}/s/{id}", b.base))
                    .send()
                    .await
                    .unwrap()
                    .status(),
                200
            );
        }
        let (id, secret) = (
            made[0]["id"].as_str().unwrap(),
            made[0]["secret"].as_str().unwrap(),
        );
        let r = c
            .delete(format!("{}/api/sessions/{id}", b.base))
            .bearer_auth(secret)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204);
        assert_eq!(
            c.get(format!("{}/s/{id}", a.base))
                .send()
                .await
                .unwrap()
                .status(),
            410
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_prints_where_it_listens_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mia-share-server"))
        .args(["--host", "127.0.0.1", "--port", "0", "--db"])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.starts_with("listening on http://127.0.0.1:"), "{line}");
    let base = line.trim().trim_start_matches("listening on ").to_string();
    let health: Value = http()
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["database"], "sqlite");
    let r = http()
        .post(format!("{base}/api/sessions"))
        .json(&payload("bin"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let _ = child.kill();
    let _ = child.wait();
    assert!(db.exists());

    // Both stores named: a clear refusal, not a guess.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mia-share-server"))
        .args([
            "--db",
            "a.db",
            "--database-url",
            "postgres://x@127.0.0.1:1/x",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

#[test]
fn ids_carry_128_random_bits() {
    use base64::Engine as _;
    let mut seen = std::collections::HashSet::new();
    let mut ones = [0u32; 128];
    let n = 20_000;
    for _ in 0..n {
        let id = mia_share_server::new_id();
        assert_eq!(id.len(), 22);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&id)
            .unwrap();
        assert_eq!(raw.len(), 16);
        for (i, bit) in ones.iter_mut().enumerate() {
            *bit += u32::from(raw[i / 8] >> (i % 8) & 1);
        }
        assert!(seen.insert(id));
    }
    // Every one of the 128 bits is set about half the time (±6 sigma).
    // Ids never start with `-` (base64url 62 = 0b111110: the top six bits
    // of the first byte), so those six bits are set in 31 (bits 3-7) or 32
    // (bit 2) of the 63 patterns left, not exactly half.
    for (i, c) in ones.iter().enumerate() {
        let p = match i {
            3..=7 => 31.0 / 63.0,
            2 => 32.0 / 63.0,
            _ => 0.5,
        };
        let n = f64::from(n);
        let dev = (f64::from(*c) - n * p).abs();
        assert!(
            dev < 6.0 * (n * p * (1.0 - p)).sqrt(),
            "bit {i} set {c} of {n} times"
        );
    }
    assert_eq!(mia_share_server::new_secret().len(), 43);
}

#[test]
fn secrets_are_compared_by_hash_in_constant_time() {
    let secret = mia_share_server::new_secret();
    let stored = mia_share_server::hash_secret(&secret);
    assert_eq!(stored.len(), 32);
    assert!(
        !stored
            .windows(secret.len().min(32))
            .any(|w| w == secret.as_bytes())
    );
    assert!(mia_share_server::secret_matches(&stored, &secret));
    let mut first = secret.clone().into_bytes();
    first[0] ^= 1;
    let mut last = secret.clone().into_bytes();
    *last.last_mut().unwrap() ^= 1;
    for wrong in [
        String::from_utf8(first).unwrap(),
        String::from_utf8(last).unwrap(),
        String::new(),
        format!("{secret}x"),
    ] {
        assert!(!mia_share_server::secret_matches(&stored, &wrong));
    }
    assert!(
        !mia_share_server::secret_matches(&stored[..31], &secret),
        "a truncated hash never matches"
    );
}

/// Every byte of every file under `dir` (recursively).
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push((p, bytes));
            }
        }
    }
    out
}

fn holds(bytes: &[u8], needle: &[u8]) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unshare_erases_the_text_from_every_database_file() {
    each_db(async |db| {
        let Some(s) = start(db, Settings::default()).await else {
            return;
        };
        let marker = format!("erase-me-{}", mia_share_server::new_id());
        let mut p = payload("Erasure");
        // Text that does not compress, so PostgreSQL's TOAST keeps the
        // marker's bytes as they are (compressed, they would be split by
        // control bytes and the search below would prove nothing).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let noise: String = (0..4_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{:x}", x % 0xFFFF_FFFF)
            })
            .collect();
        p.messages[0].parts = vec![SharedPart::Text {
            content: format!("{marker} {noise} {marker}"),
        }];
        let made = create(&s, &p).await;
        let (id, secret) = (
            made["id"].as_str().unwrap().to_string(),
            made["secret"].as_str().unwrap().to_string(),
        );
        // Rendered and stored: the text is in the database now.
        let page = http().get(format!("{}/s/{id}", s.base)).send().await.unwrap();
        assert!(page.text().await.unwrap().contains(&marker), "{db:?}");
        let r = http()
            .delete(format!("{}/api/sessions/{id}", s.base))
            .bearer_auth(&secret)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{db:?}: {}", r.status());
        let files: Vec<(std::path::PathBuf, Vec<u8>)> = match db {
            Db::Sqlite => files_under(s._dir.path()),
            Db::Postgres => {
                let (client, conn) =
                    tokio_postgres::connect(s.url.as_deref().unwrap(), tokio_postgres::NoTls)
                        .await
                        .unwrap();
                tokio::spawn(conn);
                // Written out to the table's files (not only in shared
                // buffers and the WAL), so the files say what they hold.
                client.batch_execute("CHECKPOINT").await.unwrap();
                let data: String = client
                    .query_one("SHOW data_directory", &[])
                    .await
                    .unwrap()
                    .get(0);
                let mut rels = Vec::new();
                for q in [
                    "SELECT pg_relation_filepath('shares')",
                    "SELECT pg_relation_filepath(reltoastrelid) FROM pg_class WHERE relname = 'shares'",
                ] {
                    let rel: Option<String> = client.query_one(q, &[]).await.unwrap().get(0);
                    rels.extend(rel);
                }
                rels.iter()
                    .flat_map(|r| {
                        let base = std::path::Path::new(&data).join(r);
                        let name = base.file_name().unwrap().to_string_lossy().to_string();
                        let dir = base.parent().unwrap().to_path_buf();
                        files_under(&dir)
                            .into_iter()
                            .filter(move |(p, _)| {
                                p.file_name()
                                    .is_some_and(|f| f.to_string_lossy().starts_with(&name))
                            })
                    })
                    .collect()
            }
        };
        assert!(!files.is_empty(), "{db:?}: no files to look in");
        for (path, bytes) in &files {
            assert!(
                !holds(bytes, marker.as_bytes()),
                "{db:?}: the revoked text is still in {}",
                path.display()
            );
        }
        // Still a tombstone: the link answers 410.
        let gone = http().get(format!("{}/s/{id}", s.base)).send().await.unwrap();
        assert_eq!(gone.status(), 410, "{db:?}");
    })
    .await;
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_and_its_directory_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data/shares.db");
    let store = Store::sqlite(&path).await.unwrap();
    // Something written, so the WAL and its index exist.
    let _ = store.purge(0, 0).await.unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.path().join("data")), 0o700);
    for f in ["shares.db", "shares.db-wal", "shares.db-shm"] {
        let p = dir.path().join("data").join(f);
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{f}");
        } else {
            assert_ne!(f, "shares.db", "the database was not created");
        }
    }
    // An existing file with a wider mode is narrowed.
    drop(store);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let _store = Store::sqlite(&path).await.unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_come_from_the_server_not_the_host_header_and_uploads_are_json() {
    let Some(s) = start(Db::Sqlite, Settings::default()).await else {
        return;
    };
    let body = serde_json::to_string(&payload("Links")).unwrap();
    // Not JSON: refused before it is read.
    let r = http()
        .post(format!("{}/api/sessions", s.base))
        .header("content-type", "text/plain")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let r = http()
        .post(format!("{}/api/sessions", s.base))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415, "no content type at all");
    // A forged Host (and X-Forwarded-Host) does not make the link.
    let r = http()
        .post(format!("{}/api/sessions", s.base))
        .header("content-type", "application/json; charset=utf-8")
        .header("host", "evil.example")
        .header("x-forwarded-host", "evil.example")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let made: Value = r.json().await.unwrap();
    let url = made["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("{}/s/", s.base)), "{url}");
    // The page is there at once (rendered in the background or on demand).
    let page = http().get(url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Links"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_sockets_beyond_the_cap_do_not_lock_a_reader_out() {
    let Some(s) = start(Db::Sqlite, Settings::default()).await else {
        return;
    };
    let made = create(&s, &payload("Still reachable")).await;
    let url = made["url"].as_str().unwrap().to_string();
    let addr = s.base.trim_start_matches("http://").to_string();
    // More silent connections than the server's slots.
    let mut held = Vec::new();
    for _ in 0..(mia_share_server::MAX_CONNECTIONS + 100) {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let start = std::time::Instant::now();
    let page = http().get(&url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Still reachable"));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "answered after {:?}",
        start.elapsed()
    );
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_uploader_has_a_storage_quota() {
    each_db(async |db| {
        let settings = Settings {
            bytes_per_uploader: 3_000,
            ..Settings::default()
        };
        let Some(s) = start(db, settings).await else {
            return;
        };
        let sized = |title: &str| {
            let mut p = payload(title);
            p.messages[0].parts = vec![SharedPart::Text {
                content: "y".repeat(1_000),
            }];
            p
        };
        let first = create(&s, &sized("one")).await;
        create(&s, &sized("two")).await;
        // A third would pass 3,000 bytes for this address.
        let r = http()
            .post(format!("{}/api/sessions", s.base))
            .json(&sized("three"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 413, "{db:?}");
        let msg: Value = r.json().await.unwrap();
        assert!(
            msg["error"].as_str().unwrap().contains("per uploader"),
            "{msg}"
        );
        // Updating one of its own replaces its bytes rather than adding.
        let r = http()
            .put(format!(
                "{}/api/sessions/{}",
                s.base,
                first["id"].as_str().unwrap()
            ))
            .bearer_auth(first["secret"].as_str().unwrap())
            .json(&sized("one again"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{db:?}");
        // Unsharing frees the room.
        let r = http()
            .delete(format!(
                "{}/api/sessions/{}",
                s.base,
                first["id"].as_str().unwrap()
            ))
            .bearer_auth(first["secret"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
        create(&s, &sized("three")).await;
    })
    .await;
}
