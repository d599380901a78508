//! The built-in secret rules, keyed by gitleaks' rule ids.
//!
//! Where gitleaks (<https://github.com/gitleaks/gitleaks>, `config/gitleaks.toml`)
//! has a rule for a shape, the rule here carries its id, so a redaction
//! reads `[REDACTED:github-pat]` as gitleaks would name the finding. The
//! patterns are our own, written for redaction rather than for scanning: they
//! are looser than gitleaks' (a prefix and a length rather than an exact
//! length), because leaving a secret in a shared page is worse than
//! redacting a look-alike. Shapes gitleaks has no rule for have ids of their
//! own, marked `gitleaks: false`; each says why in a comment.
//!
//! The order of [`RULES`] is the order rules run in: the most specific
//! first (an Anthropic key before the `sk-` of OpenAI, a curl header before
//! a bare `Bearer`), the keyword and entropy rules last.

use base64::Engine as _;

/// How a rule's matches are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A token known by its prefix (`ghp_`, `sk-ant-`): also looked for in
    /// the line-joined view of a text (a token wrapped or split by a `\`
    /// continuation), and in the cut end of a title.
    Token,
    /// A secret in a command line: also looked for in the line-joined view,
    /// for commands continued with `\`.
    Command,
    /// A secret known by its context in the text as written (a block, a
    /// line of a file): looked for in the original text only.
    Text,
}

/// What a match must also satisfy to be redacted (a regular expression
/// alone cannot say "looks random" or "decodes to a private key").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Every match is a secret.
    Always,
    /// Not a placeholder: `$VAR`, `${VAR}`, `$(cmd)`, `{{ x }}`, `<password>`,
    /// `%s`, `***` or `xxxx` are left alone.
    Real,
    /// A value that looks like a secret rather than code: it has a digit or
    /// a symbol, or is 16+ characters; `password: string` or
    /// `token = getToken()` are code.
    LooksSecret,
    /// Random-looking: a digit, an upper-case and a lower-case letter.
    Mixed,
    /// An opaque token: a digit and a letter.
    DigitAndLetter,
    /// `user:password` with a real password part.
    UserPass,
    /// Base64 that decodes to a PEM private key.
    PemKey,
    /// Base64 that decodes to a JWT.
    JwtB64,
    /// A docker `auth` value: base64 of `user:password`.
    DockerAuth,
    /// A YAML value that is not a placeholder, code, a boolean or null.
    YamlValue,
    /// High Shannon entropy, and not a hex digest, UUID, path or word.
    Entropy,
}

/// One regular expression of a rule and the check its matches must pass.
/// The secret is the first capture group that took part in the match (the
/// whole match when the expression has no group); other groups must be
/// non-capturing.
#[derive(Debug)]
pub struct Pattern {
    pub regex: &'static str,
    pub check: Check,
}

/// A built-in rule.
#[derive(Debug)]
pub struct Rule {
    /// The label: `[REDACTED:<id>]` and the `kind` of a redaction.
    pub id: &'static str,
    /// Whether `id` is a gitleaks rule id (false: a shape gitleaks has no
    /// rule for; the id is ours).
    pub gitleaks: bool,
    pub shape: Shape,
    /// Lower-case words one of which a text must contain for the rule to be
    /// tried at all (empty: always tried). A fast filter, never the test.
    pub keywords: &'static [&'static str],
    /// What the rule catches, in a few words (the docs' table says the same).
    pub catches: &'static str,
    pub patterns: &'static [Pattern],
}

const fn p(regex: &'static str, check: Check) -> Pattern {
    Pattern { regex, check }
}

/// Keys whose values are secrets (`generic-api-key`).
macro_rules! secret_key {
    () => {
        r"[A-Za-z0-9_.\-]*(?:secret|token|passw(?:or)?d|pwd|api[_\-]?key|apikey|private[_\-]?key|access[_\-]?key|auth[_\-]?key|credentials?|creds)[A-Za-z0-9_.\-]*"
    };
}

/// Commands whose `-p` is followed by the password itself (mysql's family
/// takes it attached: `-pVALUE`).
macro_rules! mysql {
    () => {
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mysqlsh|mysqlbinlog|mariadb|mariadb-dump|mariadb-admin)\b[^\r\n|;&]*?[ \t]-p"
    };
}

