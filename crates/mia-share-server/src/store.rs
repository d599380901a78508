//! Where shares are kept: one SQLite file (the default: zero setup) or a
//! PostgreSQL database (any number of stateless server instances behind a
//! load balancer). Two thin adapters behind one enum rather than sqlx:
//! the workspace already links SQLite through rusqlite (`libsqlite3-sys`
//! may be linked once per build, and sqlx pins another version), and
//! `tokio-postgres` + `deadpool-postgres` are the well-kept plain choice.
//!
//! Schema migrations are numbered per backend and recorded in
//! `schema_migrations`; PostgreSQL takes an advisory lock so instances
//! starting together migrate once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{OptionalExtension, params};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("SQLite database {path}: {message}")]
    Sqlite { path: String, message: String },
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    #[error(
        "the database schema is version {found}, newer than this server ({known}); upgrade the server"
    )]
    TooNew { found: i64, known: i64 },
    #[error("a background task failed: {0}")]
    Task(String),
}

/// What a share is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareMeta {
    pub id: String,
    pub secret_hash: Vec<u8>,
    pub session_id: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: Option<i64>,
    /// Revoked or expired: when, and which.
    pub gone_at: Option<i64>,
    pub gone_reason: Option<String>,
    pub renderer: i64,
}

/// A new share.
#[derive(Debug, Clone)]
pub struct NewShare {
    pub id: String,
    pub secret_hash: Vec<u8>,
    pub session_id: String,
    pub payload: String,
    pub html: String,
    pub renderer: i64,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    /// The client address that uploaded it (the quota's key).
    pub uploader: Option<String>,
}

/// Which stored text to read with the meta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    Html,
    Payload,
    None,
}

const SQLITE_MIGRATIONS: &[&str] = &[
    "CREATE TABLE shares (
        id TEXT PRIMARY KEY,
        secret_hash BLOB NOT NULL,
        session_id TEXT NOT NULL,
        payload TEXT,
        html TEXT,
        renderer INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER,
        gone_at INTEGER,
        gone_reason TEXT
    );
    CREATE INDEX shares_live_expiry ON shares(expires_at) WHERE gone_at IS NULL;
    CREATE INDEX shares_gone ON shares(gone_at) WHERE gone_at IS NOT NULL;",
    // Who uploaded a share (the client address), for the per-uploader quota.
    "ALTER TABLE shares ADD COLUMN uploader TEXT;
    CREATE INDEX shares_uploader ON shares(uploader) WHERE gone_at IS NULL;",
];

const PG_MIGRATIONS: &[&str] = &[
    "CREATE TABLE shares (
        id TEXT PRIMARY KEY,
        secret_hash BYTEA NOT NULL,
        session_id TEXT NOT NULL,
        payload TEXT,
        html TEXT,
        renderer BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        expires_at BIGINT,
        gone_at BIGINT,
        gone_reason TEXT
    );
    CREATE INDEX shares_live_expiry ON shares(expires_at) WHERE gone_at IS NULL;
    CREATE INDEX shares_gone ON shares(gone_at) WHERE gone_at IS NOT NULL;",
    "ALTER TABLE shares ADD COLUMN uploader TEXT;
    CREATE INDEX shares_uploader ON shares(uploader) WHERE gone_at IS NULL;",
];

#[derive(Clone)]
pub enum Store {
    Sqlite(Arc<Sqlite>),
    Postgres(deadpool_postgres::Pool),
}

pub struct Sqlite {
    path: PathBuf,
    writer: Mutex<rusqlite::Connection>,
    readers: Vec<Mutex<rusqlite::Connection>>,
    next: AtomicUsize,
}

impl Sqlite {
    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Sqlite {
            path: self.path.display().to_string(),
            message: e.to_string(),
        }
    }

    fn reader(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        let n = self.readers.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            if let Ok(g) = self.readers[(start + i) % n].try_lock() {
                return g;
            }
        }
        self.readers[start % n]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Create the database file (and a missing directory) only its owner can
