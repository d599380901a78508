#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Property (issue 11): two sessions, each with its own handle on one
//! project (as two processes would have), interleave known-path and shell
//! steps — the other session's step running *during* a shell step — and
//! undo in any order. After every step and undo, each session's files equal
//! its own recorded state, the other session's changes are untouched, the
//! person's edits between steps are untouched, and files no snapshot can
//! hold (over the size cap, ignored) are never changed by an undo. A person
//! also edits files *during* shell steps: when the command's writes were
//! traced (the OS sandbox), those edits are not the step's and no undo
//! reverts them.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use common::rgen::{self, Node, Rng, Tree, edit_body, random_body, write_node};
use common::{Project, tree_state};
use mia_protocol::FileChangeKind;
use mia_snapshot::{CaptureContext, SnapshotConfig, SnapshotError, SnapshotRepo, StepRecord};

const CAP: u64 = 2048;

struct Session {
    name: &'static str,
    prefix: &'static str,
    repo: SnapshotRepo,
    stack: Vec<Tree>,
    records: Vec<StepRecord>,
}

fn area_op(rng: &mut Rng, prefix: &str, cur: &Tree) -> (Tree, Vec<String>) {
    let paths: Vec<String> = rgen::PATHS
        .iter()
        .take(8)
        .map(|p| format!("{prefix}{p}"))
        .collect();
    let mut t = cur.clone();
    let any = paths[rng.below(paths.len() as u64) as usize].clone();
    let existing: Vec<String> = cur.keys().cloned().collect();
    let pick = existing
        .get(rng.below(existing.len().max(1) as u64) as usize)
        .cloned();
    match (rng.below(5), pick) {
        (0, Some(p)) => {
            t.remove(&p);
            (t, vec![p])
        }
        (1, Some(p)) if p != any => {
            let n = t.remove(&p).unwrap();
            t.insert(any.clone(), n);
            (t, vec![p, any])
        }
        (2, Some(p)) => {
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
        (3, _) => {
            t.insert(any.clone(), Node::Link(format!("to-{}", rng.below(4))));
            (t, vec![any])
        }
        _ => {
            t.insert(
                any.clone(),
                Node::File {
                    body: random_body(rng),
                    exec: rng.chance(20),
                },
            );
            (t, vec![any])
        }
    }
}

fn apply(root: &std::path::Path, before: &Tree, after: &Tree) {
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

fn changed(a: &Tree, b: &Tree) -> BTreeMap<String, FileChangeKind> {
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

fn ctx(s: &Session, n: usize) -> CaptureContext {
    CaptureContext {
        session_id: Some(s.name.into()),
        message_id: Some(format!("{}-m{n}", s.name)),
        tool_call_id: Some(format!("{}-c{n}", s.name)),
    }
}

fn known_step(root: &std::path::Path, s: &mut Session, rng: &mut Rng, n: usize, what: &str) {
    let cur = s.stack.last().unwrap().clone();
    let (new, paths) = area_op(rng, s.prefix, &cur);
    let ps: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let pending = s.repo.begin_step(ctx(s, n), Some(&ps)).unwrap();
    apply(root, &cur, &new);
    let rec = s.repo.finish_step(pending).unwrap();
    let got: BTreeMap<String, FileChangeKind> = rec
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.kind))
        .collect();
    assert_eq!(got, changed(&cur, &new), "{what}: {} known step", s.name);
    if !rec.changes.is_empty() {
        s.stack.push(new);
    }
    s.records.push(rec);
}

fn run(seed: u64) {
    let mut rng = Rng(seed);
    let p = Project::new();
    let root = p.path();
    let cfg = SnapshotConfig {
        max_file_size: CAP,
        ..p.cfg()
    };
    p.write(".gitignore", "*.log\n");
    let mut fixed: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let put = |rel: &str, bytes: Vec<u8>, fixed: &mut BTreeMap<String, Vec<u8>>| {
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::write(root.join(rel), &bytes).unwrap();
        fixed.insert(rel.to_string(), bytes);
    };
    put(".gitignore", b"*.log\n".to_vec(), &mut fixed);
    put("special/big.txt", vec![b'x'; 3000], &mut fixed);
    put("special/blob.bin", vec![0u8; 3000], &mut fixed);
    put("special/run.log", b"log\n".to_vec(), &mut fixed);
    for i in 0..2 {
        put(
            &format!("user/u{i}.txt"),
            format!("user {i}\n").into_bytes(),
            &mut fixed,
        );
    }
    let mut a = Session {
        name: "A",
        prefix: "a/",
        repo: SnapshotRepo::open(&root, cfg.clone()).unwrap(),
        stack: vec![Tree::new()],
        records: Vec::new(),
    };
    let mut b = Session {
        name: "B",
        prefix: "b/",
        repo: SnapshotRepo::open(&root, cfg).unwrap(),
        stack: vec![Tree::new()],
        records: Vec::new(),
    };
    a.repo.capture(&CaptureContext::default(), None).unwrap();
    for n in 0..20 {
        let what = format!("seed {seed} action {n}");
        if rng.chance(25) {
            let k = format!("user/u{}.txt", rng.below(2));
            put(&k, format!("user edit {n}\n").into_bytes(), &mut fixed);
        }
        let (s, t) = if rng.chance(50) {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        match rng.below(10) {
            0..=2 => known_step(&root, s, &mut rng, n, &what),
            3..=6 => {
                // A shell step of s; t's step runs while it does; the
                // command also changes files no snapshot holds.
                let cur = s.stack.last().unwrap().clone();
                let (mut new, _) = area_op(&mut rng, s.prefix, &cur);
                new = area_op(&mut rng, s.prefix, &new).0;
                let mut pending = s.repo.begin_step(ctx(s, n), None).unwrap();
                apply(&root, &cur, &new);
                // What the command's processes wrote, as the sandbox's trace reports it.
                let mut written: Vec<PathBuf> =
                    changed(&cur, &new).keys().map(|k| root.join(k)).collect();
                let traced = rng.chance(60);
                if traced && rng.chance(60) {
                    // A person saves a file in the editor while the command runs.
                    let k = format!("user/u{}.txt", rng.below(2));
                    put(
                        &k,
                        format!("edit during step {n}\n").into_bytes(),
                        &mut fixed,
                    );
                }
                if rng.chance(50) {
                    written.extend(
                        ["special/big.txt", "special/blob.bin", "special/run.log"]
                            .iter()
                            .map(|f| root.join(f)),
                    );
                    let len = if rng.chance(50) { 3000 } else { 5000 };
                    put("special/big.txt", vec![b'y'; len], &mut fixed);
                    // Binary and over the cap: never stored.
                    put("special/blob.bin", vec![n as u8; 4000], &mut fixed);
                    put(
                        "special/run.log",
                        format!("log {n}\n").into_bytes(),
                        &mut fixed,
                    );
                }
                if rng.chance(70) {
                    known_step(&root, t, &mut rng, 100 + n, &what);
                }
                if traced {
                    pending.written = Some(written);
                }
                let rec = s.repo.finish_step(pending).unwrap();
                let got: BTreeMap<String, FileChangeKind> = rec
                    .changes
                    .iter()
                    .map(|c| (c.path.clone(), c.kind))
                    .collect();
                assert_eq!(
                    got,
                    changed(&cur, &new),
                    "{what}: {}'s shell step records only its own changes",
                    s.name
                );
                if !rec.changes.is_empty() {
                    s.stack.push(new);
                }
                s.records.push(rec);
            }
            _ => {
                let plan = s.repo.plan_undo(&s.records);
                if s.stack.len() == 1 {
                    assert!(
                        matches!(plan, Err(SnapshotError::NothingToRevert { .. })),
                        "{what}: {plan:?}"
                    );
                } else {
                    let out = s.repo.execute(&plan.unwrap(), false).unwrap();
                    assert!(out.applied, "{what}: {} undo: {}", s.name, out.message);
                    s.records.push(out.record.unwrap());
                    s.stack.pop();
                }
            }
        }
        let mut want = fixed.clone();
        want.extend(rgen::expected_state(a.stack.last().unwrap()));
        want.extend(rgen::expected_state(b.stack.last().unwrap()));
        assert_eq!(tree_state(&root), want, "{what}");
    }
}

#[test]
fn two_sessions_interleaved_never_undo_each_others_changes() {
    if let Some(seed) = std::env::var("MIA_SEED").ok().and_then(|s| s.parse().ok()) {
        run(seed);
        return;
    }
    let n: u64 = std::env::var("MIA_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(25);
    for seed in 1..=n {
        run(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
}
