//! Pull requests on GitHub (REST v3, `POST /repos/{owner}/{repo}/pulls`)
//! and merge requests on GitLab (REST v4, `POST /projects/:id/merge_requests`):
//! which forge a remote's host belongs to, create one, find the one of a
//! branch, and its review decision and checks.
//!
//! Requests carry exactly the headers the services document: GitHub
//! `Authorization: Bearer`, `Accept: application/vnd.github+json`,
//! `X-GitHub-Api-Version: 2022-11-28` (and the `User-Agent` it requires);
//! GitLab `PRIVATE-TOKEN`.

use std::time::Duration;

use mia_protocol::{ChecksState, ChecksView, ForgeKind, PrState, PullRequestView, ReviewDecision};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

pub const GITHUB_API: &str = "https://api.github.com";
pub const GITLAB_API: &str = "https://gitlab.com/api/v4";
const GITHUB_VERSION: &str = "2022-11-28";

/// What went wrong, in the person's words.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error("{forge} refused the token ({status}): {message}; set a valid token ({hint})")]
    Auth {
        forge: &'static str,
        status: u16,
        message: String,
        hint: &'static str,
    },
    #[error("{0}")]
    Exists(String),
    #[error("{forge} answered {status}: {message}")]
    Refused {
        forge: &'static str,
        status: u16,
        message: String,
    },
    #[error("{forge} could not be reached at {url}: {reason}")]
    Network {
        forge: &'static str,
        url: String,
        reason: String,
    },
    #[error("the forge answered something unexpected: {0}")]
    BadAnswer(String),
}

pub type Result<T> = std::result::Result<T, ForgeError>;

fn name(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::Github => "GitHub",
        ForgeKind::Gitlab => "GitLab",
    }
}

fn token_hint(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::Github => {
            "GH_TOKEN or GITHUB_TOKEN, `mia-code auth set github`, or `gh auth login`"
        }
        ForgeKind::Gitlab => "GITLAB_TOKEN, `mia-code auth set gitlab`, or `glab auth login`",
    }
}

/// The host of a URL without scheme, user or port (`ghe.example.com`).
pub fn hostname(url_or_host: &str) -> String {
    let s = url_or_host
        .split_once("://")
        .map_or(url_or_host, |(_, rest)| rest);
    let authority = s.split('/').next().unwrap_or(s);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host.starts_with('[') {
        host.split(']').next().map_or(host, |h| &h[1..])
    } else {
        host.split(':').next().unwrap_or(host)
    };
    host.to_ascii_lowercase()
}

/// The forge of a remote's host: `github.com` (or the host of a configured
/// GitHub API URL) is GitHub, `gitlab.com` (or a configured GitLab API
/// URL's host) GitLab. `None`: unknown, or both claim it (name one).
pub fn detect(
    remote_host: &str,
    github_api: Option<&str>,
    gitlab_api: Option<&str>,
) -> Option<ForgeKind> {
    let host = hostname(remote_host);
    let gh = host == "github.com" || github_api.is_some_and(|u| hostname(u) == host);
    let gl = host == "gitlab.com" || gitlab_api.is_some_and(|u| hostname(u) == host);
    match (gh, gl) {
        (true, false) => Some(ForgeKind::Github),
        (false, true) => Some(ForgeKind::Gitlab),
        _ => None,
    }
}

/// A pull request to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPullRequest {
    pub title: String,
    pub body: String,
    /// The branch with the changes.
    pub head: String,
    /// The branch to merge into.
    pub base: String,
    pub draft: bool,
}

