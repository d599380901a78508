//! What the runtime tests of forks, compaction and subagents share: a
//! project and a home in a temp dir, the mock LLM behind the anthropic
//! provider, a runtime over a real store, and one session.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mia_config::Paths;
use mia_core::{OpResult, Runtime, RuntimeOptions, StoreHandle};
use mia_protocol::{Event, Op, Session};
use mia_providers::credentials::{Credentials, FileStore};
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

pub struct Harness {
    pub _dir: tempfile::TempDir,
    pub project: PathBuf,
    pub runtime: Runtime,
    pub events: tokio::sync::broadcast::Receiver<Event>,
    pub server: MockServer,
    pub session: Session,
}

/// How a harness starts.
pub struct Setup<'a> {
    pub interactive: bool,
    /// The session's title.
    pub title: &'a str,
    /// Retry and timeout waits, scaled.
    pub scale: f64,
    /// Runs on the project directory before the session is made (files, git).
    pub prepare: &'a dyn Fn(&Path),
}

/// A runtime over the store and config under `home` (a second one on the
/// same data stands for another process).
pub fn runtime_in(home: &Path, interactive: bool, scale: f64) -> Runtime {
    let paths = Paths::new(
        home.join(".mia-code"),
        home.to_path_buf(),
        &home.join(".config"),
    );
    let db = mia_store::SessionDb::open(paths.data_db()).unwrap();
    let store = StoreHandle::spawn(db).unwrap();
    let mut opts = RuntimeOptions::new(paths.clone());
    opts.interactive = interactive;
    opts.credentials = Arc::new(Credentials::new(
        Arc::new(|_: &str| None),
        None,
        FileStore::in_home(&paths.home),
    ));
    opts.client = opts.client.scaled(scale);
    Runtime::new(opts, store)
}

pub async fn harness_with(steps: Value, config: Value, setup: Setup<'_>) -> Harness {
    harness_in(tempfile::tempdir().unwrap(), steps, config, setup).await
}

/// A harness whose project lies outside every temp dir (the OS sandbox lets
/// commands write temp dirs, so a sibling of a project in /tmp is writable).
pub async fn harness_outside_temp(steps: Value, config: Value, setup: Setup<'_>) -> Harness {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    harness_in(dir, steps, config, setup).await
}

async fn harness_in(
    dir: tempfile::TempDir,
    steps: Value,
    config: Value,
    setup: Setup<'_>,
) -> Harness {
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let project = project.canonicalize().unwrap();
    (setup.prepare)(&project);
    let scenario: Scenario = serde_json::from_value(json!({ "steps": steps })).unwrap();
    let server = MockServer::start(scenario).await.unwrap();
    let mut global = json!({
        "providers": { "anthropic": { "baseURL": server.anthropic_base_url(), "apiKey": "test-key" } },
        "unifier": { "enabled": false }
    });
    if let (Some(g), Some(extra)) = (global.as_object_mut(), config.as_object()) {
        for (k, v) in extra {
            g.insert(k.clone(), v.clone());
        }
    }
    std::fs::write(
        home.join(".config/mia-code/config.json"),
        global.to_string(),
    )
    .unwrap();
    let runtime = runtime_in(&home, setup.interactive, setup.scale);
    let events = runtime.subscribe();
    let OpResult::Session(session) = runtime
        .submit(Op::CreateSession {
            directory: project.display().to_string(),
            title: Some(setup.title.into()),
            agent: Some("build".into()),
            model: Some("anthropic/claude-sonnet-4-5".into()),
        })
        .await
        .unwrap()
    else {
        panic!("no session")
    };
    Harness {
        _dir: dir,
        project,
        runtime,
        events,
        server,
        session,
    }
}
