//! Review comments (a person's notes on diff lines, kept per session until
//! sent to the agent as one message) and the review pane's scopes: the
//! uncommitted changes, the branch against its base, the last turn.

use std::path::{Path, PathBuf};

use mia_protocol::{
    FileDiff, Message, NewReviewComment, Op, ReviewComment, ReviewDiff, ReviewList, ReviewScope,
    Role, SessionId,
};
use mia_snapshot::{StepKind, StepRecord};
use mia_store::StoredComment;

use crate::CoreError;
use crate::runtime::Runtime;

/// The longest comment, and the most lines one quotes.
const MAX_TEXT: usize = 20_000;
const MAX_QUOTE: usize = 200;

/// A comment's file as the session names it: relative, `/`-separated,
/// inside the session's folder.
fn clean_rel(file: &str) -> Result<String, CoreError> {
    let f = file.trim().replace('\\', "/");
    let f = f.trim_start_matches("./").to_string();
    let bad = f.is_empty()
        || f.starts_with('/')
        || f.split('/').any(|p| p == ".." || p.is_empty())
        || Path::new(&f).is_absolute()
        || f.contains(':');
    if bad {
        return Err(CoreError::Invalid(format!(
            "{file:?} is not a file of the session's folder: give its path relative to the folder (e.g. src/lib.rs)"
        )));
    }
    Ok(f)
}

/// The text lines of `path` (`None`: not a readable text file).
fn read_lines(path: &Path) -> Option<Vec<String>> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    Some(
        text.split_inclusive('\n')
            .map(|l| l.trim_end_matches('\n').trim_end_matches('\r').to_string())
            .collect(),
    )
}

/// Where a stored comment's lines are now: still there (same numbers),
/// moved (the quoted lines found once elsewhere), or changed (outdated).
fn locate(c: &StoredComment, lines: Option<&[String]>) -> ReviewComment {
    let mut view = ReviewComment {
        id: c.id.clone(),
        file: c.file.clone(),
        line: c.line,
        end_line: c.end_line,
        text: c.text.clone(),
        outdated: true,
        quote: c.quote.clone(),
        created_at: c.created_at,
    };
    let Some(lines) = lines else {
        return view;
    };
    let n = c.quote.len();
    if n == 0 {
        return view;
    }
    let at = (c.line as usize).saturating_sub(1);
    if lines.get(at..at + n) == Some(&c.quote[..]) {
        view.outdated = false;
        return view;
    }
    let found: Vec<usize> = (0..lines.len().saturating_sub(n - 1))
        .filter(|&i| lines[i..i + n] == c.quote[..])
        .take(2)
        .collect();
    if let [only] = found[..] {
        view.line = only as u32 + 1;
        view.end_line = view.line + n as u32 - 1;
        view.outdated = false;
    }
    view
}

/// The one user message a batch of comments becomes: each with its file,
/// line range, the quoted lines (numbered) and the text.
pub fn review_message(comments: &[ReviewComment]) -> String {
    let mut out = format!(
        "Review comments on your changes ({}). Address each one, then say briefly what you changed for it.\n",
        comments.len()
    );
    for (i, c) in comments.iter().enumerate() {
        let range = if c.end_line > c.line {
            format!("lines {}-{}", c.line, c.end_line)
        } else {
            format!("line {}", c.line)
        };
        out.push_str(&format!("\n{}. {}, {range}", i + 1, c.file));
        if c.outdated {
            out.push_str(
                " (outdated: these lines have changed since the comment was written; they read)",
            );
        }
        out.push_str(":\n```\n");
        for (k, l) in c.quote.iter().enumerate() {
            out.push_str(&format!("{} | {l}\n", c.line as usize + k));
        }
        out.push_str("```\n");
        for l in c.text.lines() {
            out.push_str(&format!("> {l}\n"));
        }
    }
    out
}

impl Runtime {
    pub(crate) async fn session_directory(&self, id: SessionId) -> Result<PathBuf, CoreError> {
        Ok(self.state(id).await?.directory.clone())
    }

    /// The session's review comments, each marked outdated when its lines
    /// changed (a moved block keeps its comment, at the new line).
    pub async fn review_list(&self, id: SessionId) -> Result<ReviewList, CoreError> {
        let dir = self.session_directory(id).await?;
        let stored = self
            .inner
            .store
            .call(move |db| db.review_comments(&id))
            .await?;
        let comments = tokio::task::spawn_blocking(move || {
            stored
                .iter()
                .map(|c| locate(c, read_lines(&dir.join(&c.file)).as_deref()))
                .collect()
        })
        .await
        .map_err(|e| CoreError::Internal(e.to_string()))?;
        Ok(ReviewList { comments })
    }

