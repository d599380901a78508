#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Property: random sequences of creates/edits/deletes/renames/mode
//! changes/symlinks (as known-path and bash steps), undos, reverts and redos
//! never lose content. After every undo/revert/redo the session's files equal
//! the recorded earlier state byte for byte, and files the session never
//! touched (edited by the "user" meanwhile) are left exactly as the user left
//! them.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use common::rgen::{self, Node, Rng, Tree, edit_body, random_body, write_node};
use common::{Project, tree_state};
use mia_protocol::FileChangeKind;
use mia_snapshot::{CaptureContext, SnapshotError, SnapshotRepo, StepKind, StepRecord};

fn session_paths() -> Vec<String> {
    rgen::PATHS.iter().map(|p| format!("s/{p}")).collect()
}

fn apply_on_disk(root: &std::path::Path, before: &Tree, after: &Tree) {
    for p in before.keys() {
        if !after.contains_key(p) {
            std::fs::remove_file(root.join(p)).unwrap();
        }
    }
    for (p, n) in after {
        if before.get(p) != Some(n) {
            write_node(root, p, n);
        }
    }
}

/// One random tool action on the session's files: the new tree and the
/// paths the tool would declare.
fn random_op(rng: &mut Rng, cur: &Tree) -> (Tree, Vec<String>) {
    let paths = session_paths();
    let existing: Vec<String> = cur.keys().cloned().collect();
    let pick_existing = |rng: &mut Rng| {
        existing
            .get(rng.below(existing.len().max(1) as u64) as usize)
            .cloned()
    };
    let mut t = cur.clone();
    let any = paths[rng.below(paths.len() as u64) as usize].clone();
    match rng.below(7) {
        0 => {
            t.insert(
                any.clone(),
                Node::File {
                    body: random_body(rng),
                    exec: false,
                },
            );
            (t, vec![any])
        }
        1 => match pick_existing(rng) {
            Some(p) => {
                if let Some(Node::File { body, exec }) = cur.get(&p) {
                    t.insert(
                        p.clone(),
                        Node::File {
                            body: edit_body(rng, body),
                            exec: *exec,
                        },
                    );
                }
                (t, vec![p])
            }
            None => (t, vec![any]),
        },
        2 => match pick_existing(rng) {
            Some(p) => {
                t.remove(&p);
                (t, vec![p])
            }
            None => (t, vec![any]),
        },
        3 => match pick_existing(rng) {
            Some(p) if p != any => {
                let n = t.remove(&p).unwrap();
                t.insert(any.clone(), n);
                (t, vec![p, any])
            }
            _ => (t, vec![any]),
        },
        4 => match pick_existing(rng) {
            Some(p) => {
                if let Some(Node::File { body, exec }) = cur.get(&p) {
                    t.insert(
                        p.clone(),
                        Node::File {
                            body: body.clone(),
                            exec: !exec,
                        },
                    );
                }
                (t, vec![p])
            }
            None => (t, vec![any]),
        },
        5 => {
            t.insert(any.clone(), Node::Link(format!("target-{}", rng.below(5))));
            (t, vec![any])
        }
        _ => {
            // Rewrite with identical content: a step that changes nothing.
            (t, vec![any])
        }
    }
}

struct Model {
    /// Active steps' states; [0] is the baseline. (state, record index)
    stack: Vec<(Tree, Option<usize>)>,
    /// What a redo would push back.
    redo: Option<Vec<(Tree, Option<usize>)>>,
    records: Vec<StepRecord>,
    first_record_of: BTreeMap<String, usize>,
}

fn check_disk(root: &std::path::Path, session: &Tree, user: &BTreeMap<String, String>, what: &str) {
    let mut want = rgen::expected_state(session);
    for (p, body) in user {
        want.insert(p.clone(), body.clone().into_bytes());
    }
    assert_eq!(tree_state(root), want, "{what}");
}

fn changed_paths(a: &Tree, b: &Tree) -> BTreeMap<String, FileChangeKind> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter_map(|k| match (a.get(k), b.get(k)) {
            (None, Some(_)) => Some((k.clone(), FileChangeKind::Added)),
            (Some(_), None) => Some((k.clone(), FileChangeKind::Deleted)),
            (Some(x), Some(y)) if common::rgen::differs(x, y) => {
                Some((k.clone(), FileChangeKind::Modified))
            }
            _ => None,
        })
        .collect()
}

