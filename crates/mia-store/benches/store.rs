//! Store benchmark (issue: foundation). Not a test: prints figures and ratios.
//!
//! Baseline, measured in the same run: the legacy store, one JSON file holding
//! every session and message, rewritten on each append (as the old
//! `~/.mia-code-sessions.json` store did), at 10,000 messages.
//!
//! Run: `cargo bench -p mia-store --bench store`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use mia_protocol::{NewMessage, PartContent, Role, SessionId};
use mia_store::{MessageQuery, NewSession, SessionDb, SessionFilter, project_id_for};
use serde::{Deserialize, Serialize};

const SESSIONS: usize = 10_000;
const PROJECTS: usize = 100;
const BIG_SESSION_MESSAGES: usize = 5_000;
const TOTAL_MESSAGES: usize = 10_000;

#[derive(Serialize, Deserialize, Clone)]
struct LegacyMessage {
    id: String,
    role: String,
    parts: Vec<serde_json::Value>,
    created_at: i64,
}

#[derive(Serialize, Deserialize, Clone)]
struct LegacySession {
    id: String,
    #[serde(rename = "startedAt")]
    started_at: i64,
    #[serde(rename = "projectRoot")]
    project_root: String,
    model: String,
    messages: Vec<LegacyMessage>,
}

fn parts(n: usize) -> Vec<PartContent> {
    vec![
        PartContent::text(format!(
            "Step {n}: reading the file and planning the edit. {}",
            "lorem ipsum ".repeat(8)
        )),
        PartContent::ToolCall {
            call_id: format!("call-{n}"),
            tool: "read".into(),
            input: serde_json::json!({"path": format!("src/module_{}.rs", n % 50)}),
            signature: None,
        },
        PartContent::ToolResult {
            call_id: format!("call-{n}"),
            tool: "read".into(),
            output: "fn main() {\n    println!(\"hello\");\n}\n".repeat(4),
            is_error: false,
            duration_ms: Some(3),
            permission: None,
            sandbox: None,
            hooks: Vec::new(),
        },
    ]
}

