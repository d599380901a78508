//! Terminal rendering of diffs (spec 077): bold file headers with a status
//! badge, hunk headers, green additions, red deletions, dim context, syntax
//! highlighting by file extension (syntect) and the summary line.

use std::fmt::Write as _;
use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Style, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use crate::diff::{DiffStats, DiffStatus, FileDiff, LineType, hunk_header, stats};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// ANSI colours (off for pipes and `NO_COLOR`).
    pub color: bool,
    /// Syntax highlighting of added/deleted lines (needs `color`).
    pub highlight: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            color: true,
            highlight: true,
        }
    }
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";
const GRAY: &str = "\x1b[90m";
const ADD_BG: &str = "\x1b[48;2;18;48;24m";
const DEL_BG: &str = "\x1b[48;2;64;20;24m";

fn assets() -> &'static (SyntaxSet, Theme) {
    static ASSETS: OnceLock<(SyntaxSet, Theme)> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let ss = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults();
        let theme = themes
            .themes
            .remove("base16-ocean.dark")
            .or_else(|| themes.themes.into_values().next())
            .unwrap_or_default();
        (ss, theme)
    })
}

/// `3 files changed, 45 insertions(+), 12 deletions(-)`.
pub fn summary_line(s: &DiffStats) -> String {
    let plural = |n: u64, one: &str, many: &str| {
        if n == 1 {
            one.to_string()
        } else {
            many.to_string()
        }
    };
    format!(
        "{} {} changed, {} {}(+), {} {}(-)",
        s.files_changed,
        plural(u64::from(s.files_changed), "file", "files"),
        s.total_additions,
        plural(s.total_additions, "insertion", "insertions"),
        s.total_deletions,
        plural(s.total_deletions, "deletion", "deletions"),
    )
}

/// Render diffs for a terminal.
pub fn render_terminal(diffs: &[FileDiff], opts: RenderOptions) -> String {
    let mut out = String::new();
    let c = |code: &'static str| if opts.color { code } else { "" };
    for d in diffs {
        let badge_color = match d.status {
            DiffStatus::Added => GREEN,
            DiffStatus::Deleted => RED,
            DiffStatus::Modified => YELLOW,
        };
        let _ = writeln!(
            out,
            "{}■ {}{} {}[{}]{} {}+{}{} {}-{}{}",
            c(BOLD),
            d.file,
            c(RESET),
            c(badge_color),
            d.status.as_str(),
            c(RESET),
            c(GREEN),
            d.additions,
            c(RESET),
            c(RED),
            d.deletions,
            c(RESET),
        );
        if d.binary {
            let _ = writeln!(out, "  {}binary file, not shown{}", c(DIM), c(RESET));
            continue;
        }
        if d.old_mode.is_some() && d.new_mode.is_some() && d.old_mode != d.new_mode {
            let _ = writeln!(
                out,
                "  {}mode {} → {}{}",
                c(DIM),
                d.old_mode.as_deref().unwrap_or(""),
                d.new_mode.as_deref().unwrap_or(""),
                c(RESET)
            );
        }
        let (ss, theme) = assets();
        let syntax = if opts.color && opts.highlight {
            let ext = d.file.rsplit('.').next().unwrap_or("");
            ss.find_syntax_by_extension(ext)
        } else {
            None
        };
        for h in &d.hunks {
            let _ = writeln!(out, "{}{}{}", c(CYAN), hunk_header(h), c(RESET));
            let mut hl = syntax.map(|s| HighlightLines::new(s, theme));
            for l in &h.lines {
                let text = format!("{}\n", l.content.trim_end_matches('\r'));
                let highlighted = hl
                    .as_mut()
                    .and_then(|hl| hl.highlight_line(&text, ss).ok())
                    .map(|ranges| to_ansi(&ranges));
                let body = l.content.trim_end_matches('\r');
                match l.kind {
                    LineType::Add => match (&highlighted, opts.color) {
                        (Some(hi), true) => {
                            let _ = writeln!(out, "{ADD_BG}{GREEN}+{hi}{ADD_BG}\x1b[K{RESET}");
                        }
                        _ => {
                            let _ = writeln!(out, "{}+{body}{}", c(GREEN), c(RESET));
                        }
                    },
                    LineType::Delete => match (&highlighted, opts.color) {
                        (Some(hi), true) => {
                            let _ = writeln!(out, "{DEL_BG}{RED}-{hi}{DEL_BG}\x1b[K{RESET}");
                        }
                        _ => {
                            let _ = writeln!(out, "{}-{body}{}", c(RED), c(RESET));
                        }
                    },
                    LineType::Context => {
                        let _ = writeln!(out, "{}{} {body}{}", c(DIM), c(GRAY), c(RESET));
                    }
                }
                if l.no_newline {
                    let _ = writeln!(out, "{}\\ No newline at end of file{}", c(DIM), c(RESET));
                }
            }
        }
    }
    let _ = writeln!(out, "{}", summary_line(&stats(diffs)));
    out
}

/// Foreground colours only, so the line's add/delete background shows.
fn to_ansi(ranges: &[(Style, &str)]) -> String {
    let mut s = String::new();
    for (style, text) in ranges {
        let fg = style.foreground;
        let t = text.trim_end_matches('\n');
        let _ = write!(s, "\x1b[38;2;{};{};{}m{t}", fg.r, fg.g, fg.b);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::compute_hunks;

    fn fd(file: &str, before: &str, after: &str, status: DiffStatus) -> FileDiff {
        let (hunks, additions, deletions) = compute_hunks(before, after);
        FileDiff {
            file: file.into(),
            status,
            before: before.into(),
            after: after.into(),
            additions,
            deletions,
            hunks,
            binary: false,
            old_mode: None,
            new_mode: None,
            old_id: None,
            new_id: None,
            line_endings: None,
        }
    }

    #[test]
    fn plain_rendering_has_badges_signs_and_summary() {
        let diffs = vec![
            fd(
                "src/api.rs",
                "fn a() {}\nfn b() {}\n",
                "fn a() {}\nfn c() {}\n",
                DiffStatus::Modified,
            ),
            fd("new.txt", "", "x\ny\n", DiffStatus::Added),
        ];
        let text = render_terminal(
            &diffs,
            RenderOptions {
                color: false,
                highlight: false,
            },
        );
        assert!(text.contains("■ src/api.rs [modified] +1 -1"), "{text}");
        assert!(text.contains("■ new.txt [added] +2 -0"));
        assert!(
            text.contains("@@ -1,2 +1,2 @@\n fn a() {}\n-fn b() {}\n+fn c() {}\n"),
            "{text}"
        );
        assert!(
            text.ends_with("2 files changed, 3 insertions(+), 1 deletion(-)\n"),
            "{text}"
        );
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn colour_rendering_highlights_known_languages() {
        let diffs = vec![fd("a.rs", "", "fn main() {}\n", DiffStatus::Added)];
        let text = render_terminal(&diffs, RenderOptions::default());
        assert!(text.contains(BOLD) && text.contains(ADD_BG));
        // Syntax colours are 24-bit foreground escapes.
        assert!(text.contains("\x1b[38;2;"), "{text:?}");
        let plain = render_terminal(
            &[fd("a.unknownext", "", "x\n", DiffStatus::Added)],
            RenderOptions::default(),
        );
        assert!(!plain.contains("\x1b[38;2;"));
        assert!(plain.contains(&format!("{GREEN}+x")));
    }
}
