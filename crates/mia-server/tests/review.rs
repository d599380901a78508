#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Review and ship over HTTP on a real socket: review comments sent to the
//! model, hunks staged and discarded (a stale id answers 409 and changes
//! nothing), commit, push to a smart-HTTP remote, and a pull request on the
//! GitHub stand-in, with the statuses a front end relies on.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mia_config::Paths;
use mia_core::{Runtime, RuntimeOptions};
use mia_providers::credentials::{Credentials, FileStore, StoreTarget};
use mia_testkit::forge::ForgeStandIn;
use mia_testkit::git_http::GitHttp;
use mia_testkit::{MockServer, Scenario};
use serde_json::{Value, json};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

struct Setup {
    dir: tempfile::TempDir,
    project: std::path::PathBuf,
    base: String,
    token: String,
    mock: MockServer,
    forge: ForgeStandIn,
    http: reqwest::Client,
}

async fn setup(steps: Value) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".config/mia-code")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    git(&project, &["init", "-q", "-b", "main"]);
    git(&project, &["config", "user.name", "t"]);
    git(&project, &["config", "user.email", "t@t"]);
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(project.join("a.txt"), text).unwrap();
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "init"]);
    let mock =
        MockServer::start(serde_json::from_value::<Scenario>(json!({"steps": steps})).unwrap())
            .await
            .unwrap();
    let forge = ForgeStandIn::start("ghp_http", None);
    let cfg = json!({
        "model": "openai/gpt-5",
        "providers": {"openai": {"baseURL": mock.openai_base_url(), "apiKey": "k"}},
        "unifier": {"enabled": false},
        "github": {"apiURL": forge.github_api()}
    });
    std::fs::write(home.join(".config/mia-code/config.json"), cfg.to_string()).unwrap();
    let paths = Paths::new(home.join(".mia-code"), home.clone(), &home.join(".config"));
    let creds = Credentials::new(
        Arc::new(|_: &str| None),
        None,
        FileStore::in_home(&paths.home),
    );
    // The GitHub token kept like an API key (the credentials file).
    creds
        .store("github", "ghp_http", StoreTarget::File)
        .unwrap();
    let mut opts = RuntimeOptions::new(paths.clone());
    opts.credentials = Arc::new(creds);
    let runtime = Runtime::open(opts).unwrap().0;
    let token = mia_server::new_token();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let t = token.clone();
    tokio::spawn(async move {
        mia_server::serve(listener, runtime, t, std::future::pending())
            .await
            .unwrap();
    });
    Setup {
        project: project.canonicalize().unwrap(),
        dir,
        base,
        token,
        mock,
        forge,
        http: reqwest::Client::new(),
    }
}

