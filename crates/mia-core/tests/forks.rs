#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Forks through the runtime (spec 020) against the mock LLM over real
//! HTTP, in a real git repository: a fork continues with its parent's
//! context, a conversation-only fork's undo never touches the parent's
//! changes, a fork with files starts from the fork point's files while the
//! main tree stays as it is, and "always" answers are inherited.

use std::path::PathBuf;
use std::time::Duration;

use mia_core::OpResult;
use mia_protocol::{Event, Message, Op, PermissionReplyKind, Role, SessionId, TurnEnd};
use serde_json::{Value, json};

mod common;
use common::{Harness, Setup, harness_with};

use mia_testkit::repo as fixture;

async fn harness(steps: Value, config: Value, interactive: bool) -> Harness {
    let prepare = |project: &std::path::Path| {
        std::fs::write(project.join("a.txt"), "zero\n").unwrap();
        std::fs::write(project.join(".gitignore"), ".mia-code/\n").unwrap();
        fixture::init(project).unwrap();
        fixture::commit_all(project, "init").unwrap();
    };
    harness_with(
        steps,
        config,
        Setup {
            interactive,
            title: "fix-auth-bug",
            scale: 0.1,
            prepare: &prepare,
        },
    )
    .await
}

fn tool_step(contains: &str, id: &str, name: &str, args: Value) -> Value {
    json!({"match": {"last_message_contains": contains}, "response": {"events": [
        {"text": format!("Calling {name}.")},
        {"tool_call": {"id": id, "name": name, "arguments": args, "chunks": 2}}
    ]}})
}

fn after(id: &str, text: &str) -> Value {
    json!({"match": {"has_tool_result": id}, "response": {"events": [{"text": text}]}})
}

impl Harness {
    async fn send(&mut self, session: SessionId, text: &str) -> TurnEnd {
        self.runtime
            .submit(Op::UserMessage {
                session_id: session,
                text: text.into(),
                agent: None,
                model: None,
            })
            .await
            .unwrap();
        self.finish(session).await
    }

    async fn finish(&mut self, session: SessionId) -> TurnEnd {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let e = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .expect("the turn finishes")
                .unwrap();
            if let Event::TurnFinished {
                session_id, end, ..
            } = e
                && session_id == session
            {
                return end;
            }
        }
    }

    async fn messages(&self, id: SessionId) -> Vec<Message> {
        self.runtime.session_messages(id, false).await.unwrap()
    }

    async fn fork(
        &self,
        from: SessionId,
        at: Option<mia_protocol::MessageId>,
        files: bool,
    ) -> mia_protocol::ForkResult {
        match self
            .runtime
            .submit(Op::Fork {
                session_id: from,
                message_id: at,
                with_files: files,
            })
            .await
            .unwrap()
        {
            OpResult::Forked(f) => f,
            _ => panic!("a fork returns the new session"),
        }
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.project.join(rel)).ok()
    }
}