fn legacy_parts(n: usize) -> Vec<serde_json::Value> {
    parts(n)
        .iter()
        .map(|p| serde_json::from_str(&p.to_stored_json().unwrap()).unwrap())
        .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(iters: usize, mut f: F) -> Duration {
    let mut samples = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    median(samples)
}

fn fmt(d: Duration) -> String {
    if d.as_micros() < 10_000 {
        format!("{:.1} µs", d.as_nanos() as f64 / 1000.0)
    } else {
        format!("{:.2} ms", d.as_nanos() as f64 / 1e6)
    }
}

fn row(name: &str, ours: Duration, legacy: Duration) {
    let ratio = legacy.as_secs_f64() / ours.as_secs_f64();
    println!(
        "{name:<44} {:>12} {:>12} {:>9.1}×",
        fmt(ours),
        fmt(legacy),
        ratio
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("data.db");
    let legacy_path = dir.path().join("mia-code-sessions.json");

    // ---- setup: 10,000 sessions in 100 projects, 10,000 messages, one session with 5,000.
    let t = Instant::now();
    let mut db = SessionDb::open(&db_path).unwrap();
    let mut legacy: Vec<LegacySession> = Vec::with_capacity(SESSIONS);
    let mut ids: Vec<SessionId> = Vec::with_capacity(SESSIONS);
    for i in 0..SESSIONS {
        let dir = format!("/projects/p{}", i % PROJECTS);
        let s = db
            .create_session(NewSession {
                directory: dir.clone(),
                title: format!("session {i}"),
                ..Default::default()
            })
            .unwrap();
        legacy.push(LegacySession {
            id: s.id.to_string(),
            started_at: s.created_at,
            project_root: dir,
            model: "anthropic/claude-sonnet-4-5".into(),
            messages: Vec::new(),
        });
        ids.push(s.id);
    }
    let big = ids[0];
    for n in 0..TOTAL_MESSAGES {
        let (idx, sid) = if n < BIG_SESSION_MESSAGES {
            (0, big)
        } else {
            let k = 1 + n % (SESSIONS - 1);
            (k, ids[k])
        };
        let role = if n % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        let m = db
            .add_message(&sid, NewMessage::new(role, parts(n)))
            .unwrap();
        legacy[idx].messages.push(LegacyMessage {
            id: m.id.to_string(),
            role: role.as_str().into(),
            parts: legacy_parts(n),
            created_at: m.created_at,
        });
    }
    std::fs::write(&legacy_path, serde_json::to_vec(&legacy).unwrap()).unwrap();
    let legacy_size = std::fs::metadata(&legacy_path).unwrap().len();
    println!(
        "setup: {SESSIONS} sessions, {TOTAL_MESSAGES} messages ({BIG_SESSION_MESSAGES} in one session) in {:.1} s; legacy JSON file {:.1} MB",
        t.elapsed().as_secs_f64(),
        legacy_size as f64 / 1e6
    );
    println!();
    println!(
        "{:<44} {:>12} {:>12} {:>10}",
        "operation (median)", "mia-store", "legacy JSON", "speed-up"
    );

    // ---- append a message with 3 parts
    let mut n = TOTAL_MESSAGES;
    let ours = time(200, || {
        db.add_message(&ids[7], NewMessage::new(Role::User, parts(n)))
            .unwrap();
        n += 1;
    });
    let mut n2 = TOTAL_MESSAGES;
    let theirs = time(20, || {
        legacy[7].messages.push(LegacyMessage {
            id: SessionId::new().to_string(),
            role: "user".into(),
            parts: legacy_parts(n2),
            created_at: 0,
        });
        n2 += 1;
        std::fs::write(&legacy_path, serde_json::to_vec(&legacy).unwrap()).unwrap();
    });
    row("append message (3 parts), fsync'd commit", ours, theirs);
    let theirs_fsync = time(20, || {
        let bytes = serde_json::to_vec(&legacy).unwrap();
        let tmp = legacy_path.with_extension("tmp");
        let mut f = std::fs::File::create(&tmp).unwrap();
        std::io::Write::write_all(&mut f, &bytes).unwrap();
        f.sync_all().unwrap();
        std::fs::rename(&tmp, &legacy_path).unwrap();
    });
    row(
        "  vs legacy made durable (write+fsync+rename)",
        ours,
        theirs_fsync,
    );

    // ---- load a 5,000-message session
    let ours = time(10, || {
        let m = db.get_messages(&big, &MessageQuery::default()).unwrap();
        assert_eq!(m.len(), BIG_SESSION_MESSAGES);
    });
    let big_key = big.to_string();
    let theirs = time(10, || {
        let all: Vec<LegacySession> =
            serde_json::from_slice(&std::fs::read(&legacy_path).unwrap()).unwrap();
        let s = all.into_iter().find(|s| s.id == big_key).unwrap();
        assert_eq!(s.messages.len(), BIG_SESSION_MESSAGES);
    });
    row("load a 5,000-message session with parts", ours, theirs);
    let ours_page = time(50, || {
        let m = db
            .get_messages(
                &big,
                &MessageQuery {
                    limit: Some(100),
                    tail: true,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(m.len(), 100);
    });
    row("  last 100 messages of it (UI page)", ours_page, theirs);

    // ---- list sessions of one project among 10,000
    let project = project_id_for("/projects/p42");
    let ours = time(50, || {
        let l = db
            .list_sessions(&SessionFilter {
                project_id: Some(project.clone()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(l.len(), SESSIONS / PROJECTS);
    });
    let theirs = time(10, || {
        let all: Vec<LegacySession> =
            serde_json::from_slice(&std::fs::read(&legacy_path).unwrap()).unwrap();
        let n = all
            .iter()
            .filter(|s| s.project_root == "/projects/p42")
            .count();
        assert_eq!(n, SESSIONS / PROJECTS);
    });
    row("list one project's sessions among 10,000", ours, theirs);
}
