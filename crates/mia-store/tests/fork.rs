#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Forking a session (spec 020): exactly the messages up to the fork point,
//! in order, with new ids; one transaction; the depth limit; bad fork points.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mia_protocol::{
    MessageId, MessageMetadata, MessageType, NewMessage, PartContent, Role, SessionId,
};
use mia_store::{ForkRequest, MAX_FORK_DEPTH, MessageQuery, NewSession, SessionDb, StoreError};

fn db_in(dir: &Path) -> SessionDb {
    SessionDb::open(dir.join("data.db")).unwrap()
}

fn session(db: &mut SessionDb, title: &str) -> SessionId {
    db.create_session(NewSession {
        directory: "/tmp/project".into(),
        title: title.into(),
        agent: Some("build".into()),
        model: Some("anthropic/claude-sonnet-4-5".into()),
        ..Default::default()
    })
    .unwrap()
    .id
}

fn add(db: &mut SessionDb, s: &SessionId, role: Role, text: &str) -> MessageId {
    db.add_message(
        s,
        NewMessage {
            role: Some(role),
            parts: vec![PartContent::text(text)],
            ..Default::default()
        },
    )
    .unwrap()
    .id
}

fn texts(db: &SessionDb, s: &SessionId) -> Vec<String> {
    db.get_messages(
        s,
        &MessageQuery {
            include_compacted: true,
            ..Default::default()
        },
    )
    .unwrap()
    .into_iter()
    .flat_map(|m| m.parts.into_iter())
    .filter_map(|p| match p.content {
        PartContent::Text { text, .. } => Some(text),
        _ => None,
    })
    .collect()
}

fn fork(db: &mut SessionDb, s: &SessionId, m: Option<MessageId>) -> mia_store::Forked {
    db.fork_session(ForkRequest {
        source: *s,
        message: m,
        directory: None,
    })
    .unwrap()
}

