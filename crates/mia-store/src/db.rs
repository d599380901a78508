use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::error::{
    ConcurrencyError, CorruptionError, MigrationError, Result, StoreError, is_busy, is_corruption,
};
use crate::legacy::{self, LegacyImport};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
}

/// The schema version this build writes: the number of embedded migrations.
pub const SCHEMA_VERSION: i64 = embedded::MIGRATIONS.len() as i64;

/// How to open the store.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub path: PathBuf,
    /// The pre-SQLite store (`~/.mia-code-sessions.json`), imported when it
    /// exists and the database has no sessions yet.
    pub legacy_json: Option<PathBuf>,
    /// How long a write waits for another process's transaction.
    pub busy_timeout: Duration,
}

impl OpenOptions {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            legacy_json: None,
            busy_timeout: Duration::from_secs(10),
        }
    }

    pub fn legacy_json(mut self, path: impl Into<PathBuf>) -> Self {
        self.legacy_json = Some(path.into());
        self
    }
}

/// A damaged database that was moved aside when the store was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    pub backup: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the session database was damaged ({}); it was moved to {} and a fresh one was created",
            self.reason,
            self.backup.display()
        )
    }
}

/// The session database. Owns one connection; see the crate docs.
pub struct SessionDb {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) busy_timeout: Duration,
    recovery: Option<Recovery>,
    legacy: Option<LegacyImport>,
    /// Held shared for as long as this database is open (`data.db.lock`):
    /// a damaged file is only moved aside by an opener that can take it
    /// exclusively, so a database another process has open is never moved.
    _open_lock: std::fs::File,
}

