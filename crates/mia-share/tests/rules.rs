#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Every built-in rule has fixtures both ways: a secret it must redact
//! (wherever it sits in a payload: a message, a tool call's arguments, a
//! tool's output, a diff) and a look-alike it must leave alone. Without its
//! rule, each positive fixture leaks (or is caught by the backup named).

use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};

use base64::Engine as _;
use mia_protocol::{
    Redaction, RedactionPlace, SHARE_PAYLOAD_VERSION, SharePayload, SharedDiff, SharedMessage,
    SharedPart, SharedSession,
};
use mia_share::{RULES, RedactOptions, Redactor, title_from};

/// A secret a rule must redact.
struct Positive {
    id: &'static str,
    text: String,
    /// What must not be anywhere in the payload afterwards.
    gone: Vec<String>,
    /// The rule that still redacts it when `id` is removed (None: it leaks).
    backup: Option<&'static str>,
}

fn pos(id: &'static str, text: impl Into<String>, gone: &[&str]) -> Positive {
    Positive {
        id,
        text: text.into(),
        gone: gone.iter().map(|g| g.to_string()).collect(),
        backup: None,
    }
}

fn backed(mut p: Positive, backup: &'static str) -> Positive {
    p.backup = Some(backup);
    p
}

/// A deterministic random-looking string of `n` characters of `alphabet`.
fn rnd(seed: u64, n: usize, alphabet: &str) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            chars[((x >> 33) as usize) % chars.len()]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

const PEM_KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAr1PLANTEDkeyBODY0123456789abcdef\n-----END RSA PRIVATE KEY-----\n";
const PEM_CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEPUBLICcert0123456789abcdef\n-----END CERTIFICATE-----\n";

/// A wrapped key: `prefix + key` cut at `column`.
fn wrapped(prefix: &str, key: &str, line_prefix: &str, column: usize) -> (String, Vec<String>) {
    let whole = format!("{prefix}{key}");
    let (first, rest) = whole.split_at(column);
    let text = format!("{line_prefix}{first}\n{line_prefix}{rest}\nnext line");
    let head = first[prefix.len()..].to_string();
    (text, vec![head, rest.to_string()])
}

