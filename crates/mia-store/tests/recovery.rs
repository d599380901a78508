#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Migration, corruption recovery and legacy import.

use mia_protocol::{NewMessage, PartContent, Role};
use mia_store::{MessageQuery, MigrationError, OpenOptions, SessionDb, SessionFilter, StoreError};

const V1: &str = include_str!("../../../migrations/0001_init.sql");

#[test]
fn an_old_database_migrates_forward_keeping_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.db");
    {
        // A database as version 1 of mia-code left it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(V1).unwrap();
        conn.execute_batch("PRAGMA user_version = 1").unwrap();
        conn.execute(
            "INSERT INTO sessions (id, slug, project_id, directory, title, version, created_at, updated_at) VALUES ('0193b4d2-7c1e-7a51-9f0e-2c4b5d6e7f80', 'old-1', 'p', '/old', 'Old one', '0.0.1', 1, 1)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO messages (id, session_id, role, created_at) VALUES ('0193b4d2-7c1e-7a51-9f0e-2c4b5d6e7f81', '0193b4d2-7c1e-7a51-9f0e-2c4b5d6e7f80', 'user', 2)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO parts (id, message_id, type, content, \"index\", created_at) VALUES ('0193b4d2-7c1e-7a51-9f0e-2c4b5d6e7f82', '0193b4d2-7c1e-7a51-9f0e-2c4b5d6e7f81', 'text', '{\"type\":\"text\",\"text\":\"hello from v1\"}', 0, 2)",
            [],
        )
        .unwrap();
    }
    let db = SessionDb::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), mia_store::SCHEMA_VERSION);
    let sessions = db.list_sessions(&SessionFilter::default()).unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].session.title, "Old one");
    let msgs = db
        .get_messages(&sessions[0].session.id, &MessageQuery::default())
        .unwrap();
    assert_eq!(msgs[0].parts[0].content, PartContent::text("hello from v1"));
    assert!(db.integrity_check().unwrap().is_empty());
}

#[test]
fn a_database_from_a_newer_build_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future(x); PRAGMA user_version = 999;")
            .unwrap();
    }
    let err = SessionDb::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Migration(MigrationError::TooNew { found: 999, .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("upgrade mia-code"), "{err}");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 999);
}

#[test]
fn a_corrupt_file_is_moved_aside_and_a_fresh_one_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.db");
    let garbage = b"this is definitely not an sqlite database, just some bytes....".repeat(100);
    std::fs::write(&path, &garbage).unwrap();
    let mut db = SessionDb::open(&path).unwrap();
    let recovery = db.recovery().cloned().expect("recovery reported");
    assert!(recovery.backup.exists());
    assert_eq!(
        std::fs::read(&recovery.backup).unwrap(),
        garbage,
        "backup keeps the bytes"
    );
    assert!(
        recovery
            .to_string()
            .contains(&recovery.backup.display().to_string()),
        "message names the backup: {recovery}"
    );
    // The fresh database works.
    let s = db
        .create_session(mia_store::NewSession {
            directory: "/p".into(),
            ..Default::default()
        })
        .unwrap();
    db.add_message(
        &s.id,
        NewMessage::new(Role::User, vec![PartContent::text("ok")]),
    )
    .unwrap();
    drop(db);
    assert!(SessionDb::open(&path).unwrap().recovery().is_none());
}

#[test]
fn a_database_another_process_has_open_is_never_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.db");
    // Another process has the database open: it holds the open lock shared
    // (what every SessionDb does for as long as it is open).
    let garbage = b"not a database at all, while someone else has it open....".repeat(100);
    std::fs::write(&path, &garbage).unwrap();
    let holder = std::fs::File::create(dir.path().join("data.db.lock")).unwrap();
    holder.lock_shared().unwrap();
    let err = SessionDb::open(&path).unwrap_err();
    assert!(
        err.to_string()
            .contains("another mia-code process has it open"),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), garbage, "left in place");
    assert!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().contains("corrupt")),
        "nothing moved"
    );
    // Once nobody has it open, the next open moves it aside as usual.
    drop(holder);
    let db = SessionDb::open(&path).unwrap();
    assert!(db.recovery().is_some());
}