fn text_of(m: &Message) -> String {
    m.parts
        .iter()
        .filter_map(|p| match &p.content {
            mia_protocol::PartContent::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn parent_scenario() -> Vec<Value> {
    vec![
        tool_step(
            "write one",
            "call_1",
            "write",
            json!({"path": "a.txt", "content": "one\n"}),
        ),
        after("call_1", "Wrote one."),
        tool_step(
            "write two",
            "call_2",
            "write",
            json!({"path": "a.txt", "content": "two\n"}),
        ),
        after("call_2", "Wrote two."),
        tool_step(
            "add p",
            "call_3",
            "write",
            json!({"path": "p.txt", "content": "parent\n"}),
        ),
        after("call_3", "Added p."),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversation_fork_continues_the_context_and_undoes_only_its_own_changes() {
    let mut steps = parent_scenario();
    steps.push(tool_step(
        "child edit",
        "call_c",
        "write",
        json!({"path": "c.txt", "content": "child\n"}),
    ));
    steps.push(after("call_c", "Child wrote c."));
    let mut h = harness(Value::Array(steps), json!({}), false).await;
    let parent = h.session.id;
    assert_eq!(h.send(parent, "write one").await, TurnEnd::Completed);
    assert_eq!(h.send(parent, "write two").await, TurnEnd::Completed);
    assert_eq!(h.read("a.txt").as_deref(), Some("two\n"));

    let forked = h.fork(parent, None, false).await;
    let child = forked.session.id;
    assert!(forked.files.is_none());
    assert_eq!(forked.session.parent_id, Some(parent));
    assert_eq!(forked.session.title, "fix-auth-bug (fork)");
    assert_eq!(
        forked.session.directory, h.session.directory,
        "same directory"
    );
    assert_eq!(forked.session.agent.as_deref(), Some("build"));
    assert_eq!(
        forked.session.model.as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );

    // The child's undo history starts at the fork, and says so.
    let err = h
        .runtime
        .submit(Op::Undo {
            session_id: child,
            step: None,
            force: false,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("starts at the fork"), "{err}");
    assert!(err.to_string().contains(&parent.to_string()), "{err}");
    assert!(h.runtime.timeline(child).await.unwrap().is_empty());

    // A fork of the fork made at its marker (its last message so far).
    let grand = h.fork(child, None, false).await.session.id;

    // The child continues with the parent's context: the model sees it.
    let before = h.server.request_count();
    assert_eq!(h.send(child, "child edit").await, TurnEnd::Completed);
    let req = &h.server.requests()[before];
    let convo = req.body.to_string();
    for said in [
        "write one",
        "Wrote one.",
        "write two",
        "Wrote two.",
        "child edit",
    ] {
        assert!(convo.contains(said), "{said} missing from {convo}");
    }
    assert!(
        !convo.contains("Forked from"),
        "the marker is not sent to the model"
    );
    assert_eq!(h.read("c.txt").as_deref(), Some("child\n"));

    // Undo in the child: only its own change goes; the parent's stay.
    let OpResult::Reverted(s) = h
        .runtime
        .submit(Op::Undo {
            session_id: child,
            step: None,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(s.applied, "{s:?}");
    assert_eq!(h.read("c.txt"), None);
    assert_eq!(
        h.read("a.txt").as_deref(),
        Some("two\n"),
        "the parent's edit is untouched"
    );
    let err = h
        .runtime
        .submit(Op::Undo {
            session_id: child,
            step: None,
            force: false,
        })
        .await
        .unwrap_err();
    assert!(!err.to_string().is_empty());
    assert_eq!(h.read("a.txt").as_deref(), Some("two\n"));

    // The parent is as it was: its messages, its undo.
    let parent_msgs = h.messages(parent).await;
    assert!(
        parent_msgs
            .iter()
            .all(|m| !text_of(m).contains("child edit"))
    );
    let OpResult::Reverted(s) = h
        .runtime
        .submit(Op::Undo {
            session_id: parent,
            step: None,
            force: false,
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(s.applied);
    assert_eq!(h.read("a.txt").as_deref(), Some("one\n"));

    // The tree and the comparison.
    let tree = h.runtime.fork_tree(&h.project, false).await.unwrap();
    assert_eq!(tree.len(), 1);
    assert_eq!(tree[0].summary.session.id, parent);
    assert_eq!(tree[0].children.len(), 1);
    let node = &tree[0].children[0];
    assert_eq!(node.summary.session.id, child);
    assert!(!node.own_worktree);
    assert_eq!(node.fork_excerpt.as_deref(), Some("Wrote two."));
    // Its own first prompt tells it apart from its siblings.
    assert_eq!(node.first_prompt.as_deref(), Some("child edit"));
    assert_eq!(tree[0].first_prompt, None, "not a fork");
    // Forked at the marker: its fork point reads as the message before it,
    // not as "Forked from session …".
    assert_eq!(node.children[0].summary.session.id, grand);
    assert_eq!(node.children[0].fork_excerpt.as_deref(), Some("Wrote two."));
    assert_eq!(tree[0].files_changed, 1, "a.txt");
    h.server.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_with_files_starts_from_the_fork_points_files() {
    let mut steps = parent_scenario();
    steps.push(tool_step(
        "in the fork",
        "call_f",
        "write",
        json!({"path": "f.txt", "content": "fork\n"}),
    ));
    steps.push(after("call_f", "Fork wrote f."));
    let mut h = harness(Value::Array(steps), json!({}), false).await;
    let parent = h.session.id;
    // A file the person added and never committed: part of the project at the fork point.
    std::fs::write(h.project.join("notes.txt"), "mine\n").unwrap();
    assert_eq!(h.send(parent, "write one").await, TurnEnd::Completed);
    let msgs = h.messages(parent).await;
    let point = msgs
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && text_of(m).contains("Wrote one."))
        .unwrap()
        .id;
    assert_eq!(h.send(parent, "write two").await, TurnEnd::Completed);
    assert_eq!(h.send(parent, "add p").await, TurnEnd::Completed);

    let forked = h.fork(parent, Some(point), true).await;
    let files = forked
        .files
        .clone()
        .expect("a fork with files has a worktree");
    let wt = PathBuf::from(&files.path);
    assert_eq!(forked.session.directory, files.path);
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "one\n");
    assert!(
        !wt.join("p.txt").exists(),
        "p.txt came after the fork point"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(files.base, fixture::head(&h.project).unwrap());
    // The main tree is untouched.
    assert_eq!(h.read("a.txt").as_deref(), Some("two\n"));
    assert_eq!(h.read("p.txt").as_deref(), Some("parent\n"));
    // The marker says where the files are.
    let child_msgs = h.messages(forked.session.id).await;
    let marker = child_msgs.last().unwrap();
    assert_eq!(marker.message_type, mia_protocol::MessageType::Fork);
    assert!(
        text_of(marker).contains(&files.worktree),
        "{}",
        text_of(marker)
    );
    // Copied up to the fork point only.
    assert!(child_msgs.iter().all(|m| !text_of(m).contains("write two")));

    // The fork works in its worktree; its timeline starts from that state.
    assert_eq!(
        h.send(forked.session.id, "in the fork").await,
        TurnEnd::Completed
    );
    assert_eq!(std::fs::read_to_string(wt.join("f.txt")).unwrap(), "fork\n");
    assert!(!h.project.join("f.txt").exists());
    let timeline = h.runtime.timeline(forked.session.id).await.unwrap();
    assert_eq!(timeline.len(), 1);
    assert_eq!(timeline[0].changes[0].path, "f.txt");

    // A fork with files of the fork: another worktree, from the fork's state.
    let grand = h.fork(forked.session.id, None, true).await;
    let gfiles = grand.files.clone().unwrap();
    let gwt = PathBuf::from(&gfiles.path);
    assert_ne!(gwt, wt);
    assert_eq!(grand.session.fork.as_ref().unwrap().fork_depth, 2);
    assert_eq!(
        std::fs::read_to_string(gwt.join("f.txt")).unwrap(),
        "fork\n"
    );
    assert_eq!(std::fs::read_to_string(gwt.join("a.txt")).unwrap(), "one\n");
    assert!(!gwt.join("p.txt").exists());
    assert!(
        grand.session.title.ends_with("(fork 1.1)"),
        "{}",
        grand.session.title
    );

    // The tree: the fork, with its own worktree, under its parent.
    let tree = h.runtime.fork_tree(&h.project, false).await.unwrap();
    assert_eq!(tree.len(), 1);
    assert_eq!(tree[0].children.len(), 1);
    assert!(tree[0].children[0].own_worktree);
    assert_eq!(
        tree[0].children[0].children.len(),
        1,
        "the fork's fork, from another worktree"
    );
    assert!(tree[0].children[0].children[0].own_worktree);
    assert_eq!(
        tree[0].children[0].summary.worktree.as_deref(),
        Some(files.worktree.as_str())
    );
    // The same tree from inside the worktree.
    let from_wt = h.runtime.fork_tree(&wt, false).await.unwrap();
    assert_eq!(from_wt.len(), 1);

    // Compare: the parent's changes after the fork point against the fork's.
    let cmp = h
        .runtime
        .compare_sessions(parent, forked.session.id)
        .await
        .unwrap();
    let left: Vec<&str> = cmp.left.files.iter().map(|f| f.file.as_str()).collect();
    let right: Vec<&str> = cmp.right.files.iter().map(|f| f.file.as_str()).collect();
    assert!(
        left.contains(&"a.txt") && left.contains(&"p.txt"),
        "{left:?}"
    );
    assert_eq!(right, ["f.txt"]);
    assert_eq!(cmp.fork_point.as_deref(), Some(point.to_string().as_str()));
    assert_eq!(cmp.right.worktree.as_deref(), Some(files.worktree.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_inherits_the_sessions_always_answers() {
    let steps = json!([
        tool_step(
            "touch one",
            "call_1",
            "bash",
            json!({"command": "touch one.txt"})
        ),
        after("call_1", "one"),
        tool_step(
            "touch two",
            "call_2",
            "bash",
            json!({"command": "touch two.txt"})
        ),
        after("call_2", "two"),
    ]);
    let mut h = harness(
        steps,
        json!({"permissions": [{"permission": "bash", "action": "ask"}]}),
        true,
    )
    .await;
    let parent = h.session.id;
    h.runtime
        .submit(Op::UserMessage {
            session_id: parent,
            text: "touch one".into(),
            agent: None,
            model: None,
        })
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let request = loop {
        let e = tokio::time::timeout_at(deadline, h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::PermissionAsked { request } = e {
            break request;
        }
    };
    h.runtime
        .submit(Op::PermissionReply {
            session_id: parent,
            request_id: request.id.clone(),
            reply: PermissionReplyKind::Session,
        })
        .await
        .unwrap();
    assert_eq!(h.finish(parent).await, TurnEnd::Completed);

    let child = h.fork(parent, None, false).await.session.id;
    h.runtime
        .submit(Op::UserMessage {
            session_id: child,
            text: "touch two".into(),
            agent: None,
            model: None,
        })
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let e = tokio::time::timeout_at(deadline, h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match e {
            Event::PermissionAsked { request } => {
                panic!("the fork asked again: {request:?}")
            }
            Event::TurnFinished {
                session_id, end, ..
            } if session_id == child => {
                assert_eq!(end, TurnEnd::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(h.project.join("two.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_errors_say_what_to_do_and_create_nothing() {
    let steps = json!([{"match": {"last_message_contains": "hi"}, "response": {"events": [{"text": "hello"}]}}]);
    let mut h = harness(steps, json!({}), false).await;
    let s = h.session.id;
    // No messages yet.
    let err = h
        .runtime
        .submit(Op::Fork {
            session_id: s,
            message_id: None,
            with_files: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), mia_core::ErrorKind::BadInput);
    assert!(err.to_string().contains("InvalidForkPointError"), "{err}");
    assert_eq!(h.send(s, "hi").await, TurnEnd::Completed);

    // With files outside git: refused before anything is made.
    let plain = tempfile::tempdir().unwrap();
    let dir = plain.path().canonicalize().unwrap();
    let OpResult::Session(other) = h
        .runtime
        .submit(Op::CreateSession {
            directory: dir.display().to_string(),
            title: None,
            agent: None,
            model: Some("anthropic/claude-sonnet-4-5".into()),
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    let bogus = h.messages(s).await[0].id;
    let err = h
        .runtime
        .submit(Op::Fork {
            session_id: other.id,
            message_id: Some(bogus),
            with_files: false,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("belongs to session"), "{err}");

    let sessions_before = h
        .runtime
        .list_sessions(Default::default())
        .await
        .unwrap()
        .len();
    let worktrees = h.project.join(".mia-code/worktrees");
    let err = h
        .runtime
        .submit(Op::Fork {
            session_id: s,
            message_id: Some(mia_protocol::MessageId::new()),
            with_files: true,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("InvalidForkPointError"), "{err}");
    assert!(
        !worktrees.exists() || std::fs::read_dir(&worktrees).unwrap().next().is_none(),
        "no worktree made for a bad fork point"
    );
    assert_eq!(
        h.runtime
            .list_sessions(Default::default())
            .await
            .unwrap()
            .len(),
        sessions_before
    );

    // Promote: only forks.
    let err = h
        .runtime
        .submit(Op::Promote { session_id: s })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("top-level"), "{err}");
    let f = h.fork(s, None, false).await.session.id;
    let OpResult::Session(p) = h
        .runtime
        .submit(Op::Promote { session_id: f })
        .await
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(p.parent_id, None);
    assert!(p.fork.is_some());
    let tree = h.runtime.fork_tree(&h.project, false).await.unwrap();
    assert_eq!(tree.len(), 2, "the promoted fork is a root");
}
