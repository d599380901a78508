//! The viewer page of a shared session: one self-contained, script-free
//! HTML document.
//!
//! Everything from the payload is escaped; markdown is rendered with raw
//! HTML turned into text, images turned into links (no request leaves the
//! page), and links kept only for `http`, `https` and `mailto`, marked
//! external with `rel="noopener noreferrer nofollow ugc"`. Tool calls are
//! `<details>` elements (collapsible without JavaScript). Diffs are
//! highlighted server-side with syntect into CSS classes. The one stylesheet
//! is inline and allowed by its hash in the page's CSP ([`csp`]), which
//! allows nothing else: no script, no remote anything.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use base64::Engine as _;
use mia_protocol::{SharePayload, SharedDiff, SharedPart};
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};
use sha2::{Digest, Sha256};
use syntect::html::{ClassStyle, ClassedHTMLGenerator, css_for_theme_with_class_style};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// The renderer's version: a server re-renders pages stored by an older one.
pub const RENDERER_VERSION: u32 = 1;

/// What the page says about the share besides the payload.
#[derive(Debug, Clone, Default)]
pub struct PageMeta {
    /// When the share expires (ms since the epoch).
    pub expires_at: Option<i64>,
    /// `Exported` for an offline file, else `Shared`.
    pub exported: bool,
}

const CLASS_STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "s-" };

