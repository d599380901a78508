//! One table of command knowledge, read the way the programs read their own
//! arguments: getopt / parse-options grammar (grouped short options, attached
//! values, `--long=value`, unique-prefix abbreviations of long options).
//!
//! The same table serves two purposes:
//! * the built-in read-only list (plan/explore) is an **allow-list of flags per
//!   command**: a command is read-only only when every option it was given is
//!   known and harmless (an unknown or ambiguous option means "not read-only");
//! * **dangerous flags**: options that execute code, write or destroy files,
//!   or upload local files. An allow rule naming a command never covers them
//!   (`allow bash rg *` does not allow `rg --pre=sh`), and the dialog names
//!   the flag.
//!
//! Option values that name files are reported as reads or writes, so they
//! are judged like any other path (`date -f/etc/shadow` reads `/etc/shadow`,
//! `sort -o out` writes `out`).

use std::collections::HashMap;
use std::sync::LazyLock;

mod git;
mod net;

pub use git::{git_subcommand, git_without_globals};
pub use net::{Net, network};

/// What an option does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Harmless: changes output only.
    Safe,
    /// Its value is a file that is read.
    Reads,
    /// Its value is a file that is written.
    Writes,
    /// The command's file operands are written (`sed -i`).
    WritesOperands,
    /// Runs a program or code.
    Exec,
    /// Changes state outside files (`date -s`), or sends data somewhere.
    Unsafe,
    /// Reads directories recursively.
    Recursive,
    /// Reads file names at run time (from a file or stdin).
    Names,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    No,
    /// A value: attached (`-ofile`, `--out=file`) or the next word.
    Req,
    /// An optional value: only when attached.
    Opt,
    /// Two following words (`jq --arg NAME VALUE`).
    Two,
}

#[derive(Debug, Clone)]
struct OptDef {
    short: Option<char>,
    long: Option<&'static str>,
    arg: Arg,
    effect: Effect,
}

/// How a program reads its arguments.
#[derive(Debug, Clone)]
struct Spec {
    opts: Vec<OptDef>,
    /// Options may follow operands (GNU permutation); false: the first operand ends options.
    permute: bool,
    /// `-5` / `-20` are options (head, tail, nice).
    digits: bool,
    /// Long options may be abbreviated to a unique prefix (GNU getopt_long, git parse-options).
    abbrev: bool,
    /// On the built-in read-only list (with harmless options only).
    read_only: bool,
}

/// Compile a spec string: space-separated options, each `c|long` with an
/// optional suffix `:` (value required), `?` (optional attached value), `;`
/// (two values), and an optional prefix for its effect: `<` reads its value,
/// `>` writes its value, `%` writes the operands, `!` executes, `~` unsafe,
/// `^` recursive, `@` names read at run time.
fn spec(s: &'static str) -> Vec<OptDef> {
    s.split_whitespace()
        .map(|tok| {
            let (effect, rest) = match tok.as_bytes()[0] {
                b'<' => (Effect::Reads, &tok[1..]),
                b'>' => (Effect::Writes, &tok[1..]),
                b'%' => (Effect::WritesOperands, &tok[1..]),
                b'!' => (Effect::Exec, &tok[1..]),
                b'~' => (Effect::Unsafe, &tok[1..]),
                b'^' => (Effect::Recursive, &tok[1..]),
                b'@' => (Effect::Names, &tok[1..]),
                _ => (Effect::Safe, tok),
            };
            let (arg, names) = match rest.as_bytes().last() {
                Some(b':') => (Arg::Req, &rest[..rest.len() - 1]),
                Some(b'?') => (Arg::Opt, &rest[..rest.len() - 1]),
                Some(b';') => (Arg::Two, &rest[..rest.len() - 1]),
                _ => (Arg::No, rest),
            };
            let mut short = None;
            let mut long = None;
            for n in names.split('|') {
                if n.chars().count() == 1 {
                    short = n.chars().next();
                } else {
                    long = Some(n);
                }
            }
            OptDef {
                short,
                long,
                arg,
                effect,
            }
        })
        .collect()
}

const GNU_COMMON: &str = "help version";

fn gnu(opts: &'static str, read_only: bool) -> Spec {
    let mut v = spec(opts);
    v.extend(spec(GNU_COMMON));
    Spec {
        opts: v,
        permute: true,
        digits: false,
        abbrev: true,
        read_only,
    }
}