/// One forge's API, with a token.
#[derive(Clone)]
pub struct Forge {
    pub kind: ForgeKind,
    api: String,
    token: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for Forge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forge")
            .field("kind", &self.kind)
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

impl Forge {
    /// `api`: the REST base (`None`: github.com's or gitlab.com's).
    pub fn new(kind: ForgeKind, api: Option<&str>, token: &str) -> Result<Self> {
        let api = api
            .map(|a| a.trim_end_matches('/').to_string())
            .unwrap_or_else(|| {
                match kind {
                    ForgeKind::Github => GITHUB_API,
                    ForgeKind::Gitlab => GITLAB_API,
                }
                .to_string()
            });
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("mia-code/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ForgeError::BadAnswer(e.to_string()))?;
        Ok(Self {
            kind,
            api,
            token: token.trim().to_string(),
            client,
        })
    }

    pub fn api(&self) -> &str {
        &self.api
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let url = format!("{}{path}", self.api);
        let rb = self.client.request(method, url);
        match self.kind {
            ForgeKind::Github => rb
                .header("Authorization", format!("Bearer {}", self.token))
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", GITHUB_VERSION),
            ForgeKind::Gitlab => rb.header("PRIVATE-TOKEN", &self.token),
        }
    }

    async fn send(&self, rb: RequestBuilder) -> Result<(StatusCode, Value)> {
        let url = self.api.clone();
        let resp = rb.send().await.map_err(|e| ForgeError::Network {
            forge: name(self.kind),
            url,
            reason: e.without_url().to_string(),
        })?;
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status, value))
    }

    fn fail(&self, status: StatusCode, body: &Value) -> ForgeError {
        let message = error_message(body);
        match status.as_u16() {
            401 => ForgeError::Auth {
                forge: name(self.kind),
                status: 401,
                message,
                hint: token_hint(self.kind),
            },
            s => ForgeError::Refused {
                forge: name(self.kind),
                status: s,
                message: match s {
                    403 => format!("{message} (the token may lack the rights for this repository)"),
                    404 => format!(
                        "{message} (the repository is not there, or the token cannot see it)"
                    ),
                    _ => message,
                },
            },
        }
    }

    /// `owner/repo` (GitHub) or `group/sub/repo` (GitLab) as the API names it.
    fn project(&self, repo: &str) -> String {
        match self.kind {
            ForgeKind::Github => repo.to_string(),
            ForgeKind::Gitlab => repo.replace('/', "%2F"),
        }
    }

