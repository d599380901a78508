//! Network clients (`curl`, `wget`, `scp`, `rsync`, `sftp`) read by their
//! own option grammar: the URLs they connect to, the local files they send,
//! read and write, and options that redirect requests.

use super::{Hazard, program_name};
/// What a network client (`curl`, `wget`, `scp`, `rsync`) was asked to do,
/// read with its own grammar.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Net {
    /// Every URL it will connect to, as the client reads it (`http://` added to scheme-less hosts).
    pub urls: Vec<String>,
    /// Local files it sends (`-d @f`, `-T f`, `-F x=@f`, `--post-file f`, a remote destination).
    pub uploads: Vec<String>,
    /// Local files it writes (`-o f`, `-c jar`).
    pub writes: Vec<String>,
    /// Local files it reads (certificates, netrc).
    pub reads: Vec<String>,
    /// Options that change where requests go or read options from a file.
    pub hazards: Vec<Hazard>,
}

const CURL_REQ_SHORT: &str = "dFToHXuAebcxUKwmrEyYzDQPCt";
const CURL_REQ_LONG: &[&str] = &[
    "data",
    "data-ascii",
    "data-binary",
    "data-raw",
    "data-urlencode",
    "json",
    "form",
    "form-string",
    "upload-file",
    "output",
    "header",
    "request",
    "user",
    "user-agent",
    "referer",
    "cookie",
    "cookie-jar",
    "proxy",
    "proxy-user",
    "connect-to",
    "resolve",
    "config",
    "write-out",
    "max-time",
    "connect-timeout",
    "range",
    "cert",
    "key",
    "cacert",
    "capath",
    "retry",
    "retry-delay",
    "retry-max-time",
    "speed-time",
    "speed-limit",
    "limit-rate",
    "time-cond",
    "url",
    "output-dir",
    "dump-header",
    "trace",
    "trace-ascii",
    "stderr",
    "interface",
    "local-port",
    "dns-servers",
    "doh-url",
    "oauth2-bearer",
    "unix-socket",
    "abstract-unix-socket",
    "proto",
    "proto-redir",
    "max-filesize",
    "max-redirs",
    "netrc-file",
    "noproxy",
    "pinnedpubkey",
    "preproxy",
    "proxy-header",
    "quote",
    "expect100-timeout",
    "keepalive-time",
    "variable",
    "url-query",
    "ciphers",
    "tls-max",
    "pubkey",
    "mail-from",
    "mail-rcpt",
    "mail-auth",
    "login-options",
    "socks4",
    "socks4a",
    "socks5",
    "socks5-hostname",
    "ftp-port",
    "ftp-method",
    "ftp-account",
    "aws-sigv4",
    "etag-save",
    "etag-compare",
    "alt-svc",
    "hsts",
    "request-target",
    "continue-at",
    "create-file-mode",
    "key-type",
    "cert-type",
    "engine",
    "crlfile",
    "random-file",
    "egd-file",
    "sasl-authzid",
    "service-name",
    "proxy-cacert",
    "proxy-cert",
    "proxy-key",
    "happy-eyeballs-timeout-ms",
];

/// Split `-dVALUE` / `-d VALUE` / `--data VALUE` / `--data=VALUE` style
/// arguments of a client whose option list is only partly known: unknown
/// options are taken as flags (a value mistaken for an operand is judged as
/// a URL, the stricter reading).
fn client_args<'w>(
    words: &'w [String],
    req_short: &str,
    req_long: &[&str],
    eq_long: bool,
) -> (Vec<(String, Option<String>)>, Vec<&'w str>) {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        if w == "--" {
            operands.extend(words[i..].iter().map(String::as_str));
            break;
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) if eq_long => (n, Some(v.to_string())),
                _ => (body, None),
            };
            if req_long.contains(&name) {
                let v = attached.or_else(|| {
                    let v = words.get(i).cloned();
                    i += 1;
                    v
                });
                opts.push((format!("--{name}"), v));
            } else {
                opts.push((format!("--{name}"), attached));
            }
            continue;
        }
        if w.len() > 1 && w.starts_with('-') {
            for (k, c) in w[1..].char_indices() {
                if req_short.contains(c) {
                    let rest = &w[1 + k + c.len_utf8()..];
                    let v = if rest.is_empty() {
                        let v = words.get(i).cloned();
                        i += 1;
                        v
                    } else {
                        Some(rest.to_string())
                    };
                    opts.push((format!("-{c}"), v));
                    break;
                }
                opts.push((format!("-{c}"), None));
            }
            continue;
        }
        operands.push(w);
    }
    (opts, operands)
}

