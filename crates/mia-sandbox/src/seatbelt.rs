//! macOS: a Seatbelt profile run through `/usr/bin/sandbox-exec`, with the
//! same promises as Linux. The profile is generated here on every OS (and
//! unit-tested on Linux, where a test parses it); paths reach it as `-D`
//! parameters, never spliced into the profile text, so no path can change
//! its meaning. It has not been run on a Mac by this repository's tests
//! (docs/platforms.md).
//!
//! The base is `(allow default)`; every other rule is a `deny` whose
//! exceptions are written inside it (`require-not`), so no two rules
//! overlap and their order does not matter.

use std::path::PathBuf;

use crate::protect::ProtectPlan;
use crate::{SandboxMode, SandboxPolicy};

pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

struct Params(Vec<(String, PathBuf)>);

impl Params {
    fn add(&mut self, prefix: &str, path: PathBuf) -> String {
        let name = format!("{prefix}_{}", self.0.len());
        self.0.push((name.clone(), path));
        name
    }
}

/// The profile and its parameters (`NAME=value`) for one policy; with
/// `proxy_port`, the network is only the proxy on localhost.
pub fn profile(
    policy: &SandboxPolicy,
    proxy_port: Option<u16>,
) -> (String, Vec<(String, PathBuf)>) {
    profile_with(policy, &ProtectPlan::of(policy), proxy_port)
}

/// [`profile`] for an already computed protection plan.
pub fn profile_with(
    policy: &SandboxPolicy,
    protect: &ProtectPlan,
    proxy_port: Option<u16>,
) -> (String, Vec<(String, PathBuf)>) {
    let mut params = Params(Vec::new());
    let mut p = String::from("(version 1)\n(allow default)\n");
    // Writes: only under the writable roots (and the usual devices).
    p.push_str("(deny file-write*\n  (require-all\n");
    p.push_str("    (require-not (literal \"/dev/null\"))\n");
    p.push_str("    (require-not (literal \"/dev/zero\"))\n");
    p.push_str("    (require-not (literal \"/dev/dtracehelper\"))\n");
    p.push_str("    (require-not (regex #\"^/dev/tty\"))\n");
    let writable: Vec<String> = if policy.mode == SandboxMode::WorkspaceWrite {
        policy
            .writable
            .iter()
            .chain(policy.tmp.iter())
            .map(|w| params.add("WRITABLE", w.clone()))
            .collect()
    } else {
        Vec::new()
    };
    for name in &writable {
        p.push_str(&format!("    (require-not (subpath (param \"{name}\")))\n"));
    }
    p.push_str("  ))\n");
    // Protected inside the writable roots, existing or not (a literal
    // matches a name that does not exist yet).
    if !protect.paths.is_empty() {
        p.push_str("(deny file-write*\n");
        for pr in &protect.paths {
            let name = params.add("PROTECTED", pr.path.clone());
            p.push_str(&format!(
                "  (literal (param \"{name}\"))\n  (subpath (param \"{name}\"))\n"
            ));
        }
        p.push_str(")\n");
    }
    // Hidden: neither contents nor names, but what stays visible inside.
    let visible: Vec<String> = policy
        .visible
        .iter()
        .map(|v| params.add("VISIBLE", v.clone()))
        .collect();
    for h in &policy.hidden {
        let name = params.add("HIDDEN", h.clone());
        p.push_str(&format!(
            "(deny file-read*\n  (require-all\n    (subpath (param \"{name}\"))\n"
        ));
        for v in &visible {
            p.push_str(&format!("    (require-not (subpath (param \"{v}\")))\n"));
        }
        p.push_str("  ))\n");
    }
    // Network: the proxy's port on localhost only; Unix sockets only in the
    // writable roots or where allowed.
    p.push_str("(deny network-outbound\n  (require-all\n");
    if let Some(port) = proxy_port {
        p.push_str(&format!(
            "    (require-not (remote ip \"localhost:{port}\"))\n"
        ));
    }
    for name in &writable {
        p.push_str(&format!(
            "    (require-not (remote unix-socket (subpath (param \"{name}\"))))\n"
        ));
    }
    for s in &policy.unix_sockets {
        let name = params.add("SOCKET", s.clone());
        p.push_str(&format!(
            "    (require-not (remote unix-socket (path-literal (param \"{name}\"))))\n"
        ));
    }
    p.push_str("  ))\n");
    (p, params.0)
}