    /// The repository's default branch.
    pub async fn default_branch(&self, repo: &str) -> Result<String> {
        let path = match self.kind {
            ForgeKind::Github => format!("/repos/{}", self.project(repo)),
            ForgeKind::Gitlab => format!("/projects/{}", self.project(repo)),
        };
        let (status, v) = self.send(self.request(Method::GET, &path)).await?;
        if !status.is_success() {
            return Err(self.fail(status, &v));
        }
        v.get("default_branch")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| ForgeError::BadAnswer("no default_branch in the repository".into()))
    }

    /// Open a pull (merge) request.
    pub async fn create(&self, repo: &str, pr: &NewPullRequest) -> Result<PullRequestView> {
        let (path, body) = match self.kind {
            ForgeKind::Github => (
                format!("/repos/{}/pulls", self.project(repo)),
                json!({"title": pr.title, "body": pr.body, "head": pr.head, "base": pr.base, "draft": pr.draft}),
            ),
            ForgeKind::Gitlab => (
                format!("/projects/{}/merge_requests", self.project(repo)),
                json!({
                    "source_branch": pr.head,
                    "target_branch": pr.base,
                    "title": if pr.draft && !pr.title.starts_with("Draft:") { format!("Draft: {}", pr.title) } else { pr.title.clone() },
                    "description": pr.body,
                }),
            ),
        };
        let (status, v) = self
            .send(self.request(Method::POST, &path).json(&body))
            .await?;
        if status.is_success() {
            return self.view(&v);
        }
        let message = error_message(&v);
        let exists = match self.kind {
            ForgeKind::Github => status.as_u16() == 422 && message.contains("already exists"),
            ForgeKind::Gitlab => status.as_u16() == 409,
        };
        if exists {
            let url = self
                .find(repo, &pr.head)
                .await
                .ok()
                .flatten()
                .map(|p| format!(": {}", p.url))
                .unwrap_or_default();
            return Err(ForgeError::Exists(format!(
                "a {} for {} already exists{url}",
                self.noun(),
                pr.head
            )));
        }
        Err(self.fail(status, &v))
    }

    fn noun(&self) -> &'static str {
        match self.kind {
            ForgeKind::Github => "pull request",
            ForgeKind::Gitlab => "merge request",
        }
    }

    /// The newest pull request whose head is `branch` (any state).
    pub async fn find(&self, repo: &str, branch: &str) -> Result<Option<PullRequestView>> {
        let rb = match self.kind {
            ForgeKind::Github => {
                let owner = repo.split('/').next().unwrap_or(repo);
                self.request(Method::GET, &format!("/repos/{}/pulls", self.project(repo)))
                    .query(&[
                        ("head", format!("{owner}:{branch}").as_str()),
                        ("state", "all"),
                    ])
            }
            ForgeKind::Gitlab => self
                .request(
                    Method::GET,
                    &format!("/projects/{}/merge_requests", self.project(repo)),
                )
                .query(&[("source_branch", branch), ("state", "all")]),
        };
        let (status, v) = self.send(rb).await?;
        if !status.is_success() {
            return Err(self.fail(status, &v));
        }
        match v.as_array().and_then(|a| a.first()) {
            Some(first) => Ok(Some(self.view(first)?)),
            None => Ok(None),
        }
    }

    /// The pull request of `branch` with its review decision and checks.
    pub async fn status(&self, repo: &str, branch: &str) -> Result<Option<PullRequestView>> {
        let Some(mut pr) = self.find(repo, branch).await? else {
            return Ok(None);
        };
        match self.kind {
            ForgeKind::Github => self.github_details(repo, &mut pr).await?,
            ForgeKind::Gitlab => self.gitlab_details(repo, &mut pr).await?,
        }
        Ok(Some(pr))
    }

    async fn github_details(&self, repo: &str, pr: &mut PullRequestView) -> Result<()> {
        let p = self.project(repo);
        let (status, reviews) = self
            .send(self.request(
                Method::GET,
                &format!("/repos/{p}/pulls/{}/reviews", pr.number),
            ))
            .await?;
        if !status.is_success() {
            return Err(self.fail(status, &reviews));
        }
        let (status, detail) = self
            .send(self.request(Method::GET, &format!("/repos/{p}/pulls/{}", pr.number)))
            .await?;
        if !status.is_success() {
            return Err(self.fail(status, &detail));
        }
        let requested = detail
            .get("requested_reviewers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        pr.review_decision = github_decision(&reviews, requested);
        let sha = detail
            .pointer("/head/sha")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !sha.is_empty() {
            let (status, runs) = self
                .send(self.request(Method::GET, &format!("/repos/{p}/commits/{sha}/check-runs")))
                .await?;
            if status.is_success() {
                pr.checks = Some(github_checks(&runs));
            }
        }
        Ok(())
    }

    async fn gitlab_details(&self, repo: &str, pr: &mut PullRequestView) -> Result<()> {
        let p = self.project(repo);
        let (status, approvals) = self
            .send(self.request(
                Method::GET,
                &format!("/projects/{p}/merge_requests/{}/approvals", pr.number),
            ))
            .await?;
        if status.is_success() {
            let approved = approvals.get("approved").and_then(Value::as_bool) == Some(true);
            let left = approvals
                .get("approvals_left")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            pr.review_decision = if approved && left == 0 {
                Some(ReviewDecision::Approved)
            } else if left > 0 {
                Some(ReviewDecision::ReviewRequired)
            } else {
                None
            };
        }
        let (status, detail) = self
            .send(self.request(
                Method::GET,
                &format!("/projects/{p}/merge_requests/{}", pr.number),
            ))
            .await?;
        if !status.is_success() {
            return Err(self.fail(status, &detail));
        }
        pr.checks = Some(gitlab_checks(detail.get("head_pipeline")));
        Ok(())
    }

    /// A pull request as the API answered it.
    fn view(&self, v: &Value) -> Result<PullRequestView> {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let bad = |what: &str| ForgeError::BadAnswer(format!("no {what} in the answer: {v}"));
        Ok(match self.kind {
            ForgeKind::Github => PullRequestView {
                provider: ForgeKind::Github,
                number: v
                    .get("number")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| bad("number"))?,
                url: Some(s("html_url"))
                    .filter(|u| !u.is_empty())
                    .ok_or_else(|| bad("html_url"))?,
                state: if v.get("merged_at").is_some_and(|m| !m.is_null()) {
                    PrState::Merged
                } else if s("state") == "closed" {
                    PrState::Closed
                } else {
                    PrState::Open
                },
                title: s("title"),
                draft: v.get("draft").and_then(Value::as_bool).unwrap_or(false),
                head: v
                    .pointer("/head/ref")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                base: v
                    .pointer("/base/ref")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                review_decision: None,
                checks: None,
            },
            ForgeKind::Gitlab => PullRequestView {
                provider: ForgeKind::Gitlab,
                number: v
                    .get("iid")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| bad("iid"))?,
                url: Some(s("web_url"))
                    .filter(|u| !u.is_empty())
                    .ok_or_else(|| bad("web_url"))?,
                state: match s("state").as_str() {
                    "merged" => PrState::Merged,
                    "closed" | "locked" => PrState::Closed,
                    _ => PrState::Open,
                },
                title: s("title"),
                draft: v.get("draft").and_then(Value::as_bool).unwrap_or(false)
                    || s("title").starts_with("Draft:"),
                head: s("source_branch"),
                base: s("target_branch"),
                review_decision: None,
                checks: None,
            },
        })
    }
}