#[test]
fn two_first_launches_racing_on_the_legacy_import_both_succeed() {
    for round in 0..5 {
        let home = tempfile::tempdir().unwrap();
        let legacy = home.path().join(".mia-code-sessions.json");
        std::fs::write(
            &legacy,
            r#"[{"id":"x1","startedAt":1706000000000,"projectRoot":"/p/a"},
                {"id":"x2","startedAt":1706000000001,"projectRoot":"/p/b"},
                {"id":"x3","startedAt":1706000000002,"projectRoot":"/p/c"}]"#,
        )
        .unwrap();
        let db_path = home.path().join(".mia-code/data.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (db_path, legacy, barrier) = (db_path.clone(), legacy.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    SessionDb::open_with(OpenOptions::new(db_path).legacy_json(legacy))
                        .map(|db| db.legacy_import().map(|r| r.imported))
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for r in &results {
            assert!(r.is_ok(), "round {round}: {r:?}");
        }
        let imported: usize = results
            .iter()
            .filter_map(|r| r.as_ref().ok().copied().flatten())
            .sum();
        assert_eq!(
            imported, 3,
            "round {round}: exactly one import: {results:?}"
        );
        let db = SessionDb::open(&db_path).unwrap();
        assert_eq!(
            db.list_sessions(&SessionFilter::default()).unwrap().len(),
            3
        );
        assert!(
            home.path()
                .join(".mia-code-sessions.json.migrated")
                .exists()
        );
    }
}

fn legacy_db(home: &std::path::Path, json: &str) -> SessionDb {
    let legacy = home.join(".mia-code-sessions.json");
    std::fs::write(&legacy, json).unwrap();
    SessionDb::open_with(OpenOptions::new(home.join(".mia-code/data.db")).legacy_json(&legacy))
        .unwrap()
}

#[test]
fn legacy_array_is_imported_and_renamed() {
    let home = tempfile::tempdir().unwrap();
    let db = legacy_db(
        home.path(),
        r#"[
          {"id":"a","startedAt":"2025-01-23T14:30:00Z","model":"claude-3","projectRoot":"/proj/a","initialized":true},
          {"id":"b","startedAt":1706000000000,"model":"gpt-4","projectRoot":"/proj/b"}
        ]"#,
    );
    let report = db.legacy_import().cloned().expect("imported");
    assert_eq!(report.imported, 2);
    assert!(report.skipped.is_empty());
    assert!(!home.path().join(".mia-code-sessions.json").exists());
    assert!(
        home.path()
            .join(".mia-code-sessions.json.migrated")
            .exists()
    );
    assert_eq!(
        report.to_string(),
        "Migrated 2 sessions from JSON to SQLite"
    );
    let mut sessions = db.list_sessions(&SessionFilter::default()).unwrap();
    sessions.sort_by(|a, b| a.session.directory.cmp(&b.session.directory));
    assert_eq!(sessions[0].session.directory, "/proj/a");
    assert_eq!(sessions[0].session.created_at, 1_737_642_600_000);
    assert_eq!(sessions[0].session.model.as_deref(), Some("claude-3"));
    assert_eq!(sessions[1].session.created_at, 1_706_000_000_000);
    assert_eq!(sessions[1].session.model.as_deref(), Some("gpt-4"));
}

#[test]
fn legacy_object_form_skips_malformed_entries_and_reports_them() {
    let home = tempfile::tempdir().unwrap();
    let db = legacy_db(
        home.path(),
        r#"{"sessions": [
          {"startedAt":1,"projectRoot":"/ok/1"},
          "not an object",
          {"startedAt":"yesterday","projectRoot":"/bad/date"},
          {"startedAt":2},
          {"startedAt":3,"projectRoot":"/ok/2"}
        ]}"#,
    );
    let report = db.legacy_import().cloned().unwrap();
    assert_eq!(report.imported, 2);
    let idx: Vec<usize> = report.skipped.iter().map(|s| s.index).collect();
    assert_eq!(idx, vec![1, 2, 3]);
    assert!(report.skipped[2].reason.contains("projectRoot"));
    assert!(report.to_string().contains("skipped 3 malformed entries"));
    assert_eq!(db.session_count().unwrap(), 2);
    assert!(
        home.path()
            .join(".mia-code-sessions.json.migrated")
            .exists()
    );
}

#[test]
fn unreadable_legacy_file_is_left_in_place() {
    let home = tempfile::tempdir().unwrap();
    let db = legacy_db(home.path(), "{ this is not json");
    let report = db.legacy_import().cloned().unwrap();
    assert_eq!(report.imported, 0);
    assert!(report.file_error.is_some());
    assert!(home.path().join(".mia-code-sessions.json").exists());
    assert_eq!(db.session_count().unwrap(), 0);
}

#[test]
fn legacy_file_is_ignored_when_the_database_has_sessions() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".mia-code/data.db");
    let mut db = SessionDb::open(&path).unwrap();
    db.create_session(mia_store::NewSession {
        directory: "/x".into(),
        ..Default::default()
    })
    .unwrap();
    drop(db);
    let db = legacy_db(home.path(), r#"[{"startedAt":1,"projectRoot":"/ok"}]"#);
    assert!(db.legacy_import().is_none());
    assert_eq!(db.session_count().unwrap(), 1);
    assert!(home.path().join(".mia-code-sessions.json").exists());
}