    /// Add a comment on lines `line..=end_line` of `file` (as the file is
    /// now in the session's folder).
    pub async fn review_add(
        &self,
        id: SessionId,
        new: NewReviewComment,
    ) -> Result<ReviewComment, CoreError> {
        let dir = self.session_directory(id).await?;
        let file = clean_rel(&new.file)?;
        let text = new.text.trim().to_string();
        if text.is_empty() {
            return Err(CoreError::Invalid(
                "the comment is empty: say what is wrong or what to change".into(),
            ));
        }
        if text.len() > MAX_TEXT {
            return Err(CoreError::Invalid(format!(
                "the comment is {} characters; keep it under {MAX_TEXT}",
                text.len()
            )));
        }
        let end = new.end_line.unwrap_or(new.line);
        if new.line == 0 || end < new.line {
            return Err(CoreError::Invalid(format!(
                "lines {}..{end} are not a range: lines count from 1 and --end-line is not before --line",
                new.line
            )));
        }
        let path = dir.join(&file);
        let lines = read_lines(&path).ok_or_else(|| {
            CoreError::Invalid(format!(
                "{file} is not a text file in {}: comment on a file as it is in the session's folder",
                dir.display()
            ))
        })?;
        if end as usize > lines.len() {
            return Err(CoreError::Invalid(format!(
                "{file} has {} lines; line {end} is not in it",
                lines.len()
            )));
        }
        let quote: Vec<String> = lines[new.line as usize - 1..end as usize]
            .iter()
            .take(MAX_QUOTE)
            .cloned()
            .collect();
        let stored = StoredComment {
            id: format!("rc_{}", uuid::Uuid::now_v7().simple()),
            session_id: id,
            file,
            line: new.line,
            end_line: new.line + quote.len() as u32 - 1,
            text,
            quote,
            created_at: mia_protocol::now_ms(),
        };
        let row = stored.clone();
        self.inner
            .store
            .call(move |db| db.add_review_comment(&row))
            .await?;
        Ok(locate(&stored, Some(&lines)))
    }

    /// Delete one comment; the ones left.
    pub async fn review_remove(
        &self,
        id: SessionId,
        comment: &str,
    ) -> Result<ReviewList, CoreError> {
        let ids = vec![comment.to_string()];
        let n = self
            .inner
            .store
            .call(move |db| db.delete_review_comments(&id, Some(&ids)))
            .await?;
        if n == 0 {
            return Err(CoreError::NotFound(format!(
                "no review comment {comment} in session {id}"
            )));
        }
        self.review_list(id).await
    }

    /// Delete every comment of the session; how many there were.
    pub async fn review_clear(&self, id: SessionId) -> Result<usize, CoreError> {
        self.state(id).await?;
        self.inner
            .store
            .call(move |db| db.delete_review_comments(&id, None))
            .await
    }

    /// Send the comments to the agent as one user message and start the
    /// turn (as `Op::UserMessage`); the comments sent are then removed. A
    /// refused turn (one is running) keeps them. Returns the message text.
    pub async fn review_send(
        &self,
        id: SessionId,
        agent: Option<String>,
        model: Option<String>,
    ) -> Result<String, CoreError> {
        let list = self.review_list(id).await?;
        if list.comments.is_empty() {
            return Err(CoreError::Invalid(format!(
                "session {id} has no review comments to send: add one first (`mia-code review add`)"
            )));
        }
        let text = review_message(&list.comments);
        self.submit(Op::UserMessage {
            session_id: id,
            text: text.clone(),
            agent,
            model,
        })
        .await?;
        let ids: Vec<String> = list.comments.into_iter().map(|c| c.id).collect();
        self.inner
            .store
            .call(move |db| db.delete_review_comments(&id, Some(&ids)))
            .await?;
        Ok(text)
    }

    /// What the review pane shows for `scope`.
    pub async fn review_diff(
        &self,
        id: SessionId,
        scope: ReviewScope,
    ) -> Result<ReviewDiff, CoreError> {
        let dir = self.session_directory(id).await?;
        let (base, files) = match scope {
            ReviewScope::Uncommitted => {
                self.on_git(move || {
                    let base = mia_git::ship::rev(&dir, "HEAD").unwrap_or_default();
                    Ok((base, git_files(&dir, None)?))
                })
                .await?
            }
            ReviewScope::Branch => {
                let prefer = self.worktree_base_ref(&dir).await;
                self.on_git(
                    move || match mia_git::ship::branch_base(&dir, prefer.as_deref())? {
                        Some((_, base)) => {
                            let files = git_files(&dir, Some(&base))?;
                            Ok((base, files))
                        }
                        None => Ok((String::new(), git_files(&dir, None)?)),
                    },
                )
                .await?
            }
            ReviewScope::LastTurn => self.last_turn_diff(id).await?,
        };
        Ok(ReviewDiff { scope, base, files })
    }