impl std::fmt::Debug for SessionDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionDb")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SessionDb {
    /// Open (or create) the database at `path`, migrating it to the current schema.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self> {
        Self::open_with(OpenOptions::new(path))
    }

    /// Fix the modes of the database's -wal and -shm files (created by SQLite).
    fn secure_sidecars(path: &std::path::Path) {
        for suffix in ["-wal", "-shm"] {
            let _ =
                crate::private::make_private(&PathBuf::from(format!("{}{suffix}", path.display())));
        }
    }

    /// Open with options. A damaged file is moved aside (see [`SessionDb::recovery`]);
    /// a legacy JSON store is imported (see [`SessionDb::legacy_import`]).
    pub fn open_with(opts: OpenOptions) -> Result<Self> {
        if let Some(parent) = opts.path.parent() {
            crate::private::ensure_private_dir(parent).map_err(|source| StoreError::Io {
                action: "create directory",
                path: parent.to_path_buf(),
                source,
            })?;
        }
        // Transcripts are the user's alone: the database is created 0600 (SQLite
        // gives its -wal and -shm files the database's mode) and fixed if wider.
        create_private(&opts.path)?;
        let lock_path = PathBuf::from(format!("{}.lock", opts.path.display()));
        let mut lock_opts = std::fs::OpenOptions::new();
        lock_opts
            .read(true)
            .write(true)
            .create(true)
            .truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            lock_opts.mode(0o600);
        }
        let open_lock = lock_opts
            .open(&lock_path)
            .map_err(|source| StoreError::Io {
                action: "open the lock file",
                path: lock_path.clone(),
                source,
            })?;
        let _ = crate::private::make_private(&lock_path);
        wait_shared(&open_lock, &lock_path, opts.busy_timeout)?;
        let (conn, recovery) = match open_and_migrate(&opts) {
            Ok(conn) => (conn, None),
            Err(StoreError::Corruption(err)) => {
                // Only when no other process has the database open.
                let _ = open_lock.unlock();
                if open_lock.try_lock().is_err() {
                    wait_shared(&open_lock, &lock_path, opts.busy_timeout)?;
                    return Err(StoreError::Corruption(CorruptionError {
                        path: err.path,
                        detail: format!(
                            "{}; another mia-code process has it open, so it was left in place: close the other mia-code windows and commands, then open it again",
                            err.detail
                        ),
                    }));
                }
                let moved = move_aside(&opts.path);
                let _ = open_lock.unlock();
                wait_shared(&open_lock, &lock_path, opts.busy_timeout)?;
                let backup = moved?;
                tracing::error!(path = %opts.path.display(), backup = %backup.display(), detail = %err.detail, "damaged session database moved aside");
                // The fresh database is the user's alone too.
                create_private(&opts.path)?;
                let conn = open_and_migrate(&opts)?;
                (
                    conn,
                    Some(Recovery {
                        backup,
                        reason: err.detail,
                    }),
                )
            }
            Err(e) => return Err(e),
        };
        Self::secure_sidecars(&opts.path);
        let mut db = Self {
            conn,
            path: opts.path.clone(),
            busy_timeout: opts.busy_timeout,
            recovery,
            legacy: None,
            _open_lock: open_lock,
        };
        if let Some(json) = &opts.legacy_json {
            db.legacy = legacy::import_if_needed(&mut db, json)?;
        }
        Ok(db)
    }

    /// Set when the database was found damaged on open and moved aside.
    pub fn recovery(&self) -> Option<&Recovery> {
        self.recovery.as_ref()
    }

    /// Set when a legacy JSON store was imported while opening.
    pub fn legacy_import(&self) -> Option<&LegacyImport> {
        self.legacy.as_ref()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version stored in the file.
    pub fn schema_version(&self) -> Result<i64> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// `PRAGMA integrity_check`: empty when the file is sound, else SQLite's findings.
    pub fn integrity_check(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| self.err(e))?;
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        Ok(rows.into_iter().filter(|r| r != "ok").collect())
    }

    /// Give the space of deleted rows back to the file system (`VACUUM`)
    /// when at least `min_free` of the file's pages are free; the WAL is
    /// checkpointed and truncated after. SQLite rewrites the file in a
    /// transaction, so a crash leaves the old file whole.
    pub fn compact(&mut self, min_free: f64) -> Result<Compacted> {
        let pages: i64 = self
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let free: i64 = self
            .conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let size = |p: &Path| {
            let mut wal = p.as_os_str().to_owned();
            wal.push("-wal");
            std::fs::metadata(p).map_or(0, |m| m.len())
                + std::fs::metadata(wal).map_or(0, |m| m.len())
        };
        let bytes_before = size(&self.path);
        let vacuumed = pages > 0 && (free as f64) / (pages as f64) >= min_free;
        if vacuumed {
            self.conn.execute_batch("VACUUM").map_err(|e| self.err(e))?;
        }
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| self.err(e))?;
        Ok(Compacted {
            bytes_before,
            bytes_after: size(&self.path),
            free_pages: free.max(0) as u64,
            pages: pages.max(0) as u64,
            vacuumed,
        })
    }

    /// `PRAGMA foreign_key_check`: one line per dangling reference.
    pub fn foreign_key_check(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA foreign_key_check")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let table: String = r.get(0)?;
                let rowid: Option<i64> = r.get(1)?;
                let parent: String = r.get(2)?;
                Ok(format!(
                    "{table} row {rowid:?} references a missing {parent} row"
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Run `f` in an IMMEDIATE transaction (takes the write lock up front, so
    /// two writers queue on `busy_timeout` instead of failing on upgrade).
    /// Run several reads in one read transaction (one consistent snapshot
    /// of the database, even while another process writes).
    pub(crate) fn read<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let waited_ms = u64::try_from(self.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| map_sqlite(&self.path, waited_ms, e))?;
        let value = f()?;
        tx.commit()
            .map_err(|e| map_sqlite(&self.path, waited_ms, e))?;
        Ok(value)
    }

    pub(crate) fn write<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let waited_ms = u64::try_from(self.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let path = self.path.as_path();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_sqlite(path, waited_ms, e))?;
        let tx = Tx {
            tx,
            path,
            waited_ms,
        };
        let value = f(&tx)?;
        tx.tx.commit().map_err(|e| map_sqlite(path, waited_ms, e))?;
        Ok(value)
    }

    /// Like [`SessionDb::write`] but committed without an fsync
    /// (`synchronous=NORMAL` for this transaction only). In WAL mode the rows
    /// become durable with the next fully synced commit; a crash before that
    /// can lose them but never corrupts the database. For logs (the
    /// permission audit), not for conversation data.
    pub(crate) fn write_relaxed<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        self.conn
            .execute_batch("PRAGMA synchronous = NORMAL")
            .map_err(|e| self.err(e))?;
        let result = self.write(f);
        let restored = self
            .conn
            .execute_batch("PRAGMA synchronous = FULL")
            .map_err(|e| self.err(e));
        let value = result?;
        restored?;
        Ok(value)
    }

    /// Map a SQLite error from this connection to a typed store error.
    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        let waited_ms = u64::try_from(self.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        map_sqlite(&self.path, waited_ms, e)
    }
}

/// An open write transaction plus what is needed to type its errors.
pub(crate) struct Tx<'a> {
    pub(crate) tx: rusqlite::Transaction<'a>,
    path: &'a Path,
    waited_ms: u64,
}

impl Tx<'_> {
    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        map_sqlite(self.path, self.waited_ms, e)
    }
}

impl<'a> std::ops::Deref for Tx<'a> {
    type Target = rusqlite::Transaction<'a>;
    fn deref(&self) -> &Self::Target {
        &self.tx
    }
}