fn error_message(v: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    match v.get("message") {
        Some(Value::String(m)) => parts.push(m.clone()),
        Some(Value::Array(a)) => {
            parts.extend(a.iter().filter_map(|m| m.as_str().map(str::to_string)))
        }
        Some(Value::Object(o)) => parts.extend(o.iter().map(|(k, m)| format!("{k} {m}"))),
        _ => {}
    }
    if let Some(errs) = v.get("errors").and_then(Value::as_array) {
        for e in errs {
            if let Some(m) = e.get("message").and_then(Value::as_str) {
                parts.push(m.to_string());
            } else if let Some(m) = e.as_str() {
                parts.push(m.to_string());
            }
        }
    }
    if let Some(m) = v.get("error").and_then(Value::as_str) {
        parts.push(m.to_string());
    }
    if parts.is_empty() {
        if let Value::String(s) = v {
            return s.chars().take(300).collect();
        }
        return v.to_string().chars().take(300).collect();
    }
    parts.join(": ")
}

/// The latest decided review of each reviewer: any "changes requested"
/// wins, then any approval; reviewers still asked → review required.
fn github_decision(reviews: &Value, requested: bool) -> Option<ReviewDecision> {
    let mut latest: std::collections::BTreeMap<String, String> = Default::default();
    for r in reviews.as_array().into_iter().flatten() {
        let who = r
            .pointer("/user/login")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let state = r.get("state").and_then(Value::as_str).unwrap_or_default();
        match state {
            "APPROVED" | "CHANGES_REQUESTED" | "DISMISSED" => {
                latest.insert(who, state.to_string());
            }
            _ => {}
        }
    }
    if latest.values().any(|s| s == "CHANGES_REQUESTED") {
        Some(ReviewDecision::ChangesRequested)
    } else if latest.values().any(|s| s == "APPROVED") {
        Some(ReviewDecision::Approved)
    } else if requested {
        Some(ReviewDecision::ReviewRequired)
    } else {
        None
    }
}

fn github_checks(runs: &Value) -> ChecksView {
    let mut c = ChecksView {
        state: ChecksState::None,
        total: 0,
        passed: 0,
        failed: 0,
        pending: 0,
    };
    for r in runs
        .get("check_runs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        c.total += 1;
        let status = r.get("status").and_then(Value::as_str).unwrap_or_default();
        let conclusion = r
            .get("conclusion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if status != "completed" {
            c.pending += 1;
        } else if matches!(conclusion, "success" | "neutral" | "skipped") {
            c.passed += 1;
        } else {
            c.failed += 1;
        }
    }
    c.state = checks_state(&c);
    c
}