    /// The branch a mia-code worktree at `dir` was made from.
    async fn worktree_base_ref(&self, dir: &Path) -> Option<String> {
        let list = self.worktree_list(dir.to_path_buf()).await.ok()?;
        let canon = dunce::canonicalize(dir).ok()?;
        list.into_iter()
            .find(|w| dunce::canonicalize(&w.path).ok().as_ref() == Some(&canon))
            .map(|w| w.base)
            .filter(|b| !b.is_empty())
    }

    /// Before the last turn's first change → after its last.
    async fn last_turn_diff(&self, id: SessionId) -> Result<(String, Vec<FileDiff>), CoreError> {
        let records = self.step_records(id).await?;
        let messages: Vec<Message> = self
            .inner
            .store
            .call(move |db| db.get_messages(&id, &mia_store::MessageQuery::default()))
            .await?;
        let Some(last_user) = messages.iter().rposition(|m| m.role == Role::User) else {
            return Ok((String::new(), Vec::new()));
        };
        let turn: Vec<String> = messages[last_user..]
            .iter()
            .map(|m| m.id.to_string())
            .collect();
        let steps: Vec<&StepRecord> = records
            .iter()
            .filter(|r| r.kind == StepKind::Tool && turn.contains(&r.message_id))
            .collect();
        let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
            return Ok((String::new(), Vec::new()));
        };
        let (a, b) = (first.before.clone(), last.after.clone());
        let paths = crate::views::changed_paths(&steps);
        let base = a.clone();
        let files = self
            .with_repo(id, move |repo| repo.diff_paths(&a, &b, &paths))
            .await?;
        Ok((base, files))
    }
}

/// The work tree of `dir` against commit `base` (`None`: `HEAD`) as
/// structured diffs.
fn git_files(dir: &Path, base: Option<&str>) -> Result<Vec<FileDiff>, mia_git::GitError> {
    Ok(mia_git::ship::changes_since(dir, base)?
        .into_iter()
        .map(|c| mia_snapshot::contents_diff(&c.path, c.before, c.after))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(line: u32, quote: &[&str]) -> StoredComment {
        StoredComment {
            id: "rc_1".into(),
            session_id: SessionId::new(),
            file: "a.rs".into(),
            line,
            end_line: line + quote.len() as u32 - 1,
            text: "use a constant".into(),
            quote: quote.iter().map(|s| s.to_string()).collect(),
            created_at: 0,
        }
    }

    fn lines(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn comments_follow_their_lines_or_say_they_are_outdated() {
        let c = stored(2, &["let x = 42;"]);
        let now = lines(&["fn f() {", "let x = 42;", "}"]);
        assert!(!locate(&c, Some(&now)).outdated);
        // Two lines were added above: the comment moves with its line.
        let moved = lines(&["// a", "// b", "fn f() {", "let x = 42;", "}"]);
        let v = locate(&c, Some(&moved));
        assert!(!v.outdated);
        assert_eq!((v.line, v.end_line), (4, 4));
        // The line itself changed: outdated, with the old lines kept.
        let changed = lines(&["fn f() {", "let x = LIMIT;", "}"]);
        let v = locate(&c, Some(&changed));
        assert!(v.outdated);
        assert_eq!(v.quote, vec!["let x = 42;".to_string()]);
        assert_eq!(v.line, 2);
        // The file is gone.
        assert!(locate(&c, None).outdated);
    }

    #[test]
    fn the_message_carries_file_lines_quote_and_text() {
        let c = locate(&stored(2, &["let x = 42;", "let y = x;"]), None);
        let text = review_message(&[c]);
        assert!(text.contains("1. a.rs, lines 2-3 (outdated"), "{text}");
        assert!(text.contains("2 | let x = 42;\n3 | let y = x;"), "{text}");
        assert!(text.contains("> use a constant"), "{text}");
    }

    #[test]
    fn paths_outside_the_folder_are_refused() {
        for bad in ["../x", "/etc/passwd", "a/../../b", "", "C:/x", "a//b"] {
            assert!(clean_rel(bad).is_err(), "{bad}");
        }
        assert_eq!(clean_rel("./src\\lib.rs").unwrap(), "src/lib.rs");
    }
}
