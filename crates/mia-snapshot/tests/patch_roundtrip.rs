#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! For many random before/after trees: `git apply` of our patch onto
//! "before" reproduces "after" exactly, and our stats equal
//! `git diff --numstat` on the same pair of snapshots.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::Stdio;

use common::rgen::{Rng, expected_state, materialize, mutate_tree, random_tree};
use common::{Project, git, git_cmd, tree_state};
use mia_snapshot::{CaptureContext, stats, to_patch};

fn numstat(snap_dir: &std::path::Path, a: &str, b: &str) -> BTreeMap<String, (u32, u32)> {
    let out = git(
        snap_dir,
        &[
            "--git-dir",
            snap_dir.to_str().unwrap(),
            "-c",
            "core.quotePath=false",
            "diff",
            "--numstat",
            "--no-renames",
            "-z",
            a,
            b,
        ],
    );
    let mut m: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for rec in out.split('\0').filter(|s| !s.is_empty()) {
        let mut it = rec.splitn(3, '\t');
        let add: u32 = it.next().unwrap().parse().unwrap();
        let del: u32 = it.next().unwrap().parse().unwrap();
        let path = it.next().unwrap().to_string();
        let e = m.entry(path).or_default();
        e.0 += add;
        e.1 += del;
    }
    m
}

fn apply(dir: &std::path::Path, cmd: &mut std::process::Command, patch: &str) -> bool {
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(patch.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        eprintln!(
            "apply failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.status.success()
}

#[test]
fn patch_round_trip_and_numstat_match_git() {
    let have_patch = std::process::Command::new("patch")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let cases = 60u64;
    let mut patch_checked = 0;
    for case in 0..cases {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (case * 7919 + 1));
        let before = random_tree(&mut rng);
        let after = mutate_tree(&mut rng, &before);

        let p = Project::new();
        let root = p.path();
        materialize(&root, &before);
        let mut repo = p.repo();
        let a = repo.capture(&CaptureContext::default(), None).unwrap();
        materialize(&root, &after);
        let b = repo.capture(&CaptureContext::default(), None).unwrap();

        let diffs = repo.diff_full(&a.hash, &b.hash).unwrap();
        let patch = to_patch(&diffs);
        assert_eq!(repo.diff(&a.hash, &b.hash).unwrap(), patch);

        // Stats equal git's numstat, file by file and in total.
        let ours: BTreeMap<String, (u32, u32)> = {
            let mut m: BTreeMap<String, (u32, u32)> = BTreeMap::new();
            for d in &diffs {
                let e = m.entry(d.file.clone()).or_default();
                e.0 += d.additions;
                e.1 += d.deletions;
            }
            m
        };
        let theirs = numstat(repo.git_dir(), &a.hash, &b.hash);
        assert_eq!(ours, theirs, "case {case}: numstat differs\n{patch}");
        let s = stats(&diffs);
        assert_eq!(
            s.total_additions,
            theirs.values().map(|v| u64::from(v.0)).sum::<u64>()
        );
        assert_eq!(
            s.total_deletions,
            theirs.values().map(|v| u64::from(v.1)).sum::<u64>()
        );

        // git apply onto a copy of "before" gives exactly "after".
        let target = tempfile::tempdir().unwrap();
        materialize(target.path(), &before);
        git(target.path(), &["init", "-q"]);
        let mut cmd = git_cmd(target.path(), &["apply", "--whitespace=nowarn", "-"]);
        assert!(
            apply(target.path(), &mut cmd, &patch),
            "case {case}: git apply failed\n{patch}"
        );
        assert_eq!(
            tree_state(target.path()),
            expected_state(&after),
            "case {case}: git apply result differs\n{patch}"
        );

        // patch -p1 too, for content-only changes (no symlinks, no modes).
        let simple = |t: &common::rgen::Tree| {
            t.values()
                .all(|n| matches!(n, common::rgen::Node::File { exec: false, .. }))
        };
        if have_patch && simple(&before) && simple(&after) {
            let t2 = tempfile::tempdir().unwrap();
            materialize(t2.path(), &before);
            let mut cmd = std::process::Command::new("patch");
            cmd.args(["-p1", "--quiet", "--force", "--remove-empty-files"]);
            assert!(
                apply(t2.path(), &mut cmd, &patch),
                "case {case}: patch -p1 failed\n{patch}"
            );
            let mut got = tree_state(t2.path());
            let mut want = expected_state(&after);
            // GNU patch cannot create empty files from a header-only diff.
            got.retain(|_, v| !v.is_empty());
            want.retain(|_, v| !v.is_empty());
            assert_eq!(got, want, "case {case}: patch -p1 result differs\n{patch}");
            patch_checked += 1;
        }
    }
    assert!(
        patch_checked > 0 || !have_patch,
        "no case exercised patch -p1"
    );
}