/// A command-line value: double-quoted, single-quoted or bare (a bare value
/// does not start with `-`, which would be the next option).
macro_rules! arg {
    () => {
        r#"(?:"([^"\r\n]+)"|'([^'\r\n]+)'|([^\s"'|;&\-][^\s"'|;&]*))"#
    };
}

use Check::*;
use Shape::*;

/// The built-in rules, in the order they run. `\b` in these patterns is an
/// ASCII word boundary (see `Redactor::new`).
pub const RULES: &[Rule] = &[
    Rule {
        id: "private-key",
        gitleaks: true,
        shape: Text,
        keywords: &["-----begin"],
        catches: "PEM private key blocks, `-----BEGIN … PRIVATE KEY-----` to the end marker (or the end of the text)",
        patterns: &[p(
            r"(?i)-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\z)",
            Always,
        )],
    },
    // No gitleaks rule: base64 of a PEM private key (`tls.key`, kubeconfig
    // `client-key-data`, a key in an env var). Decoded to tell a key from a
    // certificate, which is public.
    Rule {
        id: "private-key-base64",
        gitleaks: false,
        shape: Token,
        keywords: &["ls0tls1crudjt"],
        catches: "base64 of a PEM private key (`LS0tLS1CRUdJTi…`: `tls.key`, kubeconfig `client-key-data`); a base64 certificate is left alone",
        patterns: &[p(r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{8,}={0,2}", PemKey)],
    },
    Rule {
        id: "anthropic-admin-api-key",
        gitleaks: true,
        shape: Token,
        keywords: &["sk-ant-admin"],
        catches: "Anthropic admin keys, `sk-ant-admin01-…`",
        patterns: &[p(r"\bsk-ant-admin01-[A-Za-z0-9_\-]{20,}", Always)],
    },
    Rule {
        id: "anthropic-api-key",
        gitleaks: true,
        shape: Token,
        keywords: &["sk-ant-"],
        catches: "Anthropic API keys, `sk-ant-api03-…`",
        patterns: &[p(r"\bsk-ant-[A-Za-z0-9_\-]{20,}", Always)],
    },
    Rule {
        id: "openai-api-key",
        gitleaks: true,
        shape: Token,
        keywords: &["sk-"],
        catches: "OpenAI keys, `sk-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…` (random-looking: digits and both cases)",
        patterns: &[p(
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
            Mixed,
        )],
    },
    Rule {
        id: "gcp-api-key",
        gitleaks: true,
        shape: Token,
        keywords: &["aiza"],
        catches: "Google Cloud API keys, `AIza…`",
        patterns: &[p(r"\bAIza[0-9A-Za-z_\-]{35}", Always)],
    },
    Rule {
        id: "github-pat",
        gitleaks: true,
        shape: Token,
        keywords: &["ghp_"],
        catches: "GitHub personal access tokens, `ghp_…`",
        patterns: &[p(r"\bghp_[A-Za-z0-9]{36,}", Always)],
    },
    Rule {
        id: "github-fine-grained-pat",
        gitleaks: true,
        shape: Token,
        keywords: &["github_pat_"],
        catches: "GitHub fine-grained tokens, `github_pat_…`",
        patterns: &[p(r"\bgithub_pat_[A-Za-z0-9_]{22,}", Always)],
    },
    Rule {
        id: "github-oauth",
        gitleaks: true,
        shape: Token,
        keywords: &["gho_"],
        catches: "GitHub OAuth tokens, `gho_…`",
        patterns: &[p(r"\bgho_[A-Za-z0-9]{36,}", Always)],
    },
    Rule {
        id: "github-app-token",
        gitleaks: true,
        shape: Token,
        keywords: &["ghu_", "ghs_"],
        catches: "GitHub app tokens, `ghu_…`, `ghs_…`",
        patterns: &[p(r"\bgh[us]_[A-Za-z0-9]{36,}", Always)],
    },
    Rule {
        id: "github-refresh-token",
        gitleaks: true,
        shape: Token,
        keywords: &["ghr_"],
        catches: "GitHub refresh tokens, `ghr_…`",
        patterns: &[p(r"\bghr_[A-Za-z0-9]{36,}", Always)],
    },
    Rule {
        id: "gitlab-pat",
        gitleaks: true,
        shape: Token,
        keywords: &["glpat-"],
        catches: "GitLab personal access tokens, `glpat-…`",
        patterns: &[p(r"\bglpat-[A-Za-z0-9_\-]{20,}", Always)],
    },
    Rule {
        id: "gitlab-ptt",
        gitleaks: true,
        shape: Token,
        keywords: &["glptt-"],
        catches: "GitLab pipeline trigger tokens, `glptt-…`",
        patterns: &[p(r"\bglptt-[A-Za-z0-9_\-]{20,}", Always)],
    },
    Rule {
        id: "gitlab-deploy-token",
        gitleaks: true,
        shape: Token,
        keywords: &["gldt-"],
        catches: "GitLab deploy tokens, `gldt-…`",
        patterns: &[p(r"\bgldt-[A-Za-z0-9_\-]{20,}", Always)],
    },
    Rule {
        id: "gitlab-runner-authentication-token",
        gitleaks: true,
        shape: Token,
        keywords: &["glrt-"],
        catches: "GitLab runner tokens, `glrt-…`",
        patterns: &[p(r"\bglrt-[A-Za-z0-9_\-]{20,}", Always)],
    },
    Rule {
        id: "slack-config-access-token",
        gitleaks: true,
        shape: Token,
        keywords: &["xoxe."],
        catches: "Slack configuration access tokens, `xoxe.xoxp-…`, `xoxe.xoxb-…`",
        patterns: &[p(r"\bxoxe\.xox[bp]-[0-9A-Za-z\-]{20,}", Always)],
    },
    Rule {
        id: "slack-config-refresh-token",
        gitleaks: true,
        shape: Token,
        keywords: &["xoxe-"],
        catches: "Slack configuration refresh tokens, `xoxe-1-…`",
        patterns: &[p(r"\bxoxe-[0-9]-[A-Za-z0-9]{40,}", Always)],
    },
    Rule {
        id: "slack-bot-token",
        gitleaks: true,
        shape: Token,
        keywords: &["xoxb-"],
        catches: "Slack bot tokens, `xoxb-…`",
        patterns: &[p(r"\bxoxb-[0-9A-Za-z\-]{10,}", Always)],
    },
    Rule {
        id: "slack-user-token",
        gitleaks: true,
        shape: Token,
        keywords: &["xoxp-", "xoxe-"],
        catches: "Slack user tokens, `xoxp-…`, `xoxe-…`",
        patterns: &[p(r"\bxox[pe]-[0-9A-Za-z\-]{10,}", Always)],
    },
    Rule {
        id: "slack-legacy-workspace-token",
        gitleaks: true,
        shape: Token,
        keywords: &["xoxa-", "xoxr-"],
        catches: "Slack workspace tokens, `xoxa-…`, `xoxr-…`",
        patterns: &[p(r"\bxox[ar]-[0-9A-Za-z\-]{8,}", Always)],
    },
    Rule {
        id: "slack-legacy-token",
        gitleaks: true,
        shape: Token,
        keywords: &["xoxo-", "xoxs-"],
        catches: "Slack legacy tokens, `xoxo-…`, `xoxs-…`",
        patterns: &[p(r"\bxox[os]-[0-9A-Za-z\-]{10,}", Always)],
    },
    Rule {
        id: "slack-app-token",
        gitleaks: true,
        shape: Token,
        keywords: &["xapp-"],
        catches: "Slack app-level tokens, `xapp-…`",
        patterns: &[p(r"(?i)\bxapp-[0-9]+-[A-Za-z0-9\-]{10,}", Always)],
    },
    Rule {
        id: "slack-webhook-url",
        gitleaks: true,
        shape: Token,
        keywords: &["hooks.slack.com"],
        catches: "Slack webhook URLs, `hooks.slack.com/services/…` (and workflows, triggers)",
        patterns: &[p(
            r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}",
            Always,
        )],
    },
    Rule {
        id: "stripe-access-token",
        gitleaks: true,
        shape: Token,
        keywords: &["_test_", "_live_", "_prod_"],
        catches: "Stripe secret and restricted keys, `sk_live_…`, `rk_test_…` (publishable `pk_…` keys are public)",
        patterns: &[p(
            r"\b(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}",
            Always,
        )],
    },
    Rule {
        id: "aws-access-token",
        gitleaks: true,
        shape: Token,
        keywords: &["akia", "asia", "abia", "acca", "a3t"],
        catches: "AWS access key ids, `AKIA…`, `ASIA…`",
        patterns: &[p(
            r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
            Always,
        )],
    },
    Rule {
        id: "jwt",
        gitleaks: true,
        shape: Token,
        keywords: &["eyj"],
        catches: "JSON Web Tokens, `eyJ….eyJ….…`",
        patterns: &[p(
            r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.(?:[A-Za-z0-9_\-]{8,}={0,2})?",
            Always,
        )],
    },
    Rule {
        id: "jwt-base64",
        gitleaks: true,
        shape: Token,
        keywords: &["zxlk"],
        catches: "base64 of a JWT, `ZXlK…`",
        patterns: &[p(r"\bZXlK[A-Za-z0-9+/]{40,}={0,2}", JwtB64)],
    },
    Rule {
        id: "npm-access-token",
        gitleaks: true,
        shape: Token,
        keywords: &["npm_"],
        catches: "npm tokens, `npm_…`",
        patterns: &[p(r"\bnpm_[A-Za-z0-9]{36,}", Always)],
    },
    Rule {
        id: "pypi-upload-token",
        gitleaks: true,
        shape: Token,
        keywords: &["pypi-ageichlwas5vcmc"],
        catches: "PyPI upload tokens, `pypi-AgEIcHlwaS5vcmc…`",
        patterns: &[p(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{40,}", Always)],
    },
    Rule {
        id: "huggingface-access-token",
        gitleaks: true,
        shape: Token,
        keywords: &["hf_"],
        catches: "Hugging Face tokens, `hf_…`",
        patterns: &[p(r"\bhf_[A-Za-z]{34,}", Always)],
    },
    Rule {
        id: "sendgrid-api-token",
        gitleaks: true,
        shape: Token,
        keywords: &["sg."],
        catches: "SendGrid keys, `SG.….…`",
        patterns: &[p(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", Always)],
    },
    Rule {
        id: "digitalocean-pat",
        gitleaks: true,
        shape: Token,
        keywords: &["dop_v1_"],
        catches: "DigitalOcean tokens, `dop_v1_…`",
        patterns: &[p(r"\bdop_v1_[a-f0-9]{64}", Always)],
    },
    Rule {
        id: "vault-service-token",
        gitleaks: true,
        shape: Token,
        keywords: &["hvs."],
        catches: "HashiCorp Vault tokens, `hvs.…`",
        patterns: &[p(r"\bhvs\.[A-Za-z0-9_\-]{24,}", Always)],
    },
    Rule {
        id: "age-secret-key",
        gitleaks: true,
        shape: Token,
        keywords: &["age-secret-key-1"],
        catches: "age secret keys, `AGE-SECRET-KEY-1…`",
        patterns: &[p(
            r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
            Always,
        )],
    },
    Rule {
        id: "shopify-access-token",
        gitleaks: true,
        shape: Token,
        keywords: &["shpat_"],
        catches: "Shopify access tokens, `shpat_…`",
        patterns: &[p(r"\bshpat_[a-fA-F0-9]{32}", Always)],
    },
    Rule {
        id: "databricks-api-token",
        gitleaks: true,
        shape: Token,
        keywords: &["dapi"],
        catches: "Databricks tokens, `dapi…`",
        patterns: &[p(r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", Always)],
    },
    Rule {
        id: "perplexity-api-key",
        gitleaks: true,
        shape: Token,
        keywords: &["pplx-"],
        catches: "Perplexity keys, `pplx-…`",
        patterns: &[p(r"\bpplx-[A-Za-z0-9]{48}", Always)],
    },
    Rule {
        id: "linear-api-key",
        gitleaks: true,
        shape: Token,
        keywords: &["lin_api_"],
        catches: "Linear keys, `lin_api_…`",
        patterns: &[p(r"\blin_api_[A-Za-z0-9]{40}", Always)],
    },
    Rule {
        id: "grafana-service-account-token",
        gitleaks: true,
        shape: Token,
        keywords: &["glsa_"],
        catches: "Grafana service account tokens, `glsa_…`",
        patterns: &[p(r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", Always)],
    },
    Rule {
        id: "curl-auth-user",
        gitleaks: true,
        shape: Command,
        keywords: &["curl"],
        catches: "`user:password` of `curl -u`, `--user`, `--proxy-user`",
        patterns: &[p(
            r#"\bcurl\b[^\r\n]*?[ \t](?:-u|--user|-U|--proxy-user)(?:=|[ \t]*)(?:"([^"\r\n]*:[^"\r\n]*)"|'([^'\r\n]*:[^'\r\n]*)'|([^\s"':]*:[^\s"']+))"#,
            UserPass,
        )],
    },
    Rule {
        id: "curl-auth-header",
        gitleaks: true,
        shape: Command,
        keywords: &["curl"],
        catches: "the credential of `curl -H 'Authorization: …'` (Basic, Bearer, Token) and of `X-Api-Key:`/`…-Token:` headers",
        patterns: &[p(
            r#"\bcurl\b[^\r\n]*?[ \t](?:-H|--header)(?:=|[ \t]*)["']?(?i:(?:proxy-)?authorization:[ \t]*(?:(?:basic|bearer|token|api-token|digest)[ \t]+)?|(?:x-(?:[a-z]+-)?)?(?:api-?)?(?:key|token):[ \t]*|private-token:[ \t]*)([A-Za-z0-9._~+/=@\-]{8,})"#,
            Real,
        )],
    },
    // No gitleaks rule outside curl: an `Authorization: Basic` header in a
    // request dump, an HTTP client's code or another tool's flags.
    Rule {
        id: "http-basic-auth",
        gitleaks: false,
        shape: Command,
        keywords: &["basic"],
        catches: "`Authorization: Basic <base64>` anywhere (a request dump, `wget --header`, code)",
        patterns: &[p(
            r#"(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+([A-Za-z0-9+/]{4,}={0,2})"#,
            Real,
        )],
    },
    // No gitleaks rule: a bearer token outside a curl command.
    Rule {
        id: "bearer-token",
        gitleaks: false,
        shape: Command,
        keywords: &["bearer", "token"],
        catches: "`Bearer <token>` and `token <token>` (a digit and a letter)",
        patterns: &[p(
            r"\b(?:[Bb]earer|BEARER|[Tt]oken|TOKEN)[ \t]+([A-Za-z0-9._~+/=\-]{16,})",
            DigitAndLetter,
        )],
    },
    // No gitleaks rule: cookies are session credentials.
    Rule {
        id: "http-cookie",
        gitleaks: false,
        shape: Command,
        keywords: &["cookie", "curl"],
        catches: "the value of `Cookie:` and `Set-Cookie:` headers, and of `curl -b`/`--cookie name=value`",
        patterns: &[
            p(
                r#"\b(?:[Ss]et-|SET-)?(?:[Cc]ookie|COOKIE)["']?[ \t]*:[ \t]*["']?([^\s=;'"]+=[^\r\n'"]*)"#,
                Real,
            ),
            p(
                r#"\bcurl\b[^\r\n]*?[ \t](?:-b|--cookie)(?:=|[ \t]+)(?:"([^"\r\n]*=[^"\r\n]*)"|'([^'\r\n]*=[^'\r\n]*)'|([^\s"'=]+=[^\s"']*))"#,
                Real,
            ),
        ],
    },
    // No gitleaks rule: `scheme://user:password@host`.
    Rule {
        id: "url-password",
        gitleaks: false,
        shape: Text,
        keywords: &["://"],
        catches: "the password of `scheme://user:password@host`",
        patterns: &[p(
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:([^@\s/]+)@",
            Real,
        )],
    },
    // No gitleaks rule (gitleaks leaves AWS secret keys to generic-api-key).
    Rule {
        id: "aws-secret",
        gitleaks: false,
        shape: Text,
        keywords: &["aws"],
        catches: "AWS secret access keys (40 characters) next to an `aws…secret`/`aws…key` name",
        patterns: &[p(
            r#"(?i)aws.{0,20}?(?:secret|key).{0,20}?["']?[ \t]*[:=][ \t]*["']?([A-Za-z0-9/+=]{40})\b"#,
            Always,
        )],
    },
    // No gitleaks rule: passwords given to commands.
    Rule {
        id: "cli-password",
        gitleaks: false,
        shape: Command,
        keywords: &[
            "--pass",
            "mysql",
            "mariadb",
            "sshpass",
            "mongo",
            "login",
            "redis-cli",
        ],
        catches: "`--password=VALUE`, `--password VALUE`; `-pVALUE` of mysql, mysqldump, mariadb (and `-p VALUE` there when it looks like a password: to mysql it is the database); `-p VALUE` of sshpass, mongo and `docker login`; `redis-cli -a VALUE`",
        patterns: &[
            p(
                concat!(
                    r"(?m)(?:^|[ \t])--(?:password|passwd|pass)(?:=|[ \t]+)",
                    arg!()
                ),
                Real,
            ),
            p(
                concat!(mysql!(), r#"(?:"([^"\r\n]+)"|'([^'\r\n]+)'|([^\s"'|;&]+))"#),
                Real,
            ),
            p(
                concat!(mysql!(), r"[ \t]+([^\s<>|;&\-][^\s|;&]*)"),
                LooksSecret,
            ),
            p(
                concat!(
                    r"\b(?:sshpass|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b[^\r\n|;&]*?[ \t]-p[ \t]*",
                    arg!()
                ),
                Real,
            ),
            p(
                concat!(
                    r"\b(?:docker|podman|buildah|helm|skopeo|oras|nerdctl)[ \t]+(?:registry[ \t]+)?login\b[^\r\n|;&]*?[ \t]-p[ \t]*",
                    arg!()
                ),
                Real,
            ),
            p(
                concat!(r"\bredis-cli\b[^\r\n|;&]*?[ \t]-a[ \t]+", arg!()),
                Real,
            ),
        ],
    },
    // No gitleaks rule: `~/.netrc` (curl, git, ftp).
    Rule {
        id: "netrc-password",
        gitleaks: false,
        shape: Text,
        keywords: &["password"],
        catches: "the password of a `.netrc` entry, `machine HOST login USER password PASSWORD` (on one line or several)",
        patterns: &[
            p(
                r"\bmachine[ \t\r\n]+(?:[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+|localhost|[0-9.]+)(?:[ \t\r\n]+(?:login|account|port)[ \t\r\n]+\S+)*[ \t\r\n]+password[ \t\r\n]+(\S+)",
                Real,
            ),
            p(
                r"\bdefault(?:[ \t\r\n]+(?:login|account)[ \t\r\n]+\S+)+[ \t\r\n]+password[ \t\r\n]+(\S+)",
                Real,
            ),
        ],
    },
    // No gitleaks rule: `~/.pgpass` (PostgreSQL's password file).
    Rule {
        id: "pgpass-password",
        gitleaks: false,
        shape: Text,
        keywords: &[],
        catches: "the password of a `.pgpass` line, `host:port:database:user:password`",
        patterns: &[p(
            r"(?m)^[+\- ]?(?:[ \t]*[0-9]+\t)?[ \t]*(?:[A-Za-z0-9_.\-]+|\*|\[[0-9A-Fa-f:]+\]):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:(\S+)[ \t]*\r?$",
            Real,
        )],
    },
    // No gitleaks rule: `~/.docker/config.json`.
    Rule {
        id: "docker-config-auth",
        gitleaks: false,
        shape: Text,
        keywords: &["\"auth\"", "token\""],
        catches: "docker `config.json` credentials: `\"auth\": \"<base64 of user:password>\"`, `identitytoken`, `registrytoken`",
        patterns: &[
            p(r#""auth"[ \t]*:[ \t]*"([A-Za-z0-9+/=]{8,})""#, DockerAuth),
            p(
                r#""(?:identitytoken|registrytoken)"[ \t]*:[ \t]*"([^"\s]{8,})""#,
                Real,
            ),
        ],
    },
    // No gitleaks rule (gitleaks' kubernetes-secret-yaml is about Secret
    // manifests): a kubeconfig's user credentials. `client-certificate-data`
    // and `certificate-authority-data` are public and left alone.
    Rule {
        id: "kubeconfig-credential",
        gitleaks: false,
        shape: Text,
        keywords: &["client-key-data", "token:"],
        catches: "a kubeconfig's `client-key-data:` and `token:` (also `id-token:`, `refresh-token:`) values",
        patterns: &[
            p(
                r#"(?m)^[ \t]*(?:-[ \t]+)?client-key-data:[ \t]*["']?([A-Za-z0-9+/=]{16,})"#,
                Always,
            ),
            p(
                r#"(?m)^[ \t]*(?:-[ \t]+)?(?:token|id-token|refresh-token|access-token):[ \t]*["']?([A-Za-z0-9._~+/=:\-]{8,})"#,
                YamlValue,
            ),
        ],
    },
    // No gitleaks rule for these two shapes (generic-api-key takes neither
    // a quoted value with spaces nor a plain word): a value after a name
    // ending in password, and a shell `…PASSWORD=value`.
    Rule {
        id: "password-assignment",
        gitleaks: false,
        shape: Text,
        keywords: &["pass", "pwd"],
        catches: "a quoted value after a name ending in `password`/`passwd`/`pwd`/`_pass` (spaces, `$` and symbols included: `password = \"p@ss w0rd$x\"`, `DB_PASSWORD='a b$c'`), and any value of a shell `…PASSWORD=value`/`…_PWD=value` (`PGPASSWORD=…`, `MYSQL_PWD=…`)",
        patterns: &[
            p(
                r#"(?i)\b[A-Za-z0-9_.\-]*(?:passw(?:or)?d|pwd|_pass)["']?[ \t]*(?::=|=>|[:=])[ \t]*(?:"([^"\r\n]{1,200})"|'([^'\r\n]{1,200})')"#,
                Real,
            ),
            p(
                r#"\b(?:[A-Z0-9_]*(?:PASSWORD|PASSWD)|[A-Z0-9_]*_(?:PWD|PASS))=([^\s"'`;&|]+)"#,
                Real,
            ),
        ],
    },
    Rule {
        id: "generic-api-key",
        gitleaks: true,
        shape: Text,
        keywords: &[
            "secret",
            "token",
            "pass",
            "pwd",
            "api",
            "key",
            "credential",
            "creds",
        ],
        catches: "the value of `name = value` / `name: value` whose name says secret, token, password, api key, private key, access key or credentials, when the value looks like one (a digit or a symbol, or 16+ characters) and not like code (a call, a path, a reference, a member, a number, an identifier, a version)",
        patterns: &[p(
            concat!(
                r#"(?i)\b"#,
                secret_key!(),
                r#"["']?[ \t]*(?::=|=>|[:=])[ \t]*(?:"([^"\s]{6,200})"|'([^'\s]{6,200})'|([^\s"'`,;#()\[\]{}<>:=][^\s"'`,;#)\[\]{}<>]{5,}))"#
            ),
            LooksSecret,
        )],
    },
    // No gitleaks rule: gitleaks measures entropy only on its keyword rules.
    // This one needs no keyword, only an assignment or quotes around a long
    // random-looking string.
    Rule {
        id: "high-entropy-string",
        gitleaks: false,
        shape: Text,
        keywords: &[],
        catches: "a quoted or assigned string of 32+ base64/base64url characters with high entropy (see below)",
        patterns: &[p(
            r#"["'`]([A-Za-z0-9+/=_\-]{32,})["'`]|(?m:^|[\s,;{(])[A-Za-z_][A-Za-z0-9_.\-]*["']?[ \t]*(?::=|=>|[:=])[ \t]*([A-Za-z0-9+/=_\-]{32,})"#,
            Entropy,
        )],
    },
];

impl Check {
    /// Whether the secret `v` a pattern found passes this check.
    pub fn passes(self, v: &str) -> bool {
        match self {
            Always => true,
            Real => !placeholder(v),
            LooksSecret => looks_secret(v),
            Mixed => {
                v.bytes().any(|b| b.is_ascii_digit())
                    && v.bytes().any(|b| b.is_ascii_uppercase())
                    && v.bytes().any(|b| b.is_ascii_lowercase())
            }
            DigitAndLetter => {
                v.bytes().any(|b| b.is_ascii_digit()) && v.bytes().any(|b| b.is_ascii_alphabetic())
            }
            UserPass => v
                .split_once(':')
                .is_some_and(|(_, pass)| !pass.is_empty() && !placeholder(pass)),
            PemKey => pem_private_key(v),
            JwtB64 => decode_base64(v).is_some_and(|d| d.starts_with(b"eyJ") && d.contains(&b'.')),
            DockerAuth => decode_base64(v).is_some_and(|d| d.contains(&b':')),
            YamlValue => {
                !placeholder(v)
                    && !code(v)
                    && !["null", "true", "false", "~", "none"]
                        .contains(&v.to_ascii_lowercase().as_str())
            }
            Entropy => high_entropy(v),
        }
    }
}

/// A stand-in rather than a value: a variable reference, a template, an
/// `<angle-bracketed>` name, a format directive, or one repeated character
/// (`***`, `xxxx`).
fn placeholder(v: &str) -> bool {
    let v = v.trim();
    let Some(first) = v.chars().next() else {
        return true;
    };
    v.starts_with('$')
        || v.starts_with("{{")
        || v.starts_with("%(")
        || v == "%s"
        || (v.starts_with('<') && v.ends_with('>'))
        || v.chars().all(|c| c == first)
}

/// The value of `password = ...`: a secret has a digit or a symbol, or is
/// long; `password: string` or `token = getToken()` are code, not secrets.
fn looks_secret(v: &str) -> bool {
    if code(v) {
        return false;
    }
    let symbols = v
        .chars()
        .any(|c| !c.is_ascii_alphanumeric() && c != '_' && c != '.');
    v.chars().any(|c| c.is_ascii_digit()) || symbols || v.len() >= 16
}

/// A value that is code or data rather than a secret: a call
/// (`getToken()`), a path (`Credentials::new`, `a->b`), a reference or
/// pointer (`&creds`), a macro (`format!`), a variable or template (`$x`,
/// `{x}`, `<x>`), a member (`opts.token`), an identifier (`max_tokens`,
/// `API_KEY`), a number (`45_000`) or a version (`^4.0.0`).
fn code(v: &str) -> bool {
    let member = v.contains('.')
        && v.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    let number = v
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | ','));
    let macro_name = v.strip_suffix('!').is_some_and(|m| {
        m.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    let identifier = v.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        || v.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    let digits = v.trim_start_matches(['^', '~', '>', '<', '=', 'v']);
    let version = digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.contains('.')
        && digits
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    v.contains('(')
        || v.contains("::")
        || v.contains("->")
        || v.starts_with(['$', '{', '<', '&', '*', '!'])
        || macro_name
        || member
        || number
        || identifier
        || version
}

/// Standard or URL-safe base64, padded or not, with line breaks allowed.
/// Only the longest prefix of whole 4-character groups is decoded, so a
/// value cut short still decodes.
fn decode_base64(v: &str) -> Option<Vec<u8>> {
    let clean: String = v
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '=')
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    let whole = clean.len() / 4 * 4;
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(&clean[..whole])
        .ok()
}

/// Base64 whose decoded head is a PEM private key header.
fn pem_private_key(v: &str) -> bool {
    // The header is in the first 60 or so decoded bytes.
    let head: String = v.chars().take(120).collect();
    decode_base64(&head).is_some_and(|d| {
        let text = String::from_utf8_lossy(&d);
        text.starts_with("-----BEGIN") && text.contains("PRIVATE KEY")
    })
}

/// The entropy rule's test, for a string of 32+ base64/base64url characters:
/// - not hex (with or without dashes): git commit ids, digests and UUIDs
///   are everywhere in transcripts and are not secrets;
/// - not a subresource-integrity hash (`sha512-…`), a base64 image or PDF,
///   or a base64 PEM that is not a private key (a certificate);
/// - not path-like (4+ slashes);
/// - a digit and a letter;
/// - not made of words: less than half of it in runs like `Word` or `word`
///   of 3+ letters (identifiers such as `AbstractFactoryBean2Impl` are);
/// - Shannon entropy of at least [`ENTROPY_BITS`] bits per character.
pub fn high_entropy(v: &str) -> bool {
    let b = v.as_bytes();
    if b.len() < 32 || b.iter().all(|c| c.is_ascii_hexdigit() || *c == b'-') {
        return false;
    }
    const NOT_SECRET: &[&str] = &[
        "sha1-",
        "sha256-",
        "sha384-",
        "sha512-",
        "iVBORw0KGgo",
        "/9j/",
        "R0lGOD",
        "JVBERi0",
    ];
    if NOT_SECRET.iter().any(|p| v.starts_with(p)) {
        return false;
    }
    if v.starts_with("LS0tLS1CRUdJTi") {
        return pem_private_key(v);
    }
    if b.iter().filter(|c| **c == b'/').count() >= 4
        || !b.iter().any(u8::is_ascii_digit)
        || !b.iter().any(u8::is_ascii_alphabetic)
    {
        return false;
    }
    wordiness(b) < 0.5 && shannon(b) >= ENTROPY_BITS
}

/// The entropy threshold, in bits per character. Random base64 of 32
/// characters has about 4.6 (its maximum is 5); a 40-character hex commit id
/// about 3.7 (hex cannot exceed 4); English-like identifiers about 4.
pub const ENTROPY_BITS: f64 = 4.0;

/// Shannon entropy of `b`, in bits per byte.
fn shannon(b: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for c in b {
        counts[usize::from(*c)] += 1;
    }
    let n = b.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// The share of `b` in word-like runs: an optional capital then 3+ lower-case
/// letters.
fn wordiness(b: &[u8]) -> f64 {
    let mut covered = 0usize;
    let mut i = 0usize;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_uppercase() {
            i += 1;
        }
        let lower_start = i;
        while i < b.len() && b[i].is_ascii_lowercase() {
            i += 1;
        }
        if i - lower_start >= 3 {
            covered += i - start;
        }
        if i == start {
            i += 1;
        }
    }
    covered as f64 / b.len() as f64
}
