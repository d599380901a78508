use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::UTF8};
use ignore::WalkBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::paths::{display, resolve};
use crate::{
    Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan, ToolSpec, parse_input, schema_of,
};

pub const MAX_GLOB_RESULTS: usize = 200;
pub const DEFAULT_GREP_RESULTS: usize = 200;
const MAX_MATCH_LINE: usize = 300;

/// Files under `root`, honouring .gitignore/.ignore (also outside git
/// repositories), including dotfiles, never `.git/` or `.mia-code/`.
fn walk(root: &Path) -> impl Iterator<Item = PathBuf> {
    WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| {
            let name = e.file_name();
            name != ".git" && name != ".mia-code"
        })
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
}

/// Files the read rules refuse, counted with the first reason.
#[derive(Default)]
struct Skipped {
    n: usize,
    why: Option<String>,
}

impl Skipped {
    /// True when `path` may not be read (and counts it).
    fn refuses(&mut self, ctx: &ToolContext, path: &Path) -> bool {
        let Some(filter) = &ctx.read_filter else {
            return false;
        };
        match (filter.0)(path) {
            Some(why) => {
                self.n += 1;
                self.why.get_or_insert(why);
                true
            }
            None => false,
        }
    }

    fn note(&self) -> Option<String> {
        (self.n > 0).then(|| {
            format!(
                "({} file{} skipped: reading {} is not allowed — {})",
                self.n,
                if self.n == 1 { "" } else { "s" },
                if self.n == 1 { "it" } else { "them" },
                self.why.as_deref().unwrap_or("a read rule")
            )
        })
    }
}

fn search_root(ctx: &ToolContext, path: Option<&str>) -> Result<PathBuf, ToolError> {
    let root = match path {
        Some(p) => resolve(ctx, p)?,
        None => ctx.project_root.clone(),
    };
    if !root.is_dir() {
        return Err(ToolError::Invalid(format!(
            "{} is not a directory",
            display(ctx, &root)
        )));
    }
    Ok(root)
}

fn glob_matcher(tool: &str, pattern: &str) -> Result<globset::GlobMatcher, ToolError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::InvalidInput {
            tool: tool.into(),
            message: format!("bad glob {pattern:?}: {e}"),
        })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// Glob relative to the search directory: `*` stays within one directory, `**` crosses them (e.g. `src/**/*.rs`).
    pub pattern: String,
    /// Directory to search (default: the project root).
    #[serde(default)]
    pub path: Option<String>,
}

pub struct GlobTool;