fn as_url(w: &str) -> String {
    if w.contains("://") {
        w.to_string()
    } else {
        format!("http://{w}")
    }
}

/// A `host:path` or `user@host:path` operand of scp/rsync (not `./a:b`, not `/a:b`).
fn is_remote_spec(w: &str) -> bool {
    if w.starts_with("rsync://") || w.starts_with("scp://") || w.starts_with("sftp://") {
        return true;
    }
    match w.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/'),
        None => false,
    }
}

/// `user@host:path` → `ssh://user@host/`; `rsync://host/x` stays.
fn remote_url(w: &str) -> String {
    if w.contains("://") {
        return w.to_string();
    }
    let host = w.split_once(':').map_or(w, |(h, _)| h);
    format!("ssh://{host}/")
}

/// Read a network client's arguments. `None`: not a client this table knows.
pub fn network(words: &[String]) -> Option<Net> {
    let prog = program_name(words.first()?)?;
    let mut n = Net::default();
    match prog {
        "curl" => {
            let (opts, operands) = client_args(words, CURL_REQ_SHORT, CURL_REQ_LONG, false);
            for (flag, v) in opts {
                let Some(v) = v else {
                    if flag == "-O" || flag == "--remote-name" || flag == "--remote-name-all" {
                        n.writes.push(".".into());
                    }
                    continue;
                };
                match flag.as_str() {
                    "-d" | "--data" | "--data-ascii" | "--data-binary" | "--json" => {
                        if let Some(f) = v.strip_prefix('@') {
                            n.uploads.push(f.to_string());
                        }
                    }
                    "--data-urlencode" => {
                        if let Some((_, f)) = v.split_once('@') {
                            n.uploads.push(f.to_string());
                        }
                    }
                    "-F" | "--form" => {
                        if let Some((_, val)) = v.split_once('=')
                            && let Some(f) = val.strip_prefix('@').or_else(|| val.strip_prefix('<'))
                        {
                            n.uploads.push(f.split(';').next().unwrap_or(f).to_string());
                        }
                    }
                    "-T" | "--upload-file" => n.uploads.push(v),
                    "-H" | "--header" | "--proxy-header" => {
                        if let Some(f) = v.strip_prefix('@') {
                            n.uploads.push(f.to_string());
                        }
                    }
                    "--url-query" | "--variable" => {
                        if let Some((_, f)) = v.split_once('@') {
                            n.uploads.push(f.to_string());
                        }
                    }
                    "-o" | "--output" | "-c" | "--cookie-jar" | "-D" | "--dump-header"
                    | "--trace" | "--trace-ascii" | "--stderr" | "--etag-save" | "--hsts"
                    | "--alt-svc"
                        if v != "-" =>
                    {
                        n.writes.push(v);
                    }
                    "--output-dir" => n.writes.push(v),
                    "--url" => n.urls.push(as_url(&v)),
                    "-x"
                    | "--proxy"
                    | "--preproxy"
                    | "--connect-to"
                    | "--resolve"
                    | "--doh-url"
                    | "--unix-socket"
                    | "--abstract-unix-socket"
                    | "--socks4"
                    | "--socks4a"
                    | "--socks5"
                    | "--socks5-hostname" => n.hazards.push(Hazard::new(
                        format!("{flag} {v}"),
                        "changes where the request goes",
                    )),
                    "-K" | "--config" => n.hazards.push(Hazard::new(
                        format!("{flag} {v}"),
                        "reads more options from a file",
                    )),
                    "-b" | "--cookie" if !v.contains('=') => n.reads.push(v),
                    "-E" | "--cert" | "--key" | "--cacert" | "--netrc-file" => n.reads.push(v),
                    _ => {}
                }
            }
            n.urls.extend(operands.iter().map(|w| as_url(w)));
        }
        "wget" => {
            let (opts, operands) = client_args(
                words,
                "OoaPieUtTwQlAR",
                &[
                    "output-document",
                    "output-file",
                    "append-output",
                    "directory-prefix",
                    "input-file",
                    "execute",
                    "user-agent",
                    "tries",
                    "timeout",
                    "wait",
                    "quota",
                    "level",
                    "accept",
                    "reject",
                    "post-file",
                    "body-file",
                    "post-data",
                    "body-data",
                    "method",
                    "header",
                    "user",
                    "password",
                    "load-cookies",
                    "save-cookies",
                    "config",
                    "use-askpass",
                    "certificate",
                    "private-key",
                    "ca-certificate",
                ],
                true,
            );
            for (flag, v) in opts {
                let Some(v) = v else { continue };
                match flag.as_str() {
                    "--post-file" | "--body-file" => n.uploads.push(v),
                    "-O" | "--output-document" | "-o" | "--output-file" | "-a"
                    | "--append-output" | "--save-cookies"
                        if v != "-" =>
                    {
                        n.writes.push(v);
                    }
                    "-P" | "--directory-prefix" => n.writes.push(v),
                    "-e" | "--execute" | "--config" | "--use-askpass" => n.hazards.push(
                        Hazard::new(format!("{flag} {v}"), "runs commands or reads options"),
                    ),
                    "-i" | "--input-file" => n.hazards.push(Hazard::new(
                        format!("{flag} {v}"),
                        "reads the URLs to fetch from a file",
                    )),
                    "--load-cookies" | "--certificate" | "--private-key" => n.reads.push(v),
                    _ => {}
                }
            }
            n.urls.extend(operands.iter().map(|w| as_url(w)));
        }
        "scp" | "rsync" | "sftp" => {
            let (opts, operands) = client_args(
                words,
                if prog == "rsync" {
                    "efBTM"
                } else {
                    "cFiJlLoOPSD"
                },
                &[
                    "rsh",
                    "rsync-path",
                    "filter",
                    "exclude",
                    "include",
                    "exclude-from",
                    "include-from",
                    "files-from",
                    "temp-dir",
                    "partial-dir",
                    "log-file",
                    "password-file",
                    "port",
                    "out-format",
                    "compare-dest",
                    "copy-dest",
                    "link-dest",
                    "backup-dir",
                    "suffix",
                    "chmod",
                    "chown",
                    "timeout",
                ],
                true,
            );
            for (flag, v) in &opts {
                if matches!(flag.as_str(), "-e" | "--rsh" | "--rsync-path" | "-S" | "-o")
                    && let Some(v) = v
                {
                    n.hazards
                        .push(Hazard::new(format!("{flag} {v}"), "runs another program"));
                }
            }
            let remote: Vec<&&str> = operands.iter().filter(|w| is_remote_spec(w)).collect();
            if let Some(dest) = operands.last()
                && is_remote_spec(dest)
            {
                // Sending to a remote: every local source is uploaded.
                n.uploads.extend(
                    operands[..operands.len() - 1]
                        .iter()
                        .filter(|w| !is_remote_spec(w))
                        .map(|w| w.to_string()),
                );
            }
            if prog == "sftp" && !operands.is_empty() {
                n.hazards.push(Hazard::new(
                    "sftp",
                    "an interactive transfer the engine cannot see",
                ));
            }
            for r in remote {
                n.urls.push(remote_url(r));
            }
        }
        _ => return None,
    }
    Some(n)
}