fn run_sequence(seed: u64) {
    let mut rng = Rng(seed);
    let p = Project::new();
    let root = p.path();
    let mut user: BTreeMap<String, String> = BTreeMap::new();
    for i in 0..3 {
        let path = format!("user/u{i}.txt");
        let body = format!("user file {i}\n");
        p.write(&path, &body);
        user.insert(path, body);
    }
    let initial = rgen::random_tree(&mut rng)
        .into_iter()
        .map(|(k, v)| (format!("s/{k}"), v))
        .collect::<Tree>();
    apply_on_disk(&root, &Tree::new(), &initial);
    let mut repo = SnapshotRepo::open(&root, p.cfg()).unwrap();
    repo.capture(&CaptureContext::default(), None).unwrap();
    let mut m = Model {
        stack: vec![(initial, None)],
        redo: None,
        records: Vec::new(),
        first_record_of: BTreeMap::new(),
    };
    let mut message = 0u32;
    for action in 0..24 {
        let what = format!("seed {seed} action {action}");
        // The user edits files the session never touches, between steps.
        if rng.chance(30) {
            let k = format!("user/u{}.txt", rng.below(3));
            let body = format!("user edit {action}\n");
            p.write(&k, &body);
            user.insert(k, body);
        }
        let cur = m.stack.last().unwrap().0.clone();
        match rng.below(20) {
            0..=12 => {
                if rng.chance(35) {
                    message += 1;
                }
                let msg = format!("msg-{message}");
                let bash = rng.chance(25);
                let (new, paths) = if bash {
                    let (mut t, _) = random_op(&mut rng, &cur);
                    for _ in 0..rng.below(3) {
                        t = random_op(&mut rng, &t).0;
                    }
                    (t, Vec::new())
                } else {
                    random_op(&mut rng, &cur)
                };
                let ctx = CaptureContext {
                    session_id: Some("ses".into()),
                    message_id: Some(msg.clone()),
                    tool_call_id: Some(format!("call-{action}")),
                };
                let ps: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
                let pending = repo
                    .begin_step(ctx, if bash { None } else { Some(&ps) })
                    .unwrap();
                apply_on_disk(&root, &cur, &new);
                let rec = repo.finish_step(pending).unwrap();
                if std::env::var_os("MIA_SEED").is_some() {
                    eprintln!(
                        "{what}: bash={bash} paths={paths:?} changes={:?}",
                        rec.changes
                    );
                    let gd = repo.git_dir().to_str().unwrap().to_string();
                    for h in [&rec.before, &rec.after] {
                        eprintln!(
                            "tree {h}:\n{}",
                            common::git(&root, &["--git-dir", &gd, "ls-tree", "-r", h])
                        );
                    }
                    eprintln!(
                        "model before: {:?}\nmodel after: {:?}",
                        cur.keys().collect::<Vec<_>>(),
                        new.keys().collect::<Vec<_>>()
                    );
                }
                let got: BTreeMap<String, FileChangeKind> = rec
                    .changes
                    .iter()
                    .map(|c| (c.path.clone(), c.kind))
                    .collect();
                assert_eq!(got, changed_paths(&cur, &new), "{what}: recorded changes");
                m.first_record_of.entry(msg).or_insert(m.records.len());
                let idx = m.records.len();
                let changed = !rec.changes.is_empty();
                m.records.push(rec);
                if changed {
                    m.stack.push((new, Some(idx)));
                    m.redo = None;
                }
            }
            13..=15 => {
                if std::env::var_os("MIA_SEED").is_some() {
                    eprintln!("{what}: undo");
                }
                let plan = repo.plan_undo(&m.records);
                if m.stack.len() == 1 {
                    assert!(
                        matches!(plan, Err(SnapshotError::NothingToRevert { .. })),
                        "{what}"
                    );
                    continue;
                }
                let out = repo.execute(&plan.unwrap(), false).unwrap();
                assert!(out.applied, "{what}: {}", out.message);
                m.records.push(out.record.unwrap());
                let popped = m.stack.pop().unwrap();
                m.redo = Some(vec![popped]);
                check_disk(
                    &root,
                    &m.stack.last().unwrap().0,
                    &user,
                    &format!("{what}: after undo"),
                );
            }
            16..=17 => {
                if std::env::var_os("MIA_SEED").is_some() {
                    eprintln!("{what}: revert");
                }
                let Some(msg) = m
                    .first_record_of
                    .keys()
                    .nth(rng.below(m.first_record_of.len().max(1) as u64) as usize)
                    .cloned()
                else {
                    continue;
                };
                let first = m.first_record_of[&msg];
                let keep = m
                    .stack
                    .iter()
                    .filter(|(_, r)| r.is_some_and(|r| r < first))
                    .count();
                let plan = repo.plan_revert(&m.records, &msg);
                if keep + 1 == m.stack.len() {
                    assert!(plan.is_err(), "{what}: nothing to revert for {msg}");
                    continue;
                }
                let out = repo.execute(&plan.unwrap(), false).unwrap();
                assert!(out.applied, "{what}: {}", out.message);
                m.records.push(out.record.unwrap());
                let popped = m.stack.split_off(keep + 1);
                m.redo = Some(popped);
                check_disk(
                    &root,
                    &m.stack.last().unwrap().0,
                    &user,
                    &format!("{what}: after revert {msg}"),
                );
            }
            _ => {
                let plan = repo.plan_redo(&m.records);
                match m.redo.take() {
                    None => assert!(plan.is_err(), "{what}: redo should be refused"),
                    Some(entries) => {
                        let out = repo.execute(&plan.unwrap(), false).unwrap();
                        assert!(out.applied, "{what}: {}", out.message);
                        let rec = out.record.unwrap();
                        assert!(matches!(rec.kind, StepKind::Redo { .. }));
                        m.records.push(rec);
                        m.stack.extend(entries);
                        check_disk(
                            &root,
                            &m.stack.last().unwrap().0,
                            &user,
                            &format!("{what}: after redo"),
                        );
                    }
                }
            }
        }
        check_disk(&root, &m.stack.last().unwrap().0, &user, &what);
    }
}

#[test]
fn random_sessions_never_lose_content() {
    if let Some(seed) = std::env::var("MIA_SEED").ok().and_then(|s| s.parse().ok()) {
        run_sequence(seed);
        return;
    }
    // MIA_SEEDS=N runs more sequences (a longer local soak).
    let n: u64 = std::env::var("MIA_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    for seed in 1..=n {
        run_sequence(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
}