const BASE_CSS: &str = r#"
:root{color-scheme:light dark;--bg:#fbfbfa;--fg:#1f2328;--muted:#57606a;--line:#d0d7de;--card:#ffffff;--user:#eef4ff;--add:#e6ffec;--del:#ffebe9;--hunk:#ddf4ff;--accent:#0a58ca;--err:#b42318}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--fg:#e6edf3;--muted:#9da7b3;--line:#30363d;--card:#161b22;--user:#132036;--add:#12321e;--del:#3d1418;--hunk:#132b45;--accent:#6cb6ff;--err:#ff8a80}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:60rem;margin:0 auto;padding:1.5rem 1rem 4rem}
header.share{border-bottom:1px solid var(--line);margin-bottom:1.5rem;padding-bottom:1rem}
header.share h1{font-size:1.5rem;margin:0 0 .5rem;overflow-wrap:anywhere}
dl.meta{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;margin:0;color:var(--muted);font-size:.875rem}
dl.meta div{display:flex;gap:.375rem}dl.meta dt{font-weight:600}dl.meta dd{margin:0}
article.msg{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.75rem 1rem;margin:0 0 1rem}
article.msg.user{background:var(--user)}
article.msg>header{display:flex;gap:.75rem;align-items:baseline;color:var(--muted);font-size:.8125rem;margin-bottom:.25rem}
article.msg>header .role{font-weight:700;color:var(--fg);text-transform:capitalize}
.md{overflow-wrap:anywhere}.md p{margin:.5rem 0}.md pre{overflow:auto}
pre,code{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.md code{background:color-mix(in srgb,var(--line) 40%,transparent);padding:.05rem .25rem;border-radius:.25rem}
.md pre{background:color-mix(in srgb,var(--line) 25%,transparent);padding:.75rem;border-radius:.375rem}
.md pre code{background:none;padding:0}
a.external{color:var(--accent)}a.external::after{content:" ↗";font-size:.8em}
.reasoning{color:var(--muted);font-style:italic;border-left:3px solid var(--line);padding-left:.75rem}
details.tool{border:1px solid var(--line);border-radius:.375rem;margin:.5rem 0;background:var(--bg)}
details.tool>summary{cursor:pointer;padding:.375rem .625rem;font-size:.875rem}
details.tool>summary .name{font-weight:600;font-family:ui-monospace,monospace}
details.tool>summary .arg{color:var(--muted);margin-left:.5rem;overflow-wrap:anywhere}
details.tool .body{padding:0 .625rem .5rem}
details.tool h3{font-size:.75rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:.5rem 0 .25rem}
details.tool pre{margin:0;padding:.5rem;overflow:auto;max-height:30rem;background:var(--card);border:1px solid var(--line);border-radius:.25rem;white-space:pre-wrap;overflow-wrap:anywhere}
.error{color:var(--err)}
.omitted{color:var(--muted);font-style:italic}
.summary{border-left:3px solid var(--accent);padding-left:.75rem}
section.diffs h2{font-size:1.125rem}
details.diff{border:1px solid var(--line);border-radius:.375rem;margin:0 0 1rem;background:var(--card);overflow:hidden}
details.diff>summary{cursor:pointer;padding:.5rem .75rem;font-family:ui-monospace,monospace;font-size:.875rem;border-bottom:1px solid var(--line)}
.add-n{color:#1a7f37}.del-n{color:#cf222e}
@media (prefers-color-scheme:dark){.add-n{color:#3fb950}.del-n{color:#f85149}}
table.patch{border-collapse:collapse;width:100%;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table.patch td{padding:0 .5rem;white-space:pre-wrap;overflow-wrap:anywhere;vertical-align:top}
table.patch td.sign{width:1.25rem;color:var(--muted);user-select:none}
tr.add{background:var(--add)}tr.del{background:var(--del)}tr.hunk{background:var(--hunk);color:var(--muted)}
footer.share{color:var(--muted);font-size:.8125rem;margin-top:2rem;border-top:1px solid var(--line);padding-top:1rem}
"#;

fn syntaxes() -> &'static SyntaxSet {
    static SS: OnceLock<SyntaxSet> = OnceLock::new();
    SS.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The page's stylesheet: the base rules plus the highlighting classes of
/// a light and a dark theme.
pub fn stylesheet() -> &'static str {
    static CSS: OnceLock<String> = OnceLock::new();
    CSS.get_or_init(|| {
        let themes = syntect::highlighting::ThemeSet::load_defaults();
        let mut css = BASE_CSS.to_string();
        if let Some(light) = themes.themes.get("InspiredGitHub")
            && let Ok(rules) = css_for_theme_with_class_style(light, CLASS_STYLE)
        {
            css.push_str(&strip_backgrounds(&rules));
        }
        if let Some(dark) = themes.themes.get("base16-ocean.dark")
            && let Ok(rules) = css_for_theme_with_class_style(dark, CLASS_STYLE)
        {
            let _ = write!(
                css,
                "@media (prefers-color-scheme:dark){{{}}}",
                strip_backgrounds(&rules)
            );
        }
        css
    })
}

/// Themes set a background on their root class; the page's own colours win.
fn strip_backgrounds(rules: &str) -> String {
    rules
        .lines()
        .filter(|l| !l.trim_start().starts_with("background-color"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The Content-Security-Policy the page needs: its own stylesheet (by
/// hash) and nothing else.
pub fn csp() -> &'static str {
    static CSP: OnceLock<String> = OnceLock::new();
    CSP.get_or_init(|| {
        let hash = base64::engine::general_purpose::STANDARD
            .encode(Sha256::digest(stylesheet().as_bytes()));
        format!(
            "default-src 'none'; style-src 'sha256-{hash}'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
    })
}

/// Escape text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A link target the page may carry: absolute http(s) or mailto, without
/// control characters or whitespace tricks.
fn safe_href(url: &str) -> Option<String> {
    let trimmed = url.trim();
    if trimmed.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return None;
    }
    let lower = trimmed.to_ascii_lowercase();
    let ok = lower.starts_with("https://")
        || lower.starts_with("http://")
        || lower.starts_with("mailto:");
    ok.then(|| escape(trimmed))
}

/// Markdown to inert HTML.
pub fn markdown(src: &str) -> String {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    // Links open and close in order; a dropped link's end is dropped too.
    let mut kept_links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(src, opts).map(|ev| match ev {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link { dest_url, .. }) => match safe_href(&dest_url) {
            Some(href) => {
                kept_links.push(true);
                Event::InlineHtml(CowStr::from(format!(
                    "<a href=\"{href}\" class=\"external\" rel=\"noopener noreferrer nofollow ugc\" target=\"_blank\">"
                )))
            }
            None => {
                kept_links.push(false);
                Event::Text(CowStr::from(""))
            }
        },
        Event::End(TagEnd::Link) => {
            if kept_links.pop().unwrap_or(false) {
                Event::InlineHtml(CowStr::from("</a>"))
            } else {
                Event::Text(CowStr::from(""))
            }
        }
        // An image never loads: it becomes a link to it (or its alt text).
        Event::Start(Tag::Image { dest_url, .. }) => match safe_href(&dest_url) {
            Some(href) => {
                kept_links.push(true);
                Event::InlineHtml(CowStr::from(format!(
                    "<a href=\"{href}\" class=\"external\" rel=\"noopener noreferrer nofollow ugc\" target=\"_blank\">image: "
                )))
            }
            None => {
                kept_links.push(false);
                Event::Text(CowStr::from("image: "))
            }
        },
        Event::End(TagEnd::Image) => {
            if kept_links.pop().unwrap_or(false) {
                Event::InlineHtml(CowStr::from("</a>"))
            } else {
                Event::Text(CowStr::from(""))
            }
        }
        // A fence's info string names a language and nothing else: its
        // first word, in the characters language names use (a tab would
        // otherwise put a second class on the block).
        Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(CowStr::from(fence_language(&info)))))
        }
        other => other,
    });
    let mut html = String::with_capacity(src.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// A fenced block's language: the info string's first word, kept only when
/// it is made of letters, digits and `+-_.#`.
fn fence_language(info: &str) -> String {
    let word = info.split(char::is_whitespace).next().unwrap_or("");
    if word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '_' | '.' | '#'))
    {
        word.to_string()
    } else {
        String::new()
    }
}

fn when(ms: i64) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_default()
}

fn duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// One line for a tool call's summary: its path, command or pattern.
fn arg_hint(args: &serde_json::Value) -> String {
    let pick = [
        "path",
        "file_path",
        "command",
        "pattern",
        "url",
        "query",
        "description",
    ]
    .iter()
    .find_map(|k| args.get(*k).and_then(|v| v.as_str()));
    let s = pick.unwrap_or_default();
    let first = s.lines().next().unwrap_or_default();
    if first.chars().count() > 120 {
        format!("{}…", first.chars().take(120).collect::<String>())
    } else {
        first.to_string()
    }
}

/// The whole page.
pub fn page(payload: &SharePayload, meta: &PageMeta) -> String {
    let s = &payload.session;
    let results: HashMap<&str, &SharedPart> = payload
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match p {
            SharedPart::ToolResult { call_id, .. } => Some((call_id.as_str(), p)),
            _ => None,
        })
        .collect();
    let calls: std::collections::HashSet<&str> = payload
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match p {
            SharedPart::ToolCall { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let last = payload
        .messages
        .iter()
        .map(|m| m.created_at)
        .max()
        .or(s.updated_at)
        .unwrap_or(s.created_at);
    let model = s.model.clone().or_else(|| {
        payload
            .messages
            .iter()
            .rev()
            .find_map(|m| m.metadata.as_ref().and_then(|md| md.model.clone()))
    });

    let mut h = String::with_capacity(16 * 1024);
    let title = if s.title.trim().is_empty() {
        "Untitled session".to_string()
    } else {
        s.title.clone()
    };
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<meta name=\"robots\" content=\"noindex,nofollow\">\
<meta name=\"referrer\" content=\"no-referrer\">\
<title>{t} · mia-code</title><style>{css}</style></head><body><main>",
        csp = escape(csp()),
        t = escape(&title),
        css = stylesheet()
    );
    let _ = write!(
        h,
        "<header class=\"share\"><h1>{}</h1><dl class=\"meta\">",
        escape(&title)
    );
    let mut item = |k: &str, v: &str| {
        let _ = write!(h, "<div><dt>{}</dt><dd>{}</dd></div>", escape(k), escape(v));
    };
    item("Project", &s.project);
    if let Some(m) = &model {
        item("Model", m);
    }
    item("Started", &when(s.created_at));
    item("Duration", &duration(last - s.created_at));
    item("Messages", &payload.messages.len().to_string());
    item("Files changed", &payload.diffs.len().to_string());
    h.push_str("</dl></header>");

    for m in &payload.messages {
        let visible: Vec<&SharedPart> = m
            .parts
            .iter()
            .filter(|p| match p {
                // A result is shown inside its call.
                SharedPart::ToolResult { call_id, .. } => !calls.contains(call_id.as_str()),
                _ => true,
            })
            .collect();
        if visible.is_empty() {
            continue;
        }
        let role = if m.role == "user" {
            "user"
        } else {
            "assistant"
        };
        let _ = write!(
            h,
            "<article class=\"msg {role}\" id=\"m-{id}\"><header><span class=\"role\">{role}</span><time>{at}</time>",
            id = escape(&m.id),
            at = when(m.created_at)
        );
        if let Some(md) = &m.metadata {
            if let Some(model) = &md.model {
                let _ = write!(h, "<span>{}</span>", escape(model));
            }
            if let Some(t) = md.tokens {
                let _ = write!(h, "<span>{t} tokens</span>");
            }
            if let Some(d) = md.duration_ms {
                let _ = write!(h, "<span>{:.1} s</span>", d as f64 / 1000.0);
            }
        }
        h.push_str("</header>");
        for p in visible {
            part(&mut h, p, &results);
        }
        h.push_str("</article>");
    }

    if !payload.diffs.is_empty() {
        h.push_str("<section class=\"diffs\"><h2>Files changed</h2>");
        for d in &payload.diffs {
            diff(&mut h, d);
        }
        h.push_str("</section>");
    }
    let _ = writeln!(
        h,
        "<footer class=\"share\">{} from mia-code{}.</footer></main></body></html>",
        if meta.exported { "Exported" } else { "Shared" },
        meta.expires_at
            .map(|e| format!(" · expires {}", when(e)))
            .unwrap_or_default()
    );
    h
}

fn part(h: &mut String, p: &SharedPart, results: &HashMap<&str, &SharedPart>) {
    match p {
        SharedPart::Text { content } => {
            let _ = write!(h, "<div class=\"md\">{}</div>", markdown(content));
        }
        SharedPart::Reasoning { content } => {
            let _ = write!(h, "<div class=\"md reasoning\">{}</div>", markdown(content));
        }
        SharedPart::Summary { content } => {
            let _ = write!(
                h,
                "<div class=\"md summary\"><strong>Summary of earlier messages</strong>{}</div>",
                markdown(content)
            );
        }
        SharedPart::Error { message } => {
            let _ = write!(h, "<p class=\"error\">{}</p>", escape(message));
        }
        SharedPart::ToolCall {
            call_id,
            name,
            args,
        } => {
            let args_text = serde_json::to_string_pretty(args).unwrap_or_default();
            let result = results.get(call_id.as_str());
            let failed = matches!(result, Some(SharedPart::ToolResult { is_error: true, .. }));
            let _ = write!(
                h,
                "<details class=\"tool\"><summary><span class=\"name{}\">{}</span><span class=\"arg\">{}</span></summary><div class=\"body\"><h3>Arguments</h3><pre>{}</pre>",
                if failed { " error" } else { "" },
                escape(name),
                escape(&arg_hint(args)),
                escape(&args_text)
            );
            if let Some(r) = result {
                result_body(h, r);
            }
            h.push_str("</div></details>");
        }
        SharedPart::ToolResult { name, .. } => {
            let _ = write!(
                h,
                "<details class=\"tool\"><summary><span class=\"name\">{}</span><span class=\"arg\">result</span></summary><div class=\"body\">",
                escape(name)
            );
            result_body(h, p);
            h.push_str("</div></details>");
        }
    }
}

fn result_body(h: &mut String, p: &SharedPart) {
    if let SharedPart::ToolResult {
        output,
        is_error,
        omitted,
        duration_ms,
        ..
    } = p
    {
        let took = duration_ms
            .map(|d| format!(" · {:.1} s", d as f64 / 1000.0))
            .unwrap_or_default();
        let _ = write!(
            h,
            "<h3>{}{took}</h3>",
            if *is_error { "Error" } else { "Result" }
        );
        if *omitted {
            h.push_str("<p class=\"omitted\">Output not shared.</p>");
        } else {
            let _ = write!(
                h,
                "<pre{}>{}</pre>",
                if *is_error { " class=\"error\"" } else { "" },
                escape(output)
            );
        }
    }
}

fn diff(h: &mut String, d: &SharedDiff) {
    let _ = write!(
        h,
        "<details class=\"diff\" open><summary>{} <span class=\"add-n\">+{}</span> <span class=\"del-n\">−{}</span> <span>{}</span></summary>",
        escape(&d.file),
        d.additions,
        d.deletions,
        escape(&d.status)
    );
    if d.binary || d.patch.is_empty() {
        h.push_str("<p class=\"omitted\">&nbsp;Binary file (not shown).</p></details>");
        return;
    }
    let ss = syntaxes();
    let ext = d.file.rsplit('.').next().unwrap_or_default();
    let syntax = ss
        .find_syntax_by_extension(ext)
        .unwrap_or_else(|| ss.find_syntax_plain_text());
    h.push_str("<table class=\"patch\"><tbody>");
    for line in LinesWithEndings::from(&d.patch) {
        let (class, sign, code) = if line.starts_with("@@") {
            ("hunk", "", line)
        } else if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
            continue;
        } else if let Some(rest) = line.strip_prefix('+') {
            ("add", "+", rest)
        } else if let Some(rest) = line.strip_prefix('-') {
            ("del", "−", rest)
        } else if let Some(rest) = line.strip_prefix(' ') {
            ("ctx", "", rest)
        } else {
            ("ctx", "", line)
        };
        let body = if class == "hunk" {
            escape(code.trim_end())
        } else {
            highlight(ss, syntax, code)
        };
        let _ = write!(
            h,
            "<tr class=\"{class}\"><td class=\"sign\">{sign}</td><td>{body}</td></tr>"
        );
    }
    h.push_str("</tbody></table></details>");
}

/// One line of code as classed spans (escaped by syntect).
fn highlight(ss: &SyntaxSet, syntax: &syntect::parsing::SyntaxReference, code: &str) -> String {
    if code.len() > 2000 {
        return escape(code.trim_end_matches(['\n', '\r']));
    }
    let mut g = ClassedHTMLGenerator::new_with_class_style(syntax, ss, CLASS_STYLE);
    let mut line = code.trim_end_matches(['\n', '\r']).to_string();
    line.push('\n');
    if g.parse_html_for_line_which_includes_newline(&line).is_err() {
        return escape(line.trim_end());
    }
    g.finalize().trim_end_matches('\n').to_string()
}