static TABLE: LazyLock<HashMap<&'static str, Spec>> = LazyLock::new(|| {
    let mut t: HashMap<&'static str, Spec> = HashMap::new();
    let ro = |t: &mut HashMap<&'static str, Spec>, names: &[&'static str], s: Spec| {
        for n in names {
            t.insert(n, s.clone());
        }
    };
    ro(
        &mut t,
        &["ls", "dir", "vdir"],
        gnu(
            "a|all A|almost-all author b|escape block-size: B|ignore-backups c C color? d|directory \
             D|dired f F|classify? file-type format: full-time g group-directories-first G|no-group \
             h|human-readable si H|dereference-command-line dereference-command-line-symlink-to-dir \
             hide: hyperlink? indicator-style: i|inode I|ignore: k|kibibytes l L|dereference m \
             n|numeric-uid-gid N|literal o p q|hide-control-chars show-control-chars Q|quote-name \
             quoting-style: r|reverse ^R|recursive s|size S sort: time: time-style: t T|tabsize: u U \
             v w|width: x X Z|context zero 1",
            true,
        ),
    );
    ro(&mut t, &["pwd"], gnu("L|logical P|physical", true));
    {
        // cd/pushd/popd only move the shell (followed by the engine).
        let mut s = gnu("L P e @", true);
        s.permute = false;
        s.abbrev = false;
        ro(&mut t, &["cd", "pushd", "popd"], s);
    }
    ro(
        &mut t,
        &["cat"],
        gnu(
            "A|show-all b|number-nonblank e E|show-ends n|number s|squeeze-blank t T|show-tabs u \
             v|show-nonprinting",
            true,
        ),
    );
    ro(&mut t, &["tac"], gnu("b|before r|regex s|separator:", true));
    ro(&mut t, &["rev"], gnu("", true));
    for (names, opts) in [
        (
            &["head"][..],
            "c|bytes: n|lines: q|quiet silent v|verbose z|zero-terminated",
        ),
        (
            &["tail"][..],
            "c|bytes: f|follow? F max-unchanged-stats: n|lines: ~pid: q|quiet silent retry \
             s|sleep-interval: v|verbose z|zero-terminated",
        ),
    ] {
        let mut s = gnu(opts, true);
        s.digits = true;
        ro(&mut t, names, s);
    }
    ro(
        &mut t,
        &["wc"],
        gnu(
            "c|bytes m|chars l|lines @files0-from: L|max-line-length w|words total:",
            true,
        ),
    );
    ro(
        &mut t,
        &["file"],
        gnu(
            "b|brief ~C|compile d debug e|exclude: exclude-quiet: E extension @f|files-from: \
             F|separator: h|no-dereference i|mime mime-type mime-encoding k|keep-going l|list \
             L|dereference <m|magic-file: n|no-buffer 0|print0 N|no-pad p|preserve-date P|parameter: \
             r|raw s|special-files S|no-sandbox z|uncompress Z|uncompress-noreport",
            true,
        ),
    );
    ro(
        &mut t,
        &["stat"],
        gnu(
            "L|dereference f|file-system cached: c|format: printf: t|terse",
            true,
        ),
    );
    ro(
        &mut t,
        &["du"],
        gnu(
            "0|null a|all apparent-size B|block-size: b|bytes c|total D|dereference-args d|max-depth: \
             @files0-from: H h|human-readable inodes k L|dereference l|count-links m P|no-dereference \
             S|separate-dirs si s|summarize t|threshold: time? time-style: X|exclude-from: exclude: \
             x|one-file-system",
            true,
        ),
    );
    ro(
        &mut t,
        &["df"],
        gnu(
            "a|all B|block-size: h|human-readable H|si i|inodes k l|local no-sync output? P|portability \
             sync total t|type: T|print-type x|exclude-type:",
            true,
        ),
    );
    {
        // tree (not GNU): single-dash long options, no abbreviations.
        let mut s = gnu(
            "a d l f x L: !R P: I: gitignore ignore-case matchdirs metafirst prune info noreport \
             charset: filelimit: timefmt: q N Q p u g s h si du D F inodes device v t c U r dirsfirst \
             filesfirst sort: i A S n C X J H: T: nolinks hintro: houtro: ~fromfile ~fromtabfile \
             >o:",
            true,
        );
        s.abbrev = false;
        ro(&mut t, &["tree"], s);
    }
    ro(&mut t, &["which"], gnu("a s", true));
    {
        // echo takes no options it does not know about: unknown ones are printed.
        let mut s = gnu("n e E", true);
        s.permute = false;
        ro(&mut t, &["echo"], s);
    }
    ro(&mut t, &["true", "false"], gnu("", true));
    ro(
        &mut t,
        &["date"],
        gnu(
            "d|date: debug <f|file: I|iso-8601? R|rfc-email rfc-3339: <r|reference: ~s|set: u|utc \
             universal",
            true,
        ),
    );
    ro(
        &mut t,
        &["uname"],
        gnu(
            "a|all s|kernel-name n|nodename r|kernel-release v|kernel-version m|machine p|processor \
             i|hardware-platform o|operating-system",
            true,
        ),
    );
    ro(&mut t, &["whoami"], gnu("", true));
    ro(
        &mut t,
        &["id"],
        gnu(
            "a Z|context g|group G|groups n|name r|real u|user z|zero",
            true,
        ),
    );
    ro(
        &mut t,
        &["basename"],
        gnu("a|multiple s|suffix: z|zero", true),
    );
    ro(&mut t, &["dirname"], gnu("z|zero", true));
    ro(
        &mut t,
        &["realpath"],
        gnu(
            "e|canonicalize-existing m|canonicalize-missing L|logical P|physical q|quiet \
             relative-to: relative-base: s|strip no-symlinks z|zero",
            true,
        ),
    );
    ro(
        &mut t,
        &["readlink"],
        gnu(
            "f|canonicalize e|canonicalize-existing m|canonicalize-missing n|no-newline q|quiet \
             s|silent v|verbose z|zero",
            true,
        ),
    );
    ro(
        &mut t,
        &["diff"],
        gnu(
            "normal q|brief s|report-identical-files c C|context? u U|unified? e|ed n|rcs \
             y|side-by-side W|width: left-column suppress-common-lines p|show-c-function \
             F|show-function-line: label: expand-tabs T|initial-tab tabsize: suppress-blank-empty \
             l|paginate ^r|recursive no-dereference N|new-file unidirectional-new-file \
             ignore-file-name-case no-ignore-file-name-case x|exclude: <X|exclude-from: S|starting-file: \
             from-file: to-file: i|ignore-case E|ignore-tab-expansion Z|ignore-trailing-space \
             b|ignore-space-change w|ignore-all-space B|ignore-blank-lines I|ignore-matching-lines: \
             a|text strip-trailing-cr D|ifdef: GTYPE-group-format: line-format: LTYPE-line-format: \
             d|minimal horizon-lines: speed-large-files color? palette:",
            true,
        ),
    );
    ro(
        &mut t,
        &["cmp"],
        gnu(
            "b|print-bytes i|ignore-initial: l|verbose n|bytes: s|quiet silent",
            true,
        ),
    );
    ro(
        &mut t,
        &["cut"],
        gnu(
            "b|bytes: c|characters: d|delimiter: f|fields: n complement s|only-delimited \
             output-delimiter: z|zero-terminated",
            true,
        ),
    );
    ro(
        &mut t,
        &["tr"],
        gnu(
            "c C|complement d|delete s|squeeze-repeats t|truncate-set1",
            true,
        ),
    );
    ro(
        &mut t,
        &["nl"],
        gnu(
            "b|body-numbering: d|section-delimiter: f|footer-numbering: h|header-numbering: \
             i|line-increment: l|join-blank-lines: n|number-format: p|no-renumber s|number-separator: \
             v|starting-line-number: w|number-width:",
            true,
        ),
    );
    ro(
        &mut t,
        &["od"],
        gnu(
            "A|address-radix: endian: j|skip-bytes: N|read-bytes: S|strings? t|format: v|output-duplicates \
             w|width? traditional a b c d f i l o s x",
            true,
        ),
    );
    {
        let mut s = gnu("b c C d o x e: <f: n: s: v L? e", true);
        s.abbrev = false;
        ro(&mut t, &["hexdump"], s);
    }
    ro(
        &mut t,
        &["strings"],
        gnu(
            "a|all d|data f|print-file-name n|bytes: t|radix: e|encoding: o w|include-all-whitespace \
             s|output-separator: unicode: U:",
            true,
        ),
    );
    ro(
        &mut t,
        &[
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
            "cksum",
        ],
        gnu(
            "b|binary c|check tag t|text z|zero ignore-missing quiet status strict w|warn l|length: \
             a|algorithm: base64 raw untagged",
            true,
        ),
    );
    {
        let mut s = gnu(
            "E|extended-regexp F|fixed-strings G|basic-regexp P|perl-regexp e|regexp: <f|file: \
             i|ignore-case no-ignore-case y w|word-regexp x|line-regexp z|null-data s|no-messages \
             v|invert-match V c|count color? colour? L|files-without-match l|files-with-matches \
             m|max-count: o|only-matching q|quiet silent b|byte-offset H|with-filename h|no-filename \
             label: n|line-number line-buffered T|initial-tab Z|null A|after-context: B|before-context: \
             C|context: group-separator: no-group-separator a|text binary-files: D|devices: \
             d|directories: exclude: <exclude-from: exclude-dir: include: ^r|recursive \
             ^R|dereference-recursive U|binary",
            true,
        );
        s.digits = true;
        ro(&mut t, &["grep", "egrep", "fgrep"], s);
    }
    {
        // ripgrep: lexopt, no abbreviations; always recursive.
        let mut s = gnu(
            "e|regexp: <f|file: A|after-context: B|before-context: C|context: binary block-buffered \
             byte-offset b s|case-sensitive color: colors: column context-separator: c|count \
             count-matches crlf debug dfa-size-limit: E|encoding: engine: field-context-separator: \
             field-match-separator: files l|files-with-matches files-without-match F|fixed-strings \
             L|follow g|glob: glob-case-insensitive h|help heading hidden iglob: <ignore-file: \
             ignore-file-case-insensitive i|ignore-case include-zero v|invert-match json \
             line-buffered n|line-number N|no-line-number x|line-regexp M|max-columns: \
             max-columns-preview m|max-count: d|max-depth: maxdepth: max-filesize: mmap multiline \
             U multiline-dotall no-config no-ignore no-ignore-dot no-ignore-exclude no-ignore-files \
             no-ignore-global no-ignore-messages no-ignore-parent no-ignore-vcs no-messages \
             no-require-git no-unicode 0|null null-data one-file-system o|only-matching passthru \
             path-separator: P|pcre2 pcre2-version pretty p quiet q regex-size-limit: \
             r|replace: S|smart-case sort: sortr: stats stop-on-nonmatch a|text j|threads: trim \
             t|type: T|type-not: type-add: type-clear: type-list u|unrestricted V|version vimgrep \
             H|with-filename I|no-filename w|word-regexp no-heading no-column no-byte-offset \
             no-context-separator no-follow no-hidden no-mmap no-multiline no-pcre2 no-pcre2-unicode \
             no-text no-binary no-trim no-sort-files ignore-case-insensitive no-block-buffered \
             no-line-buffered no-crlf no-encoding no-auto-hybrid-regex no-search-zip \
             no-include-zero no-invert-match no-max-columns-preview no-stats no-fixed-strings \
             no-unrestricted hyperlink-format: !pre: !pre-glob: !z|search-zip !hostname-bin:",
            true,
        );
        s.abbrev = false;
        ro(&mut t, &["rg"], s);
    }
    ro(&mut t, &["type"], {
        let mut s = gnu("a f p P t", true);
        s.abbrev = false;
        s
    });
    ro(&mut t, &["printenv"], gnu("0|null", true));
    ro(
        &mut t,
        &["column"],
        gnu(
            "J|json n|table-name: c|output-width: d|table-noheadings o|output-separator: \
             s|separator: t|table N|table-columns: l|table-columns-limit: R|table-right: \
             T|table-truncate: E|table-noextreme: e|table-header-repeat W|table-wrap: H|table-hide: \
             O|table-order: r|tree: i|tree-id: p|tree-parent: x|fillrows L|keep-empty-lines",
            true,
        ),
    );
    ro(
        &mut t,
        &["comm"],
        gnu(
            "1 2 3 check-order nocheck-order output-delimiter: total z|zero-terminated",
            true,
        ),
    );
    {
        let mut s = gnu(
            "c|compact-output n|null-input e|exit-status s|slurp r|raw-output j|join-output \
             a|ascii-output S|sort-keys C|color-output M|monochrome-output tab indent: unbuffered \
             stream stream-errors seq <f|from-file: ~L: arg; argjson; <slurpfile; <rawfile; args \
             jsonargs R|raw-input raw-output0",
            true,
        );
        s.abbrev = false;
        ro(&mut t, &["jq"], s);
    }
    ro(
        &mut t,
        &["sort"],
        gnu(
            "b|ignore-leading-blanks d|dictionary-order f|ignore-case g|general-numeric-sort \
             i|ignore-nonprinting M|month-sort h|human-numeric-sort n|numeric-sort R|random-sort \
             <random-source: r|reverse sort: V|version-sort batch-size: c|check? C \
             !compress-program: debug @files0-from: k|key: m|merge >o|output: s|stable \
             S|buffer-size: t|field-separator: ~T|temporary-directory: parallel: u|unique \
             z|zero-terminated",
            true,
        ),
    );
    ro(
        &mut t,
        &["uniq"],
        gnu(
            "c|count d|repeated D all-repeated? f|skip-fields: group? i|ignore-case s|skip-chars: \
             u|unique z|zero-terminated w|check-chars:",
            true,
        ),
    );
    {
        let mut s = gnu(
            "H|hidden I|no-ignore no-ignore-vcs no-ignore-parent u|unrestricted s|case-sensitive \
             i|ignore-case g|glob regex F|fixed-strings a|absolute-path l|list-details \
             L|follow p|full-path 0|print0 max-results: 1 q|quiet show-errors \
             d|max-depth: min-depth: exact-depth: prune t|type: e|extension: E|exclude: \
             <ignore-file: c|color: j|threads: S|size: changed-within: changed-before: o|owner: \
             format: base-directory: path-separator: search-path: strip-cwd-prefix? \
             one-file-system hyperlink? !x|exec: !X|exec-batch: batch-size:",
            true,
        );
        s.abbrev = false;
        ro(&mut t, &["fd", "fdfind"], s);
    }
    // Not read-only, but their dangerous flags are known.
    ro(
        &mut t,
        &["sed"],
        gnu(
            "n|quiet silent debug e|expression: <f|file: %i|in-place? l|line-length: posix \
             E r|regexp-extended s|separate sandbox u|unbuffered z|null-data follow-symlinks",
            false,
        ),
    );
    ro(
        &mut t,
        &["tar"],
        gnu(
            "!to-command: !use-compress-program: !I: !checkpoint-action: !info-script: \
             !new-volume-script: !F: !rsh-command:",
            false,
        ),
    );
    ro(
        &mut t,
        &["tee"],
        gnu("a|append i|ignore-interrupts p output-error?", false),
    );
    t
});

