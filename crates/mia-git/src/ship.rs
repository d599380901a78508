//! Review and ship on any checkout (the main one or a worktree): what
//! changed against `HEAD` or the branch's base, where the branch stands,
//! commit (the repository's hooks run: it is the person's action), push
//! with the person's git and credential helpers, the remote a pull request
//! goes to, and the pull request recorded for a branch.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git2::{Delta, DiffOptions, Repository};

use crate::error::{GitError, Result};
use crate::git::Git;

/// A file that differs from the base: `(git mode, bytes)` on each side,
/// `None` where it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    pub before: Option<(u32, Vec<u8>)>,
    pub after: Option<(u32, Vec<u8>)>,
}

fn open(dir: &Path) -> Result<Repository> {
    Repository::discover(dir).map_err(|_| GitError::NotARepository(dir.to_path_buf()))
}

/// The top of the checkout `dir` is in.
pub fn toplevel(dir: &Path) -> Result<PathBuf> {
    let repo = open(dir)?;
    repo.workdir()
        .map(Path::to_path_buf)
        .ok_or_else(|| GitError::Invalid(format!("{} has no work tree", dir.display())))
}

/// Every file whose work-tree version (untracked files included, ignored
/// ones not) differs from commit `base` (`None`: `HEAD`; an unborn branch
/// compares with nothing).
pub fn changes_since(dir: &Path, base: Option<&str>) -> Result<Vec<ChangedFile>> {
    let repo = open(dir)?;
    let root = repo
        .workdir()
        .map(Path::to_path_buf)
        .ok_or_else(|| GitError::Invalid(format!("{} has no work tree", dir.display())))?;
    let tree = match base {
        Some(b) => Some(repo.revparse_single(b)?.peel_to_tree()?),
        None => match repo.head() {
            Ok(h) => Some(h.peel_to_tree()?),
            Err(_) => None,
        },
    };
    let mut o = DiffOptions::new();
    o.include_untracked(true)
        .recurse_untracked_dirs(true)
        .ignore_submodules(true);
    let diff = repo.diff_tree_to_workdir_with_index(tree.as_ref(), Some(&mut o))?;
    let mut out = Vec::new();
    for d in diff.deltas() {
        let path = d
            .new_file()
            .path()
            .or(d.old_file().path())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let before = match d.status() {
            Delta::Added | Delta::Untracked => None,
            _ => {
                let id = d.old_file().id();
                match repo.find_blob(id) {
                    Ok(b) => Some((u32::from(d.old_file().mode()), b.content().to_vec())),
                    Err(_) => None,
                }
            }
        };
        let after = match d.status() {
            Delta::Deleted => None,
            _ => {
                let p = root.join(&path);
                match std::fs::symlink_metadata(&p) {
                    Ok(m) if m.file_type().is_symlink() => std::fs::read_link(&p)
                        .ok()
                        .map(|t| (0o120000, t.to_string_lossy().into_owned().into_bytes())),
                    Ok(m) if m.is_file() => {
                        let bytes = std::fs::read(&p).map_err(|e| GitError::io("read", &p, e))?;
                        Some((file_mode(&m), bytes))
                    }
                    _ => None,
                }
            }
        };
        if before.is_none() && after.is_none() {
            continue;
        }
        out.push(ChangedFile {
            path,
            before,
            after,
        });
    }
    Ok(out)
}

#[cfg(unix)]
fn file_mode(m: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    if m.permissions().mode() & 0o111 != 0 {
        0o100755
    } else {
        0o100644
    }
}

#[cfg(not(unix))]
fn file_mode(_: &std::fs::Metadata) -> u32 {
    0o100644
}

