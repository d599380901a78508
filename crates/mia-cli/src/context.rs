//! Opening the store and config the way every command does.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mia_config::{Config, Paths};

pub fn paths() -> anyhow::Result<Paths> {
    Ok(Paths::from_env()?)
}

/// The runtime a command drives, with the async runtime it runs on.
pub struct Local {
    pub rt: tokio::runtime::Runtime,
    pub core: mia_core::Runtime,
}

impl Local {
    /// Run a future of the runtime to its end.
    pub fn block<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }
}

/// Open the session store through the runtime, telling the user on stderr
/// about a recovery or a legacy import that happened while opening.
pub fn local(opts: mia_core::RuntimeOptions) -> anyhow::Result<Local> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let data = opts.paths.data_db();
    let (core, notices) = {
        let _guard = rt.enter();
        mia_core::Runtime::open(opts)
            .with_context(|| format!("opening the session database {}", data.display()))?
    };
    for n in notices {
        eprintln!("note: {n}");
    }
    Ok(Local { rt, core })
}

/// [`local`] for a command that never waits for a person (no permission asks).
pub fn local_headless() -> anyhow::Result<Local> {
    let mut opts = mia_core::RuntimeOptions::new(paths()?);
    opts.interactive = false;
    local(opts)
}

/// [`local`] with the default options for `paths`.
pub fn local_default(paths: &Paths) -> anyhow::Result<Local> {
    local(mia_core::RuntimeOptions::new(paths.clone()))
}

/// The canonical project directory: `dir` or the current directory.
pub fn project_dir(dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    dunce::canonicalize(&dir).with_context(|| {
        format!(
            "project directory {} does not exist or is not accessible",
            dir.display()
        )
    })
}

pub fn load_config(paths: &Paths, project: Option<&Path>) -> anyhow::Result<Config> {
    Ok(Config::load(paths, project)?)
}