#[test]
fn fork_copies_exactly_the_messages_up_to_the_fork_point_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = db_in(dir.path());
    let s = session(&mut db, "fix-auth-bug");
    let mut ids = Vec::new();
    for i in 0..40 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        ids.push(add(&mut db, &s, role, &format!("m{i}")));
    }
    // Every message in the same millisecond: only `seq` orders them.
    {
        let conn = rusqlite::Connection::open(dir.path().join("data.db")).unwrap();
        conn.execute(
            "UPDATE messages SET created_at = 1700000000000 WHERE session_id = ?1",
            [s.to_string()],
        )
        .unwrap();
    }
    let forked = fork(&mut db, &s, Some(ids[24]));
    let child = forked.session.id;
    assert_eq!(forked.copied, 25);
    assert_eq!(forked.fork_point, ids[24]);

    let mut want: Vec<String> = (0..25).map(|i| format!("m{i}")).collect();
    want.push(format!("Forked from session {s} at message {}", ids[24]));
    assert_eq!(texts(&db, &child), want);

    // New ids everywhere; the source is untouched.
    let child_msgs = db.get_messages(&child, &MessageQuery::default()).unwrap();
    let source_msgs = db.get_messages(&s, &MessageQuery::default()).unwrap();
    assert_eq!(source_msgs.len(), 40);
    let old_ids: HashSet<String> = source_msgs.iter().map(|m| m.id.to_string()).collect();
    let old_parts: HashSet<String> = source_msgs
        .iter()
        .flat_map(|m| m.parts.iter().map(|p| p.id.to_string()))
        .collect();
    for m in &child_msgs {
        assert!(!old_ids.contains(&m.id.to_string()), "message id reused");
        assert_eq!(m.session_id, child);
        for p in &m.parts {
            assert!(!old_parts.contains(&p.id.to_string()), "part id reused");
            assert_eq!(p.message_id, m.id);
        }
    }
    // Roles kept, the marker last and typed.
    for (c, o) in child_msgs[..25].iter().zip(source_msgs.iter()) {
        assert_eq!(c.role, o.role);
        assert_eq!(c.created_at, o.created_at);
    }
    let marker = child_msgs.last().unwrap();
    assert_eq!(marker.message_type, MessageType::Fork);
    assert_eq!(marker.role, Role::System);
    assert_eq!(marker.id, forked.marker.id);

    // Metadata and inherited settings.
    let c = db.get_session(&child).unwrap();
    assert_eq!(c.parent_id, Some(s));
    assert_eq!(c.title, "fix-auth-bug (fork)");
    assert_eq!(c.agent.as_deref(), Some("build"));
    assert_eq!(c.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
    let f = c.fork.unwrap();
    assert_eq!(f.source_session_id, s);
    assert_eq!(f.source_message_id, ids[24]);
    assert_eq!(f.fork_depth, 1);
    assert!(f.forked_at > 0);

    // New messages in the child come after the copies; paging works.
    add(&mut db, &child, Role::User, "after");
    let t = texts(&db, &child);
    assert_eq!(t.last().unwrap(), "after");
    let page = db
        .get_messages(
            &child,
            &MessageQuery {
                after: Some(child_msgs[9].id),
                limit: Some(3),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(page.len(), 3);
    assert_eq!(page[0].id, child_msgs[10].id);
}

#[test]
fn default_fork_point_is_the_last_message_and_titles_number_siblings() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = db_in(dir.path());
    let s = session(&mut db, "fix-auth-bug");
    add(&mut db, &s, Role::User, "a");
    let last = add(&mut db, &s, Role::Assistant, "b");
    let f1 = fork(&mut db, &s, None);
    assert_eq!(f1.fork_point, last);
    assert_eq!(f1.copied, 2);
    let f2 = fork(&mut db, &s, None);
    let f21 = fork(&mut db, &f2.session.id, None);
    let f3 = fork(&mut db, &s, None);
    assert_eq!(f1.session.title, "fix-auth-bug (fork)");
    assert_eq!(f2.session.title, "fix-auth-bug (fork 2)");
    assert_eq!(f21.session.title, "fix-auth-bug (fork 2.1)");
    assert_eq!(f3.session.title, "fix-auth-bug (fork 3)");
    assert_eq!(f21.session.fork.as_ref().unwrap().fork_depth, 2);
    // The fork of a fork copies the fork's marker too (it is part of its history).
    assert_eq!(f21.copied, 3);

    let tree = mia_store::build_tree(
        db.list_sessions(&mia_store::SessionFilter::default())
            .unwrap(),
    );
    assert_eq!(tree.len(), 1);
    let kids: Vec<&str> = tree[0]
        .children
        .iter()
        .map(|c| c.item.session.title.as_str())
        .collect();
    assert_eq!(
        kids,
        [
            "fix-auth-bug (fork)",
            "fix-auth-bug (fork 2)",
            "fix-auth-bug (fork 3)"
        ]
    );
    assert_eq!(tree[0].children[1].children.len(), 1);
}

#[test]
fn bad_fork_points_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = db_in(dir.path());
    let a = session(&mut db, "a");
    let b = session(&mut db, "b");
    let err = db
        .fork_session(ForkRequest {
            source: a,
            message: None,
            directory: None,
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidForkPoint { .. }), "{err}");
    assert!(err.to_string().contains("no messages yet"), "{err}");

    add(&mut db, &a, Role::User, "a1");
    let of_b = add(&mut db, &b, Role::User, "b1");
    let err = db
        .fork_session(ForkRequest {
            source: a,
            message: Some(of_b),
            directory: None,
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidForkPoint { .. }), "{err}");
    assert!(
        err.to_string().contains(&format!("belongs to session {b}")),
        "{err}"
    );
    assert!(err.to_string().contains("InvalidForkPointError"), "{err}");

    let err = db
        .fork_session(ForkRequest {
            source: a,
            message: Some(MessageId::new()),
            directory: None,
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidForkPoint { .. }), "{err}");

    // A message a compaction summary replaced is hidden: not a fork point.
    let hidden = add(&mut db, &a, Role::Assistant, "a2");
    let summary = db
        .add_message(
            &a,
            NewMessage {
                role: Some(Role::Assistant),
                message_type: MessageType::CompactionSummary,
                parts: vec![PartContent::CompactionSummary {
                    summary: "the summary".into(),
                    compacted_messages: 2,
                }],
                ..Default::default()
            },
        )
        .unwrap()
        .id;
    {
        let conn = rusqlite::Connection::open(dir.path().join("data.db")).unwrap();
        conn.execute(
            "UPDATE messages SET compacted_by = ?1 WHERE session_id = ?2 AND id != ?1",
            [summary.to_string(), a.to_string()],
        )
        .unwrap();
    }
    let err = db
        .fork_session(ForkRequest {
            source: a,
            message: Some(hidden),
            directory: None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("compaction summary"), "{err}");

    // A compacted session forks with its summary; the archive comes along, still hidden.
    let f = fork(&mut db, &a, None);
    assert_eq!(f.fork_point, summary);
    let visible = db
        .get_messages(&f.session.id, &MessageQuery::default())
        .unwrap();
    assert_eq!(visible.len(), 2, "summary + marker visible");
    assert_eq!(visible[0].message_type, MessageType::CompactionSummary);
    let all = db
        .get_messages(
            &f.session.id,
            &MessageQuery {
                include_compacted: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(all.len(), 4);
    // compacted_by points at the child's own summary, not the parent's.
    assert!(
        all.iter()
            .filter_map(|m| m.compacted_by)
            .all(|c| c == visible[0].id)
    );

    // Forking before the summary (at a message it did not replace) keeps the
    // messages it later hid: at that point they were the conversation.
    // (Here every earlier message was replaced, so check with a fresh session.)
    let c = session(&mut db, "c");
    let c1 = add(&mut db, &c, Role::User, "c1");
    let c2 = add(&mut db, &c, Role::Assistant, "c2");
    let cs = add(&mut db, &c, Role::Assistant, "summary of c1");
    {
        let conn = rusqlite::Connection::open(dir.path().join("data.db")).unwrap();
        conn.execute(
            "UPDATE messages SET compacted_by = ?1 WHERE id = ?2",
            [cs.to_string(), c1.to_string()],
        )
        .unwrap();
    }
    let f = fork(&mut db, &c, Some(c2));
    let visible = texts(&db, &f.session.id);
    assert_eq!(visible[..2], ["c1".to_string(), "c2".to_string()]);
    let msgs = db
        .get_messages(&f.session.id, &MessageQuery::default())
        .unwrap();
    assert_eq!(msgs.len(), 3, "c1 is visible in the fork");
}

#[test]
fn depth_is_limited_and_promote_starts_a_new_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = db_in(dir.path());
    let mut s = session(&mut db, "deep");
    add(&mut db, &s, Role::User, "hi");
    for depth in 1..=MAX_FORK_DEPTH {
        let f = fork(&mut db, &s, None);
        assert_eq!(f.session.fork.as_ref().unwrap().fork_depth, depth);
        s = f.session.id;
    }
    let before = db.session_count().unwrap();
    let err = db
        .fork_session(ForkRequest {
            source: s,
            message: None,
            directory: None,
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::ForkDepthExceeded { .. }), "{err}");
    assert!(err.to_string().contains("ForkDepthExceededError"), "{err}");
    assert!(err.to_string().contains("promote"), "{err}");
    assert_eq!(db.session_count().unwrap(), before, "nothing created");

    // Promote: top-level, fork metadata kept; its forks start at depth 1.
    let p = db.promote_session(&s).unwrap();
    assert_eq!(p.parent_id, None);
    assert_eq!(p.fork.as_ref().unwrap().fork_depth, MAX_FORK_DEPTH);
    let f = fork(&mut db, &s, None);
    assert_eq!(f.session.fork.as_ref().unwrap().fork_depth, 1);
    let err = db.promote_session(&p.id).unwrap_err();
    assert!(err.to_string().contains("already a top-level"), "{err}");
}

#[test]
fn ids_inside_parts_are_remapped() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = db_in(dir.path());
    let s = session(&mut db, "r");
    let first = add(&mut db, &s, Role::User, "edit it");
    let revert = db
        .add_message(
            &s,
            NewMessage {
                role: Some(Role::System),
                message_type: MessageType::Revert,
                parts: vec![PartContent::Revert {
                    target_message_id: Some(first),
                    restored: vec!["a.txt".into()],
                    removed: vec![],
                    conflicts: vec![],
                    pre_revert_snapshot: Some("abc".into()),
                }],
                metadata: MessageMetadata::default(),
                ..Default::default()
            },
        )
        .unwrap()
        .id;
    let f = fork(&mut db, &s, Some(revert));
    let msgs = db
        .get_messages(&f.session.id, &MessageQuery::default())
        .unwrap();
    let PartContent::Revert {
        target_message_id, ..
    } = &msgs[1].parts[0].content
    else {
        panic!("revert part copied as a revert part");
    };
    assert_eq!(*target_message_id, Some(msgs[0].id));
    assert_ne!(*target_message_id, Some(first));
}

#[test]
fn a_fork_that_fails_part_way_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = db_in(dir.path());
    let s = session(&mut db, "x");
    for i in 0..50 {
        add(&mut db, &s, Role::User, &format!("m{i}"));
    }
    let path = dir.path().join("data.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    // Fail the 30th copied part: the whole fork must roll back.
    conn.execute_batch(
        "CREATE TRIGGER fail_fork BEFORE INSERT ON parts WHEN (SELECT count(*) FROM parts) >= 80 BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
    )
    .unwrap();
    let sessions = db.session_count().unwrap();
    let err = db
        .fork_session(ForkRequest {
            source: s,
            message: None,
            directory: None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("injected failure"), "{err}");
    assert_eq!(db.session_count().unwrap(), sessions);
    let messages: i64 = conn
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(messages, 50);
    conn.execute_batch("DROP TRIGGER fail_fork").unwrap();
    let f = fork(&mut db, &s, None);
    assert_eq!(f.copied, 50);
}

#[test]
fn stats_count_a_forks_own_cost_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = db_in(dir.path());
    let s = session(&mut db, "cost");
    let costly = |cost: f64| NewMessage {
        role: Some(Role::Assistant),
        parts: vec![PartContent::text("x")],
        metadata: MessageMetadata {
            cost_usd: Some(cost),
            ..Default::default()
        },
        ..Default::default()
    };
    db.add_message(&s, costly(0.5)).unwrap();
    let f = fork(&mut db, &s, None).session.id;
    db.add_message(&f, costly(0.25)).unwrap();
    let stats = db
        .session_stats(&mia_store::project_id_for("/tmp/project"))
        .unwrap();
    assert!((stats[&s].cost_usd - 0.5).abs() < 1e-9);
    assert!((stats[&f].cost_usd - 0.25).abs() < 1e-9);
}

/// Entry point of a child process; does nothing unless spawned below.
#[test]
#[ignore = "child process entry point, run by the test below"]
fn child_forker() {
    let Ok(db_path) = std::env::var("MIA_STORE_FORK_DB") else {
        return;
    };
    let source: SessionId = std::env::var("MIA_STORE_FORK_SESSION")
        .unwrap()
        .parse()
        .unwrap();
    let mut db = SessionDb::open(&db_path).unwrap();
    loop {
        let f = fork(&mut db, &source, None);
        println!("FORKED {}", f.session.id);
    }
}

/// kill -9 while forking, again and again: no half fork is ever left, and
/// every fork the child acknowledged (printed after `fork_session`
/// returned, i.e. after its commit) is there, complete.
#[test]
fn sigkill_mid_fork_never_leaves_a_half_fork() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.db");
    let mut db = SessionDb::open(&path).unwrap();
    let s = session(&mut db, "big");
    for i in 0..1500 {
        add(&mut db, &s, Role::User, &format!("m{i}"));
    }
    drop(db);
    let mut rng_state = 0x9e37_79b9_u64;
    let mut acknowledged: Vec<String> = Vec::new();
    for round in 0..4 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "child_forker",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("MIA_STORE_FORK_DB", &path)
            .env("MIA_STORE_FORK_SESSION", s.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the first acknowledged fork, then kill at a random moment after.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(id) = line.strip_prefix("FORKED ") {
                    let _ = tx.send(id.trim().to_string());
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("round {round}: the child never forked"));
        acknowledged.push(first);
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        let wait = Duration::from_millis(rng_state % 60);
        let until = Instant::now() + wait;
        while Instant::now() < until {
            std::thread::yield_now();
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // Every acknowledgement written before the kill counts.
        reader.join().unwrap();
        acknowledged.extend(rx.try_iter());
    }
    let db = SessionDb::open(&path).unwrap();
    let forks: Vec<_> = db
        .list_sessions(&mia_store::SessionFilter::default())
        .unwrap()
        .into_iter()
        .filter(|i| i.session.parent_id == Some(s))
        .collect();
    assert!(acknowledged.len() >= 4, "every round acknowledged a fork");
    for id in &acknowledged {
        assert!(
            forks.iter().any(|f| f.session.id.to_string() == *id),
            "the acknowledged fork {id} was lost"
        );
    }
    for f in forks {
        assert_eq!(
            f.message_count, 1501,
            "fork {} is complete: 1500 copies + the marker",
            f.session.id
        );
    }
    assert!(db.integrity_check().unwrap().is_empty());
}
