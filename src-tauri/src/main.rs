//! Mia Code, the desktop app. A thin adapter: the webview's requests go
//! through the same router as `mia-code serve` (in-process, no socket), and
//! Events stream over one `tauri::ipc::Channel` per subscription. No business
//! logic lives here.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod memory;
mod updates;
mod webview_env;

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context as _;
use axum::body::Body;
use axum::http::{Method, Request, header};
use mia_core::{EventItem, Runtime, RuntimeOptions};
use mia_protocol::SessionId;
use serde::Serialize;
use serde_json::value::RawValue;
use tauri::Manager as _;
use tauri::ipc::Channel;
use tower::ServiceExt as _;

/// Largest response body the adapter reads (a whole-session diff can be big).
const MAX_BODY: usize = 256 * 1024 * 1024;

struct Backend {
    router: axum::Router,
    token: String,
    runtime: Runtime,
    subscriptions: Mutex<HashMap<u32, tauri::async_runtime::JoinHandle<()>>>,
    next_id: AtomicU32,
    /// Gives the memory a burst of work freed back to the system once the app is quiet.
    trimmer: memory::Trimmer,
}

/// An HTTP-shaped answer: the UI maps `status >= 400` to an error with `body.error`.
#[derive(Serialize)]
struct ApiResponse {
    status: u16,
    /// The router's JSON as it came (no tree of values in between: a 2,000-message session's
    /// body would be parsed and built again only to be written out once more).
    body: Box<RawValue>,
}

/// One API request, answered by the same router `mia-code serve` uses.
#[tauri::command]
async fn api(
    backend: tauri::State<'_, Backend>,
    method: String,
    path: String,
    body: Option<serde_json::Value>,
) -> Result<ApiResponse, String> {
    if !path.starts_with("/api/") {
        return Err(format!(
            "`{path}` is not an API path (it must start with /api/)"
        ));
    }
    if path.starts_with("/api/events") {
        return Err("events stream over the `subscribe` command, not `api`".into());
    }
    let method = Method::from_bytes(method.as_bytes())
        .map_err(|_| format!("`{method}` is not an HTTP method"))?;
    let mut req = Request::builder()
        .method(method)
        .uri(&path)
        .header(header::HOST, "localhost")
        .header(header::AUTHORIZATION, format!("Bearer {}", backend.token));
    let body = match body {
        Some(v) => {
            req = req.header(header::CONTENT_TYPE, "application/json");
            Body::from(serde_json::to_vec(&v).map_err(|e| e.to_string())?)
        }
        None => Body::empty(),
    };
    let req = req.body(body).map_err(|e| e.to_string())?;
    let res = backend
        .router
        .clone()
        .oneshot(req)
        .await
        .map_err(|e| format!("the request failed: {e}"))?;
    let status = res.status().as_u16();
    let bytes = axum::body::to_bytes(res.into_body(), MAX_BODY)
        .await
        .map_err(|e| format!("reading the answer failed: {e}"))?;
    if bytes.len() >= memory::LARGE_ANSWER {
        backend.trimmer.poke();
    }
    Ok(ApiResponse {
        status,
        body: raw_body(bytes.into())?,
    })
}

/// A response body as JSON: the router's own JSON unchanged, an empty body as `null`, anything
/// else (plain text) as a JSON string.
fn raw_body(bytes: Vec<u8>) -> Result<Box<RawValue>, String> {
    let text = match String::from_utf8(bytes) {
        Ok(text) if text.is_empty() => "null".to_owned(),
        Ok(text) if serde_json::from_str::<&RawValue>(&text).is_ok() => text,
        Ok(text) => json_string(&text)?,
        Err(e) => json_string(&String::from_utf8_lossy(e.as_bytes()))?,
    };
    RawValue::from_string(text).map_err(|e| e.to_string())
}

fn json_string(text: &str) -> Result<String, String> {
    serde_json::to_string(text).map_err(|e| e.to_string())
}