/// read: 0600 (SQLite gives its `-wal` and `-shm` files the same mode),
/// the directory 0700. A file that exists with a wider mode is narrowed.
fn private_file(path: &Path) -> Result<(), StoreError> {
    let io = |what: &str, p: &Path, e: std::io::Error| StoreError::Sqlite {
        path: p.display().to_string(),
        message: format!("{what}: {e}"),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(dir)
            .map_err(|e| io("creating the directory", dir, e))?;
    }
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(path).map_err(|e| io("creating", path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for p in [
            path.to_path_buf(),
            PathBuf::from(format!("{}-wal", path.display())),
            PathBuf::from(format!("{}-shm", path.display())),
        ] {
            if let Ok(m) = std::fs::metadata(&p)
                && m.permissions().mode() & 0o077 != 0
            {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| io("making private", &p, e))?;
            }
        }
    }
    drop(f);
    Ok(())
}

fn open_sqlite(path: &Path) -> Result<rusqlite::Connection, StoreError> {
    let e = |e: rusqlite::Error| StoreError::Sqlite {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let c = rusqlite::Connection::open(path).map_err(e)?;
    c.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(e)?;
    c.pragma_update(None, "journal_mode", "WAL").map_err(e)?;
    c.pragma_update(None, "synchronous", "NORMAL").map_err(e)?;
    // What a revoke or an expiry removes is overwritten, not just freed.
    c.pragma_update(None, "secure_delete", "ON").map_err(e)?;
    Ok(c)
}

/// After content was removed: move every page into the database file and
/// empty the WAL, so the removed text is in no file (secure_delete zeroed
/// it in the pages). A reader holding an older snapshot delays the
/// truncation; it is tried again a few times.
fn erase_sqlite(db: &Sqlite) -> Result<(), StoreError> {
    let c = db.writer();
    for attempt in 0..20 {
        let busy: i64 = c
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
            .map_err(|e| db.err(e))?;
        if busy == 0 {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(10 * (attempt + 1)));
    }
    Err(db.err("the WAL could not be emptied: a reader kept it busy"))
}

/// PostgreSQL: rewrite the table (and its TOAST table) so the removed rows'
/// old versions are no longer in its files.
async fn erase_postgres(c: &deadpool_postgres::Object) -> Result<(), StoreError> {
    c.batch_execute("VACUUM FULL shares").await.map_err(pg)
}

fn meta_from_sqlite(r: &rusqlite::Row<'_>) -> rusqlite::Result<(ShareMeta, Option<String>)> {
    Ok((
        ShareMeta {
            id: r.get(0)?,
            secret_hash: r.get(1)?,
            session_id: r.get(2)?,
            created_at: r.get(3)?,
            updated_at: r.get(4)?,
            expires_at: r.get(5)?,
            gone_at: r.get(6)?,
            gone_reason: r.get(7)?,
            renderer: r.get(8)?,
        },
        r.get(9)?,
    ))
}

const META_COLS: &str = "id, secret_hash, session_id, created_at, updated_at, expires_at, gone_at, gone_reason, renderer";

fn body_col(body: Body) -> &'static str {
    match body {
        Body::Html => "html",
        Body::Payload => "payload",
        Body::None => "NULL",
    }
}