impl Setup {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut rb = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.unwrap();
        let status = resp.status().as_u16();
        let v = resp.json().await.unwrap_or(Value::Null);
        (status, v)
    }
    fn dir(&self) -> String {
        self.project.display().to_string()
    }
    fn q(&self) -> String {
        format!("directory={}", urlencode(&self.dir()))
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

use reqwest::Method;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_comments_and_hunks_over_http() {
    let s = setup(json!([
        {"match": {"last_message_contains": "Review comments"}, "response": {"events": [{"text": "Done."}]}}
    ]))
    .await;
    let (st, session) = s
        .call(
            Method::POST,
            "/api/sessions",
            Some(json!({"directory": s.dir()})),
        )
        .await;
    assert!(st < 300, "{session}");
    let id = session["id"].as_str().unwrap().to_string();
    let (st, c) = s
        .call(
            Method::POST,
            &format!("/api/sessions/{id}/review"),
            Some(json!({"file": "a.txt", "line": 4, "end_line": 5, "text": "merge these"})),
        )
        .await;
    assert_eq!(st, 201, "{c}");
    assert_eq!(c["quote"], json!(["line 4", "line 5"]));
    let (st, bad) = s
        .call(
            Method::POST,
            &format!("/api/sessions/{id}/review"),
            Some(json!({"file": "a.txt", "line": 31, "text": "x"})),
        )
        .await;
    assert_eq!(st, 400, "{bad}");
    let (_, extra) = s
        .call(
            Method::POST,
            &format!("/api/sessions/{id}/review"),
            Some(json!({"file": "a.txt", "line": 9, "text": "drop me"})),
        )
        .await;
    let (st, left) = s
        .call(
            Method::DELETE,
            &format!(
                "/api/sessions/{id}/review/{}",
                extra["id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(left["comments"].as_array().unwrap().len(), 1);
    let (st, _) = s
        .call(
            Method::POST,
            &format!("/api/sessions/{id}/review/send"),
            None,
        )
        .await;
    assert_eq!(st, 202);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let sent = loop {
        if let Some(r) = s.mock.requests().last() {
            break r.conversation().last().unwrap().text();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the model was never asked"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        sent.contains("a.txt, lines 4-5")
            && sent.contains("4 | line 4")
            && sent.contains("> merge these"),
        "{sent}"
    );
    let (_, list) = s
        .call(Method::GET, &format!("/api/sessions/{id}/review"), None)
        .await;
    assert_eq!(list["comments"], json!([]));
    let (st, cleared) = s
        .call(Method::DELETE, &format!("/api/sessions/{id}/review"), None)
        .await;
    assert_eq!((st, cleared["cleared"].clone()), (200, json!(0)));

    // Hunks: list, stage, a stale stage (409, nothing changed), the
    // review pane's uncommitted scope, then discard as a step of the session.
    let text: String = (1..=30)
        .map(|i| {
            if i == 2 || i == 25 {
                format!("changed {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    std::fs::write(s.project.join("a.txt"), text).unwrap();
    let (_, scope) = s
        .call(
            Method::GET,
            &format!("/api/sessions/{id}/review/diff?scope=uncommitted"),
            None,
        )
        .await;
    assert_eq!(scope["scope"], "uncommitted");
    assert_eq!(scope["files"][0]["file"], "a.txt");
    let (st, list) = s
        .call(Method::GET, &format!("/api/hunks?{}", s.q()), None)
        .await;
    assert_eq!(st, 200, "{list}");
    let hunks = list["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 2);
    let h0 = hunks[0]["id"].as_str().unwrap();
    let (st, _) = s
        .call(
            Method::POST,
            &format!("/api/hunks/{h0}/stage?{}", s.q()),
            None,
        )
        .await;
    assert_eq!(st, 200);
    let cached = git(&s.project, &["diff", "--cached"]);
    let (st, err) = s
        .call(
            Method::POST,
            &format!("/api/hunks/{h0}/stage?{}", s.q()),
            None,
        )
        .await;
    assert_eq!(st, 409, "{err}");
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains("nothing was changed")
    );
    assert_eq!(git(&s.project, &["diff", "--cached"]), cached);
    let (_, status) = s
        .call(Method::GET, &format!("/api/git/status?{}", s.q()), None)
        .await;
    assert_eq!(
        (
            status["branch"].clone(),
            status["staged"].clone(),
            status["unstaged"].clone()
        ),
        (json!("main"), json!(1), json!(1))
    );
    let h1 = hunks[1]["id"].as_str().unwrap();
    let (st, r) = s
        .call(
            Method::POST,
            &format!("/api/hunks/{h1}/revert?{}", s.q()),
            Some(json!({"session": id})),
        )
        .await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["session_id"], id.as_str());
    assert!(
        !std::fs::read_to_string(s.project.join("a.txt"))
            .unwrap()
            .contains("changed 25")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_push_and_a_pull_request_over_http() {
    let s = setup(json!([])).await;
    let root = s.dir.path().join("srv");
    let bare = root.join("acme/widgets.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare", "-b", "main"]);
    git(&bare, &["config", "http.receivepack", "true"]);
    let remote = GitHttp::start(&root, "127.0.0.1".parse().unwrap());
    git(
        &s.project,
        &["remote", "add", "origin", &remote.url("acme/widgets.git")],
    );
    git(&s.project, &["push", "-q", "origin", "main"]);
    git(&s.project, &["checkout", "-q", "-b", "feature"]);

    let (st, e) = s
        .call(
            Method::POST,
            "/api/git/commit",
            Some(json!({"directory": s.dir(), "message": "x"})),
        )
        .await;
    assert_eq!(st, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("nothing is staged"));
    std::fs::write(s.project.join("b.txt"), "b\n").unwrap();
    git(&s.project, &["add", "b.txt"]);
    let (st, c) = s
        .call(
            Method::POST,
            "/api/git/commit",
            Some(json!({"directory": s.dir(), "message": "Add b\n\nWhy: a test."})),
        )
        .await;
    assert_eq!(st, 201, "{c}");
    assert_eq!(c["summary"], "Add b");
    let (st, e) = s
        .call(Method::GET, &format!("/api/git/pr?{}", s.q()), None)
        .await;
    assert_eq!(st, 404, "{e}");
    let (st, e) = s
        .call(
            Method::POST,
            "/api/git/pr",
            Some(json!({"directory": s.dir(), "title": "T"})),
        )
        .await;
    assert_eq!(st, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("push first"));
    let (st, e) = s
        .call(
            Method::POST,
            "/api/git/push",
            Some(json!({"directory": s.dir()})),
        )
        .await;
    assert_eq!(st, 400, "{e}");
    let (st, p) = s
        .call(
            Method::POST,
            "/api/git/push",
            Some(json!({"directory": s.dir(), "remote": "origin"})),
        )
        .await;
    assert_eq!(st, 200, "{p}");
    assert_eq!(
        git(&bare, &["rev-parse", "refs/heads/feature"]),
        git(&s.project, &["rev-parse", "HEAD"])
    );
    let (st, pr) = s
        .call(
            Method::POST,
            "/api/git/pr",
            Some(json!({"directory": s.dir(), "draft": true})),
        )
        .await;
    assert_eq!(st, 201, "{pr}");
    assert_eq!(pr["url"], "https://github.example/acme/widgets/pull/1");
    assert_eq!(pr["draft"], true);
    let post = s
        .forge
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.header("authorization"), Some("Bearer ghp_http"));
    assert_eq!(post.body["title"], "Add b");
    assert_eq!(post.body["body"], "Why: a test.");
    let (st, e) = s
        .call(
            Method::POST,
            "/api/git/pr",
            Some(json!({"directory": s.dir(), "title": "again", "body": "kept"})),
        )
        .await;
    assert_eq!(st, 409, "{e}");
    let (_, status) = s
        .call(Method::GET, &format!("/api/git/status?{}", s.q()), None)
        .await;
    assert_eq!(status["pull_request"]["number"], 1);
    assert_eq!(status["upstream"], "origin/feature");
    let (st, view) = s
        .call(Method::GET, &format!("/api/git/pr?{}", s.q()), None)
        .await;
    assert_eq!(st, 200, "{view}");
    assert_eq!(view["review_decision"], "approved");
}
