#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Real processes against one database file: two concurrent writers, and a
//! writer SIGKILLed at random moments (durability of acknowledged commits).
//!
//! The child processes are this test binary re-run with `--ignored --exact
//! child_writer` and `MIA_STORE_CHILD_*` variables, so no extra binary is needed.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mia_protocol::{MessageId, MessageMetadata, NewMessage, PartContent, Role, SessionId};
use mia_store::{NewSession, SessionDb, SessionPatch};
use rand::Rng;

/// Deterministic, self-checking content for message number `n` of `writer`.
fn payload(writer: &str, n: u64) -> Vec<PartContent> {
    vec![
        PartContent::text(format!("{writer}:{n}:{}", "x".repeat((n % 97) as usize))),
        PartContent::ToolCall {
            call_id: format!("{writer}-{n}"),
            tool: "bash".into(),
            input: serde_json::json!({"command": format!("echo {n}"), "writer": writer}),
            signature: None,
        },
        PartContent::ToolResult {
            call_id: format!("{writer}-{n}"),
            tool: "bash".into(),
            output: format!("{n}\n"),
            is_error: false,
            duration_ms: Some(n),
            permission: None,
            sandbox: None,
            hooks: Vec::new(),
        },
    ]
}

fn check_payload(db: &SessionDb, session: &SessionId, id: &MessageId, writer: &str, n: u64) {
    let m = db
        .get_message(session, id)
        .unwrap_or_else(|e| panic!("acknowledged message {id} ({writer} #{n}) is missing: {e}"));
    let got: Vec<PartContent> = m.parts.into_iter().map(|p| p.content).collect();
    assert_eq!(got, payload(writer, n), "content of {writer} #{n} intact");
}

/// Entry point of a child process; does nothing unless spawned by a test below.
#[test]
#[ignore = "child process entry point, run by the tests in this file"]
fn child_writer() {
    let Ok(db_path) = std::env::var("MIA_STORE_CHILD_DB") else {
        return;
    };
    let session: SessionId = std::env::var("MIA_STORE_CHILD_SESSION")
        .unwrap()
        .parse()
        .unwrap();
    let writer = std::env::var("MIA_STORE_CHILD_NAME").unwrap();
    let count: u64 = std::env::var("MIA_STORE_CHILD_COUNT")
        .unwrap()
        .parse()
        .unwrap();
    let mut db = SessionDb::open(&db_path).unwrap();
    println!("START {}", mia_protocol::now_ms());
    for n in 0..count {
        let mut metadata = MessageMetadata::default();
        metadata.extra.insert("n".into(), n.into());
        let m = db
            .add_message(
                &session,
                NewMessage {
                    role: Some(Role::Assistant),
                    metadata,
                    parts: payload(&writer, n),
                    ..Default::default()
                },
            )
            .unwrap();
        // Acknowledge only after the commit returned.
        println!("ACK {} {n}", m.id);
        if n % 10 == 9 {
            db.update_session(
                &session,
                SessionPatch {
                    title: Some(format!("{writer} at {n}")),
                    ..Default::default()
                },
            )
            .unwrap();
        }
    }
    println!("END {}", mia_protocol::now_ms());
}

fn spawn_child(db: &Path, session: &SessionId, name: &str, count: u64) -> Child {
    // Wine's CreateProcess, right after a process was killed, now and then
    // fails with ERROR_INTERNAL_ERROR (1359) and succeeds when asked again;
    // no Windows API documents that error for CreateProcess, so only it is
    // retried, and each retry is printed.
    let mut tries = 0;
    loop {
        match try_spawn_child(db, session, name, count) {
            Err(e) if cfg!(windows) && e.raw_os_error() == Some(1359) && tries < 5 => {
                tries += 1;
                eprintln!("spawning {name} failed with {e}; retry {tries} (Wine)");
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other.unwrap(),
        }
    }
}

fn try_spawn_child(
    db: &Path,
    session: &SessionId,
    name: &str,
    count: u64,
) -> std::io::Result<Child> {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MIA_STORE_CHILD_DB", db)
        .env("MIA_STORE_CHILD_SESSION", session.to_string())
        .env("MIA_STORE_CHILD_NAME", name)
        .env("MIA_STORE_CHILD_COUNT", count.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

enum Line {
    Start(i64),
    Ack(MessageId, u64),
    End(i64),
}

fn parse(line: &str) -> Option<Line> {
    // libtest may print "test child_writer ... " on the same line first.
    let mut it = line
        .split_whitespace()
        .skip_while(|w| !matches!(*w, "START" | "END" | "ACK"));
    match it.next()? {
        "START" => Some(Line::Start(it.next()?.parse().ok()?)),
        "END" => Some(Line::End(it.next()?.parse().ok()?)),
        "ACK" => Some(Line::Ack(
            it.next()?.parse().ok()?,
            it.next()?.parse().ok()?,
        )),
        _ => None,
    }
}

/// Forward parsed lines of a child's stdout to a channel from a reader thread.
fn read_lines(child: &mut Child) -> mpsc::Receiver<Line> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(parsed) = parse(&line)
                && tx.send(parsed).is_err()
            {
                break;
            }
        }
    });
    rx
}