impl Store {
    /// Open (creating) a SQLite file and migrate it.
    pub async fn sqlite(path: &Path) -> Result<Self, StoreError> {
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || {
            private_file(&path)?;
            let writer = open_sqlite(&path)?;
            let store = Sqlite {
                readers: (0..4)
                    .map(|_| open_sqlite(&path).map(Mutex::new))
                    .collect::<Result<_, _>>()?,
                writer: Mutex::new(writer),
                path,
                next: AtomicUsize::new(0),
            };
            {
                let mut c = store.writer();
                let tx = c.transaction().map_err(|e| store.err(e))?;
                tx.execute_batch(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
                )
                .map_err(|e| store.err(e))?;
                let have: i64 = tx
                    .query_row("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", [], |r| r.get(0))
                    .map_err(|e| store.err(e))?;
                let known = SQLITE_MIGRATIONS.len() as i64;
                if have > known {
                    return Err(StoreError::TooNew { found: have, known });
                }
                for (i, sql) in SQLITE_MIGRATIONS.iter().enumerate().skip(have as usize) {
                    tx.execute_batch(sql).map_err(|e| store.err(e))?;
                    tx.execute(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                        params![i as i64 + 1, mia_protocol::now_ms()],
                    )
                    .map_err(|e| store.err(e))?;
                }
                tx.commit().map_err(|e| store.err(e))?;
            }
            Ok(Store::Sqlite(Arc::new(store)))
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Connect to PostgreSQL and migrate.
    pub async fn postgres(url: &str) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = url.parse().map_err(|e: tokio_postgres::Error| {
            StoreError::Postgres(format!("bad --database-url: {e}"))
        })?;
        let mgr = deadpool_postgres::Manager::from_config(
            config,
            tokio_postgres::NoTls,
            deadpool_postgres::ManagerConfig {
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let pool = deadpool_postgres::Pool::builder(mgr)
            .max_size(16)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError::Postgres(e.to_string()))?;
        let mut client = pool.get().await.map_err(pg_pool)?;
        let tx = client.transaction().await.map_err(pg)?;
        // One migrator at a time across instances.
        tx.execute("SELECT pg_advisory_xact_lock(7350423)", &[])
            .await
            .map_err(pg)?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
        )
        .await
        .map_err(pg)?;
        let have: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )
            .await
            .map_err(pg)?
            .get(0);
        let known = PG_MIGRATIONS.len() as i64;
        if have > known {
            return Err(StoreError::TooNew { found: have, known });
        }
        for (i, sql) in PG_MIGRATIONS.iter().enumerate().skip(have as usize) {
            tx.batch_execute(sql).await.map_err(pg)?;
            tx.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
                &[&(i as i64 + 1), &mia_protocol::now_ms()],
            )
            .await
            .map_err(pg)?;
        }
        tx.commit().await.map_err(pg)?;
        drop(client);
        Ok(Store::Postgres(pool))
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgresql",
        }
    }

    pub async fn insert(&self, s: NewShare) -> Result<(), StoreError> {
        let bytes = (s.payload.len() + s.html.len()) as i64;
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    db.writer()
                        .execute(
                            "INSERT INTO shares (id, secret_hash, session_id, payload, html, renderer, bytes, created_at, updated_at, expires_at, uploader) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10)",
                            params![s.id, s.secret_hash, s.session_id, s.payload, s.html, s.renderer, bytes, s.created_at, s.expires_at, s.uploader],
                        )
                        .map(|_| ())
                        .map_err(|e| db.err(e))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                c.execute(
                    "INSERT INTO shares (id, secret_hash, session_id, payload, html, renderer, bytes, created_at, updated_at, expires_at, uploader) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10)",
                    &[&s.id, &s.secret_hash, &s.session_id, &s.payload, &s.html, &s.renderer, &bytes, &s.created_at, &s.expires_at, &s.uploader],
                )
                .await
                .map_err(pg)?;
                Ok(())
            }
        }
    }

    /// Bytes of live shares `uploader` keeps here (but `except`'s, which is
    /// about to be replaced).
    pub async fn uploaded_bytes(&self, uploader: &str, except: &str) -> Result<i64, StoreError> {
        let (uploader, except) = (uploader.to_string(), except.to_string());
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    db.reader()
                        .query_row(
                            "SELECT COALESCE(SUM(bytes), 0) FROM shares WHERE uploader = ?1 AND gone_at IS NULL AND id != ?2",
                            params![uploader, except],
                            |r| r.get(0),
                        )
                        .map_err(|e| db.err(e))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                let row = c
                    .query_one(
                        "SELECT COALESCE(SUM(bytes), 0)::BIGINT FROM shares WHERE uploader = $1 AND gone_at IS NULL AND id != $2",
                        &[&uploader, &except],
                    )
                    .await
                    .map_err(pg)?;
                Ok(row.get(0))
            }
        }
    }

    /// The share's meta and the stored text asked for.
    pub async fn get(
        &self,
        id: &str,
        body: Body,
    ) -> Result<Option<(ShareMeta, Option<String>)>, StoreError> {
        let sql_tail = format!(
            "SELECT {META_COLS}, {} FROM shares WHERE id = ",
            body_col(body)
        );
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                let id = id.to_string();
                blocking(move || {
                    let c = db.reader();
                    let mut stmt = c
                        .prepare_cached(&format!("{sql_tail}?1"))
                        .map_err(|e| db.err(e))?;
                    stmt.query_row(params![id], meta_from_sqlite)
                        .optional()
                        .map_err(|e| db.err(e))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                let stmt = c
                    .prepare_cached(&format!("{sql_tail}$1"))
                    .await
                    .map_err(pg)?;
                let row = c.query_opt(&stmt, &[&id]).await.map_err(pg)?;
                Ok(row.map(|r| {
                    (
                        ShareMeta {
                            id: r.get(0),
                            secret_hash: r.get(1),
                            session_id: r.get(2),
                            created_at: r.get(3),
                            updated_at: r.get(4),
                            expires_at: r.get(5),
                            gone_at: r.get(6),
                            gone_reason: r.get(7),
                            renderer: r.get(8),
                        },
                        r.get(9),
                    )
                }))
            }
        }
    }

    /// Replace a live share's payload; false when it is gone.
    pub async fn update(
        &self,
        id: &str,
        payload: String,
        html: String,
        renderer: i64,
        at: i64,
    ) -> Result<bool, StoreError> {
        let bytes = (payload.len() + html.len()) as i64;
        let id = id.to_string();
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    db.writer()
                        .execute(
                            "UPDATE shares SET payload = ?2, html = ?3, renderer = ?4, bytes = ?5, updated_at = ?6 WHERE id = ?1 AND gone_at IS NULL",
                            params![id, payload, html, renderer, bytes, at],
                        )
                        .map(|n| n == 1)
                        .map_err(|e| db.err(e))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                let n = c
                    .execute(
                        "UPDATE shares SET payload = $2, html = $3, renderer = $4, bytes = $5, updated_at = $6 WHERE id = $1 AND gone_at IS NULL",
                        &[&id, &payload, &html, &renderer, &bytes, &at],
                    )
                    .await
                    .map_err(pg)?;
                Ok(n == 1)
            }
        }
    }

    /// Store a re-rendered page (best effort: a newer renderer's page).
    /// Keep a rendered page of `payload` while that is still the stored
    /// payload (the page of an older payload, finished late, is not kept).
    pub async fn set_html(
        &self,
        id: &str,
        html: String,
        renderer: i64,
        payload: String,
    ) -> Result<(), StoreError> {
        let id = id.to_string();
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    db.writer()
                        .execute(
                            "UPDATE shares SET html = ?2, renderer = ?3 WHERE id = ?1 AND gone_at IS NULL AND payload = ?4",
                            params![id, html, renderer, payload],
                        )
                        .map(|_| ())
                        .map_err(|e| db.err(e))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                c.execute(
                    "UPDATE shares SET html = $2, renderer = $3 WHERE id = $1 AND gone_at IS NULL AND payload = $4",
                    &[&id, &html, &renderer, &payload],
                )
                .await
                .map_err(pg)?;
                Ok(())
            }
        }
    }

    /// Drop a share's content and keep a tombstone (so its URL answers 410).
    /// False when it was already gone.
    pub async fn revoke(&self, id: &str, at: i64) -> Result<bool, StoreError> {
        let id = id.to_string();
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    let revoked = db
                        .writer()
                        .execute(
                            "UPDATE shares SET payload = NULL, html = NULL, bytes = 0, gone_at = ?2, gone_reason = 'revoked' WHERE id = ?1 AND gone_at IS NULL",
                            params![id, at],
                        )
                        .map(|n| n == 1)
                        .map_err(|e| db.err(e))?;
                    if revoked {
                        erase_sqlite(&db)?;
                    }
                    Ok(revoked)
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                let n = c
                    .execute(
                        "UPDATE shares SET payload = NULL, html = NULL, bytes = 0, gone_at = $2, gone_reason = 'revoked' WHERE id = $1 AND gone_at IS NULL",
                        &[&id, &at],
                    )
                    .await
                    .map_err(pg)?;
                if n == 1 {
                    erase_postgres(&c).await?;
                }
                Ok(n == 1)
            }
        }
    }

    /// Expire what is past its time and forget tombstones older than
    /// `forget_before`. Returns (expired, forgotten).
    pub async fn purge(&self, now: i64, forget_before: i64) -> Result<(u64, u64), StoreError> {
        const EXPIRE_SQLITE: &str = "UPDATE shares SET payload = NULL, html = NULL, bytes = 0, gone_at = ?1, gone_reason = 'expired' WHERE gone_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?1";
        const FORGET_SQLITE: &str = "DELETE FROM shares WHERE gone_at IS NOT NULL AND gone_at < ?1";
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    let c = db.writer();
                    let a = c
                        .execute(EXPIRE_SQLITE, params![now])
                        .map_err(|e| db.err(e))?;
                    let b = c
                        .execute(FORGET_SQLITE, params![forget_before])
                        .map_err(|e| db.err(e))?;
                    drop(c);
                    if a + b > 0 {
                        erase_sqlite(&db)?;
                    }
                    Ok((a as u64, b as u64))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                let a = c
                    .execute(
                        "UPDATE shares SET payload = NULL, html = NULL, bytes = 0, gone_at = $1, gone_reason = 'expired' WHERE gone_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $1",
                        &[&now],
                    )
                    .await
                    .map_err(pg)?;
                let b = c
                    .execute(
                        "DELETE FROM shares WHERE gone_at IS NOT NULL AND gone_at < $1",
                        &[&forget_before],
                    )
                    .await
                    .map_err(pg)?;
                if a + b > 0 {
                    erase_postgres(&c).await?;
                }
                Ok((a, b))
            }
        }
    }

    /// Live shares and their stored bytes (for /metrics).
    pub async fn stats(&self) -> Result<(i64, i64), StoreError> {
        const SQL: &str =
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM shares WHERE gone_at IS NULL";
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    db.reader()
                        .query_row(SQL, [], |r| Ok((r.get(0)?, r.get(1)?)))
                        .map_err(|e| db.err(e))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                let r = c
                    .query_one(
                        "SELECT COUNT(*)::BIGINT, COALESCE(SUM(bytes), 0)::BIGINT FROM shares WHERE gone_at IS NULL",
                        &[],
                    )
                    .await
                    .map_err(pg)?;
                Ok((r.get(0), r.get(1)))
            }
        }
    }

    /// A round trip to the database (for /healthz).
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(db) => {
                let db = db.clone();
                blocking(move || {
                    db.reader()
                        .query_row("SELECT 1", [], |_| Ok(()))
                        .map_err(|e| db.err(e))
                })
                .await
            }
            Store::Postgres(pool) => {
                let c = pool.get().await.map_err(pg_pool)?;
                c.query_one("SELECT 1", &[]).await.map_err(pg)?;
                Ok(())
            }
        }
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}

fn pg(e: tokio_postgres::Error) -> StoreError {
    StoreError::Postgres(e.to_string())
}

fn pg_pool(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::Postgres(e.to_string())
}
