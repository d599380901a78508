//! Opening the store and config the way every command does.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mia_config::{Config, Paths};
use mia_store::{OpenOptions, SessionDb};

pub fn paths() -> anyhow::Result<Paths> {
    Ok(Paths::from_env()?)
}

/// Open the session store, telling the user on stderr about a recovery or a
/// legacy import that happened while opening.
pub fn open_store(paths: &Paths) -> anyhow::Result<SessionDb> {
    let db = SessionDb::open_with(
        OpenOptions::new(paths.data_db()).legacy_json(paths.legacy_sessions()),
    )
    .with_context(|| format!("opening the session database {}", paths.data_db().display()))?;
    if let Some(recovery) = db.recovery() {
        eprintln!("warning: {recovery}");
    }
    if let Some(import) = db.legacy_import() {
        eprintln!("note: {import}");
    }
    Ok(db)
}

/// The canonical project directory: `dir` or the current directory.
pub fn project_dir(dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    dir.canonicalize().with_context(|| {
        format!(
            "project directory {} does not exist or is not accessible",
            dir.display()
        )
    })
}

pub fn load_config(paths: &Paths, project: Option<&Path>) -> anyhow::Result<Config> {
    Ok(Config::load(paths, project)?)
}