/// `sandbox-exec -D ... -p PROFILE program args...`
pub fn argv(
    policy: &SandboxPolicy,
    proxy_port: Option<u16>,
    program: &str,
    args: &[&str],
) -> Vec<String> {
    let (profile, params) = profile(policy, proxy_port);
    let mut v = vec![SANDBOX_EXEC.to_string()];
    for (k, path) in params {
        v.push("-D".into());
        v.push(format!("{k}={}", path.display()));
    }
    v.push("-p".into());
    v.push(profile);
    v.push(program.into());
    v.extend(args.iter().map(|a| (*a).to_string()));
    v
}

/// A parsed S-expression (for the profile's own check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sexp {
    Atom(String),
    Str(String),
    List(Vec<Sexp>),
}

/// Parse SBPL text into its forms (strings, `#"regex"`, atoms, lists);
/// `Err` names what is malformed.
pub fn parse(text: &str) -> Result<Vec<Sexp>, String> {
    fn form(c: &[char], i: &mut usize) -> Result<Sexp, String> {
        while *i < c.len() && c[*i].is_whitespace() {
            *i += 1;
        }
        match c.get(*i) {
            None => Err("unexpected end".into()),
            Some('(') => {
                *i += 1;
                let mut items = Vec::new();
                loop {
                    while *i < c.len() && c[*i].is_whitespace() {
                        *i += 1;
                    }
                    match c.get(*i) {
                        None => return Err("unclosed (".into()),
                        Some(')') => {
                            *i += 1;
                            return Ok(Sexp::List(items));
                        }
                        _ => items.push(form(c, i)?),
                    }
                }
            }
            Some(')') => Err(format!("unexpected ) at {i}")),
            Some(q) if *q == '"' || (*q == '#' && c.get(*i + 1) == Some(&'"')) => {
                *i += if *q == '#' { 2 } else { 1 };
                let mut s = String::new();
                while let Some(ch) = c.get(*i) {
                    *i += 1;
                    match ch {
                        '"' => return Ok(Sexp::Str(s)),
                        '\\' => {
                            if let Some(n) = c.get(*i) {
                                s.push(*n);
                                *i += 1;
                            }
                        }
                        other => s.push(*other),
                    }
                }
                Err("unclosed string".into())
            }
            Some(_) => {
                let mut s = String::new();
                while let Some(ch) = c.get(*i) {
                    if ch.is_whitespace() || *ch == '(' || *ch == ')' {
                        break;
                    }
                    s.push(*ch);
                    *i += 1;
                }
                Ok(Sexp::Atom(s))
            }
        }
    }
    let c: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < c.len() && c[i].is_whitespace() {
            i += 1;
        }
        if i >= c.len() {
            return Ok(out);
        }
        out.push(form(&c, &mut i)?);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protect::Protected;
    use crate::{NetworkAccess, PolicyInputs};

    fn policy(mode: SandboxMode, network: NetworkAccess) -> SandboxPolicy {
        SandboxPolicy::build(
            mode,
            network,
            PolicyInputs {
                project_root: "/Users/me/p\") (allow file-write* (subpath \"/".into(),
                hidden: vec!["/Users/me/.ssh".into(), "/Users/me/.mia-code".into()],
                visible: vec!["/Users/me/.mia-code/plugins".into()],
                unix_sockets: vec!["/var/run/docker.sock".into()],
                tmp: Some("/private/tmp/mia-code-501/tmp/s1".into()),
                ..PolicyInputs::default()
            },
        )
    }

    fn plan() -> ProtectPlan {
        ProtectPlan {
            paths: vec![
                Protected {
                    path: "/Users/me/p/.git/config".into(),
                    dir: false,
                    exists: true,
                },
                Protected {
                    path: "/Users/me/p/.mcp.json".into(),
                    dir: false,
                    exists: false,
                },
            ],
            anchors: vec![],
        }
    }

    /// Every `(deny OP FILTER...)` of the profile, as (op, filter forms).
    fn denies(forms: &[Sexp]) -> Vec<(String, Vec<Sexp>)> {
        forms
            .iter()
            .filter_map(|f| match f {
                Sexp::List(items) if items.first() == Some(&Sexp::Atom("deny".into())) => {
                    match items.get(1) {
                        Some(Sexp::Atom(op)) => Some((op.clone(), items[2..].to_vec())),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect()
    }

    fn mentions(f: &[Sexp], what: &str) -> bool {
        f.iter().any(|x| match x {
            Sexp::Str(s) | Sexp::Atom(s) => s == what,
            Sexp::List(l) => mentions(l, what),
        })
    }

    #[test]
    fn the_profile_parses_and_says_what_linux_enforces() {
        let p = policy(SandboxMode::WorkspaceWrite, NetworkAccess::Ask);
        let (text, params) = profile_with(&p, &plan(), Some(50123));
        // Paths are parameters, never profile text.
        assert!(!text.contains("/Users/me"), "{text}");
        let forms = parse(&text).unwrap();
        assert_eq!(
            forms[0],
            Sexp::List(vec![Sexp::Atom("version".into()), Sexp::Atom("1".into())])
        );
        let d = denies(&forms);
        let param = |path: &str| {
            params
                .iter()
                .find(|(_, v)| v == &PathBuf::from(path))
                .map(|(k, _)| k.clone())
                .unwrap()
        };
        // Protected files, the missing one included, by literal and subpath.
        let protected: Vec<_> = d
            .iter()
            .filter(|(op, f)| op == "file-write*" && !mentions(f, "require-all"))
            .collect();
        assert_eq!(protected.len(), 1);
        for path in ["/Users/me/p/.git/config", "/Users/me/p/.mcp.json"] {
            assert!(mentions(&protected[0].1, &param(path)), "{path}");
        }
        // Writes outside the project and the private tmp are denied.
        let outside = d
            .iter()
            .find(|(op, f)| op == "file-write*" && mentions(f, "require-not"))
            .unwrap();
        assert!(mentions(
            &outside.1,
            &param("/private/tmp/mia-code-501/tmp/s1")
        ));
        // Hidden paths: all reads, with the plugins folder left visible.
        let hidden: Vec<_> = d.iter().filter(|(op, _)| op == "file-read*").collect();
        assert_eq!(hidden.len(), 2);
        assert!(
            hidden
                .iter()
                .all(|(_, f)| mentions(f, &param("/Users/me/.mia-code/plugins")))
        );
        // The network: only the proxy's port, and Unix sockets in the
        // project or allowed.
        let net = d.iter().find(|(op, _)| op == "network-outbound").unwrap();
        assert!(mentions(&net.1, "localhost:50123"));
        assert!(mentions(&net.1, &param("/var/run/docker.sock")));
    }

    #[test]
    fn read_only_and_denied_network_grant_nothing() {
        let p = policy(SandboxMode::ReadOnly, NetworkAccess::Deny);
        let (text, params) = profile_with(&p, &ProtectPlan::default(), None);
        parse(&text).unwrap();
        assert!(!text.contains("WRITABLE_"));
        assert!(!text.contains("localhost:"));
        assert!(text.contains("(deny network-outbound"));
        assert!(params.iter().all(|(k, _)| !k.starts_with("WRITABLE")));
        let v = argv(&p, None, "bash", &["-c", "ls"]);
        assert_eq!(v[0], SANDBOX_EXEC);
        assert_eq!(&v[v.len() - 3..], &["bash", "-c", "ls"]);
    }

    #[test]
    fn the_parser_refuses_malformed_text() {
        assert!(parse("(deny file-write* (subpath \"x\")").is_err());
        assert!(parse("(a))").is_err());
        assert!(parse("(a \"open)").is_err());
    }
}