/// A dangerous flag found in a command: what it is and why it is dangerous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    /// The flag or construct as written (`--pre=sh`, `-exec`, `e` command of sed).
    pub flag: String,
    pub why: &'static str,
}

impl Hazard {
    fn new(flag: impl Into<String>, why: &'static str) -> Self {
        Self {
            flag: flag.into(),
            why,
        }
    }
}

const RUNS: &str = "runs another program";
const WRITES: &str = "writes files";
const DESTROYS: &str = "deletes files";
const STATE: &str = "changes system state";

/// What one simple command does, read with its real grammar.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The program is in the table and every option was understood.
    pub understood: bool,
    /// Read-only as far as the built-in list is concerned.
    pub read_only: bool,
    pub hazards: Vec<Hazard>,
    /// Files read through option values (`-f FILE`).
    pub reads: Vec<String>,
    /// Files written through option values (`-o FILE`) or written operands.
    pub writes: Vec<String>,
    /// Directories are read recursively.
    pub recursive: bool,
    /// File names are read at run time.
    pub names_at_runtime: bool,
}

struct Parsed<'a> {
    opts: Vec<(&'a OptDef, Option<String>, String)>,
    operands: Vec<String>,
}

/// Parse options by `spec`'s grammar. `Err` names the option that could not be read.
fn getopt<'a>(words: &[String], spec: &'a Spec) -> Result<Parsed<'a>, String> {
    let mut out = Parsed {
        opts: Vec::new(),
        operands: Vec::new(),
    };
    let mut i = 1;
    let mut only_operands = false;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if only_operands || w == "-" || !w.starts_with('-') {
            out.operands.push(w.clone());
            if !spec.permute {
                only_operands = true;
            }
            continue;
        }
        if w == "--" {
            only_operands = true;
            continue;
        }
        if spec.digits && w[1..].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let exact = spec.opts.iter().find(|o| o.long == Some(name));
            let def = match exact {
                Some(d) => d,
                None if spec.abbrev => {
                    let cands: Vec<&OptDef> = spec
                        .opts
                        .iter()
                        .filter(|o| o.long.is_some_and(|l| l.starts_with(name)))
                        .collect();
                    match cands.as_slice() {
                        [one] => *one,
                        [] => return Err(w.clone()),
                        _ => return Err(format!("{w} (ambiguous)")),
                    }
                }
                None => return Err(w.clone()),
            };
            let value = match (def.arg, value) {
                (Arg::No, Some(_)) => return Err(w.clone()),
                (Arg::No | Arg::Opt, v) => v,
                (Arg::Req, Some(v)) => Some(v),
                (Arg::Req, None) => {
                    let v = words.get(i).cloned().ok_or_else(|| w.clone())?;
                    i += 1;
                    Some(v)
                }
                (Arg::Two, v) => {
                    let n = if v.is_some() { 1 } else { 2 };
                    let last = words.get(i + n - 1).cloned().ok_or_else(|| w.clone())?;
                    i += n;
                    Some(last)
                }
            };
            out.opts.push((def, value, w.clone()));
            continue;
        }
        // Grouped short options: `-abc`, `-ofile`, `-o file`.
        let body = &w[1..];
        for (k, c) in body.char_indices() {
            let def = spec
                .opts
                .iter()
                .find(|o| o.short == Some(c))
                .ok_or_else(|| format!("-{c} (in {w})"))?;
            let rest = &body[k + c.len_utf8()..];
            match def.arg {
                Arg::No => out.opts.push((def, None, format!("-{c}"))),
                Arg::Opt => {
                    out.opts.push((
                        def,
                        (!rest.is_empty()).then(|| rest.to_string()),
                        format!("-{c}"),
                    ));
                    break;
                }
                Arg::Req | Arg::Two => {
                    let v = if rest.is_empty() {
                        let v = words.get(i).cloned().ok_or_else(|| w.clone())?;
                        i += 1;
                        v
                    } else {
                        rest.to_string()
                    };
                    if def.arg == Arg::Two {
                        i += 1;
                    }
                    out.opts.push((def, Some(v), format!("-{c}")));
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// The program name if `w` is a bare name or an absolute path in a system directory.
pub fn program_name(w: &str) -> Option<&str> {
    const SYSTEM_DIRS: &[&str] = &[
        "/bin",
        "/usr/bin",
        "/usr/local/bin",
        "/sbin",
        "/usr/sbin",
        "/usr/local/sbin",
        "/opt/homebrew/bin",
    ];
    let Some((dir, base)) = w.rsplit_once('/') else {
        return Some(w);
    };
    if base.is_empty() || base == "." || base == ".." || !w.starts_with('/') {
        return None;
    }
    // The directory as the kernel reads it: `//bin`, `/usr/./bin` and
    // `/usr/lib/../bin` are `/bin` and `/usr/bin`.
    let mut parts: Vec<&str> = Vec::new();
    for c in dir.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let dir = format!("/{}", parts.join("/"));
    SYSTEM_DIRS.contains(&dir.as_str()).then_some(base)
}

/// Analyse one simple command (its words, program first).
pub fn analyse(words: &[String]) -> Analysis {
    let mut a = Analysis::default();
    let Some(first) = words.first() else {
        return a;
    };
    let Some(prog) = program_name(first) else {
        return a;
    };
    match prog {
        "find" => return find(words),
        "git" => return git::git(words),
        "sed" => sed(words, &mut a),
        "awk" | "gawk" | "mawk" | "nawk" => awk(words, &mut a),
        "less" | "more" | "most" | "pg" => {
            a.hazards
                .push(Hazard::new(prog, "can run shell commands (! and v)"));
        }
        "vi" | "vim" | "nvim" | "emacs" | "nano" | "ed" | "ex" => {
            a.hazards
                .push(Hazard::new(prog, "an editor can run shell commands"));
        }
        "env" => env_hazards(words, &mut a),
        "xargs" => a.hazards.push(Hazard::new(
            "xargs",
            "runs a command with arguments read at run time",
        )),
        "tar" => tar(words, &mut a),
        _ => {}
    }
    let Some(spec) = TABLE.get(prog) else {
        return a;
    };
    match getopt(words, spec) {
        Ok(p) => {
            a.understood = true;
            let mut operands_written = false;
            let mut read_only = spec.read_only;
            for (def, value, spelled) in &p.opts {
                match def.effect {
                    Effect::Safe => {}
                    Effect::Reads => {
                        if let Some(v) = value {
                            a.reads.push(v.clone());
                        }
                    }
                    Effect::Writes => {
                        read_only = false;
                        if let Some(v) = value {
                            a.writes.push(v.clone());
                        }
                        a.hazards.push(Hazard::new(spelled.clone(), WRITES));
                    }
                    Effect::WritesOperands => {
                        read_only = false;
                        operands_written = true;
                        a.hazards
                            .push(Hazard::new(spelled.clone(), "edits files in place"));
                    }
                    Effect::Exec => {
                        read_only = false;
                        a.hazards.push(Hazard::new(spelled.clone(), RUNS));
                    }
                    Effect::Unsafe => {
                        read_only = false;
                        a.hazards.push(Hazard::new(spelled.clone(), STATE));
                    }
                    Effect::Recursive => a.recursive = true,
                    Effect::Names => {
                        a.names_at_runtime = true;
                        if let Some(v) = value.as_ref().filter(|v| v.as_str() != "-") {
                            a.reads.push(v.clone());
                        }
                    }
                }
            }
            if prog == "rg" {
                a.recursive = true;
            }
            if prog == "uniq" && p.operands.len() > 1 {
                // `uniq IN OUT` writes OUT.
                read_only = false;
                a.writes.extend(p.operands[1..].iter().cloned());
                a.hazards.push(Hazard::new(p.operands[1].clone(), WRITES));
            }
            if prog == "tee" {
                a.writes.extend(p.operands.iter().cloned());
            }
            if operands_written {
                a.writes.extend(
                    p.operands
                        .iter()
                        // sed's script, when not given by -e/-f, is not a file
                        .skip(crate::readonly::leading_non_path_args(words))
                        .cloned(),
                );
            }
            a.read_only = read_only && a.hazards.is_empty();
        }
        Err(_) => {
            a.understood = false;
            a.read_only = false;
        }
    }
    a
}

/// sed: `-i` edits in place (from the table); the script's `e` command and
/// `e`/`w` flags of `s` run commands and write files.
fn sed(words: &[String], a: &mut Analysis) {
    // Options beyond the plain ones make the script's position uncertain
    // (`-l N`, `--expr=` abbreviations) or run a script file (`-f`): hazards.
    for w in words.iter().skip(1) {
        if w == "--" {
            break;
        }
        let plain = matches!(
            w.as_str(),
            "-n" | "-E"
                | "-r"
                | "-s"
                | "-u"
                | "-z"
                | "-e"
                | "-i"
                | "--quiet"
                | "--silent"
                | "--posix"
                | "--debug"
                | "--sandbox"
                | "--separate"
                | "--unbuffered"
                | "--null-data"
                | "--regexp-extended"
                | "--in-place"
                | "--expression"
        ) || w.starts_with("--expression=")
            || w.starts_with("--in-place=")
            || (w.starts_with('-')
                && !w.starts_with("--")
                && w.len() > 1
                && w[1..].chars().all(|c| "nErsuz".contains(c)));
        if w.starts_with('-') && w.len() > 1 && !plain {
            a.hazards.push(Hazard::new(
                w.clone(),
                "a sed option the engine cannot follow (or a script file)",
            ));
        }
    }
    let mut scripts: Vec<&str> = Vec::new();
    let mut i = 1;
    let mut by_flag = false;
    while i < words.len() {
        let w = words[i].as_str();
        if w == "-e" || w == "--expression" {
            by_flag = true;
            if let Some(s) = words.get(i + 1) {
                scripts.push(s);
            }
            i += 2;
            continue;
        }
        if let Some(s) = w.strip_prefix("--expression=") {
            by_flag = true;
            scripts.push(s);
        } else if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 {
            if let Some(pos) = w.find('e') {
                by_flag = true;
                let rest = &w[pos + 1..];
                if rest.is_empty() {
                    if let Some(s) = words.get(i + 1) {
                        scripts.push(s);
                    }
                    i += 1;
                } else {
                    scripts.push(rest);
                }
            } else if w.contains('f') {
                by_flag = true;
            }
        }
        i += 1;
    }
    if !by_flag && let Some(s) = words.iter().skip(1).find(|w| !w.starts_with('-')) {
        scripts.push(s);
    }
    for s in scripts {
        if sed_script_runs_or_writes(s) {
            a.hazards.push(Hazard::new(
                format!("sed script `{s}`"),
                "its e or w command runs a program or writes a file",
            ));
        }
    }
}

/// Conservative: any `e`, `w`/`W` command, or an `e`/`w` flag after `s///`, or `r`/`R` (reads).
fn sed_script_runs_or_writes(script: &str) -> bool {
    // Look at every command start: beginning, after `;`, newline, `{` or `}`,
    // after an address. A simple, safe approximation: strip `s` commands'
    // patterns and look for the letters e, w, W in command or flag position.
    let b = script.as_bytes();
    let mut i = 0;
    let mut at_cmd = true;
    while i < b.len() {
        let c = b[i];
        if at_cmd {
            match c {
                b' ' | b'\t' | b';' | b'\n' | b'{' | b'}' | b'!' => {
                    i += 1;
                    continue;
                }
                b'0'..=b'9' | b'$' | b',' | b'~' | b'+' => {
                    i += 1;
                    continue;
                }
                b'/' | b'\\' => {
                    // address regex: skip to its closing delimiter
                    let delim = if c == b'\\' {
                        i += 1;
                        b.get(i).copied().unwrap_or(b'/')
                    } else {
                        b'/'
                    };
                    i += 1;
                    while i < b.len() && b[i] != delim {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
                b'e' | b'w' | b'W' | b'r' | b'R' => return true,
                b's' | b'y' => {
                    let Some(&delim) = b.get(i + 1) else {
                        return false;
                    };
                    let mut j = i + 2;
                    let mut parts = 0;
                    while j < b.len() && parts < 2 {
                        if b[j] == b'\\' {
                            j += 2;
                            continue;
                        }
                        if b[j] == delim {
                            parts += 1;
                        }
                        j += 1;
                    }
                    // flags
                    while j < b.len() && !matches!(b[j], b';' | b'\n' | b'}') {
                        if c == b's' && matches!(b[j], b'e' | b'w' | b'W') {
                            return true;
                        }
                        j += 1;
                    }
                    i = j;
                    continue;
                }
                b'a' | b'i' | b'c' | b':' | b'b' | b't' | b'T' | b'#' => {
                    // text or label up to end of line
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                _ => {
                    at_cmd = false;
                }
            }
        }
        if matches!(c, b';' | b'\n' | b'{' | b'}') {
            at_cmd = true;
        }
        i += 1;
    }
    false
}

/// awk: `system()`, pipes (`| "cmd"`, `"cmd" | getline`) and output redirection in the program.
fn awk(words: &[String], a: &mut Analysis) {
    let mut program: Option<&str> = None;
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        if matches!(w, "-f" | "--file" | "-E" | "--exec") || w.starts_with("-f") {
            a.hazards.push(Hazard::new(
                w.to_string(),
                "runs an awk program from a file the engine cannot see",
            ));
            return;
        }
        if matches!(w, "-v" | "-F" | "--assign" | "--field-separator") {
            i += 2;
            continue;
        }
        if w == "--" {
            i += 1;
            continue;
        }
        if w.starts_with("-F") || w.starts_with("-v") {
            i += 1;
            continue;
        }
        if w.starts_with('-') {
            // --source, -i FILE, -l LIB, --load, --include, ...: code from elsewhere.
            a.hazards.push(Hazard::new(
                w.to_string(),
                "an awk option that loads code or that the engine cannot follow",
            ));
            return;
        }
        program = Some(w);
        break;
    }
    if let Some(p) = program
        && (p.contains("system")
            || p.contains('@')
            || p.contains('|')
            || p.contains('>')
            || p.contains("getline")
            || p.contains("ENVIRON"))
    {
        a.hazards.push(Hazard::new(
            "awk program",
            "system(), pipes or output redirection run programs or write files",
        ));
    }
}

/// tar: the table knows the long forms; legacy bundled letters (`tar xf`, `-xvf`) are checked here.
fn tar(words: &[String], a: &mut Analysis) {
    for w in words.iter().skip(1) {
        if let Some(body) = w.strip_prefix("--") {
            let name = body.split('=').next().unwrap_or("");
            for danger in [
                "to-command",
                "use-compress-program",
                "checkpoint-action",
                "info-script",
                "new-volume-script",
                "rsh-command",
            ] {
                if !name.is_empty() && danger.starts_with(name) {
                    a.hazards.push(Hazard::new(w.clone(), RUNS));
                }
            }
        } else if w.starts_with('-') && (w.contains('I') || w.contains('F')) {
            a.hazards.push(Hazard::new(w.clone(), RUNS));
        }
    }
}

fn env_hazards(words: &[String], a: &mut Analysis) {
    for w in words.iter().skip(1) {
        if !w.starts_with('-') {
            break;
        }
        if w.starts_with("--split-string")
            || w.starts_with("--sp")
            || (!w.starts_with("--") && w.contains('S'))
        {
            a.hazards.push(Hazard::new(
                w.clone(),
                "runs a command line split from a string",
            ));
        }
    }
}

/// find: primaries on an allow-list; `-exec`/`-ok`/`-delete`/`-fprint*` are dangerous.
fn find(words: &[String]) -> Analysis {
    let mut a = Analysis {
        understood: true,
        ..Default::default()
    };
    let no_arg = [
        "-print",
        "-print0",
        "-ls",
        "-not",
        "!",
        "-a",
        "-o",
        "-and",
        "-or",
        "(",
        ")",
        ",",
        "-empty",
        "-readable",
        "-writable",
        "-executable",
        "-prune",
        "-quit",
        "-true",
        "-false",
        "-nouser",
        "-nogroup",
        "-depth",
        "-mount",
        "-xdev",
        "-daystart",
        "-follow",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-L",
        "-H",
        "-P",
    ];
    let one_arg = [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-maxdepth",
        "-mindepth",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-fstype",
        "-regextype",
        "-printf",
        "-context",
    ];
    let file_arg = ["-newer", "-anewer", "-cnewer", "-samefile"];
    let mut i = 1;
    let mut read_only = true;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        if !w.starts_with('-') && !matches!(w, "!" | "(" | ")" | ",") {
            continue; // a starting point (path operand)
        }
        if no_arg.contains(&w) {
            continue;
        }
        if one_arg.contains(&w) || w.starts_with("-newer") && w.len() == 8 {
            i += 1;
            continue;
        }
        if file_arg.contains(&w) {
            if let Some(f) = words.get(i) {
                a.reads.push(f.clone());
            }
            i += 1;
            continue;
        }
        if w == "-D" || w.starts_with("-O") {
            if w == "-D" {
                i += 1;
            }
            continue;
        }
        read_only = false;
        match w {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                a.hazards.push(Hazard::new(w, RUNS));
                while i < words.len() && !matches!(words[i].as_str(), ";" | "+") {
                    i += 1;
                }
                i += 1;
            }
            "-delete" => a.hazards.push(Hazard::new(w, DESTROYS)),
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(f) = words.get(i) {
                    a.writes.push(f.clone());
                }
                a.hazards.push(Hazard::new(w, WRITES));
                i += if w == "-fprintf" { 2 } else { 1 };
            }
            "-files0-from" => {
                a.names_at_runtime = true;
                i += 1;
                read_only = true;
            }
            _ => {
                a.understood = false;
            }
        }
    }
    a.recursive = false;
    a.read_only = read_only && a.understood && a.hazards.is_empty();
    a
}

/// How a wrapper (`env`, `time`, `timeout`, ...) was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wrapped {
    /// Index of the wrapped command's first word.
    pub inner: Option<usize>,
    /// The wrapper's options could not be read with certainty (names the option).
    pub uncertain: Option<String>,
    /// It changes directory (`env -C`).
    pub chdir: bool,
    /// It runs a command line split from a string (`env -S`).
    pub split_string: bool,
    /// Files it writes (`time -o FILE`).
    pub writes: Vec<String>,
    /// It sets variables (`env A=1`).
    pub assigns: bool,
    /// Index of a shell command line it runs (`flock FILE -c CMD`, `script -c CMD`).
    pub payload: Option<usize>,
}

fn wrapper_spec(prog: &str) -> Option<Spec> {
    let opts = match prog {
        "env" => {
            "0|null i|ignore-environment v|debug u|unset: C|chdir: S|split-string: \
             block-signal? default-signal? ignore-signal? list-signal-handling"
        }
        "time" => "f|format: >o|output: a|append p|portability v|verbose q|quiet",
        "exec" => "c l a:",
        "timeout" => "s|signal: k|kill-after: v|verbose preserve-status foreground",
        "nice" => "n|adjustment:",
        "nohup" => "",
        "setsid" => "c|ctty f|fork w|wait",
        "stdbuf" => "i|input: o|output: e|error:",
        "command" => "p v V",
        "builtin" | "coproc" | "busybox" | "toybox" => "",
        "taskset" => "a|all-tasks c|cpu-list p|pid",
        "chrt" => {
            "a|all-tasks b|batch d|deadline f|fifo i|idle o|other r|rr R|reset-on-fork \
             m|max p|pid v|verbose T|sched-runtime: P|sched-period: D|sched-deadline:"
        }
        "ionice" => "c|class: n|classdata: t|ignore p|pid P|pgid u|uid",
        "flock" => {
            "s|shared x|exclusive|e u|unlock n|nonblock|nb w|timeout|wait: \
             E|conflict-exit-code: o|close F|no-fork verbose c|command:"
        }
        "unbuffer" => "p",
        "caffeinate" => "d i m s u t: w:",
        "script" => {
            "a|append c|command: e|return f|flush q|quiet t|timing? T|log-timing: O|log-out: B|log-io: I|log-in: E|echo:"
        }
        "xargs" => {
            "0|null <a|arg-file: d|delimiter: E: e|eof? I: i|replace? L: l|max-lines? \
             n|max-args: o|open-tty p|interactive P|max-procs: r|no-run-if-empty \
             s|max-chars: show-limits t|verbose x|exit process-slot-var:"
        }
        _ => return None,
    };
    let mut v = spec(opts);
    v.extend(spec(GNU_COMMON));
    Some(Spec {
        opts: v,
        permute: false,
        digits: prog == "nice",
        abbrev: !matches!(
            prog,
            "exec" | "command" | "builtin" | "coproc" | "busybox" | "toybox"
        ),
        read_only: false,
    })
}

/// Read a wrapper's options with its real grammar. `None`: not a wrapper this table knows.
pub fn wrapper(prog: &str, words: &[String]) -> Option<Wrapped> {
    let spec = wrapper_spec(prog)?;
    let mut out = Wrapped::default();
    let parsed = match getopt(words, &spec) {
        Ok(p) => p,
        Err(flag) => {
            out.uncertain = Some(flag);
            return Some(out);
        }
    };
    for (def, value, _) in &parsed.opts {
        match (prog, def.short, def.long) {
            // On a running process, not a command.
            ("taskset" | "chrt", Some('p'), _) | ("ionice", Some('p' | 'P' | 'u'), _) => {
                return Some(Wrapped::default());
            }
            ("script", Some('c'), _) => {
                out.payload = words
                    .iter()
                    .position(|w| Some(w) == value.as_ref())
                    .filter(|_| value.is_some());
            }
            ("env", Some('S'), _) => out.split_string = true,
            ("command", Some('v' | 'V'), _) => {
                // `command -v x` only looks x up.
                return Some(Wrapped::default());
            }
            _ => {}
        }
        if def.effect == Effect::Writes
            && let Some(v) = value
        {
            out.writes.push(v.clone());
        }
        if matches!(def.long, Some("help" | "version")) {
            return Some(Wrapped::default());
        }
    }
    // Operands: env's NAME=VALUE, timeout's DURATION, then the command.
    let mut k = words.len() - parsed.operands.len();
    if prog == "env" {
        while k < words.len() && words[k].contains('=') && !words[k].starts_with('=') {
            out.assigns = true;
            k += 1;
        }
    }
    match prog {
        // The duration, the mask, the priority: then the command.
        "timeout" | "taskset" | "chrt" => k += 1,
        // The lock file, then the command or `-c COMMAND`.
        "flock" => {
            k += 1;
            if matches!(words.get(k).map(String::as_str), Some("-c" | "--command")) {
                out.payload = (k + 1 < words.len()).then_some(k + 1);
                return Some(out);
            }
        }
        // `script -c CMD [FILE]`: FILE is the typescript, no command.
        "script" => return Some(out),
        _ => {}
    }
    out.inner = (k < words.len()).then_some(k);
    Some(out)
}

/// Other spellings of a command that deny and ask rules also see: its
/// subcommand with the options before it left out (`npm --registry X
/// publish` is `npm publish`, `kubectl -n prod delete` is `kubectl delete`)
/// and git's plumbing that does what a porcelain command does (`git
/// send-pack` is `git push`). Liberal on purpose: a form is only ever used
/// to make a command stricter.
pub fn deny_forms(words: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let Some(prog) = words.first() else {
        return out;
    };
    // Skip a run of options and the values that may follow them.
    let mut i = 1;
    while i < words.len() && words[i].starts_with('-') && words[i] != "--" {
        let takes_value = !words[i].contains('=');
        i += 1;
        if takes_value && i < words.len() && !words[i].starts_with('-') {
            // The word after an option: its value, or already the subcommand.
            let mut as_sub = vec![prog.clone()];
            as_sub.extend(words[i..].iter().cloned());
            out.push(as_sub);
            i += 1;
        }
    }
    if i > 1 && i < words.len() {
        let mut v = vec![prog.clone()];
        v.extend(words[i..].iter().cloned());
        out.push(v);
    }
    if program_name(prog) == Some("git") {
        let g = git_without_globals(words).unwrap_or_else(|| words.to_vec());
        if let Some(sub) = g.get(1)
            && matches!(sub.as_str(), "send-pack" | "http-push")
        {
            let mut v = g.clone();
            v[1] = "push".into();
            out.push(v);
        }
    }
    out.retain(|f| f.as_slice() != words);
    out
}

/// A command that makes a process outside the sandbox run commands (a
/// terminal multiplexer's server, the init system, a scheduler): what it
/// says to run is never judged. Never covered by a rule that does not name
/// the subcommand (`allow bash tmux send-keys *` does).
pub fn runs_outside(words: &[String]) -> Option<String> {
    let prog = program_name(words.first()?)?;
    let rest = &words[1..];
    match prog {
        "tmux" => {
            // Global options, some with values; `-c CMD` runs a shell command.
            let mut i = 0;
            while i < rest.len() && rest[i].starts_with('-') {
                if rest[i] == "-c" {
                    return Some("`tmux -c` runs a command in tmux's shell".into());
                }
                if matches!(rest[i].as_str(), "-f" | "-L" | "-S" | "-T") {
                    i += 1;
                }
                i += 1;
            }
            let sub = rest.get(i).map_or("", String::as_str);
            let read_only = sub.starts_with("list-")
                || matches!(
                    sub,
                    "ls" | "lsw"
                        | "lsp"
                        | "lsc"
                        | "lsb"
                        | "lsk"
                        | "has-session"
                        | "has"
                        | "show-options"
                        | "show"
                        | "show-environment"
                        | "showenv"
                        | "info"
                );
            (!read_only).then(|| {
                format!(
                    "`tmux {}` acts in your tmux server, outside the sandbox (it can type into or start commands in your sessions)",
                    if sub.is_empty() { "" } else { sub }
                )
            })
        }
        "screen" => rest
            .iter()
            .any(|w| {
                matches!(
                    w.as_str(),
                    "-X" | "-x" | "-r" | "-R" | "-RR" | "-D" | "-d" | "-dr" | "-rd"
                )
            })
            .then(|| {
                "`screen -X`/`-x`/`-r` acts in your screen sessions, outside the sandbox".into()
            }),
        "systemd-run" | "at" | "batch" | "launchctl" => Some(format!(
            "`{prog}` has a service outside the sandbox run a command"
        )),
        "crontab" => (!rest.iter().all(|w| w == "-l"))
            .then(|| "`crontab` installs commands that run later outside the sandbox".into()),
        "kitty" => (rest.first().map(String::as_str) == Some("@"))
            .then(|| "`kitty @` remote-controls your terminal".into()),
        "wezterm" => (rest.first().map(String::as_str) == Some("cli"))
            .then(|| "`wezterm cli` remote-controls your terminal".into()),
        _ => None,
    }
}

/// A command that runs code from files or arguments the engine cannot read
/// (a script, a Makefile, a package's scripts, build scripts): under the
/// weaker fallback sandbox it needs a rule naming it, a blanket allow is
/// not enough. The words are the command's (program name normalised).
pub fn runs_unread_code(words: &[String]) -> Option<String> {
    let first = words.first()?;
    let Some(prog) = program_name(first) else {
        // `./build.sh`, `bin/run`: a program of the project itself.
        return Some(format!("`{first}` is a program of the project"));
    };
    let base = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let sub = words.get(1).map_or("", String::as_str);
    let runs = match base {
        "python" | "node" | "nodejs" | "deno" | "bun" | "perl" | "ruby" | "php" | "lua"
        | "Rscript" | "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" => words
            .iter()
            .skip(1)
            .any(|w| !w.starts_with('-') || matches!(w.as_str(), "-c" | "-e" | "-m" | "-r")),
        "make" | "gmake" | "just" | "ninja" | "rake" | "npx" | "pnpx" | "bunx" | "pytest"
        | "tox" | "nox" | "gradle" | "gradlew" | "mvn" | "mvnw" | "jest" | "vitest" => true,
        "npm" | "pnpm" | "yarn" => !matches!(
            sub,
            "" | "--version"
                | "-v"
                | "view"
                | "info"
                | "ls"
                | "list"
                | "outdated"
                | "config"
                | "whoami"
                | "search"
                | "help"
        ),
        "cargo" => matches!(
            sub,
            "build"
                | "b"
                | "run"
                | "r"
                | "test"
                | "t"
                | "bench"
                | "check"
                | "c"
                | "install"
                | "clippy"
                | "doc"
                | "d"
                | "fix"
                | "miri"
                | "nextest"
        ),
        "go" => matches!(
            sub,
            "run" | "test" | "build" | "generate" | "install" | "vet"
        ),
        "cmake" => words.iter().any(|w| w == "--build"),
        "bundle" | "poetry" | "uv" | "pipenv" | "pdm" | "hatch" => {
            matches!(sub, "exec" | "run")
        }
        "pip" | "pip3" => sub == "install",
        _ => false,
    };
    runs.then(|| {
        format!(
            "`{}` runs code the permission engine cannot read",
            words[..words.len().min(2)].join(" ")
        )
    })
}

/// A command that prints stored secrets (keychain, secret service, credential helpers).
pub fn reads_secrets(words: &[String]) -> Option<String> {
    let prog = program_name(words.first()?)?;
    let sub = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let hit = match prog {
        "security" => matches!(
            sub(1),
            "find-generic-password"
                | "find-internet-password"
                | "dump-keychain"
                | "export"
                | "find-certificate"
                | "find-identity"
        ),
        "secret-tool" => matches!(sub(1), "lookup" | "search"),
        "kwallet-query" | "kwalletcli" => true,
        "keyring" => matches!(sub(1), "get"),
        "gh" => sub(1) == "auth" && sub(2) == "token",
        "git" => {
            let w = git_without_globals(words).unwrap_or_else(|| words.to_vec());
            w.get(1).map(String::as_str) == Some("credential")
                && matches!(w.get(2).map(String::as_str), Some("fill"))
                || w.get(1).is_some_and(|s| s.starts_with("credential-"))
        }
        "pass" | "gopass" => {
            sub(1) == "show"
                || !sub(1).is_empty()
                    && !sub(1).starts_with('-')
                    && !matches!(
                        sub(1),
                        "ls" | "list"
                            | "find"
                            | "search"
                            | "generate"
                            | "insert"
                            | "init"
                            | "git"
                            | "rm"
                            | "mv"
                            | "cp"
                            | "edit"
                            | "version"
                            | "help"
                    )
        }
        "op" => matches!(sub(1), "read" | "item" | "inject"),
        "gcloud" => words
            .iter()
            .any(|w| w == "print-access-token" || w == "print-identity-token"),
        "aws" => sub(1) == "configure" && sub(2) == "get",
        _ => false,
    };
    hit.then(|| words.iter().take(3).cloned().collect::<Vec<_>>().join(" "))
}

/// `cp`/`mv`/`install`/`ln` with a directory target write `DIR/<name of each source>`.
pub fn copy_targets(words: &[String]) -> Vec<String> {
    let Some(prog) = words.first().and_then(|w| program_name(w)) else {
        return Vec::new();
    };
    if !matches!(prog, "cp" | "mv" | "install" | "ln") {
        return Vec::new();
    }
    let mut dir: Option<String> = None;
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 1;
    let mut only = false;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        if only || !w.starts_with('-') || w == "-" {
            operands.push(w);
            continue;
        }
        if w == "--" {
            only = true;
        } else if w == "-t" || w == "--target-directory" {
            dir = words.get(i).cloned();
            i += 1;
        } else if let Some(d) = w.strip_prefix("--target-directory=") {
            dir = Some(d.to_string());
        } else if let Some(d) = w.strip_prefix("-t") {
            dir = Some(d.to_string());
        } else if matches!(
            w,
            "-S" | "--suffix" | "-m" | "--mode" | "-o" | "--owner" | "-g" | "--group"
        ) {
            i += 1;
        }
    }
    let sources: Vec<&str> = match &dir {
        Some(_) => operands.clone(),
        None if operands.len() >= 2 => operands[..operands.len() - 1].to_vec(),
        None => Vec::new(),
    };
    let Some(dir) =
        dir.or_else(|| (operands.len() >= 2).then(|| operands[operands.len() - 1].to_string()))
    else {
        return Vec::new();
    };
    sources
        .iter()
        .filter_map(|s| s.trim_end_matches('/').rsplit('/').next())
        .filter(|n| !n.is_empty() && *n != "." && *n != "..")
        .map(|n| format!("{}/{n}", dir.trim_end_matches('/')))
        .collect()
}

