#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mia_protocol::{
    ForkInfo, MessageMetadata, MessageType, NewMessage, PartContent, Role, SessionStatus,
    TokenUsage,
};
use mia_store::{
    MessageQuery, NewSession, SessionDb, SessionFilter, SessionPatch, StoreError, build_tree,
    project_id_for,
};

fn db() -> (tempfile::TempDir, SessionDb) {
    let dir = tempfile::tempdir().unwrap();
    let db = SessionDb::open(dir.path().join("data.db")).unwrap();
    (dir, db)
}

fn session(db: &mut SessionDb, dir: &str, title: &str) -> mia_protocol::Session {
    db.create_session(NewSession {
        directory: dir.into(),
        title: title.into(),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn schema_has_spec_tables_indices_and_pragmas() {
    let (dir, db) = db();
    drop(db);
    let conn = rusqlite::Connection::open(dir.path().join("data.db")).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type IN ('table','index') ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for want in [
        "sessions",
        "messages",
        "parts",
        "idx_sessions_project",
        "idx_sessions_directory",
        "idx_sessions_created",
        // Spec 018's message and part indices, as migration 0006 left them:
        // (session_id, seq) replaced (session_id, created_at), and the
        // UNIQUE (message_id, "index") index replaced its duplicate.
        "idx_messages_session_seq",
        "sqlite_autoindex_parts_2",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "missing {want} in {names:?}"
        );
    }
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, mia_store::SCHEMA_VERSION);
}

#[test]
fn create_get_update_archive_delete() {
    let (_dir, mut db) = db();
    let s = session(&mut db, "/work/app", "Fix the auth bug");
    assert!(s.slug.starts_with("fix-the-auth-bug-"), "{}", s.slug);
    assert_eq!(s.project_id, project_id_for("/work/app"));
    assert_eq!(s.status, SessionStatus::Idle);
    assert_eq!(db.get_session(&s.id).unwrap(), s);

    std::thread::sleep(std::time::Duration::from_millis(3));
    let updated = db
        .update_session(
            &s.id,
            SessionPatch {
                title: Some("Renamed".into()),
                status: Some(SessionStatus::Busy),
                model: Some(Some("anthropic/claude-sonnet-4-5".into())),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(updated.title, "Renamed");
    assert_eq!(updated.status, SessionStatus::Busy);
    assert_eq!(
        updated.model.as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
    assert!(
        updated.updated_at > s.updated_at,
        "updated_at moves on update"
    );
    assert_eq!(updated.created_at, s.created_at);

    let archived = db.archive_session(&s.id).unwrap();
    assert!(archived.archived_at.is_some());
    assert!(
        db.list_sessions(&SessionFilter::default())
            .unwrap()
            .is_empty()
    );
    let all = db
        .list_sessions(&SessionFilter {
            include_archived: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(all.len(), 1);

    db.add_message(
        &s.id,
        NewMessage::new(Role::User, vec![PartContent::text("hi")]),
    )
    .unwrap();
    db.delete_session(&s.id).unwrap();
    assert!(matches!(
        db.get_session(&s.id),
        Err(StoreError::SessionNotFound(_))
    ));
    assert!(matches!(
        db.delete_session(&s.id),
        Err(StoreError::SessionNotFound(_))
    ));
    drop(db);
    let conn = rusqlite::Connection::open(_dir.path().join("data.db")).unwrap();
    let orphans: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM parts)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0, "delete cascades to messages and parts");
}

#[test]
fn messages_round_trip_with_parts_in_order() {
    let (_dir, mut db) = db();
    let s = session(&mut db, "/p", "t");
    let before = db.get_session(&s.id).unwrap().updated_at;
    std::thread::sleep(std::time::Duration::from_millis(3));
    let parts = vec![
        PartContent::text("let me look"),
        PartContent::ToolCall {
            call_id: "c1".into(),
            tool: "read".into(),
            input: serde_json::json!({"path": "src/main.rs"}),
            signature: None,
        },
        PartContent::ToolResult {
            call_id: "c1".into(),
            tool: "read".into(),
            output: "fn main() {}".into(),
            is_error: false,
            duration_ms: Some(4),
            permission: None,
            sandbox: None,
            hooks: Vec::new(),
        },
        PartContent::Error {
            kind: "rate_limited".into(),
            message: "slow down".into(),
            retryable: true,
        },
    ];
    let mut metadata = MessageMetadata {
        model: Some("openai/gpt-5".into()),
        tokens: Some(TokenUsage {
            input: 10,
            output: 20,
            cache_read: 3,
            cache_write: 0,
        }),
        cost_usd: Some(0.0012),
        ..Default::default()
    };
    metadata
        .extra
        .insert("custom".into(), serde_json::json!({"k": 1}));
    let stored = db
        .add_message(
            &s.id,
            NewMessage {
                id: None,
                role: Some(Role::Assistant),
                message_type: MessageType::Normal,
                metadata: metadata.clone(),
                parts: parts.clone(),
            },
        )
        .unwrap();
    let loaded = db.get_messages(&s.id, &MessageQuery::default()).unwrap();
    assert_eq!(loaded, vec![stored.clone()]);
    let got: Vec<PartContent> = loaded[0].parts.iter().map(|p| p.content.clone()).collect();
    assert_eq!(got, parts);
    assert_eq!(loaded[0].metadata, metadata);
    assert_eq!(db.get_message(&s.id, &stored.id).unwrap(), stored);
    assert!(db.get_session(&s.id).unwrap().updated_at > before);
}

#[test]
fn add_message_to_missing_session_writes_nothing() {
    let (_dir, mut db) = db();
    let ghost = mia_protocol::SessionId::new();
    let err = db
        .add_message(
            &ghost,
            NewMessage::new(Role::User, vec![PartContent::text("x")]),
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::SessionNotFound(_)), "{err}");
    assert!(err.to_string().contains("mia-code sessions list"));
}

#[test]
fn pagination_after_before_tail() {
    let (_dir, mut db) = db();
    let s = session(&mut db, "/p", "t");
    let ids: Vec<_> = (0..25)
        .map(|i| {
            db.add_message(
                &s.id,
                NewMessage::new(Role::User, vec![PartContent::text(format!("m{i}"))]),
            )
            .unwrap()
            .id
        })
        .collect();
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = db
            .get_messages(
                &s.id,
                &MessageQuery {
                    after,
                    limit: Some(10),
                    ..Default::default()
                },
            )
            .unwrap();
        if page.is_empty() {
            break;
        }
        after = page.last().map(|m| m.id);
        seen.extend(page.into_iter().map(|m| m.id));
    }
    assert_eq!(
        seen, ids,
        "paging forward visits every message once, in order"
    );

    let tail = db
        .get_messages(
            &s.id,
            &MessageQuery {
                limit: Some(5),
                tail: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(tail.iter().map(|m| m.id).collect::<Vec<_>>(), ids[20..]);
    let before = db
        .get_messages(
            &s.id,
            &MessageQuery {
                before: Some(ids[20]),
                limit: Some(5),
                tail: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(before.iter().map(|m| m.id).collect::<Vec<_>>(), ids[15..20]);
    assert_eq!(db.message_count(&s.id).unwrap(), 25);
}

#[test]
fn list_filters_by_project_date_and_status() {
    let (_dir, mut db) = db();
    let a1 = session(&mut db, "/a", "a1");
    let _a2 = session(&mut db, "/a", "a2");
    let b1 = session(&mut db, "/b", "b1");
    db.update_session(
        &b1.id,
        SessionPatch {
            status: Some(SessionStatus::Compacting),
            ..Default::default()
        },
    )
    .unwrap();
    let old = db
        .create_session(NewSession {
            directory: "/a".into(),
            title: "old".into(),
            created_at: Some(1_000),
            ..Default::default()
        })
        .unwrap();

    let by_project = db
        .list_sessions(&SessionFilter {
            project_id: Some(project_id_for("/a")),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(by_project.len(), 3);
    assert!(
        by_project
            .windows(2)
            .all(|w| w[0].session.created_at >= w[1].session.created_at)
    );

    let since = db
        .list_sessions(&SessionFilter {
            directory: Some("/a".into()),
            since: Some(a1.created_at),
            ..Default::default()
        })
        .unwrap();
    assert!(since.iter().all(|i| i.session.id != old.id));
    assert_eq!(since.len(), 2);

    let until = db
        .list_sessions(&SessionFilter {
            until: Some(2_000),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(until.len(), 1);
    assert_eq!(until[0].session.id, old.id);

    let compacting = db
        .list_sessions(&SessionFilter {
            status: Some(SessionStatus::Compacting),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(compacting.len(), 1);
    assert_eq!(compacting[0].session.id, b1.id);
}

#[test]
fn fork_metadata_and_tree() {
    let (_dir, mut db) = db();
    let root = session(&mut db, "/p", "main");
    let m = db
        .add_message(
            &root.id,
            NewMessage::new(Role::User, vec![PartContent::text("x")]),
        )
        .unwrap();
    let fork = |db: &mut SessionDb, parent: &mia_protocol::Session, depth| {
        db.create_session(NewSession {
            directory: "/p".into(),
            title: format!("{} (fork)", parent.title),
            parent_id: Some(parent.id),
            fork: Some(ForkInfo {
                source_session_id: parent.id,
                source_message_id: m.id,
                forked_at: 5,
                fork_depth: depth,
            }),
            ..Default::default()
        })
        .unwrap()
    };
    let a = fork(&mut db, &root, 1);
    let b = fork(&mut db, &root, 1);
    let b1 = fork(&mut db, &b, 2);
    let other = session(&mut db, "/p", "another");
    assert_eq!(db.get_session(&b1.id).unwrap().fork.unwrap().fork_depth, 2);

    let tree = build_tree(db.list_sessions(&SessionFilter::default()).unwrap());
    assert_eq!(tree.len(), 2);
    assert_eq!(tree[0].item.session.id, root.id);
    assert_eq!(tree[0].item.message_count, 1);
    let kids: Vec<_> = tree[0].children.iter().map(|c| c.item.session.id).collect();
    assert_eq!(kids, vec![a.id, b.id]);
    assert_eq!(tree[0].children[1].children[0].item.session.id, b1.id);
    assert_eq!(tree[1].item.session.id, other.id);

    // Deleting a parent keeps the fork and its provenance.
    db.delete_session(&root.id).unwrap();
    let a_after = db.get_session(&a.id).unwrap();
    assert_eq!(a_after.parent_id, None);
    assert_eq!(a_after.fork.unwrap().source_session_id, root.id);
}

#[test]
fn part_from_a_newer_build_is_kept() {
    let (dir, mut db) = db();
    let s = session(&mut db, "/p", "t");
    let m = db
        .add_message(
            &s.id,
            NewMessage::new(Role::User, vec![PartContent::text("x")]),
        )
        .unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("data.db")).unwrap();
    conn.execute(
        "INSERT INTO parts (id, message_id, type, content, \"index\", created_at) VALUES (?1, ?2, 'hologram', '{\"type\":\"hologram\",\"v\":7,\"beam\":1}', 1, 0)",
        rusqlite::params![mia_protocol::PartId::new().to_string(), m.id.to_string()],
    )
    .unwrap();
    let loaded = db.get_message(&s.id, &m.id).unwrap();
    assert_eq!(loaded.parts.len(), 2);
    assert_eq!(loaded.parts[1].content.kind(), "hologram");
}

#[test]
fn empty_directory_is_rejected_with_a_reason() {
    let (_dir, mut db) = db();
    let err = db.create_session(NewSession::default()).unwrap_err();
    assert!(err.to_string().contains("project directory"), "{err}");
}

#[test]
fn parts_can_be_appended_and_metadata_updated() {
    let (_dir, mut db) = db();
    let s = session(&mut db, "/p", "t");
    let m = db
        .add_message(
            &s.id,
            NewMessage::new(
                Role::Assistant,
                vec![PartContent::ToolCall {
                    call_id: "c1".into(),
                    tool: "bash".into(),
                    input: serde_json::json!({"command": "ls"}),
                    signature: None,
                }],
            ),
        )
        .unwrap();
    let added = db
        .append_parts(
            &s.id,
            &m.id,
            vec![PartContent::ToolResult {
                call_id: "c1".into(),
                tool: "bash".into(),
                output: "a\nb".into(),
                is_error: false,
                duration_ms: Some(2),
                permission: None,
                sandbox: None,
                hooks: Vec::new(),
            }],
        )
        .unwrap();
    assert_eq!(added[0].index, 1);
    let meta = MessageMetadata {
        cost_usd: Some(0.5),
        ..Default::default()
    };
    db.update_message_metadata(&s.id, &m.id, &meta).unwrap();
    let loaded = db.get_message(&s.id, &m.id).unwrap();
    assert_eq!(loaded.parts.len(), 2);
    assert_eq!(loaded.parts[1].content.kind(), "tool_result");
    assert_eq!(loaded.metadata.cost_usd, Some(0.5));
    let other = session(&mut db, "/p", "u");
    assert!(matches!(
        db.append_parts(&other.id, &m.id, vec![PartContent::text("x")]),
        Err(StoreError::MessageNotFound { .. })
    ));
}