fn gitlab_checks(pipeline: Option<&Value>) -> ChecksView {
    let status = pipeline
        .and_then(|p| p.get("status"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut c = ChecksView {
        state: ChecksState::None,
        total: u32::from(!status.is_empty()),
        passed: 0,
        failed: 0,
        pending: 0,
    };
    match status {
        "" => {}
        "success" | "skipped" => c.passed = 1,
        "failed" | "canceled" => c.failed = 1,
        _ => c.pending = 1,
    }
    c.state = checks_state(&c);
    c
}

fn checks_state(c: &ChecksView) -> ChecksState {
    if c.total == 0 {
        ChecksState::None
    } else if c.failed > 0 {
        ChecksState::Failure
    } else if c.pending > 0 {
        ChecksState::Pending
    } else {
        ChecksState::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_forge_a_host_is() {
        assert_eq!(detect("github.com", None, None), Some(ForgeKind::Github));
        assert_eq!(detect("gitlab.com", None, None), Some(ForgeKind::Gitlab));
        assert_eq!(
            detect("ghe.corp:8443", Some("https://ghe.corp/api/v3"), None),
            Some(ForgeKind::Github)
        );
        assert_eq!(
            detect("git.corp", None, Some("https://git.corp/api/v4")),
            Some(ForgeKind::Gitlab)
        );
        assert_eq!(detect("bitbucket.org", None, None), None);
        // Both claim the host: the person must say which.
        assert_eq!(
            detect(
                "127.0.0.1:9",
                Some("http://127.0.0.1:1"),
                Some("http://127.0.0.1:2")
            ),
            None
        );
        assert_eq!(hostname("https://user@Host.Example:99/x"), "host.example");
    }

    #[test]
    fn review_decisions_from_the_latest_review_of_each_reviewer() {
        let reviews = json!([
            {"user": {"login": "a"}, "state": "CHANGES_REQUESTED"},
            {"user": {"login": "a"}, "state": "APPROVED"},
            {"user": {"login": "b"}, "state": "COMMENTED"}
        ]);
        assert_eq!(
            github_decision(&reviews, false),
            Some(ReviewDecision::Approved)
        );
        let reviews = json!([
            {"user": {"login": "a"}, "state": "APPROVED"},
            {"user": {"login": "b"}, "state": "CHANGES_REQUESTED"}
        ]);
        assert_eq!(
            github_decision(&reviews, false),
            Some(ReviewDecision::ChangesRequested)
        );
        assert_eq!(
            github_decision(&json!([]), true),
            Some(ReviewDecision::ReviewRequired)
        );
        assert_eq!(github_decision(&json!([]), false), None);
    }

    #[test]
    fn checks_summed() {
        let runs = json!({"total_count": 3, "check_runs": [
            {"status": "completed", "conclusion": "success"},
            {"status": "in_progress", "conclusion": null},
            {"status": "completed", "conclusion": "failure"}
        ]});
        let c = github_checks(&runs);
        assert_eq!((c.total, c.passed, c.failed, c.pending), (3, 1, 1, 1));
        assert_eq!(c.state, ChecksState::Failure);
        assert_eq!(
            gitlab_checks(Some(&json!({"status": "running"}))).state,
            ChecksState::Pending
        );
        assert_eq!(gitlab_checks(None).state, ChecksState::None);
    }

    #[test]
    fn error_messages_read_as_the_service_wrote_them() {
        let v = json!({"message": "Validation Failed", "errors": [{"message": "A pull request already exists for acme:feature."}]});
        assert_eq!(
            error_message(&v),
            "Validation Failed: A pull request already exists for acme:feature."
        );
        let v = json!({"message": ["Another open merge request already exists for this source branch: !3"]});
        assert!(error_message(&v).contains("!3"));
    }
}