#[async_trait::async_trait]
impl Tool for GlobTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "glob".into(),
            description: "Find files by glob pattern (gitignored files are skipped), newest first."
                .into(),
            input_schema: schema_of::<GlobInput>(),
        }
    }

    fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: GlobInput = parse_input("glob", input)?;
        glob_matcher("glob", &input.pattern)?;
        let root = match &input.path {
            Some(p) => resolve(ctx, p)?,
            None => ctx.project_root.clone(),
        };
        Ok(ToolPlan {
            permission: "glob".into(),
            targets: vec![Target::Path(root)],
            modifies: Some(Vec::new()),
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: GlobInput = parse_input("glob", &input)?;
        let matcher = glob_matcher("glob", &input.pattern)?;
        let root = search_root(ctx, input.path.as_deref())?;
        let ctx2 = ctx.clone();
        tokio::task::spawn_blocking(move || {
            let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
            let mut skipped = Skipped::default();
            for path in walk(&root) {
                if ctx2.cancel.is_cancelled() {
                    return Err(ToolError::Cancelled);
                }
                let Ok(rel) = path.strip_prefix(&root) else {
                    continue;
                };
                if matcher.is_match(rel) && !skipped.refuses(&ctx2, &path) {
                    let mtime = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .unwrap_or(std::time::UNIX_EPOCH);
                    found.push((mtime, path));
                }
            }
            found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let total = found.len();
            let mut out: Vec<String> = found
                .iter()
                .take(MAX_GLOB_RESULTS)
                .map(|(_, p)| display(&ctx2, p))
                .collect();
            if total == 0 {
                let mut output = format!("No files match {}.", input.pattern);
                if let Some(n) = skipped.note() {
                    output.push_str(&format!("\n{n}"));
                }
                return Ok(ToolOutput {
                    output,
                    metadata: json!({"count": 0, "skipped": skipped.n}),
                });
            }
            if total > MAX_GLOB_RESULTS {
                out.push(format!(
                    "({} more not shown; narrow the pattern or the path)",
                    total - MAX_GLOB_RESULTS
                ));
            }
            out.extend(skipped.note());
            Ok(ToolOutput {
                output: out.join("\n"),
                metadata: json!({"count": total, "truncated": total > MAX_GLOB_RESULTS, "skipped": skipped.n}),
            })
        })
        .await
        .map_err(|e| ToolError::Invalid(format!("glob task failed: {e}")))?
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// Regular expression (Rust regex syntax).
    pub pattern: String,
    /// Directory to search (default: the project root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files whose path relative to the search directory matches this glob (e.g. `**/*.ts`).
    #[serde(default)]
    pub include: Option<String>,
    #[serde(default)]
    pub ignore_case: bool,
    /// Most matching lines to return (default 200).
    #[serde(default)]
    pub max_results: Option<usize>,
}

pub struct GrepTool;

#[async_trait::async_trait]
impl Tool for GrepTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "grep".into(),
            description: "Search file contents with a regular expression (gitignored and binary files are skipped). Returns path:line: text.".into(),
            input_schema: schema_of::<GrepInput>(),
        }
    }

    fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: GrepInput = parse_input("grep", input)?;
        build_regex(&input)?;
        if let Some(include) = &input.include {
            glob_matcher("grep", include)?;
        }
        let root = match &input.path {
            Some(p) => resolve(ctx, p)?,
            None => ctx.project_root.clone(),
        };
        Ok(ToolPlan {
            permission: "grep".into(),
            targets: vec![Target::Path(root)],
            modifies: Some(Vec::new()),
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: GrepInput = parse_input("grep", &input)?;
        let matcher = build_regex(&input)?;
        let include = input
            .include
            .as_deref()
            .map(|g| glob_matcher("grep", g))
            .transpose()?;
        let root = search_root(ctx, input.path.as_deref())?;
        let limit = input.max_results.unwrap_or(DEFAULT_GREP_RESULTS).max(1);
        let ctx2 = ctx.clone();
        tokio::task::spawn_blocking(move || {
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .build();
            let mut lines: Vec<String> = Vec::new();
            let mut total = 0usize;
            let mut files = 0usize;
            let mut skipped = Skipped::default();
            for path in walk(&root) {
                if ctx2.cancel.is_cancelled() {
                    return Err(ToolError::Cancelled);
                }
                let Ok(rel) = path.strip_prefix(&root) else {
                    continue;
                };
                if include.as_ref().is_some_and(|g| !g.is_match(rel)) {
                    continue;
                }
                if skipped.refuses(&ctx2, &path) {
                    continue;
                }
                let shown = display(&ctx2, &path);
                let before = total;
                let _ = searcher.search_path(
                    &matcher,
                    &path,
                    UTF8(|number, line| {
                        total += 1;
                        if lines.len() < limit {
                            let mut text = line.trim_end().to_string();
                            if text.chars().count() > MAX_MATCH_LINE {
                                text = text.chars().take(MAX_MATCH_LINE).collect::<String>() + " …";
                            }
                            lines.push(format!("{shown}:{number}: {text}"));
                        }
                        Ok(true)
                    }),
                );
                if total > before {
                    files += 1;
                }
            }
            if total == 0 {
                let mut output = format!("No matches for {}.", input.pattern);
                if let Some(n) = skipped.note() {
                    output.push_str(&format!("\n{n}"));
                }
                return Ok(ToolOutput {
                    output,
                    metadata: json!({"matches": 0, "files": 0, "skipped": skipped.n}),
                });
            }
            if total > lines.len() {
                lines.push(format!(
                    "({} more matching lines not shown; narrow the pattern, path or include)",
                    total - lines.len()
                ));
            }
            lines.extend(skipped.note());
            Ok(ToolOutput {
                output: lines.join("\n"),
                metadata: json!({"matches": total, "files": files, "skipped": skipped.n}),
            })
        })
        .await
        .map_err(|e| ToolError::Invalid(format!("grep task failed: {e}")))?
    }
}

fn build_regex(input: &GrepInput) -> Result<grep_regex::RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_insensitive(input.ignore_case)
        .build(&input.pattern)
        .map_err(|e| ToolError::InvalidInput {
            tool: "grep".into(),
            message: format!("bad regular expression {:?}: {e}", input.pattern),
        })
}
