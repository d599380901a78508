//! A tiny deterministic generator for random trees and edits.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0.max(1);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File { body: String, exec: bool },
    Link(String),
}

pub type Tree = BTreeMap<String, Node>;

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "fn main() {",
    "}",
    "",
    "    return 1;",
    "// note",
    "let x = 1;",
    "gamma\r",
    "éclair",
];

pub const PATHS: &[&str] = &[
    "f0",
    "f1.txt",
    "f2.rs",
    "d0/f0",
    "d0/f1",
    "d0/d1/f2",
    "d0/d1/f3",
    "d2/f4 with space",
    "d2/f5",
    "d3/d4/d5/f6",
    "f7",
    "d6/f8",
];

pub fn random_body(rng: &mut Rng) -> String {
    let n = rng.below(12);
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        s.push('\n');
    }
    if !s.is_empty() && rng.chance(15) {
        s.pop();
    }
    s
}

pub fn edit_body(rng: &mut Rng, body: &str) -> String {
    let mut out = String::new();
    for line in body.split_inclusive('\n') {
        match rng.below(10) {
            0 => {}
            1 => {
                out.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
                out.push('\n');
            }
            2 => {
                out.push_str(line);
                if !line.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
                out.push('\n');
            }
            _ => out.push_str(line),
        }
    }
    if rng.chance(10) {
        out.push_str("tail\n");
    }
    if !out.is_empty() && rng.chance(10) && out.ends_with('\n') {
        out.pop();
    }
    out
}

pub fn random_tree(rng: &mut Rng) -> Tree {
    let mut t = Tree::new();
    for p in PATHS {
        if rng.chance(60) {
            let node = if rng.chance(8) {
                Node::Link(format!("target-{}", rng.below(3)))
            } else {
                Node::File {
                    body: random_body(rng),
                    exec: rng.chance(10),
                }
            };
            t.insert((*p).to_string(), node);
        }
    }
    t
}

pub fn mutate_tree(rng: &mut Rng, before: &Tree) -> Tree {
    let mut t = Tree::new();
    for p in PATHS {
        let node = match before.get(*p) {
            Some(Node::File { body, exec }) => match rng.below(10) {
                0 => None,
                1 => Some(Node::Link("elsewhere".into())),
                2 => Some(Node::File {
                    body: body.clone(),
                    exec: !exec,
                }),
                3..=6 => Some(Node::File {
                    body: edit_body(rng, body),
                    exec: *exec,
                }),
                _ => Some(Node::File {
                    body: body.clone(),
                    exec: *exec,
                }),
            },
            Some(Node::Link(target)) => match rng.below(4) {
                0 => None,
                1 => Some(Node::File {
                    body: random_body(rng),
                    exec: false,
                }),
                2 => Some(Node::Link(format!("{target}-moved"))),
                _ => Some(Node::Link(target.clone())),
            },
            None => {
                if rng.chance(25) {
                    Some(Node::File {
                        body: random_body(rng),
                        exec: false,
                    })
                } else {
                    None
                }
            }
        };
        if let Some(n) = node {
            t.insert((*p).to_string(), n);
        }
    }
    t
}

pub fn write_node(root: &Path, rel: &str, node: &Node) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&p);
    match node {
        #[cfg_attr(not(unix), allow(unused_variables))]
        Node::File { body, exec } => {
            std::fs::write(&p, body).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = if *exec { 0o755 } else { 0o644 };
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        Node::Link(target) => {
            #[cfg(unix)]
            std::os::unix::fs::symlink(target, &p).unwrap();
            #[cfg(not(unix))]
            std::fs::write(&p, target).unwrap();
        }
    }
}

/// Make the directory hold exactly `tree` (leaving .git and .mia-code).
pub fn materialize(root: &Path, tree: &Tree) {
    for e in std::fs::read_dir(root).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == ".git" || name == ".mia-code" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            std::fs::remove_dir_all(e.path()).unwrap();
        } else {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    for (p, n) in tree {
        write_node(root, p, n);
    }
}

/// What `tree_state` reads back for one node.
fn on_disk(n: &Node) -> Vec<u8> {
    match n {
        Node::File { body, exec } => {
            let mut v = body.clone().into_bytes();
            if *exec && cfg!(unix) {
                v.extend_from_slice(b"\n<exec>");
            }
            v
        }
        Node::Link(t) if cfg!(unix) => format!("symlink:{t}").into_bytes(),
        // Elsewhere `materialize` writes a link as a file holding its target.
        Node::Link(t) => t.clone().into_bytes(),
    }
}

/// Whether two nodes differ on this system's disk: everywhere but Unix
/// there are no modes, and links are files holding their target.
pub fn differs(a: &Node, b: &Node) -> bool {
    if cfg!(unix) {
        a != b
    } else {
        on_disk(a) != on_disk(b)
    }
}

/// The expected `tree_state` of a generated tree.
pub fn expected_state(tree: &Tree) -> BTreeMap<String, Vec<u8>> {
    tree.iter().map(|(p, n)| (p.clone(), on_disk(n))).collect()
}