/// Stream Events (of one session, or all when `session` is null) to `on_event`,
/// resumed from `epoch` + `since` (`{session id: last seq seen}`) when given.
/// The channel carries arrays of items (what arrived within a frame):
/// `{"type": "hello", "epoch", "reset"}` first, then `{"seq": n, "event": Event}`,
/// and `{"type": "lagged", "missed": n}` when the subscriber fell behind (it
/// resumes or reloads).
#[tauri::command]
fn subscribe(
    backend: tauri::State<'_, Backend>,
    session: Option<String>,
    epoch: Option<String>,
    since: Option<std::collections::HashMap<String, u64>>,
    on_event: Channel<serde_json::Value>,
) -> Result<u32, String> {
    let filter: Option<SessionId> = match session.as_deref() {
        Some(s) => Some(s.parse().map_err(|e| format!("{e}"))?),
        None => None,
    };
    let resume = match epoch {
        Some(epoch) => {
            let pairs: Vec<String> = since
                .unwrap_or_default()
                .into_iter()
                .map(|(id, seq)| format!("{id}:{seq}"))
                .collect();
            Some(mia_core::Resume::parse(&epoch, &pairs.join(",")).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let mut events = backend.runtime.events_since(filter, resume.as_ref());
    let id = backend.next_id.fetch_add(1, Ordering::Relaxed);
    let trimmer = backend.trimmer.clone();
    let task = tauri::async_runtime::spawn(async move {
        // Each channel message is one script the webview evaluates: what arrives within a
        // frame of the first item (a streamed answer's deltas) goes in one message, an array.
        let mut batch = Vec::new();
        while let Some(item) = events.next().await {
            batch.push(channel_item(item));
            let deadline = tokio::time::Instant::now() + BATCH_WINDOW;
            let mut ended = false;
            while batch.len() < MAX_BATCH {
                match tokio::time::timeout_at(deadline, events.next()).await {
                    Ok(Some(item)) => batch.push(channel_item(item)),
                    Ok(None) => {
                        ended = true;
                        break;
                    }
                    Err(_) => break,
                }
            }
            let items: Vec<_> = batch.drain(..).flatten().collect();
            // The webview went away (window closed or reloaded).
            if !items.is_empty() && on_event.send(serde_json::Value::Array(items)).is_err() {
                return;
            }
            trimmer.poke();
            if ended {
                return;
            }
        }
    });
    if let Ok(mut subs) = backend.subscriptions.lock() {
        // Streams whose webview went away (closed or reloaded) have ended on their own.
        subs.retain(|_, t| !t.inner().is_finished());
        subs.insert(id, task);
    }
    Ok(id)
}

/// How long a channel message waits for more items after its first (one frame).
const BATCH_WINDOW: std::time::Duration = std::time::Duration::from_millis(16);
/// The most items in one channel message.
const MAX_BATCH: usize = 512;

/// One item of a channel message (`None`: an Event that could not be serialised).
fn channel_item(item: EventItem) -> Option<serde_json::Value> {
    Some(match item {
        EventItem::Hello { epoch, reset } => {
            serde_json::json!({ "type": "hello", "epoch": epoch, "reset": reset.to_json() })
        }
        EventItem::Event { seq, event } => {
            serde_json::json!({ "seq": seq, "event": serde_json::to_value(&*event).ok()? })
        }
        EventItem::Lagged(n) => serde_json::json!({ "type": "lagged", "missed": n }),
    })
}

#[tauri::command]
fn unsubscribe(backend: tauri::State<'_, Backend>, id: u32) {
    if let Ok(mut subs) = backend.subscriptions.lock()
        && let Some(task) = subs.remove(&id)
    {
        task.abort();
    }
}

/// Where updates stand (Settings → Updates).
#[tauri::command]
fn update_status(updates: tauri::State<'_, updates::Updates>) -> updates::Status {
    updates.status()
}

/// Check for a new version now ("Check now").
#[tauri::command]
async fn update_check(
    app: tauri::AppHandle,
    updates: tauri::State<'_, updates::Updates>,
) -> Result<updates::Status, String> {
    Ok(updates.check(&app).await)
}

/// Install the available version and restart ("Install and restart"):
/// only ever called by the user's click.
#[tauri::command]
async fn update_install(
    app: tauri::AppHandle,
    updates: tauri::State<'_, updates::Updates>,
) -> Result<(), String> {
    updates.install(&app).await
}

/// Mia Code, the desktop app of mia-code. Data: $MIA_CODE_HOME (default
/// ~/.mia-code on Linux; docs/platforms.md). Logs: $MIA_CODE_HOME/logs/desktop.log.
#[derive(Debug, clap::Parser)]
#[command(
    name = "mia-code-desktop",
    version,
    about = "Mia Code, the desktop app of mia-code (data: $MIA_CODE_HOME, default ~/.mia-code on Linux, Application Support on macOS, %LOCALAPPDATA% on Windows; logs: $MIA_CODE_HOME/logs/desktop.log)"
)]
struct Cli {
    /// Open this project folder first.
    #[arg(long, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
    /// Label the app as a scripted demo.
    #[arg(long)]
    demo: bool,
}

/// The options the app runs with (the project canonicalised).
struct Args {
    project: Option<String>,
    demo: bool,
}

/// Parse the command line; a typo or a missing folder is refused with a
/// message (clap's usage error, exit code 2) instead of being ignored.
fn parse_args() -> anyhow::Result<Args> {
    use clap::Parser as _;
    let cli = Cli::parse();
    let project = match cli.project {
        Some(dir) => Some(
            dunce::canonicalize(&dir)
                .with_context(|| format!("project folder {}", dir.display()))?
                .display()
                .to_string(),
        ),
        None => None,
    };
    Ok(Args {
        project,
        demo: cli.demo,
    })
}

/// The project a second launch asks for (`--project DIR`, relative to the
/// launch's own directory), if its arguments parse and the folder exists.
fn second_launch_project(argv: &[String], cwd: &str) -> Option<String> {
    use clap::Parser as _;
    let cli = Cli::try_parse_from(argv).ok()?;
    let dir = cli.project?;
    let dir = if dir.is_absolute() {
        dir
    } else {
        std::path::Path::new(cwd).join(dir)
    };
    Some(dunce::canonicalize(dir).ok()?.display().to_string())
}

fn init_logging(paths: &mia_config::Paths) {
    let dir = paths.logs_dir();
    if mia_core::ensure_private_dir(&dir).is_err() {
        return;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let Ok(file) = opts.open(dir.join("desktop.log")) else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("MIA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A line when a turn, a step, a tool call (and, at debug, a store
    // request) ends, with its session and how long it took.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(Mutex::new(file))
        .try_init();
}

fn backend(args: &Args) -> anyhow::Result<Backend> {
    let paths = mia_config::Paths::from_env()?;
    init_logging(&paths);
    let (runtime, notices) = Runtime::open(RuntimeOptions {
        watch_attempts: true,
        ..RuntimeOptions::new(paths)
    })
    .context("opening the session database")?;
    for notice in notices {
        tracing::warn!(%notice, "while opening the session database");
    }
    let token = mia_server::new_token();
    let router = mia_server::router_with(
        runtime.clone(),
        mia_server::ServerOptions {
            token: token.clone(),
            check_host: false,
            allowed_hosts: Vec::new(),
            ui_dir: None,
            demo: args.demo,
            project: args.project.clone(),
        },
    );
    Ok(Backend {
        router,
        token,
        runtime,
        subscriptions: Mutex::new(HashMap::new()),
        next_id: AtomicU32::new(1),
        // Called inside the async runtime (main's block_on): its task runs there.
        trimmer: memory::Trimmer::start(),
    })
}

fn main() -> anyhow::Result<()> {
    // First, before any thread exists: it may execute the app again.
    webview_env::apply();
    let args = parse_args()?;
    // The store thread and the runtime's tasks need the async runtime Tauri uses.
    let backend = tauri::async_runtime::block_on(async { backend(&args) })?;
    let context = tauri::generate_context!();
    let channel = updates::has_channel(context.config());
    // `updates.check` straight from the global config (Settings would also
    // ask the keychain about every provider: not at start).
    let check_at_start = channel
        && mia_config::Config::load(&backend.runtime.options().paths, None)
            .ok()
            .and_then(|c| c.merged.updates.and_then(|u| u.check))
            .unwrap_or(true);
    let updates = updates::Updates::new(context.package_info().version.to_string(), channel);
    let mut builder = tauri::Builder::default();
    // The updater is loaded only in a build with an update channel.
    if channel {
        builder = builder.plugin(tauri_plugin_updater::Builder::new().build());
    }
    builder
        .plugin(tauri_plugin_single_instance::init(|app, argv, cwd| {
            if let Some(w) = app.get_webview_window("main") {
                let _ = w.unminimize();
                let _ = w.show();
                let _ = w.set_focus();
                // `mia-code-desktop --project DIR` while the app runs opens
                // DIR in the running window.
                if let Some(dir) = second_launch_project(&argv, &cwd) {
                    match serde_json::to_string(&dir) {
                        Ok(json) => {
                            let _ = w.eval(format!(
                                "window.dispatchEvent(new CustomEvent('mia-open-project', {{ detail: {json} }}))"
                            ));
                        }
                        Err(e) => tracing::warn!(error = %e, "cannot pass the project on"),
                    }
                }
            }
        }))
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_notification::init())
        .manage(backend)
        .manage(updates)
        .setup(move |app| {
            if check_at_start {
                let handle = app.handle().clone();
                tauri::async_runtime::spawn(async move {
                    let updates = handle.state::<updates::Updates>();
                    let status = updates.check(&handle).await;
                    tracing::info!(state = ?status.state, "update check at start");
                });
            }
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            api,
            subscribe,
            unsubscribe,
            update_status,
            update_check,
            update_install
        ])
        .run(context)
        .context("the desktop app stopped with an error")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_second_launch_passes_its_project_on() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("proj");
        std::fs::create_dir(&sub).unwrap();
        let cwd = dir.path().to_str().unwrap();
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let want = dunce::canonicalize(sub).unwrap().display().to_string();
        assert_eq!(
            second_launch_project(&argv(&["mia-code-desktop", "--project", "proj"]), cwd),
            Some(want.clone())
        );
        assert_eq!(
            second_launch_project(&argv(&["mia-code-desktop", "--project", &want]), "/"),
            Some(want)
        );
        assert_eq!(
            second_launch_project(&argv(&["mia-code-desktop"]), cwd),
            None
        );
        assert_eq!(
            second_launch_project(&argv(&["mia-code-desktop", "--project", "missing"]), cwd),
            None
        );
        assert_eq!(
            second_launch_project(&argv(&["mia-code-desktop", "--projct", "proj"]), cwd),
            None
        );
    }
}

#[cfg(test)]
mod body_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn as_json(bytes: &[u8]) -> String {
        raw_body(bytes.to_vec()).unwrap().get().to_owned()
    }

    #[test]
    fn a_response_body_reaches_the_ui_as_json() {
        // The router's JSON is passed on byte for byte.
        let body = br#"{"messages":[{"id":"m1","text":"caf\u00e9 \ud83d\ude00"}],"n":1.50}"#;
        assert_eq!(as_json(body), String::from_utf8(body.to_vec()).unwrap());
        // An empty body is null; plain text and bytes that are not UTF-8 become a JSON string.
        assert_eq!(as_json(b""), "null");
        assert_eq!(as_json(b"not found"), r#""not found""#);
        assert_eq!(as_json(b"{\"cut"), r#""{\"cut""#);
        assert_eq!(as_json(b"a\xffb"), "\"a\u{fffd}b\"");
        // And the answer serialises with the body inline, not as a string.
        let answer = serde_json::to_string(&ApiResponse {
            status: 200,
            body: raw_body(b"[1,2]".to_vec()).unwrap(),
        })
        .unwrap();
        assert_eq!(answer, r#"{"status":200,"body":[1,2]}"#);
    }
}