/// Programs that delete or rewrite what their operands name.
pub fn is_destructive(prog: &str) -> bool {
    matches!(
        prog,
        "rm" | "rmdir"
            | "shred"
            | "chmod"
            | "chown"
            | "chgrp"
            | "truncate"
            | "unlink"
            | "srm"
            | "wipe"
            | "mv"
            | "dd"
            | "chattr"
            | "setfacl"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(cmd: &str) -> Analysis {
        let w: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
        analyse(&w)
    }

    #[test]
    fn grouped_attached_and_abbreviated_options() {
        assert!(!a("sort -uo .mia-code.json x").read_only);
        assert_eq!(
            a("sort -uo .mia-code.json x").writes,
            vec![".mia-code.json"]
        );
        assert_eq!(a("sort --o=f x").writes, vec!["f"]);
        assert!(!a("sort --compress-program=sh x").read_only);
        assert_eq!(a("sort --compress=sh x").hazards[0].why, RUNS);
        assert_eq!(a("date -f/etc/shadow").reads, vec!["/etc/shadow"]);
        assert!(
            a("date -f/etc/shadow").read_only,
            "a read, judged as a path"
        );
        assert!(!a("date -s 2020-01-01").read_only);
        assert_eq!(a("hexdump -f.env x").reads, vec![".env"]);
        assert!(a("ls -la src").read_only);
        assert!(a("head -20 x").read_only);
        assert!(!a("ls --frobnicate").read_only, "unknown option");
        assert!(!a("ls --s").read_only, "ambiguous abbreviation");
        assert!(a("grep -rn foo src").recursive);
        assert!(a("grep -rn foo src").read_only);
    }

    #[test]
    fn dangerous_flags() {
        assert!(!a("rg --pre=sh x").hazards.is_empty());
        assert!(!a("rg -z x").hazards.is_empty());
        assert!(a("rg -n x").hazards.is_empty());
        assert!(!a("find . -delete").hazards.is_empty());
        assert!(!a("find . -exec rm {} ;").hazards.is_empty());
        assert!(a("find . -name x -print").read_only);
        assert!(!a("fd -x rm").hazards.is_empty());
        assert!(!a("git grep -iOcmd; -e x").hazards.is_empty());
        assert!(!a("git grep --op=cmd; x").hazards.is_empty());
        assert!(!a("git -c alias.x=!sh x").hazards.is_empty());
        assert!(!a("git fetch --upload-pack=sh").hazards.is_empty());
        assert!(!a("git config alias.st !sh").hazards.is_empty());
        assert!(a("git config --get user.name").read_only);
        assert!(a("git diff --no-ext-diff").read_only);
        assert!(!a("git diff --ext").read_only);
        assert!(!a("sed -i s/a/b/ f").hazards.is_empty());
        assert_eq!(a("sed -i s/a/b/ f").writes, vec!["f"]);
        assert!(!a("sed s/a/b/e f").hazards.is_empty());
        assert!(!a("sed 1e f").hazards.is_empty());
        assert!(!a("sed -n w/tmp/x f").hazards.is_empty());
        assert!(a("sed -n s/a/b/p f").hazards.is_empty());
        assert!(a("sed -n 1,5p f").hazards.is_empty());
        assert!(!a("awk {system(\"x\")}").hazards.is_empty());
        assert!(a("awk {print}").hazards.is_empty());
        assert!(!a("tar --to-command=sh -xf a.tar").hazards.is_empty());
        assert!(!a("tar -I sh -xf a.tar").hazards.is_empty());
        assert!(!a("tar --use=sh -xf a.tar").hazards.is_empty());
        assert!(!a("less x").hazards.is_empty());
        assert!(!a("env -S x").hazards.is_empty());
        assert!(!a("env -vSx ls").hazards.is_empty());
        assert!(!a("xargs rm").hazards.is_empty());
        assert!(!a("tree -o out").read_only);
        assert!(!a("file -C").read_only);
        assert!(!a("uniq a b").read_only);
        assert_eq!(a("git show HEAD:.env").reads, vec![".env"]);
    }

    #[test]
    fn git_globals_stripped_for_identity() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            git_without_globals(&w("git -C . push")),
            Some(w("git push"))
        );
        assert_eq!(
            git_without_globals(&w("git --no-pager push -f")),
            Some(w("git push -f"))
        );
        assert_eq!(git_without_globals(&w("git push")), None);
    }
}
