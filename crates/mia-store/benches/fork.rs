//! Fork benchmark (issue: forks). Not a test: prints figures and a ratio.
//!
//! Forking a 5,000-message session (3 parts each) in one transaction, against
//! the baseline measured in the same run: copying it by loading the messages
//! and re-adding each through the public API (`get_messages` +
//! `add_message`), as a fork without store support would. Budget: ≤ 100 ms.
//!
//! Run: `cargo bench -p mia-store --bench fork`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use mia_protocol::{NewMessage, PartContent, Role};
use mia_store::{ForkRequest, MessageQuery, NewSession, SessionDb};

const MESSAGES: usize = 5_000;

fn parts(n: usize) -> Vec<PartContent> {
    vec![
        PartContent::text(format!(
            "Step {n}: reading and planning. {}",
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

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = SessionDb::open(dir.path().join("data.db")).unwrap();
    let source = db
        .create_session(NewSession {
            directory: "/projects/p".into(),
            title: "big".into(),
            ..Default::default()
        })
        .unwrap()
        .id;
    let t = Instant::now();
    for n in 0..MESSAGES {
        let role = if n % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        db.add_message(&source, NewMessage::new(role, parts(n)))
            .unwrap();
    }
    println!(
        "setup: one session with {MESSAGES} messages ({} parts) in {:.1} s",
        MESSAGES * 3,
        t.elapsed().as_secs_f64()
    );

    let mut ours = Vec::new();
    let mut checkpoints = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        let f = db
            .fork_session(ForkRequest {
                source,
                message: None,
                directory: None,
            })
            .unwrap();
        ours.push(t.elapsed());
        assert_eq!(f.copied, MESSAGES as u64);
        // What the runtime queues right after the reply (not waited for).
        let t = Instant::now();
        db.checkpoint().unwrap();
        checkpoints.push(t.elapsed());
    }
    let mut theirs = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let child = db
            .create_session(NewSession {
                directory: "/projects/p".into(),
                title: "copy".into(),
                parent_id: Some(source),
                ..Default::default()
            })
            .unwrap()
            .id;
        let messages = db.get_messages(&source, &MessageQuery::default()).unwrap();
        for m in messages {
            db.add_message(
                &child,
                NewMessage {
                    role: Some(m.role),
                    message_type: m.message_type,
                    metadata: m.metadata,
                    parts: m.parts.into_iter().map(|p| p.content).collect(),
                    ..Default::default()
                },
            )
            .unwrap();
        }
        theirs.push(t.elapsed());
    }
    let (ours, theirs, checkpoint) = (median(ours), median(theirs), median(checkpoints));
    println!();
    println!("{:<52} {:>10}", "operation (median)", "time");
    println!(
        "{:<52} {:>7.1} ms",
        "fork a 5,000-message session (one transaction)",
        ours.as_secs_f64() * 1e3
    );
    println!(
        "{:<52} {:>7.1} ms",
        "  the WAL checkpoint queued after it (not waited for)",
        checkpoint.as_secs_f64() * 1e3
    );
    println!(
        "{:<52} {:>7.1} ms",
        "baseline: load it and re-add every message",
        theirs.as_secs_f64() * 1e3
    );
    println!(
        "ratio: the fork takes {:.4}× the baseline's time ({:.0}× faster); budget 100 ms: {}",
        ours.as_secs_f64() / theirs.as_secs_f64(),
        theirs.as_secs_f64() / ours.as_secs_f64(),
        if ours <= Duration::from_millis(100) {
            "within"
        } else {
            "OVER"
        }
    );
}