/// The commit where the checkout's branch left its base branch: `prefer`
/// (a worktree's recorded base branch) when given, else the remote's
/// default branch (`origin/HEAD`), else `main` or `master`; a branch that
/// is itself the base is compared with its upstream. `None`: no base
/// could be found.
pub fn branch_base(dir: &Path, prefer: Option<&str>) -> Result<Option<(String, String)>> {
    let git = Git::new(dir, false);
    let current = current_branch(dir)?;
    let mut candidates: Vec<String> = Vec::new();
    if let Some(p) = prefer {
        candidates.push(p.to_string());
    }
    if let Ok(s) = git.ok(&[
        "symbolic-ref",
        "--quiet",
        "--short",
        "refs/remotes/origin/HEAD",
    ]) {
        candidates.push(s.trim().to_string());
    }
    candidates.extend(["main", "master", "origin/main", "origin/master"].map(String::from));
    for c in candidates {
        let short = c.strip_prefix("origin/").unwrap_or(&c);
        let reference = if current.as_deref() == Some(short) {
            match upstream(dir)? {
                Some(u) => u,
                None => continue,
            }
        } else {
            c.clone()
        };
        if reference.starts_with('-') {
            continue;
        }
        if let Ok(base) = git.ok(&["merge-base", "HEAD", &reference]) {
            return Ok(Some((reference, base.trim().to_string())));
        }
    }
    Ok(None)
}

/// The checked-out branch (`None`: detached).
pub fn current_branch(dir: &Path) -> Result<Option<String>> {
    let out = Git::new(dir, false).output(&["symbolic-ref", "--quiet", "--short", "HEAD"])?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty()))
}

/// The branch's upstream (`origin/feature`), if it has one.
pub fn upstream(dir: &Path) -> Result<Option<String>> {
    let out = Git::new(dir, false).output(&[
        "rev-parse",
        "--abbrev-ref",
        "--symbolic-full-name",
        "@{upstream}",
    ])?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty()))
}

/// Where a checkout's branch stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Standing {
    pub branch: Option<String>,
    pub upstream: Option<String>,
    pub ahead: u32,
    pub behind: u32,
    pub staged: u32,
    pub unstaged: u32,
    pub remotes: Vec<String>,
}

pub fn standing(dir: &Path) -> Result<Standing> {
    let git = Git::new(dir, false);
    let branch = current_branch(dir)?;
    let up = upstream(dir)?;
    let (mut ahead, mut behind) = (0, 0);
    if up.is_some()
        && let Ok(counts) = git.ok(&["rev-list", "--left-right", "--count", "HEAD...@{upstream}"])
    {
        let mut it = counts.split_whitespace().map(|n| n.parse().unwrap_or(0));
        ahead = it.next().unwrap_or(0);
        behind = it.next().unwrap_or(0);
    }
    let status = git.ok(&["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
    let (mut staged, mut unstaged) = (0, 0);
    let mut entries = status.split('\0');
    while let Some(e) = entries.next() {
        if e.len() < 3 {
            continue;
        }
        let (x, y) = (e.as_bytes()[0], e.as_bytes()[1]);
        if x == b'R' || x == b'C' {
            entries.next();
        }
        if x == b'?' {
            unstaged += 1;
            continue;
        }
        staged += u32::from(x != b' ');
        unstaged += u32::from(y != b' ');
    }
    let remotes = git
        .ok(&["remote"])?
        .lines()
        .map(str::to_string)
        .filter(|r| !r.is_empty())
        .collect();
    Ok(Standing {
        branch,
        upstream: up,
        ahead,
        behind,
        staged,
        unstaged,
        remotes,
    })
}

/// A commit made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    pub commit: String,
    pub branch: String,
    pub summary: String,
    pub output: String,
}

/// Commit what is staged with `message`, as `git commit` does (the
/// repository's hooks run). `edit`: open the person's editor on the
/// message first (a terminal is needed).
pub fn commit(dir: &Path, message: &str, edit: bool) -> Result<Committed> {
    let st = standing(dir)?;
    if st.staged == 0 {
        return Err(GitError::Invalid(
            "nothing is staged: stage what to commit first (`mia-code hunk stage ID`, or `git add`)"
                .into(),
        ));
    }
    if message.trim().is_empty() && !edit {
        return Err(GitError::Invalid(
            "the commit message is empty: pass -m MESSAGE, or --draft to have one drafted".into(),
        ));
    }
    let mut file =
        tempfile::NamedTempFile::new().map_err(|e| GitError::io("write", "a temporary file", e))?;
    std::io::Write::write_all(&mut file, message.as_bytes())
        .map_err(|e| GitError::io("write", file.path(), e))?;
    let path = file.path().display().to_string();
    let mut args = vec!["commit", "-F", path.as_str()];
    if edit {
        args.push("-e");
    }
    let output = if edit {
        let status = Command::new("git")
            .args(&args)
            .current_dir(dir)
            .status()
            .map_err(|e| GitError::io("run git in", dir, e))?;
        if !status.success() {
            return Err(GitError::Invalid(
                "git commit stopped (an empty message, or a hook refused): nothing was committed"
                    .into(),
            ));
        }
        String::new()
    } else {
        let out = Git::new(dir, true).output(&args)?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            return Err(GitError::Invalid(format!(
                "git commit failed, nothing was committed: {}",
                text.trim()
            )));
        }
        text
    };
    let git = Git::new(dir, false);
    let commit = git.ok(&["rev-parse", "HEAD"])?.trim().to_string();
    let summary = git.ok(&["log", "-1", "--format=%s"])?.trim().to_string();
    Ok(Committed {
        commit,
        branch: st.branch.unwrap_or_else(|| "HEAD".into()),
        summary,
        output,
    })
}

