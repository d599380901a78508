#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The forge clients against the GitHub and GitLab stand-ins (their real
//! wire format): method, path, headers and body of each request, and what
//! the answers become.

use mia_forge::{Forge, ForgeError, NewPullRequest};
use mia_protocol::{ChecksState, ForgeKind, PrState, ReviewDecision};
use mia_testkit::forge::ForgeStandIn;

fn pr(head: &str, draft: bool) -> NewPullRequest {
    NewPullRequest {
        title: "Fix the parser".into(),
        body: "It no longer drops the last line.".into(),
        head: head.into(),
        base: "main".into(),
        draft,
    }
}

#[tokio::test]
async fn github_create_find_status_and_exists() {
    let s = ForgeStandIn::start("ghp_test", None);
    let f = Forge::new(ForgeKind::Github, Some(&s.github_api()), "ghp_test").unwrap();
    assert_eq!(f.default_branch("acme/widgets").await.unwrap(), "main");
    let created = f
        .create("acme/widgets", &pr("fix-parser", true))
        .await
        .unwrap();
    assert_eq!(created.number, 1);
    assert_eq!(created.url, "https://github.example/acme/widgets/pull/1");
    assert_eq!(created.state, PrState::Open);
    assert!(created.draft);

    let reqs = s.requests();
    let post = reqs.iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(post.target, "/api/v3/repos/acme/widgets/pulls");
    assert_eq!(post.header("authorization"), Some("Bearer ghp_test"));
    assert_eq!(post.header("accept"), Some("application/vnd.github+json"));
    assert_eq!(post.header("x-github-api-version"), Some("2022-11-28"));
    assert!(
        post.header("user-agent")
            .is_some_and(|u| u.starts_with("mia-code/"))
    );
    assert_eq!(post.body["title"], "Fix the parser");
    assert_eq!(post.body["head"], "fix-parser");
    assert_eq!(post.body["base"], "main");
    assert_eq!(post.body["draft"], true);

    let st = f
        .status("acme/widgets", "fix-parser")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(st.number, 1);
    assert_eq!(st.review_decision, Some(ReviewDecision::Approved));
    let checks = st.checks.unwrap();
    assert_eq!((checks.total, checks.passed, checks.pending), (2, 1, 1));
    assert_eq!(checks.state, ChecksState::Pending);
    let find = s
        .requests()
        .into_iter()
        .find(|r| r.method == "GET" && r.target.starts_with("/api/v3/repos/acme/widgets/pulls?"))
        .unwrap();
    assert!(
        find.target.contains("head=acme%3Afix-parser") && find.target.contains("state=all"),
        "{}",
        find.target
    );

    // A second one for the same branch: says it exists, with its link.
    let err = f
        .create("acme/widgets", &pr("fix-parser", false))
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Exists(_)));
    assert!(
        err.to_string()
            .contains("already exists: https://github.example/acme/widgets/pull/1"),
        "{err}"
    );
    assert!(f.status("acme/widgets", "other").await.unwrap().is_none());
}

#[tokio::test]
async fn gitlab_create_find_status_with_a_nested_group() {
    let s = ForgeStandIn::start("glpat-test", None);
    let f = Forge::new(ForgeKind::Gitlab, Some(&s.gitlab_api()), "glpat-test").unwrap();
    let created = f
        .create("group/sub/repo", &pr("feature", true))
        .await
        .unwrap();
    assert_eq!(
        created.url,
        "https://gitlab.example/group/sub/repo/-/merge_requests/1"
    );
    assert!(created.draft);
    let reqs = s.requests();
    let post = reqs.iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(
        post.target,
        "/api/v4/projects/group%2Fsub%2Frepo/merge_requests"
    );
    assert_eq!(post.header("private-token"), Some("glpat-test"));
    assert_eq!(post.header("authorization"), None);
    assert_eq!(post.body["source_branch"], "feature");
    assert_eq!(post.body["target_branch"], "main");
    assert_eq!(post.body["title"], "Draft: Fix the parser");
    assert_eq!(
        post.body["description"],
        "It no longer drops the last line."
    );
    let st = f
        .status("group/sub/repo", "feature")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(st.review_decision, Some(ReviewDecision::ReviewRequired));
    assert_eq!(st.checks.unwrap().state, ChecksState::Success);
    let err = f
        .create("group/sub/repo", &pr("feature", false))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("merge request for feature already exists"),
        "{err}"
    );
}

#[tokio::test]
async fn a_bad_token_is_said_plainly() {
    let s = ForgeStandIn::start("right", None);
    let f = Forge::new(ForgeKind::Github, Some(&s.github_api()), "wrong").unwrap();
    let err = f.create("acme/widgets", &pr("x", false)).await.unwrap_err();
    assert!(
        matches!(err, ForgeError::Auth { status: 401, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("GitHub refused the token")
            && text.contains("Bad credentials")
            && text.contains("GH_TOKEN"),
        "{text}"
    );
    // Nothing listens: a network error naming the URL.
    let f = Forge::new(ForgeKind::Gitlab, Some("http://127.0.0.1:9/api/v4"), "t").unwrap();
    let err = f.create("a/b", &pr("x", false)).await.unwrap_err();
    assert!(matches!(err, ForgeError::Network { .. }), "{err:?}");
}