fn new_session(path: &Path) -> SessionId {
    let mut db = SessionDb::open(path).unwrap();
    db.create_session(NewSession {
        directory: "/proc-test".into(),
        title: "processes".into(),
        ..Default::default()
    })
    .unwrap()
    .id
}

#[test]
fn two_processes_write_the_same_database_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.db");
    let session = new_session(&path);
    const N: u64 = 150;
    let mut a = spawn_child(&path, &session, "alpha", N);
    let mut b = spawn_child(&path, &session, "beta", N);
    let (ra, rb) = (read_lines(&mut a), read_lines(&mut b));
    let collect = |rx: mpsc::Receiver<Line>| {
        let (mut start, mut end, mut acks) = (None, None, Vec::new());
        for line in rx {
            match line {
                Line::Start(t) => start = Some(t),
                Line::End(t) => end = Some(t),
                Line::Ack(id, n) => acks.push((id, n)),
            }
        }
        (start, end, acks)
    };
    let (sa, ea, acks_a) = collect(ra);
    let (sb, eb, acks_b) = collect(rb);
    let status_a = a.wait_with_output().unwrap();
    let status_b = b.wait_with_output().unwrap();
    assert!(
        status_a.status.success(),
        "alpha failed: {}",
        String::from_utf8_lossy(&status_a.stderr)
    );
    assert!(
        status_b.status.success(),
        "beta failed: {}",
        String::from_utf8_lossy(&status_b.stderr)
    );
    let (sa, ea, sb, eb) = (sa.unwrap(), ea.unwrap(), sb.unwrap(), eb.unwrap());
    assert!(
        sa < eb && sb < ea,
        "the two writers overlapped in time ({sa}..{ea} vs {sb}..{eb})"
    );
    assert_eq!(acks_a.len() as u64, N);
    assert_eq!(acks_b.len() as u64, N);

    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.message_count(&session).unwrap(), 2 * N);
    for (id, n) in &acks_a {
        check_payload(&db, &session, id, "alpha", *n);
    }
    for (id, n) in &acks_b {
        check_payload(&db, &session, id, "beta", *n);
    }
    assert!(db.integrity_check().unwrap().is_empty());
}

#[test]
fn sigkill_never_loses_an_acknowledged_message() {
    let kills: usize = std::env::var("MIA_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.db");
    let session = new_session(&path);
    let mut rng = rand::rng();
    let mut acked: Vec<(MessageId, String, u64)> = Vec::new();
    let mut killed_mid_run = 0;
    for round in 0..kills {
        let name = format!("w{round}");
        let mut child = spawn_child(&path, &session, &name, 1_000_000);
        let rx = read_lines(&mut child);
        // Wait until the child is writing, then let it run a random while.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut first = None;
        while first.is_none() && Instant::now() < deadline {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(Line::Ack(id, n)) => first = Some((id, n)),
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let Some((id, n)) = first else {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "child {name} never acknowledged a write: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        };
        acked.push((id, name.clone(), n));
        let run_for = Duration::from_micros(rng.random_range(0..40_000));
        let until = Instant::now() + run_for;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(Line::Ack(id, n)) => acked.push((id, name.clone(), n)),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        if !status.success() {
            killed_mid_run += 1;
        }
        // Acks already written to the pipe before the kill count too.
        for line in rx.iter() {
            if let Line::Ack(id, n) = line {
                acked.push((id, name.clone(), n));
            }
        }
    }
    assert_eq!(
        killed_mid_run, kills,
        "every child was killed while writing"
    );

    let db = SessionDb::open(&path).unwrap();
    assert!(db.recovery().is_none(), "no corruption after {kills} kills");
    assert_eq!(db.integrity_check().unwrap(), Vec::<String>::new());
    assert_eq!(db.foreign_key_check().unwrap(), Vec::<String>::new());
    let unique: HashSet<_> = acked.iter().map(|(id, _, _)| *id).collect();
    assert_eq!(unique.len(), acked.len());
    for (id, writer, n) in &acked {
        check_payload(&db, &session, id, writer, *n);
    }
    assert!(db.message_count(&session).unwrap() >= acked.len() as u64);
    eprintln!(
        "{kills} kills, {} acknowledged messages all intact",
        acked.len()
    );
}