/// The staged change as text for a model (a stat, then the patch cut at
/// `max` bytes), and the subjects of the last `n` commits.
pub fn staged_for_draft(dir: &Path, max: usize) -> Result<String> {
    let git = Git::new(dir, false);
    let stat = git.ok(&["diff", "--cached", "--stat", "--no-color"])?;
    let mut patch = git.ok(&["diff", "--cached", "--no-color", "--no-ext-diff"])?;
    if patch.len() > max {
        let mut cut = max;
        while !patch.is_char_boundary(cut) {
            cut -= 1;
        }
        patch.truncate(cut);
        patch.push_str("\n[… the rest of the diff is left out]\n");
    }
    Ok(format!("{stat}\n{patch}"))
}

pub fn recent_subjects(dir: &Path, n: usize) -> Result<Vec<String>> {
    let out = Git::new(dir, false).output(&["log", &format!("-{n}"), "--format=%s"])?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The commits `head` has that `base` lacks, oldest first: (subject, body).
pub fn commits_between(dir: &Path, base: &str, head: &str) -> Result<Vec<(String, String)>> {
    if base.starts_with('-') || head.starts_with('-') {
        return Err(GitError::Invalid("a revision may not start with -".into()));
    }
    let text = Git::new(dir, false).ok(&[
        "log",
        "--reverse",
        "--format=%s%x1f%b%x1e",
        &format!("{base}..{head}"),
    ])?;
    Ok(text
        .split('\x1e')
        .filter_map(|c| {
            let c = c.trim_start_matches('\n');
            let (s, b) = c.split_once('\x1f')?;
            Some((s.trim().to_string(), b.trim().to_string()))
        })
        .filter(|(s, _)| !s.is_empty())
        .collect())
}

/// A push made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    pub remote: String,
    pub branch: String,
    pub upstream_set: bool,
    pub output: String,
}

