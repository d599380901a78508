#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `mia-code snapshot ...`, `snapshots` and `diff --session`
//! against a real project, a real hidden repo and a real session store.

use std::path::PathBuf;

use assert_cmd::Command;
use mia_protocol::SessionId;
use mia_snapshot::{CaptureContext, SnapshotConfig, SnapshotRepo};
use mia_store::{NewSession, NewSnapshot, NewStep, SessionDb, SnapshotKind};

struct Env {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }
    fn dir(&self) -> PathBuf {
        dunce::canonicalize(self.project.path()).unwrap()
    }
    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("mia-code").unwrap();
        c.env("MIA_CODE_HOME", self.home.path())
            .env("NO_COLOR", "1")
            .current_dir(self.dir());
        c
    }
    fn write(&self, rel: &str, body: &str) {
        let p = self.dir().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.dir().join(rel)).ok()
    }
    fn db(&self) -> SessionDb {
        SessionDb::open(self.home.path().join("data.db")).unwrap()
    }
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn capture_diff_restore_from_the_cli() {
    let env = Env::new();
    env.write("a.txt", "one\n");
    env.write("img.png", "fake");
    env.write("node_modules/x/index.js", "x\n");
    let out = env
        .cmd()
        .args(["snapshot", "capture", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    // The key set is the contract, not the order.
    keys.sort();
    assert_eq!(keys, ["excluded", "files", "hash", "ms"]);
    // Binary files are stored too; a heavy directory is noted, not stored.
    assert_eq!(v["files"], 2);
    assert_eq!(v["excluded"][0]["path"], "node_modules/");
    assert_eq!(v["excluded"][0]["reason"], "excluded-dir");
    let hash = v["hash"].as_str().unwrap().to_string();

    env.write("a.txt", "two\n");
    let out = env
        .cmd()
        .args(["snapshot", "diff", &hash, "--format", "patch"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let patch = stdout(&out);
    assert!(patch.contains("-one\n+two\n"), "{patch}");
    let out = env
        .cmd()
        .args(["snapshot", "diff", &hash, "--worktree", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v[0]["file"], "a.txt");
    assert_eq!(v[0]["status"], "modified");
    let out = env
        .cmd()
        .args(["snapshot", "diff", &hash, "--format", "stat"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("1 file changed, 1 insertion(+), 1 deletion(-)"),
        "{}",
        stdout(&out)
    );
    let out = env
        .cmd()
        .args(["snapshot", "diff", &hash])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("■ a.txt [modified]"),
        "{}",
        stdout(&out)
    );

    let out = env
        .cmd()
        .args(["snapshot", "restore", &hash, "--paths", "a.txt"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.read("a.txt").as_deref(), Some("one\n"));
}

/// What the runtime will do for one tool call: snapshot, run, record.
fn runtime_step(
    env: &Env,
    db: &mut SessionDb,
    session: SessionId,
    msg: &str,
    call: &str,
    path: &str,
    f: impl FnOnce(),
) {
    let mut repo = SnapshotRepo::open(
        env.dir(),
        SnapshotConfig {
            store_root: Some(env.home.path().join("snapshots")),
            ..SnapshotConfig::default()
        },
    )
    .unwrap();
    let ctx = CaptureContext {
        session_id: Some(session.to_string()),
        message_id: Some(msg.into()),
        tool_call_id: Some(call.into()),
    };
    let pending = repo.begin_step(ctx, Some(&[PathBuf::from(path)])).unwrap();
    f();
    let before = pending.before.clone();
    let rec = repo.finish_step(pending).unwrap();
    db.add_snapshot(&NewSnapshot {
        session_id: session,
        hash: before.hash.clone(),
        message_id: Some(msg.into()),
        tool_call_id: Some(call.into()),
        kind: SnapshotKind::Step,
        files: before.files,
        excluded: serde_json::json!([]),
        excluded_total: 0,
        mode: "paths".into(),
        ms: before.ms,
        unavailable: None,
    })
    .unwrap();
    db.add_snapshot_step(&NewStep {
        id: rec.id.clone(),
        session_id: session,
        message_id: rec.message_id.clone(),
        tool_call_id: rec.tool_call_id.clone(),
        kind: "tool".into(),
        before_hash: rec.before.clone(),
        after_hash: rec.after.clone(),
        record: serde_json::to_value(&rec).unwrap(),
    })
    .unwrap();
}

fn session_with_steps(env: &Env) -> SessionId {
    env.write("src/auth.ts", "auth v1\n");
    env.write("notes.txt", "mine\n");
    let mut db = env.db();
    let s = db
        .create_session(NewSession {
            directory: env.dir().to_string_lossy().into_owned(),
            ..Default::default()
        })
        .unwrap();
    let out = env
        .cmd()
        .args([
            "snapshot",
            "capture",
            "--session",
            &s.id.to_string(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    runtime_step(env, &mut db, s.id, "msg-1", "tc-1", "src/auth.ts", || {
        env.write("src/auth.ts", "auth v2\n")
    });
    runtime_step(env, &mut db, s.id, "msg-2", "tc-2", "src/types.ts", || {
        env.write("src/types.ts", "types\n")
    });
    s.id
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        stdout(out),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn session_snapshots_and_diff() {
    let env = Env::new();
    let sid = session_with_steps(&env);
    let id = sid.to_string();

    let out = env
        .cmd()
        .args(["snapshots", "--session", &id])
        .output()
        .unwrap();
    ok(&out);
    let text = stdout(&out);
    assert!(text.starts_with("Snapshots:\n"), "{text}");
    assert!(
        text.contains("#1") && text.contains("msg-1") && text.contains("src/auth.ts (modify)"),
        "{text}"
    );
    assert!(text.contains("src/types.ts (create)"), "{text}");

    let out = env
        .cmd()
        .args(["diff", "--session", &id, "--format", "stat"])
        .output()
        .unwrap();
    ok(&out);
    assert!(stdout(&out).contains("2 files changed"), "{}", stdout(&out));
    let out = env
        .cmd()
        .args([
            "diff",
            "--session",
            &id,
            "--message",
            "msg-1",
            "--format",
            "patch",
        ])
        .output()
        .unwrap();
    ok(&out);
    assert!(stdout(&out).contains("-auth v1\n+auth v2\n") && !stdout(&out).contains("types"));

    // Only the files the session touched appear in the session diff, even
    // when the user edits others.
    env.write("notes.txt", "mine, edited\n");
    let out = env
        .cmd()
        .args(["diff", "--session", &id, "--format", "json"])
        .output()
        .unwrap();
    ok(&out);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let files: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/auth.ts", "src/types.ts"]);
    let out = env
        .cmd()
        .args(["snapshots", "--session", &id, "--json"])
        .output()
        .unwrap();
    ok(&out);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["steps"].as_array().unwrap().len(), 2);
    assert_eq!(v["steps"][0]["changes"][0]["path"], "src/auth.ts");
}

#[test]
fn gc_applies_retention_and_keeps_recent_snapshots() {
    let env = Env::new();
    let sid = session_with_steps(&env);
    let mut db = env.db();
    runtime_step(&env, &mut db, sid, "msg-3", "tc-3", "src/third.ts", || {
        env.write("src/third.ts", "third\n")
    });
    drop(db);
    // Snapshot rows now: baseline B, before tc-1 (= B), before tc-2, before tc-3.
    let out = env
        .cmd()
        .args(["snapshot", "gc", "--keep", "1", "--json"])
        .output()
        .unwrap();
    ok(&out);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    // The baseline and the newest stay; the rows before tc-1 and tc-2 go
    // (tc-1's tree is the baseline's, so it stays reachable).
    assert_eq!(v["pruned_snapshots"], 2, "{v}");
    assert_eq!(v["kept_snapshots"], 2, "{v}");
    assert!(v["gc"]["bytes_after"].as_u64().unwrap() > 0);
    // The kept snapshots still diff.
    let out = env
        .cmd()
        .args(["diff", "--session", &sid.to_string(), "--format", "stat"])
        .output()
        .unwrap();
    ok(&out);
    assert!(stdout(&out).contains("3 files changed"), "{}", stdout(&out));
}

/// `sessions.retentionDays`: `snapshot gc` deletes the sessions nobody
/// touched for that long (their snapshots' refs with them), keeps the
/// recent ones, and gives the database's free space back.
#[test]
fn gc_deletes_sessions_past_their_retention_and_shrinks_the_database() {
    let env = Env::new();
    let old = session_with_steps(&env);
    let mut db = env.db();
    let recent = db
        .create_session(NewSession {
            directory: env.dir().to_string_lossy().into_owned(),
            ..Default::default()
        })
        .unwrap();
    // Enough history in the old session for its deletion to free pages.
    for i in 0..200 {
        db.add_message(
            &old,
            mia_protocol::NewMessage::new(
                mia_protocol::Role::User,
                vec![mia_protocol::PartContent::text("history ".repeat(200 + i))],
            ),
        )
        .unwrap();
    }
    drop(db);
    assert!(
        !refs_of(&env, &old).is_empty(),
        "the old session has snapshot refs"
    );
    // Forty days pass for the old session.
    let conn = rusqlite::Connection::open(env.home.path().join("data.db")).unwrap();
    let forty_days_ago = mia_protocol::now_ms() - 40 * 24 * 3600 * 1000;
    conn.execute(
        "UPDATE sessions SET updated_at = ?1 WHERE id = ?2",
        rusqlite::params![forty_days_ago, old.to_string()],
    )
    .unwrap();
    drop(conn);
    let xdg = tempfile::tempdir().unwrap();
    let write_config = |body: &str| {
        std::fs::create_dir_all(xdg.path().join("mia-code")).unwrap();
        std::fs::write(xdg.path().join("mia-code/config.json"), body).unwrap();
    };
    // Without the key nothing is deleted.
    write_config("{}");
    let out = env
        .cmd()
        .env("XDG_CONFIG_HOME", xdg.path())
        .args(["snapshot", "gc", "--json"])
        .output()
        .unwrap();
    ok(&out);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["sessions"]["deleted"], serde_json::json!([]), "{v}");
    assert!(env.db().get_session(&old).is_ok());
    // With it, the old one goes and the recent one stays.
    write_config(r#"{"sessions": {"retentionDays": 30}}"#);
    let out = env
        .cmd()
        .env("XDG_CONFIG_HOME", xdg.path())
        .args(["snapshot", "gc", "--json"])
        .output()
        .unwrap();
    ok(&out);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["sessions"]["retention_days"], 30, "{v}");
    assert_eq!(
        v["sessions"]["deleted"],
        serde_json::json!([old.to_string()]),
        "{v}"
    );
    assert!(
        env.db().get_session(&old).is_err(),
        "the old session is gone"
    );
    assert!(
        env.db().get_session(&recent.id).is_ok(),
        "the recent one stays"
    );
    let before = v["database"]["bytes_before"].as_u64().unwrap();
    let after = v["database"]["bytes_after"].as_u64().unwrap();
    assert_eq!(v["database"]["vacuumed"], true, "{v}");
    assert!(after < before, "the database shrank: {before} -> {after}");
    // The old session's snapshot refs went with it.
    let left = refs_of(&env, &old);
    assert!(
        left.is_empty(),
        "no ref of the deleted session is left: {left:?}"
    );
}

/// The snapshot store's files named after `session` (its refs are plain
/// files under `refs/mia/s/<session>/`).
fn refs_of(env: &Env, session: &SessionId) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![env.home.path().join("snapshots")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.to_string_lossy().contains(&session.to_string()) {
                found.push(p.clone());
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    found
}