pub(crate) fn map_sqlite(path: &Path, waited_ms: u64, e: rusqlite::Error) -> StoreError {
    if is_busy(&e) {
        StoreError::Concurrency(ConcurrencyError {
            path: path.to_path_buf(),
            waited_ms,
        })
    } else if is_corruption(&e) {
        StoreError::Corruption(CorruptionError {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
    } else {
        StoreError::Sqlite {
            path: path.to_path_buf(),
            source: Box::new(e),
        }
    }
}

fn open_and_migrate(opts: &OpenOptions) -> Result<Connection> {
    let path = &opts.path;
    let waited_ms = u64::try_from(opts.busy_timeout.as_millis()).unwrap_or(u64::MAX);
    let map = |e: rusqlite::Error| map_sqlite(path, waited_ms, e);
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(map)?;
    conn.busy_timeout(opts.busy_timeout).map_err(map)?;
    // A fresh time-ordered id per call (forks copy rows inside SQL).
    conn.create_scalar_function(
        "mia_new_id",
        0,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8,
        |_| Ok(mia_protocol::PartId::new().to_string()),
    )
    .map_err(map)?;
    // Two first launches at once: SQLite answers SQLITE_BUSY at once (no
    // busy handler) while another connection creates the file or switches
    // it to WAL; retry those for the busy timeout.
    let deadline = std::time::Instant::now() + opts.busy_timeout;
    let retry = |f: &dyn Fn() -> rusqlite::Result<String>| -> Result<String> {
        loop {
            match f() {
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                r => return r.map_err(map),
            }
        }
    };
    // Reading the header is what reveals a file that is not a database.
    retry(&|| {
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n.to_string())
    })?;
    let mode: String = retry(&|| conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(%mode, "SQLite did not switch to WAL mode");
    }
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;")
        .map_err(map)?;
    migrate(&mut conn, path, waited_ms)?;
    Ok(conn)
}

fn migrate(conn: &mut Connection, path: &Path, waited_ms: u64) -> Result<()> {
    let map = |e: rusqlite::Error| map_sqlite(path, waited_ms, e);
    let current: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(map)?;
    if current > SCHEMA_VERSION {
        return Err(MigrationError::TooNew {
            path: path.to_path_buf(),
            found: current,
            supported: SCHEMA_VERSION,
        }
        .into());
    }
    for (i, (name, sql)) in embedded::MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= current {
            continue;
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(map)?;
        // Another process may have migrated while we waited for the lock.
        let now: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(map)?;
        if now >= version {
            continue;
        }
        let failed = |source| MigrationError::Failed {
            path: path.to_path_buf(),
            name: (*name).to_string(),
            version: version - 1,
            source: Box::new(source),
        };
        tx.execute_batch(sql).map_err(failed)?;
        tx.execute_batch(&format!("PRAGMA user_version = {version}"))
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
        tracing::info!(migration = name, version, "applied migration");
    }
    Ok(())
}

/// Move a damaged database (and its WAL/SHM side files) to
/// `data.db.corrupt-<UTC timestamp>`.
/// Take the open lock shared (waiting for a move-aside in progress).
fn wait_shared(file: &std::fs::File, path: &Path, timeout: Duration) -> Result<()> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        match file.try_lock_shared() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Concurrency(ConcurrencyError {
                    path: path.to_path_buf(),
                    waited_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                }));
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(StoreError::Io {
                    action: "lock",
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
}

fn move_aside(path: &Path) -> Result<PathBuf> {
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_else(|_| mia_protocol::now_ms().to_string());
    let mut backup = PathBuf::from(format!("{}.corrupt-{stamp}", path.display()));
    let mut n = 1;
    while backup.exists() {
        backup = PathBuf::from(format!("{}.corrupt-{stamp}-{n}", path.display()));
        n += 1;
    }
    std::fs::rename(path, &backup).map_err(|source| StoreError::Io {
        action: "move aside damaged database",
        path: path.to_path_buf(),
        source,
    })?;
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", path.display()));
        if side.exists() {
            let target = PathBuf::from(format!("{}{suffix}", backup.display()));
            std::fs::rename(&side, &target).map_err(|source| StoreError::Io {
                action: "move aside",
                path: side.clone(),
                source,
            })?;
        }
    }
    Ok(backup)
}

/// Create the database file 0600 when it does not exist yet; make an existing one private.
fn create_private(path: &std::path::Path) -> Result<()> {
    let io = |source| StoreError::Io {
        action: "create the database file",
        path: path.to_path_buf(),
        source,
    };
    if !path.exists() {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        o.open(path).map_err(io)?;
    }
    crate::private::make_private(path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synchronous(db: &SessionDb) -> i64 {
        db.conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn relaxed_writes_restore_full_sync() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = SessionDb::open(dir.path().join("data.db")).unwrap();
        assert_eq!(synchronous(&db), 2, "FULL by default");
        db.write_relaxed(|tx| {
            assert_eq!(
                tx.query_row("PRAGMA synchronous", [], |r| r.get::<_, i64>(0))
                    .unwrap(),
                1,
                "NORMAL inside"
            );
            Ok(())
        })
        .unwrap();
        assert_eq!(synchronous(&db), 2, "FULL again after");
        // Also after a failed relaxed write.
        let err = db.write_relaxed(|_| -> Result<()> { Err(StoreError::InvalidInput("x".into())) });
        assert!(err.is_err());
        assert_eq!(synchronous(&db), 2);
    }
}

/// What [`SessionDb::compact`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Compacted {
    /// The database and its WAL, in bytes.
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Free pages before, of `pages`.
    pub free_pages: u64,
    pub pages: u64,
    /// Whether the file was rewritten.
    pub vacuumed: bool,
}