/// Push the checked-out branch with the person's git (their credential
/// helpers; `interactive` lets git ask on the terminal), to its upstream,
/// or to `remote` (which becomes the upstream when there is none).
/// `progress` gets git's progress lines as they come.
pub fn push(
    dir: &Path,
    remote: Option<&str>,
    interactive: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Pushed> {
    let branch = current_branch(dir)?.ok_or_else(|| {
        GitError::Invalid("HEAD is detached: check out a branch to push it".into())
    })?;
    let up = upstream(dir)?;
    let (remote, set_upstream) = match (remote, &up) {
        (Some(r), _) => {
            check_remote(dir, r)?;
            (r.to_string(), up.is_none())
        }
        (None, Some(u)) => (
            u.split_once('/')
                .map(|(r, _)| r.to_string())
                .unwrap_or_default(),
            false,
        ),
        (None, None) => {
            return Err(GitError::Invalid(format!(
                "branch {branch} has no upstream and no remote was named: pass --remote REMOTE (e.g. --remote origin) to push it there and track it"
            )));
        }
    };
    let mut cmd = Command::new("git");
    cmd.arg("push").arg("--progress").arg("--porcelain");
    if set_upstream {
        cmd.arg("--set-upstream");
    }
    let refspec = match (&up, set_upstream) {
        (Some(u), false) if u.starts_with(&format!("{remote}/")) => {
            format!("HEAD:refs/heads/{}", &u[remote.len() + 1..])
        }
        _ => format!("refs/heads/{branch}:refs/heads/{branch}"),
    };
    cmd.arg("--").arg(&remote).arg(&refspec);
    cmd.current_dir(dir)
        .stdin(if interactive {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    if !interactive {
        cmd.env("GIT_TERMINAL_PROMPT", "0");
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| GitError::io("run git in", dir, e))?;
    let mut stdout = child.stdout.take();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let mut err_text = String::new();
    if let Some(mut err) = child.stderr.take() {
        let mut buf = [0u8; 4096];
        let mut line = String::new();
        loop {
            let n = match err.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let chunk = String::from_utf8_lossy(&buf[..n]);
            err_text.push_str(&chunk);
            for ch in chunk.chars() {
                if ch == '\n' || ch == '\r' {
                    if !line.is_empty() {
                        progress(&line);
                    }
                    line.clear();
                } else {
                    line.push(ch);
                }
            }
        }
        if !line.is_empty() {
            progress(&line);
        }
    }
    let status = child
        .wait()
        .map_err(|e| GitError::io("run git in", dir, e))?;
    let out_text = out_thread.join().unwrap_or_default();
    let output = format!("{out_text}{err_text}");
    if !status.success() {
        return Err(GitError::Remote(push_failure(&remote, &branch, &output)));
    }
    Ok(Pushed {
        remote,
        branch,
        upstream_set: set_upstream,
        output,
    })
}

/// Why a push failed, in the person's words, with git's last line.
fn push_failure(remote: &str, branch: &str, output: &str) -> String {
    let low = output.to_ascii_lowercase();
    let why = if low.contains("authentication failed")
        || low.contains("could not read username")
        || low.contains("permission denied")
        || low.contains("403")
        || low.contains("401")
    {
        format!(
            "{remote} refused the credentials: sign in with your git credential helper (or check the token's rights), then push again"
        )
    } else if low.contains("protected branch") || low.contains("pre-receive hook declined") {
        format!(
            "{remote} does not accept pushes to {branch} (a protected branch or a server hook): push to another branch and open a pull request"
        )
    } else if low.contains("non-fast-forward")
        || low.contains("fetch first")
        || low.contains("[rejected]")
    {
        format!("{remote} has commits that {branch} does not: pull (or rebase) first, then push")
    } else if low.contains("could not resolve host")
        || low.contains("unable to access")
        || low.contains("connection refused")
        || low.contains("could not read from remote")
    {
        format!(
            "{remote} could not be reached (network, or the URL is wrong): check the connection and `git remote -v`"
        )
    } else {
        format!("pushing {branch} to {remote} failed")
    };
    let detail = output
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("To ") && *l != "Done")
        .unwrap_or("");
    format!("{why} (git: {detail})")
}

fn check_remote(dir: &Path, remote: &str) -> Result<()> {
    if remote.starts_with('-') || remote.is_empty() {
        return Err(GitError::Invalid(format!(
            "{remote:?} is not a remote name"
        )));
    }
    let remotes = Git::new(dir, false).ok(&["remote"])?;
    if !remotes.lines().any(|r| r == remote) {
        return Err(GitError::Invalid(format!(
            "no remote named {remote:?} (remotes: {}); `git remote add {remote} URL` adds one",
            remotes.lines().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(())
}

/// The remote a pull request goes to: `remote`, else the branch's push
/// remote, else `origin`; with its URL.
pub fn pr_remote(dir: &Path, remote: Option<&str>) -> Result<(String, String)> {
    let git = Git::new(dir, false);
    let name = match remote {
        Some(r) => r.to_string(),
        None => {
            let push = git
                .ok(&[
                    "rev-parse",
                    "--abbrev-ref",
                    "--symbolic-full-name",
                    "@{push}",
                ])
                .ok()
                .and_then(|p| p.trim().split_once('/').map(|(r, _)| r.to_string()));
            push.unwrap_or_else(|| "origin".into())
        }
    };
    check_remote(dir, &name)?;
    let url = git
        .ok(&["remote", "get-url", "--", &name])?
        .trim()
        .to_string();
    Ok((name, url))
}

/// Whether `remote` has `branch` (a remote-tracking ref exists).
pub fn on_remote(dir: &Path, remote: &str, branch: &str) -> Result<bool> {
    Git::new(dir, false).yes(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("refs/remotes/{remote}/{branch}"),
    ])
}

/// The commit a ref points to.
pub fn rev(dir: &Path, reference: &str) -> Result<String> {
    if reference.starts_with('-') {
        return Err(GitError::Invalid("a revision may not start with -".into()));
    }
    Ok(Git::new(dir, false)
        .ok(&["rev-parse", "--verify", reference])?
        .trim()
        .to_string())
}

/// `host` and the repository's path (`owner/repo`, or GitLab's
/// `group/sub/repo`) of a remote URL: https, ssh and scp-like forms.
pub fn parse_remote_url(url: &str) -> Option<(String, String)> {
    let url = url.trim();
    let (host, path) = if let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .or_else(|| url.strip_prefix("ssh://"))
        .or_else(|| url.strip_prefix("git://"))
    {
        let (authority, path) = rest.split_once('/')?;
        let host = authority.rsplit('@').next()?;
        (host.to_string(), path.to_string())
    } else if url.contains("://") {
        // file:// and other transports name no forge.
        return None;
    } else if let Some((left, path)) = url.split_once(':') {
        // scp-like: git@github.com:owner/repo.git
        if left.contains('/') || path.starts_with('/') {
            return None;
        }
        let host = left.rsplit('@').next()?;
        (host.to_string(), path.to_string())
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).to_string();
    if host.is_empty() || !path.contains('/') {
        return None;
    }
    Some((host, path))
}

/// Record the pull request opened for `branch` (in the repository's own
/// config, `branch.<name>.mia-code-pr`), so it shows without the network.
pub fn record_pr(dir: &Path, branch: &str, value: &str) -> Result<()> {
    Git::new(dir, false).ok(&[
        "config",
        "--local",
        &format!("branch.{branch}.mia-code-pr"),
        value,
    ])?;
    Ok(())
}

pub fn recorded_pr(dir: &Path, branch: &str) -> Result<Option<String>> {
    let out = Git::new(dir, false).output(&[
        "config",
        "--local",
        "--get",
        &format!("branch.{branch}.mia-code-pr"),
    ])?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls_in_every_form() {
        let want = Some(("github.com".to_string(), "acme/widgets".to_string()));
        assert_eq!(
            parse_remote_url("https://github.com/acme/widgets.git"),
            want
        );
        assert_eq!(
            parse_remote_url("https://tok@github.com/acme/widgets"),
            want
        );
        assert_eq!(parse_remote_url("git@github.com:acme/widgets.git"), want);
        assert_eq!(
            parse_remote_url("ssh://git@github.com/acme/widgets.git"),
            want
        );
        assert_eq!(
            parse_remote_url("ssh://git@gitlab.example.com:2222/group/sub/repo.git"),
            Some(("gitlab.example.com:2222".into(), "group/sub/repo".into()))
        );
        assert_eq!(
            parse_remote_url("http://127.0.0.1:5000/acme/widgets.git"),
            Some(("127.0.0.1:5000".into(), "acme/widgets".into()))
        );
        assert_eq!(parse_remote_url("/srv/git/repo.git"), None);
        assert_eq!(parse_remote_url("file:///srv/git/acme/repo.git"), None);
        assert_eq!(parse_remote_url("https://github.com/justone"), None);
    }

    #[test]
    fn push_failures_in_the_persons_words() {
        let s = push_failure(
            "origin",
            "main",
            "remote: error: GH006: Protected branch update failed\n ! [remote rejected] main -> main (protected branch hook declined)\n",
        );
        assert!(s.contains("does not accept pushes to main"), "{s}");
        let s = push_failure("origin", "f", " ! [rejected]        f -> f (fetch first)\n");
        assert!(s.contains("pull (or rebase) first"), "{s}");
        let s = push_failure(
            "origin",
            "f",
            "fatal: Authentication failed for 'https://x/'\n",
        );
        assert!(s.contains("refused the credentials"), "{s}");
    }
}
