//! Stand-ins for the GitHub and GitLab REST APIs (the services cannot be
//! reached from tests), in their real wire format: GitHub under
//! `/api/v3` (as GitHub Enterprise serves it), GitLab under `/api/v4`.
//! Every request is recorded (method, path with its query as sent,
//! headers, body); a request without the right token answers 401 as the
//! service does, and GitHub's also needs its `Accept` and
//! `X-GitHub-Api-Version` headers. One request per connection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};

/// One request the stand-in received.
#[derive(Debug, Clone, Serialize)]
pub struct ForgeRequest {
    pub method: String,
    /// The target as sent (path and query, still percent-encoded).
    pub target: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl ForgeRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    requests: Vec<ForgeRequest>,
    /// (api, project, number, pr json)
    prs: Vec<(String, String, u64, Value)>,
}

/// A running stand-in for both forges.
#[derive(Clone)]
pub struct ForgeStandIn {
    pub port: u16,
    pub token: String,
    state: Arc<Mutex<State>>,
    log: Option<std::path::PathBuf>,
}

impl ForgeStandIn {
    /// Serve on a free loopback port; requests need `token`. With `log`,
    /// every request is appended to that file as a JSON line.
    pub fn start(token: &str, log: Option<std::path::PathBuf>) -> Self {
        let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let me = Self {
            port: l.local_addr().unwrap().port(),
            token: token.to_string(),
            state: Arc::default(),
            log,
        };
        let server = me.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let server = server.clone();
                std::thread::spawn(move || {
                    let _ = server.serve(s);
                });
            }
        });
        me
    }

    pub fn github_api(&self) -> String {
        format!("http://127.0.0.1:{}/api/v3", self.port)
    }

    pub fn gitlab_api(&self) -> String {
        format!("http://127.0.0.1:{}/api/v4", self.port)
    }

    pub fn requests(&self) -> Vec<ForgeRequest> {
        self.state.lock().unwrap().requests.clone()
    }

    fn serve(&self, s: TcpStream) -> std::io::Result<()> {
        let mut r = BufReader::new(s.try_clone()?);
        let mut w = s;
        let mut line = String::new();
        r.read_line(&mut line)?;
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("GET").to_string();
        let target = parts.next().unwrap_or("/").to_string();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            r.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        r.read_exact(&mut body)?;
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let req = ForgeRequest {
            method,
            target,
            headers,
            body,
        };
        if let Some(log) = &self.log
            && let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
        {
            let _ = writeln!(f, "{}", serde_json::to_string(&req).unwrap_or_default());
        }
        let (status, answer) = self.answer(&req);
        self.state.lock().unwrap().requests.push(req);
        let text = answer.to_string();
        write!(
            w,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        )?;
        w.flush()
    }

    fn answer(&self, req: &ForgeRequest) -> (u16, Value) {
        let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
        if let Some(rest) = path.strip_prefix("/api/v3") {
            if req.header("authorization") != Some(&format!("Bearer {}", self.token)) {
                return (
                    401,
                    json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}),
                );
            }
            if req.header("accept") != Some("application/vnd.github+json")
                || req.header("x-github-api-version") != Some("2022-11-28")
            {
                return (
                    400,
                    json!({"message": "missing Accept or X-GitHub-Api-Version"}),
                );
            }
            return self.github(req, rest, query);
        }
        if let Some(rest) = path.strip_prefix("/api/v4") {
            if req.header("private-token") != Some(self.token.as_str()) {
                return (401, json!({"message": "401 Unauthorized"}));
            }
            return self.gitlab(req, rest, query);
        }
        (404, json!({"message": "Not Found"}))
    }

    fn github(&self, req: &ForgeRequest, path: &str, query: &str) -> (u16, Value) {
        let seg: Vec<&str> = path.trim_matches('/').split('/').collect();
        let mut st = self.state.lock().unwrap();
        match (req.method.as_str(), seg.as_slice()) {
            ("GET", ["repos", o, r]) => (
                200,
                json!({"full_name": format!("{o}/{r}"), "default_branch": "main"}),
            ),
            ("POST", ["repos", o, r, "pulls"]) => {
                let project = format!("{o}/{r}");
                let b = &req.body;
                let (Some(title), Some(head), Some(base)) =
                    (b["title"].as_str(), b["head"].as_str(), b["base"].as_str())
                else {
                    return (
                        422,
                        json!({"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "missing_field"}]}),
                    );
                };
                if st.prs.iter().any(|(api, p, _, v)| {
                    api == "github"
                        && p == &project
                        && v["head"]["ref"] == head
                        && v["state"] == "open"
                }) {
                    return (
                        422,
                        json!({"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": format!("A pull request already exists for {o}:{head}.")}]}),
                    );
                }
                let number = st.prs.len() as u64 + 1;
                let pr = json!({
                    "number": number,
                    "html_url": format!("https://github.example/{project}/pull/{number}"),
                    "state": "open", "draft": b["draft"].as_bool().unwrap_or(false),
                    "title": title, "body": b["body"],
                    "head": {"ref": head, "sha": "0123456789abcdef0123456789abcdef01234567"},
                    "base": {"ref": base}, "merged_at": null, "requested_reviewers": []
                });
                st.prs.push(("github".into(), project, number, pr.clone()));
                (201, pr)
            }
            ("GET", ["repos", o, r, "pulls"]) => {
                let project = format!("{o}/{r}");
                let head = query_value(query, "head").unwrap_or_default();
                let list: Vec<Value> = st
                    .prs
                    .iter()
                    .rev()
                    .filter(|(api, p, _, v)| {
                        api == "github"
                            && p == &project
                            && format!("{o}:{}", v["head"]["ref"].as_str().unwrap_or("")) == head
                    })
                    .map(|(_, _, _, v)| v.clone())
                    .collect();
                (200, Value::Array(list))
            }
            ("GET", ["repos", _, _, "pulls", n]) => match find(&st.prs, "github", n) {
                Some(v) => (200, v),
                None => (404, json!({"message": "Not Found"})),
            },
            ("GET", ["repos", _, _, "pulls", _, "reviews"]) => (
                200,
                json!([
                    {"user": {"login": "reviewer"}, "state": "COMMENTED"},
                    {"user": {"login": "reviewer"}, "state": "APPROVED"}
                ]),
            ),
            ("GET", ["repos", _, _, "commits", _, "check-runs"]) => (
                200,
                json!({"total_count": 2, "check_runs": [
                    {"name": "test", "status": "completed", "conclusion": "success"},
                    {"name": "lint", "status": "in_progress", "conclusion": null}
                ]}),
            ),
            _ => (404, json!({"message": "Not Found"})),
        }
    }

    fn gitlab(&self, req: &ForgeRequest, path: &str, query: &str) -> (u16, Value) {
        let seg: Vec<&str> = path.trim_matches('/').split('/').collect();
        let mut st = self.state.lock().unwrap();
        match (req.method.as_str(), seg.as_slice()) {
            ("GET", ["projects", id]) => (
                200,
                json!({"path_with_namespace": id.replace("%2F", "/"), "default_branch": "main"}),
            ),
            ("POST", ["projects", id, "merge_requests"]) => {
                let project = id.replace("%2F", "/");
                let b = &req.body;
                let (Some(title), Some(src), Some(dst)) = (
                    b["title"].as_str(),
                    b["source_branch"].as_str(),
                    b["target_branch"].as_str(),
                ) else {
                    return (
                        400,
                        json!({"error": "title, source_branch, target_branch are missing"}),
                    );
                };
                if let Some((_, _, n, _)) = st.prs.iter().find(|(api, p, _, v)| {
                    api == "gitlab"
                        && p == &project
                        && v["source_branch"] == src
                        && v["state"] == "opened"
                }) {
                    return (
                        409,
                        json!({"message": [format!("Another open merge request already exists for this source branch: !{n}")]}),
                    );
                }
                let iid = st.prs.len() as u64 + 1;
                let mr = json!({
                    "iid": iid, "id": 1000 + iid,
                    "web_url": format!("https://gitlab.example/{project}/-/merge_requests/{iid}"),
                    "state": "opened", "title": title, "description": b["description"],
                    "draft": title.starts_with("Draft:"),
                    "source_branch": src, "target_branch": dst,
                    "head_pipeline": {"status": "success"}
                });
                st.prs.push(("gitlab".into(), project, iid, mr.clone()));
                (201, mr)
            }
            ("GET", ["projects", id, "merge_requests"]) => {
                let project = id.replace("%2F", "/");
                let src = query_value(query, "source_branch").unwrap_or_default();
                let list: Vec<Value> = st
                    .prs
                    .iter()
                    .rev()
                    .filter(|(api, p, _, v)| {
                        api == "gitlab" && p == &project && v["source_branch"] == src.as_str()
                    })
                    .map(|(_, _, _, v)| v.clone())
                    .collect();
                (200, Value::Array(list))
            }
            ("GET", ["projects", _, "merge_requests", n]) => match find(&st.prs, "gitlab", n) {
                Some(v) => (200, v),
                None => (404, json!({"message": "404 Not found"})),
            },
            ("GET", ["projects", _, "merge_requests", _, "approvals"]) => (
                200,
                json!({"approved": false, "approvals_required": 1, "approvals_left": 1, "approved_by": []}),
            ),
            _ => (404, json!({"message": "404 Not found"})),
        }
    }
}

fn find(prs: &[(String, String, u64, Value)], api: &str, n: &str) -> Option<Value> {
    let n: u64 = n.parse().ok()?;
    prs.iter()
        .find(|(a, _, num, _)| a == api && *num == n)
        .map(|(_, _, _, v)| v.clone())
}

fn query_value(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(if b[i] == b'+' { b' ' } else { b[i] });
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