fn token_positives(v: &mut Vec<Positive>) {
    let ant = format!("sk-ant-api03-{}AA", rnd(1, 93, ALNUM));
    // Without its rule, an Anthropic key is still an `sk-` key.
    v.push(backed(
        pos(
            "anthropic-api-key",
            format!("export ANTHROPIC_API_KEY={ant}"),
            &[&ant],
        ),
        "openai-api-key",
    ));
    let admin = format!("sk-ant-admin01-{}", rnd(2, 40, ALNUM));
    v.push(backed(
        pos(
            "anthropic-admin-api-key",
            format!("with {admin} as admin"),
            &[&admin],
        ),
        "anthropic-api-key",
    ));
    let oai = format!("sk-proj-{}", rnd(3, 48, ALNUM));
    v.push(pos(
        "openai-api-key",
        format!("the key {oai} works"),
        &[&oai],
    ));
    let legacy = format!("sk-{}", rnd(4, 48, ALNUM));
    v.push(pos(
        "openai-api-key",
        format!("use {legacy} here"),
        &[&legacy],
    ));
    v.push(pos(
        "gcp-api-key",
        "maps?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=1",
        &["AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"],
    ));
    for (id, prefix, seed) in [
        ("github-pat", "ghp_", 5),
        ("github-oauth", "gho_", 6),
        ("github-app-token", "ghs_", 7),
        ("github-app-token", "ghu_", 8),
        ("github-refresh-token", "ghr_", 9),
    ] {
        let t = format!("{prefix}{}", rnd(seed, 36, ALNUM));
        v.push(pos(id, format!("pushed with {t} yesterday"), &[&t]));
    }
    let fg = format!("github_pat_11{}_{}", rnd(10, 20, ALNUM), rnd(11, 59, ALNUM));
    v.push(pos(
        "github-fine-grained-pat",
        format!("cloned with {fg}"),
        &[&fg],
    ));
    for (id, prefix, seed, alphabet) in [
        ("gitlab-pat", "glpat-", 12, ALNUM),
        ("gitlab-ptt", "glptt-", 13, HEX),
        ("gitlab-deploy-token", "gldt-", 14, ALNUM),
        ("gitlab-runner-authentication-token", "glrt-", 15, ALNUM),
        ("npm-access-token", "npm_", 16, ALNUM),
        ("vault-service-token", "hvs.", 17, ALNUM),
        ("perplexity-api-key", "pplx-", 18, ALNUM),
        ("linear-api-key", "lin_api_", 19, ALNUM),
        ("shopify-access-token", "shpat_", 20, HEX),
    ] {
        let n = match id {
            "perplexity-api-key" => 48,
            "linear-api-key" => 40,
            "shopify-access-token" => 32,
            _ => 40,
        };
        let t = format!("{prefix}{}", rnd(seed, n, alphabet));
        v.push(pos(id, format!("the token is {t}."), &[&t]));
    }
    let dop = format!("dop_v1_{}", rnd(21, 64, HEX));
    v.push(pos("digitalocean-pat", format!("DO={dop}"), &[&dop]));
    let dapi = format!("dapi{}", rnd(22, 32, HEX));
    v.push(pos(
        "databricks-api-token",
        format!("using {dapi} now"),
        &[&dapi],
    ));
    let hf = format!(
        "hf_{}",
        rnd(
            23,
            34,
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        )
    );
    v.push(pos(
        "huggingface-access-token",
        format!("login({hf})"),
        &[&hf],
    ));
    let sg = format!("SG.{}.{}", rnd(24, 22, ALNUM), rnd(25, 43, ALNUM));
    v.push(pos("sendgrid-api-token", format!("SENDGRID={sg}"), &[&sg]));
    let pypi = format!("pypi-AgEIcHlwaS5vcmc{}", rnd(26, 60, ALNUM));
    v.push(pos(
        "pypi-upload-token",
        format!("uploaded with {pypi}"),
        &[&pypi],
    ));
    let age = format!(
        "AGE-SECRET-KEY-1{}",
        rnd(27, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
    );
    v.push(pos(
        "age-secret-key",
        format!("# created\n{age}\n"),
        &[&age],
    ));
    let glsa = format!("glsa_{}_{}", rnd(28, 32, ALNUM), rnd(29, 8, HEX));
    v.push(pos(
        "grafana-service-account-token",
        format!("grafana {glsa}"),
        &[&glsa],
    ));
    let stripe = format!("sk_live_{}", rnd(30, 24, ALNUM));
    let rk = format!("rk_test_{}", rnd(31, 24, ALNUM));
    v.push(pos(
        "stripe-access-token",
        format!("{stripe} and {rk}"),
        &[&stripe, &rk],
    ));
    v.push(pos(
        "aws-access-token",
        "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE",
        &["AKIAIOSFODNN7EXAMPLE"],
    ));
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    v.push(pos("jwt", format!("the header carries {jwt}"), &[jwt]));
    let jwt64 = b64(jwt);
    v.push(pos("jwt-base64", format!("blob {jwt64} end"), &[&jwt64]));
}

fn slack_positives(v: &mut Vec<Positive>) {
    let bot = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
    v.push(pos(
        "slack-bot-token",
        format!("the bot uses {bot}"),
        &[bot],
    ));
    let user = "xoxp-123456789012-123456789012-123456789012-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d";
    v.push(pos("slack-user-token", format!("t {user}"), &[user]));
    let app = "xapp-1-A01234ABCDE-1234567890123-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b";
    v.push(pos(
        "slack-app-token",
        format!("socket mode with {app}"),
        &[app],
    ));
    let ws = "xoxa-2-1234567890-abcdef0123456789";
    v.push(pos(
        "slack-legacy-workspace-token",
        format!("t {ws}"),
        &[ws],
    ));
    let legacy = "xoxs-1234567890-1234567890-1234567890-abcdef0123";
    v.push(pos("slack-legacy-token", format!("t {legacy}"), &[legacy]));
    let cfg = format!("xoxe.xoxp-1-{}", rnd(40, 60, ALNUM));
    // Without their rules, these still hold a user token's prefix.
    v.push(backed(
        pos("slack-config-access-token", format!("t {cfg}"), &[&cfg]),
        "slack-user-token",
    ));
    let refresh = format!("xoxe-1-{}", rnd(41, 60, ALNUM));
    v.push(backed(
        pos(
            "slack-config-refresh-token",
            format!("t {refresh}"),
            &[&refresh],
        ),
        "slack-user-token",
    ));
    let hook = "https://hooks.slack.com/services/T00000000/B00000000/PLANTEDxxxxxxxxxxxxxxxxx";
    v.push(pos(
        "slack-webhook-url",
        format!("curl -X POST {hook} -d '{{}}'"),
        &["T00000000/B00000000/PLANTEDxxxxxxxxxxxxxxxxx"],
    ));
}

fn command_positives(v: &mut Vec<Positive>) {
    v.push(pos(
        "curl-auth-user",
        "curl -u admin:s3cretPass https://api.example.com/x",
        &["s3cretPass"],
    ));
    v.push(pos(
        "curl-auth-user",
        "curl -sS --user 'deploy:p@ss w0rd' https://api.example.com",
        &["p@ss w0rd"],
    ));
    v.push(pos(
        "curl-auth-user",
        "curl -s \\\n  --user=ci:tok3nValue \\\n  https://api.example.com",
        &["tok3nValue"],
    ));
    v.push(pos(
        "curl-auth-header",
        "curl -H \"Authorization: 9f8e7d6c5b4a3210fedc\" https://x.example",
        &["9f8e7d6c5b4a3210fedc"],
    ));
    v.push(backed(
        pos(
            "curl-auth-header",
            "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' https://x.example",
            &["dXNlcjpwYXNzd29yZA"],
        ),
        "http-basic-auth",
    ));
    v.push(backed(
        pos(
            "curl-auth-header",
            "curl --header \"X-Api-Key: abcd1234efgh5678\" https://x.example",
            &["abcd1234efgh5678"],
        ),
        "generic-api-key",
    ));
    v.push(pos(
        "http-basic-auth",
        "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWxpY2U6czNjcjN0\r\n",
        &["YWxpY2U6czNjcjN0"],
    ));
    v.push(pos(
        "http-basic-auth",
        "wget --header='Authorization: Basic Ym9iOmh1bnRlcjI=' https://x.example",
        &["Ym9iOmh1bnRlcjI"],
    ));
    v.push(pos(
        "http-basic-auth",
        r#"fetch(u, {headers: {"Authorization": "Basic Y2k6cGlwZWxpbmU="}})"#,
        &["Y2k6cGlwZWxpbmU"],
    ));
    v.push(pos(
        "bearer-token",
        "GET /v1/me HTTP/1.1\nAuthorization: Bearer abcDEF123456ghiJKL789",
        &["abcDEF123456ghiJKL789"],
    ));
    v.push(pos(
        "http-cookie",
        "< HTTP/2 200\n< set-cookie: session=9f8e7d6c5b4a3210; Path=/; HttpOnly\n",
        &["9f8e7d6c5b4a3210"],
    ));
    v.push(pos(
        "http-cookie",
        "> Cookie: _gh_sess=PLANTEDsess; logged_in=yes\n",
        &["PLANTEDsess"],
    ));
    v.push(pos(
        "http-cookie",
        "curl -b 'sid=PLANTEDcookie' https://x.example",
        &["PLANTEDcookie"],
    ));
    v.push(pos(
        "http-cookie",
        r#"headers = {"Cookie": "sid=Zx81kLplanted"}"#,
        &["Zx81kLplanted"],
    ));
    for (text, secret) in [
        ("mysql -u root -pS3cr3t! mydb", "S3cr3t!"),
        (
            "mysqldump -uroot -p'p@ss w0rd' shop > shop.sql",
            "p@ss w0rd",
        ),
        ("mariadb -h db -u app -p hunter2 shop", "hunter2"),
        ("mysql --password=letmein -e 'select 1'", "letmein"),
        ("mysqladmin --password Plain3Pass status", "Plain3Pass"),
        ("mongosh --host h -u admin -p Secr3tPw", "Secr3tPw"),
        ("sshpass -p 'open sesame' ssh deploy@host", "open sesame"),
        (
            "docker login -u bob -p dckr_pat_abc123 registry.example.com",
            "dckr_pat_abc123",
        ),
        ("redis-cli -h cache -a R3disPass ping", "R3disPass"),
        (
            "mysql -h db \\\n  -u root \\\n  -pContinu3d shop",
            "Continu3d",
        ),
    ] {
        v.push(pos("cli-password", text, &[secret]));
    }
}

fn file_positives(v: &mut Vec<Positive>) {
    v.push(pos(
        "private-key",
        format!("cat id_rsa\n{PEM_KEY}"),
        &["r1PLANTEDkeyBODY"],
    ));
    let key64 = b64(PEM_KEY);
    v.push(pos(
        "private-key-base64",
        format!("the key is {key64} (base64)"),
        &[&key64[20..]],
    ));
    // In an assignment, the entropy rule takes a base64 private key too.
    v.push(backed(
        pos(
            "private-key-base64",
            format!("apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: {}\n  tls.key: {key64}\n", b64(PEM_CERT)),
            &[&key64[20..]],
        ),
        "high-entropy-string",
    ));
    v.push(backed(
        pos(
            "private-key-base64",
            format!("users:\n- name: dev\n  user:\n    client-certificate-data: {}\n    client-key-data: {key64}\n", b64(PEM_CERT)),
            &[&key64[20..]],
        ),
        "kubeconfig-credential",
    ));
    v.push(pos(
        "kubeconfig-credential",
        "users:\n- name: dev\n  user:\n    token: PLANTEDkube\n",
        &["PLANTEDkube"],
    ));
    let not_pem = b64("raw PLANTED");
    v.push(pos(
        "kubeconfig-credential",
        format!("  user:\n    client-key-data: {not_pem}\n"),
        &[&not_pem],
    ));
    v.push(pos(
        "netrc-password",
        "machine api.github.com login octocat password Gh0stPass\n",
        &["Gh0stPass"],
    ));
    v.push(pos(
        "netrc-password",
        "machine example.com\n  login bob\n  password s3cret-netrc\n",
        &["s3cret-netrc"],
    ));
    v.push(pos(
        "netrc-password",
        "default login anonymous password guest-PLANTED\n",
        &["guest-PLANTED"],
    ));
    v.push(pos(
        "pgpass-password",
        "localhost:5432:mydb:postgres:Pg-Pass.123\n",
        &["Pg-Pass.123"],
    ));
    v.push(pos(
        "pgpass-password",
        "*:*:*:replicator:r3pl!cate",
        &["r3pl!cate"],
    ));
    let auth = b64("bob:ghcrPLANTED1");
    v.push(pos(
        "docker-config-auth",
        format!(
            "{{\n  \"auths\": {{\n    \"ghcr.io\": {{\n      \"auth\": \"{auth}\"\n    }}\n  }}\n}}"
        ),
        &[&auth],
    ));
    v.push(pos(
        "docker-config-auth",
        r#"{"auths": {"x.io": {"identitytoken": "PLANTEDidentity"}}}"#,
        &["PLANTEDidentity"],
    ));
    v.push(pos(
        "url-password",
        "postgres://admin:hunter2pass@db.internal:5432/app",
        &["hunter2pass"],
    ));
    // The name says secret: generic-api-key is the backup.
    v.push(backed(
        pos(
            "aws-secret",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            &["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
        ),
        "generic-api-key",
    ));
}

fn assignment_positives(v: &mut Vec<Positive>) {
    v.push(pos(
        "password-assignment",
        r#"password = "p@ss w0rd$x""#,
        &["p@ss w0rd$x", "w0rd"],
    ));
    v.push(pos(
        "password-assignment",
        "DB_PASSWORD='a b$c'",
        &["a b$c"],
    ));
    v.push(pos(
        "password-assignment",
        "PGPASSWORD=hunter psql -h db -U app",
        &["hunter"],
    ));
    v.push(pos(
        "password-assignment",
        "export MYSQL_PWD=letmein",
        &["letmein"],
    ));
    v.push(pos(
        "password-assignment",
        r#"{"user": "bob", "password": "correct horse battery staple"}"#,
        &["correct horse"],
    ));
    v.push(pos(
        "generic-api-key",
        "API_SECRET=s3cr3t-Value!",
        &["s3cr3t-Value!"],
    ));
    v.push(pos(
        "generic-api-key",
        r#"{"api_key": "abc123def456"}"#,
        &["abc123def456"],
    ));
    v.push(pos(
        "generic-api-key",
        "client_secret: x9Y8z7W6v5",
        &["x9Y8z7W6v5"],
    ));
    let seed = rnd(50, 32, ALNUM);
    v.push(pos(
        "high-entropy-string",
        format!("signing = \"{seed}\""),
        &[&seed],
    ));
    let seed = rnd(51, 44, B64);
    v.push(pos(
        "high-entropy-string",
        format!("SESSION_SEED={seed}"),
        &[&seed],
    ));
    let seed = rnd(52, 40, ALNUM);
    v.push(pos(
        "high-entropy-string",
        format!("{{\"blob\": \"{seed}\"}}"),
        &[&seed],
    ));
}

/// Tokens across lines: wrapped at 76 or 80 columns (plain, in a read
/// tool's numbered output, in a diff) and split by a `\` continuation.
fn joined_positives(v: &mut Vec<Positive>) {
    let ant = format!("sk-ant-api03-{}AA", rnd(60, 93, ALNUM));
    let (text, gone) = wrapped("ANTHROPIC_API_KEY=", &ant, "", 76);
    v.push(backed(
        pos("anthropic-api-key", text, &[]),
        "openai-api-key",
    ));
    v.last_mut().unwrap().gone = gone;
    let (text, gone) = wrapped("KEY=", &ant, "     12\t", 80);
    v.push(backed(
        pos("anthropic-api-key", text, &[]),
        "openai-api-key",
    ));
    v.last_mut().unwrap().gone = gone;
    let ghp = format!("ghp_{}", rnd(61, 36, ALNUM));
    let (text, gone) = wrapped(&format!("{} token: ", "x".repeat(50)), &ghp, "+", 76);
    v.push(pos("github-pat", text, &[]));
    v.last_mut().unwrap().gone = gone;
    let (a, b) = ghp.split_at(20);
    v.push(pos(
        "github-pat",
        format!("echo {a}\\\n{b} | gh auth login --with-token"),
        &[&a[4..], b],
    ));
}

fn positives() -> Vec<Positive> {
    let mut v = Vec::new();
    token_positives(&mut v);
    slack_positives(&mut v);
    command_positives(&mut v);
    file_positives(&mut v);
    assignment_positives(&mut v);
    joined_positives(&mut v);
    v
}

/// Look-alikes: no rule may redact anything in them.
fn negatives() -> Vec<(&'static str, String)> {
    let sha = "3f786850e387550fdab836ed7e6dc881de23001b";
    let mut v: Vec<(&'static str, String)> = vec![
        ("private-key", format!("a certificate:\n{PEM_CERT}")),
        ("private-key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----".into()),
        ("private-key-base64", format!("  tls.crt: {}\n", b64(PEM_CERT))),
        ("private-key-base64", format!("    client-certificate-data: {}\n    certificate-authority-data: {}\n", b64(PEM_CERT), b64(PEM_CERT))),
        ("anthropic-admin-api-key", "sk-ant-admin01-short".into()),
        ("anthropic-api-key", "keys start with sk-ant- and are long".into()),
        ("openai-api-key", "pip install sk-learn-compatible-estimator-wrapper".into()),
        ("openai-api-key", "sk-short".into()),
        ("gcp-api-key", "keys look like AIzaSy…".into()),
        ("github-pat", "ghp_short123 is not a token".into()),
        ("github-fine-grained-pat", "tokens start with github_pat_".into()),
        ("github-oauth", "gho_abc".into()),
        ("github-app-token", "ghs_abc and ghu_".into()),
        ("github-refresh-token", "ghr_refresh".into()),
        ("gitlab-pat", "glpat-short".into()),
        ("gitlab-ptt", "glptt-abc".into()),
        ("gitlab-deploy-token", "gldt-abc".into()),
        ("gitlab-runner-authentication-token", "glrt-runner".into()),
        ("slack-config-access-token", "xoxe.xoxp-1".into()),
        ("slack-config-refresh-token", "xoxe-1-abc".into()),
        ("slack-bot-token", "xoxb-123".into()),
        ("slack-user-token", "xoxp-12".into()),
        ("slack-legacy-workspace-token", "xoxa-1".into()),
        ("slack-legacy-token", "xoxs-1".into()),
        ("slack-app-token", "Slack app tokens begin with xapp-1-".into()),
        ("slack-webhook-url", "see https://hooks.slack.com/services/ for webhooks".into()),
        ("stripe-access-token", "publishable pk_live_51HcDeFgHiJkLmNoPqRsTuVw is public".into()),
        ("aws-access-token", "AKIAIOSFODNN7EXAMPLEXYZ and AKIA alone".into()),
        ("jwt", "a JWT starts with eyJhbGciOi".into()),
        ("jwt-base64", "ZXlKhello".into()),
        ("npm-access-token", "npm_config_cache=/tmp/npm".into()),
        ("pypi-upload-token", "pypi-AgEIcHlwaS5vcmc".into()),
        ("huggingface-access-token", "from huggingface_hub import hf_hub_download".into()),
        ("sendgrid-api-token", "SG.v1.2".into()),
        ("digitalocean-pat", "dop_v1_abc".into()),
        ("vault-service-token", "hvs.short".into()),
        ("age-secret-key", "AGE-SECRET-KEY-1…".into()),
        ("shopify-access-token", "shpat_xyz".into()),
        ("databricks-api-token", "dapi_version=2".into()),
        ("perplexity-api-key", "pplx-api".into()),
        ("linear-api-key", "lin_api_key".into()),
        ("grafana-service-account-token", "glsa_token".into()),
        ("curl-auth-user", "curl -u \"$USER:$PASS\" https://x.example".into()),
        ("curl-auth-user", "curl -u admin: https://x.example".into()),
        ("curl-auth-header", "curl -H \"Authorization: Bearer $TOKEN\" https://x.example".into()),
        ("curl-auth-header", "curl -H 'Content-Type: application/json' https://x.example".into()),
        ("http-basic-auth", "Authorization: Basic <credentials>".into()),
        ("bearer-token", "Bearer authentication is a token scheme".into()),
        ("http-cookie", "const c = { cookie: req.headers.cookie };".into()),
        ("http-cookie", "curl -b cookies.txt https://x.example".into()),
        ("url-password", "postgres://admin:${DB_PASS}@db/app and https://example.com:8080/x".into()),
        ("aws-secret", "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}".into()),
        ("cli-password", "mkdir -p build/out && cp -p a b".into()),
        ("cli-password", "mysql -u root -p shop < dump.sql".into()),
        ("cli-password", "docker run -p 8080:80 nginx; ssh -p 2222 host".into()),
        ("cli-password", "docker login --password-stdin -u bob".into()),
        ("cli-password", "mysql -u root --password=$MYSQL_ROOT_PASSWORD".into()),
        ("netrc-password", "the machine learning password reset flow".into()),
        ("netrc-password", "machine example.com login bob\ndefault password is set".into()),
        ("pgpass-password", "localhost:5432:mydb:postgres\nsrc/main.c:12:5: error: x".into()),
        ("docker-config-auth", r#"{"auths": {"ghcr.io": {}}, "credsStore": "desktop", "auth": "required"}"#.into()),
        ("kubeconfig-credential", "    token: \"\"\n    token: null\n    token: ${{ secrets.TOKEN }}".into()),
        ("kubeconfig-credential", "        token: token.clone(),\n        token: String::new(),".into()),
        ("password-assignment", "password = getPassword()".into()),
        ("password-assignment", "DB_PASSWORD=$DB_PASSWORD; echo $PGPASSWORD".into()),
        ("password-assignment", r#"{"passwordPlaceholder": "Enter your password"}"#.into()),
        ("password-assignment", "function login(password: string) {}".into()),
        ("generic-api-key", "const token = getToken();".into()),
        ("generic-api-key", r#"{"token_type": "Bearer", "api_key": "string"}"#.into()),
        // Code, not secrets: paths, references, macros, members, numbers,
        // identifiers, versions.
        ("generic-api-key", "let creds = Credentials::new(x);\nfn f(credentials: &Credentials) {}".into()),
        ("generic-api-key", "let secret = format!(\"{x}\");\ntoken: lease.token,\nlet tokens = estimate_request(visible, 0);".into()),
        ("generic-api-key", r#"{ tokens: 45_000, "max_tokens" => "max_completion_tokens", "js-tokens": "^4.0.0" }"#.into()),
        ("high-entropy-string", format!("commit {sha}\n\"sha\": \"{sha}\"\nref = {sha}")),
        ("high-entropy-string", r#"id = "0a61a2f5-e21c-4573-a8cc-caa140b0e2ac""#.into()),
        ("high-entropy-string", r#"{"path": "src/components/HeaderNavigation2/index"}"#.into()),
        ("high-entropy-string", r#"name = "AbstractSingletonProxyFactoryBean2Impl""#.into()),
        ("high-entropy-string", r#""integrity": "sha512-Q2hlY2sgdGhhdCB0aGlzIGlzIG5vdCBhIHNlY3JldCBhdCBhbGwgMTIzNA==""#.into()),
        ("high-entropy-string", r#"checksum = "a5b9e1f0c2d34e6f8a7b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f""#.into()),
    ];
    // Joining lines: a short line is not wrapped, so its end and the next
    // line are not one token.
    v.push((
        "github-pat",
        "ends with ghp_abc\ndefghijklmnopqrstuvwxyz0123456789ABCD".into(),
    ));
    v
}

fn payload(parts: Vec<SharedPart>, diffs: Vec<SharedDiff>) -> SharePayload {
    SharePayload {
        version: SHARE_PAYLOAD_VERSION.into(),
        session: SharedSession {
            id: "s1".into(),
            title: "A session".into(),
            project: "app".into(),
            created_at: 1_764_000_000_000,
            updated_at: None,
            model: None,
            agent: None,
        },
        messages: vec![SharedMessage {
            id: "m1".into(),
            role: "assistant".into(),
            parts,
            metadata: None,
            created_at: 1_764_000_001_000,
        }],
        diffs,
    }
}

/// The text in each place a payload has strings: a message, a tool call's
/// arguments, a tool's output, a diff's patch.
fn placed(text: &str) -> Vec<SharePayload> {
    let patch = SharedDiff {
        file: "notes.txt".into(),
        status: "added".into(),
        additions: 1,
        deletions: 0,
        patch: text.into(),
        binary: false,
    };
    vec![
        payload(
            vec![SharedPart::Text {
                content: text.into(),
            }],
            vec![],
        ),
        payload(
            vec![SharedPart::ToolCall {
                call_id: "c1".into(),
                name: "bash".into(),
                args: serde_json::json!({"command": text, "nested": [{"x": text}]}),
            }],
            vec![],
        ),
        payload(
            vec![SharedPart::ToolResult {
                call_id: "c1".into(),
                name: "bash".into(),
                output: text.into(),
                is_error: false,
                duration_ms: None,
                omitted: false,
            }],
            vec![],
        ),
        payload(vec![], vec![patch]),
    ]
}

/// Which of `gone` is still in the serialized payload (as is or escaped).
fn leaked<'a>(p: &SharePayload, gone: &'a [String]) -> Vec<&'a str> {
    let json = serde_json::to_string(p).unwrap();
    gone.iter()
        .filter(|g| {
            let escaped = serde_json::to_string(g).unwrap();
            json.contains(g.as_str()) || json.contains(escaped.trim_matches('"'))
        })
        .map(String::as_str)
        .collect()
}

fn redactor() -> Redactor {
    Redactor::new(RedactOptions::default()).unwrap()
}

#[test]
fn every_rule_has_a_positive_and_a_negative_fixture() {
    let ids: BTreeSet<&str> = RULES.iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), RULES.len(), "a rule id is used twice");
    let pos: HashSet<&str> = positives().iter().map(|p| p.id).collect();
    let neg: HashSet<&str> = negatives().iter().map(|n| n.0).collect();
    for id in &ids {
        assert!(pos.contains(id), "{id} has no positive fixture");
        assert!(neg.contains(id), "{id} has no negative fixture");
    }
    for id in pos.iter().chain(&neg) {
        assert!(ids.contains(id), "fixture for unknown rule {id}");
    }
}

#[test]
fn each_positive_fixture_is_redacted_everywhere_and_listed_with_its_rule_id() {
    let r = redactor();
    for f in positives() {
        assert!(!f.gone.is_empty());
        for (where_, mut p) in placed(&f.text).into_iter().enumerate() {
            let found = r.redact(&mut p);
            let left = leaked(&p, &f.gone);
            assert!(
                left.is_empty(),
                "{} (place {where_}): {left:?} survived in {p:?}",
                f.id
            );
            assert!(
                found.iter().any(|x| x.kind == f.id),
                "{} (place {where_}) not listed: {found:?}\n{}",
                f.id,
                f.text
            );
            let json = serde_json::to_string(&p).unwrap();
            assert!(json.contains(&format!("[REDACTED:{}]", f.id)), "{json}");
            for x in &found {
                for g in &f.gone {
                    assert!(
                        !x.hint.contains(g.as_str()),
                        "the hint {} reveals {g}",
                        x.hint
                    );
                }
            }
        }
    }
}

#[test]
fn each_positive_fixture_needs_its_rule() {
    let mut wrong = Vec::new();
    let all = redactor();
    for f in positives() {
        let r = all.clone().without(f.id);
        let mut p = placed(&f.text).remove(0);
        let found = r.redact(&mut p);
        assert!(!found.iter().any(|x| x.kind == f.id));
        let leaks = !leaked(&p, &f.gone).is_empty();
        let kinds: Vec<&str> = found.iter().map(|x| x.kind.as_str()).collect();
        let ok = match f.backup {
            None => leaks,
            Some(b) => !leaks && kinds.contains(&b),
        };
        if !ok {
            wrong.push(format!(
                "{} (backup {:?}): leaks {leaks}, found {kinds:?}: {}",
                f.id, f.backup, f.text
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn each_negative_fixture_is_left_alone() {
    let r = redactor();
    for (id, text) in negatives() {
        for (where_, mut p) in placed(&text).into_iter().enumerate() {
            let before = p.clone();
            let found = r.redact(&mut p);
            assert!(found.is_empty(), "{id} (place {where_}): {found:?}\n{text}");
            assert_eq!(p, before);
        }
    }
}

/// The session's title is the cut of its first message: a message with a
/// long key near its start leaves the key's first characters in the title,
/// too few for any rule. The title is cut again from the redacted message.
#[test]
fn a_title_cut_from_a_key_is_cut_again_from_the_redacted_message() {
    let key = format!("sk-ant-api03-{}AA", rnd(70, 93, ALNUM));
    let first = format!("Please check why the deploy fails with key {key} today");
    let title = title_from(&first);
    assert!(
        title.ends_with('…') && title.contains(&key[..10]),
        "{title}"
    );
    assert!(!title.contains(&key[..20]), "{title}");
    let mut p = payload(vec![], vec![]);
    p.session.title = title.clone();
    p.messages[0].role = "user".into();
    p.messages[0].parts = vec![SharedPart::Text { content: first }];
    let found = redactor().redact(&mut p);
    let SharedPart::Text { content } = &p.messages[0].parts[0] else {
        panic!()
    };
    assert_eq!(p.session.title, title_from(content));
    assert!(!p.session.title.contains("sk-ant"), "{}", p.session.title);
    assert!(
        p.session
            .title
            .starts_with("Please check why the deploy fails with key [RED"),
        "{}",
        p.session.title
    );
    assert!(
        found
            .iter()
            .any(|f| f.place == RedactionPlace::Title && f.kind == "anthropic-api-key"),
        "{found:?}"
    );
    let json = serde_json::to_string(&p).unwrap();
    assert!(!json.contains(&key[..10]), "{json}");
}

/// When the message the title was cut from is not shared (left out in the
/// preview), the title's cut end is still recognised as a key's start.
#[test]
fn a_cut_title_without_its_message_has_its_cut_key_redacted() {
    let key = format!("ghp_{}", rnd(71, 36, ALNUM));
    let title = title_from(&format!("Why does {key} fail on the CI runner today"));
    // The cut leaves less than a whole token: no rule matches the title.
    let mut p = payload(vec![], vec![]);
    p.session.title = title.clone();
    let found = redactor().redact(&mut p);
    assert!(
        !p.session.title.contains(&key[4..20]),
        "{}",
        p.session.title
    );
    assert!(
        found
            .iter()
            .any(|f: &Redaction| f.place == RedactionPlace::Title && f.kind == "github-pat"),
        "{found:?}"
    );
    // An ordinary cut title is left as it is.
    let mut p = payload(vec![], vec![]);
    p.session.title =
        title_from("Refactor the session store so that compaction never loses messages again");
    let before = p.session.title.clone();
    assert!(redactor().redact(&mut p).is_empty());
    assert_eq!(p.session.title, before);
}

/// Redaction is linear-ish: a 5 MB payload of transcript-like text with
/// secrets sprinkled in takes well under a few seconds, even unoptimized.
#[test]
fn a_five_megabyte_payload_is_redacted_quickly() {
    let chunk = format!(
        "I'll run the tests now.\n```\n$ cargo test -p app\n   Compiling app v0.1.0 (/work/app)\n    Finished `test` profile in 3.2s\ncommit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: Ann <ann@example.com>\n```\nconst config = {{ retries: 3, url: \"https://api.example.com/v1/items\" }};\nexport TOKEN_TTL=3600 # seconds, the token = refreshed later\n{}\n",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation. ".repeat(3)
    );
    let secret = format!("ghp_{}", rnd(80, 36, ALNUM));
    let mut parts = Vec::new();
    let mut size = 0;
    let mut i = 0;
    while size < 5_000_000 {
        let mut content = chunk.repeat(20);
        if i % 10 == 0 {
            content.push_str(&format!("token: {secret}\n"));
        }
        size += content.len();
        parts.push(if i % 2 == 0 {
            SharedPart::Text { content }
        } else {
            SharedPart::ToolResult {
                call_id: format!("c{i}"),
                name: "bash".into(),
                output: content,
                is_error: false,
                duration_ms: None,
                omitted: false,
            }
        });
        i += 1;
    }
    let mut p = payload(parts, vec![]);
    let r = redactor();
    let start = Instant::now();
    let found = r.redact(&mut p);
    let took = start.elapsed();
    eprintln!("5 MB: {} redactions in {took:?}", found.len());
    assert!(!serde_json::to_string(&p).unwrap().contains(&secret));
    assert!(
        found.iter().all(|f| f.kind == "github-pat"),
        "{:?}",
        found.iter().find(|f| f.kind != "github-pat")
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// docs/sharing.md's table names every rule.
#[test]
fn the_docs_list_every_rule() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/sharing.md"
    ))
    .unwrap();
    for r in RULES {
        assert!(
            docs.contains(&format!("| `{}` |", r.id)),
            "{} is not in docs/sharing.md",
            r.id
        );
    }
}
