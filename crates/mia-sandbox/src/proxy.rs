//! mia-code's network proxy for sandboxed commands: HTTP (`CONNECT` and
//! absolute-URI requests) and SOCKS5 on one port, the only way out of the
//! command's network namespace.
//!
//! Every connection names its host before a byte reaches it, and the host
//! is judged first: the built-in deny list (cloud metadata, the host's own
//! loopback unless `sandbox.allowLocalhost`, link-local addresses, also
//! after name resolution), then the package registries' allow list
//! (`sandbox.registries`), then the [`HostGate`] (the permission engine's
//! `fetch` rules, and a person's answer when they ask). A host's verdict
//! holds for the rest of the command (a plain-HTTP URL carrying a long
//! opaque string asks every time). Names are resolved only once allowed.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use crate::NetRules;

/// Package registries and their download hosts, reached without asking
/// (port 443) unless `sandbox.registries` is false.
pub const REGISTRY_HOSTS: &[&str] = &[
    // npm, Yarn
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    // crates.io
    "crates.io",
    "index.crates.io",
    "static.crates.io",
    // PyPI
    "pypi.org",
    "files.pythonhosted.org",
    // Go
    "proxy.golang.org",
    "sum.golang.org",
    // RubyGems
    "rubygems.org",
    "index.rubygems.org",
    // Maven Central
    "repo.maven.apache.org",
    "repo1.maven.org",
];

/// Cloud metadata services: never, whatever a rule says.
const METADATA_HOSTS: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata.azure.internal",
    "169.254.169.254",
    "169.254.170.2",
    "100.100.100.200",
    "fd00:ec2::254",
];

/// One connection's destination, as the gate sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRequest {
    /// Lower-case host name or IP address (no brackets).
    pub host: String,
    pub port: u16,
    /// The whole URL of a plain-HTTP request (`None` for `CONNECT` and SOCKS).
    pub url: Option<String>,
    /// The program inside the sandbox that connected, when known.
    pub program: Option<String>,
}

impl HostRequest {
    /// `host:port` (`[v6]:port`).
    pub fn target(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URL the engine judges: the request's own, or `https://host:port/`.
    pub fn url_for_rules(&self) -> String {
        self.url.clone().unwrap_or_else(|| {
            let scheme = if self.port == 80 { "http" } else { "https" };
            let default = matches!((scheme, self.port), ("http", 80) | ("https", 443));
            let host = if self.host.contains(':') {
                format!("[{}]", self.host)
            } else {
                self.host.clone()
            };
            if default {
                format!("{scheme}://{host}/")
            } else {
                format!("{scheme}://{host}:{}/", self.port)
            }
        })
    }
}

/// A gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refused, and why (sent to the program in the proxy's answer).
    Deny(String),
}

/// Decides hosts the built-in lists do not (the session's rules and asks).
pub trait HostGate: Send + Sync {
    fn decide<'a>(&'a self, req: HostRequest)
    -> Pin<Box<dyn Future<Output = Verdict> + Send + 'a>>;

    /// Hosts a person already allowed for this command (its own ask named
    /// them: `curl https://x` asks about x before it runs): not asked again.
    fn preapprove(&self, _hosts: &[String]) {}
}

/// A gate that asks no one: the given verdict for every host.
pub struct FixedGate(pub Verdict);

impl HostGate for FixedGate {
    fn decide<'a>(
        &'a self,
        _req: HostRequest,
    ) -> Pin<Box<dyn Future<Output = Verdict> + Send + 'a>> {
        let v = self.0.clone();
        Box::pin(async move { v })
    }
}

/// Why a host is refused before anyone is asked.
pub fn builtin_deny(host: &str, rules: &NetRules) -> Option<String> {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    if METADATA_HOSTS.contains(&h.as_str()) {
        return Some(format!("{h} is a cloud metadata service"));
    }
    if h == "localhost" || h.ends_with(".localhost") {
        return (!rules.allow_localhost).then(|| {
            "the host's own loopback services are not reachable from the sandbox (set sandbox.allowLocalhost in your global config to allow them)".to_string()
        });
    }
    h.parse::<IpAddr>().ok().and_then(|ip| ip_deny(ip, rules))
}

/// Why an address is refused (after resolution too).
pub fn ip_deny(ip: IpAddr, rules: &NetRules) -> Option<String> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    if METADATA_HOSTS.contains(&ip.to_string().as_str()) {
        return Some(format!("{ip} is a cloud metadata service"));
    }
    let (loopback, link_local, unspecified, multicast) = match ip {
        IpAddr::V4(a) => (
            a.is_loopback(),
            a.is_link_local(),
            a.is_unspecified(),
            a.is_multicast() || a.is_broadcast(),
        ),
        IpAddr::V6(a) => (
            a.is_loopback(),
            (a.segments()[0] & 0xffc0) == 0xfe80,
            a.is_unspecified(),
            a.is_multicast(),
        ),
    };
    if loopback && !rules.allow_localhost {
        return Some(format!(
            "{ip} is the host's own loopback: not reachable from the sandbox (set sandbox.allowLocalhost in your global config to allow it)"
        ));
    }
    if link_local || unspecified || multicast {
        return Some(format!(
            "{ip} is a link-local, unspecified or multicast address"
        ));
    }
    None
}

/// Is `host:port` on the registries' allow list?
pub fn registry_allowed(host: &str, port: u16, rules: &NetRules) -> bool {
    rules.registries && port == 443 && REGISTRY_HOSTS.contains(&host.to_ascii_lowercase().as_str())
}

/// A host the command connected to, for its tool card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Connection {
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    /// Why it was refused, or what allowed it (`registry`, `rule or answer`).
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// What the proxy needs besides its socket.
pub struct ProxyConfig {
    pub rules: NetRules,
    pub gate: Arc<dyn HostGate>,
    /// Which program connected from this port (Linux: [`crate::peer_program`]).
    pub peer: Option<Arc<dyn Fn(u16) -> Option<String> + Send + Sync>>,
}

type Cell = Arc<tokio::sync::OnceCell<Verdict>>;

struct Shared {
    cfg: ProxyConfig,
    verdicts: Mutex<HashMap<(String, u16), Cell>>,
    log: Mutex<Vec<Connection>>,
}

/// A running proxy; [`Proxy::finish`] stops it.
pub struct Proxy {
    accept: tokio::task::JoinHandle<()>,
    shared: Arc<Shared>,
}

/// How long a client may take to say where it goes.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_HEAD: usize = 64 * 1024;

impl Proxy {
    /// Serve `listener` (on the current tokio runtime) until [`Proxy::finish`].
    pub fn start(listener: std::net::TcpListener, cfg: ProxyConfig) -> std::io::Result<Self> {
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let shared = Arc::new(Shared {
            cfg,
            verdicts: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let accept = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            loop {
                tokio::select! {
                    r = listener.accept() => match r {
                        Ok((stream, peer)) => {
                            let s = s.clone();
                            conns.spawn(async move { handle(stream, peer, &s).await });
                        }
                        Err(e) => {
                            tracing::debug!("proxy accept: {e}");
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    },
                    Some(_) = conns.join_next(), if !conns.is_empty() => {}
                }
            }
        });
        Ok(Self { accept, shared })
    }

    /// Stop serving (every open connection is closed) and say which hosts
    /// the command reached or was refused.
    pub fn finish(self) -> Vec<Connection> {
        self.accept.abort();
        self.shared
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where the client wants to go.
enum Ask {
    Socks {
        host: String,
        port: u16,
    },
    Connect {
        host: String,
        port: u16,
        rest: Vec<u8>,
    },
    Http {
        host: String,
        port: u16,
        url: String,
        head: Vec<u8>,
    },
}

async fn handle(mut stream: TcpStream, peer: SocketAddr, s: &Shared) {
    let ask = match tokio::time::timeout(HEAD_TIMEOUT, read_ask(&mut stream)).await {
        Ok(Ok(a)) => a,
        Ok(Err(reply)) => {
            let _ = stream.write_all(&reply).await;
            return;
        }
        Err(_) => return,
    };
    let (host, port, url) = match &ask {
        Ask::Socks { host, port } | Ask::Connect { host, port, .. } => (host.clone(), *port, None),
        Ask::Http {
            host, port, url, ..
        } => (host.clone(), *port, Some(url.clone())),
    };
    let verdict = decide(s, &host, port, url, peer.port()).await;
    let outcome = match verdict {
        Verdict::Deny(why) => Err(why),
        Verdict::Allow => connect(&host, port, &s.cfg.rules).await,
    };
    match (ask, outcome) {
        (Ask::Socks { .. }, Err(_)) => {
            let _ = stream.write_all(&[5, 2, 0, 1, 0, 0, 0, 0, 0, 0]).await;
        }
        (Ask::Socks { .. }, Ok(mut up)) => {
            if stream
                .write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
                .await
                .is_ok()
            {
                splice(&mut stream, &mut up).await;
            }
        }
        (_, Err(why)) => {
            let _ = stream.write_all(&refusal(&host, port, &why)).await;
        }
        (Ask::Connect { rest, .. }, Ok(mut up)) => {
            if stream
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .is_ok()
                && up.write_all(&rest).await.is_ok()
            {
                splice(&mut stream, &mut up).await;
            }
        }
        (Ask::Http { head, .. }, Ok(mut up)) => {
            if up.write_all(&head).await.is_ok() {
                splice(&mut stream, &mut up).await;
            }
        }
    }
}

/// Move the bytes both ways until both ends are done (1 MiB buffers: on
/// loopback, smaller ones cost a third of the throughput; `splice(2)` was
/// measured and was slower here, docs/benchmarks.md).
async fn splice(a: &mut TcpStream, b: &mut TcpStream) {
    let _ = tokio::io::copy_bidirectional_with_sizes(a, b, 1024 * 1024, 1024 * 1024).await;
}

fn refusal(host: &str, port: u16, why: &str) -> Vec<u8> {
    let body = format!("mia-code's proxy refused {host}:{port}: {why}\n");
    format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn bad_request(why: &str) -> Vec<u8> {
    let body = format!("mia-code's proxy: {why}\n");
    format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The verdict for `host:port`, asked once per command (a plain-HTTP URL
/// carrying a long opaque string: every time).
async fn decide(s: &Shared, host: &str, port: u16, url: Option<String>, peer_port: u16) -> Verdict {
    let rules = &s.cfg.rules;
    if let Some(why) = builtin_deny(host, rules) {
        record(s, host, port, false, why.clone(), None);
        return Verdict::Deny(why);
    }
    if registry_allowed(host, port, rules) {
        record(s, host, port, true, "registry".into(), None);
        return Verdict::Allow;
    }
    let once_only = url.as_deref().is_some_and(crate::proxy::opaque);
    let cell: Cell = if once_only {
        Arc::default()
    } else {
        lock(&s.verdicts)
            .entry((host.to_string(), port))
            .or_default()
            .clone()
    };
    let program = s.cfg.peer.as_ref().and_then(|f| f(peer_port));
    let req = HostRequest {
        host: host.to_string(),
        port,
        url,
        program: program.clone(),
    };
    let v = cell
        .get_or_init(|| async {
            let v = s.cfg.gate.decide(req).await;
            match &v {
                Verdict::Allow => record(s, host, port, true, "rule or answer".into(), program),
                Verdict::Deny(why) => record(s, host, port, false, why.clone(), program),
            }
            v
        })
        .await;
    v.clone()
}

fn record(
    s: &Shared,
    host: &str,
    port: u16,
    allowed: bool,
    reason: String,
    program: Option<String>,
) {
    let mut log = lock(&s.log);
    if !log
        .iter()
        .any(|c| c.host == host && c.port == port && c.allowed == allowed)
    {
        log.push(Connection {
            host: host.to_string(),
            port,
            allowed,
            reason,
            program,
        });
    }
}

/// A long opaque run in a URL (a token, an encoded secret): the same test
/// the permission engine applies before it offers "always".
pub fn opaque(url: &str) -> bool {
    let mut run = 0usize;
    let mut best = 0usize;
    for c in url.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-' | '%') {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best >= 32 && {
        let digits = url.chars().filter(|c| c.is_ascii_digit()).count();
        let upper = url.chars().filter(|c| c.is_ascii_uppercase()).count();
        digits >= 6 || upper >= 6 || url.contains('%')
    }
}

/// Resolve (only now, once allowed) and connect, refusing addresses the
/// built-in list denies (a name may resolve to the host's loopback).
async fn connect(host: &str, port: u16, rules: &NetRules) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> =
        tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::lookup_host((host, port)))
            .await
            .map_err(|_| format!("resolving {host} timed out"))?
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
    let mut last = format!("{host} has no address");
    for a in addrs {
        if let Some(why) = ip_deny(a.ip(), rules) {
            last = format!("{host} resolves to {}: {why}", a.ip());
            continue;
        }
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(a)).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Ok(Err(e)) => last = format!("cannot connect to {a}: {e}"),
            Err(_) => last = format!("connecting to {a} timed out"),
        }
    }
    Err(last)
}

/// Read until the destination is known: a SOCKS5 request, or an HTTP head.
/// `Err` carries the bytes to answer with.
async fn read_ask(stream: &mut TcpStream) -> Result<Ask, Vec<u8>> {
    let first = stream.read_u8().await.map_err(|_| Vec::new())?;
    match first {
        5 => socks(stream).await,
        4 => Err(vec![0, 0x5b, 0, 0, 0, 0, 0, 0]),
        _ => http(stream, first).await,
    }
}

async fn socks<S: AsyncRead + AsyncWriteExt + Unpin>(stream: &mut S) -> Result<Ask, Vec<u8>> {
    let fail = |code: u8| vec![5, code, 0, 1, 0, 0, 0, 0, 0, 0];
    let n = stream.read_u8().await.map_err(|_| Vec::new())?;
    let mut methods = vec![0u8; usize::from(n)];
    stream
        .read_exact(&mut methods)
        .await
        .map_err(|_| Vec::new())?;
    if !methods.contains(&0) {
        return Err(vec![5, 0xff]);
    }
    stream.write_all(&[5, 0]).await.map_err(|_| Vec::new())?;
    let mut hdr = [0u8; 4];
    stream.read_exact(&mut hdr).await.map_err(|_| Vec::new())?;
    if hdr[0] != 5 {
        return Err(fail(1));
    }
    let host = match hdr[3] {
        1 => {
            let mut a = [0u8; 4];
            stream.read_exact(&mut a).await.map_err(|_| Vec::new())?;
            std::net::Ipv4Addr::from(a).to_string()
        }
        3 => {
            let len = stream.read_u8().await.map_err(|_| Vec::new())?;
            let mut name = vec![0u8; usize::from(len)];
            stream.read_exact(&mut name).await.map_err(|_| Vec::new())?;
            clean_host(&String::from_utf8_lossy(&name)).ok_or_else(|| fail(1))?
        }
        4 => {
            let mut a = [0u8; 16];
            stream.read_exact(&mut a).await.map_err(|_| Vec::new())?;
            std::net::Ipv6Addr::from(a).to_string()
        }
        _ => return Err(fail(8)),
    };
    let port = stream.read_u16().await.map_err(|_| Vec::new())?;
    if hdr[1] != 1 {
        // Only CONNECT: no BIND, no UDP ASSOCIATE.
        return Err(fail(7));
    }
    Ok(Ask::Socks { host, port })
}

/// A host name or address as given, checked and lower-cased (brackets of
/// an IPv6 literal removed); `None` for anything else.
fn clean_host(raw: &str) -> Option<String> {
    let h = raw.trim().trim_start_matches('[').trim_end_matches(']');
    let h = h.trim_end_matches('.').to_ascii_lowercase();
    if h.is_empty() || h.len() > 253 {
        return None;
    }
    if h.parse::<IpAddr>().is_ok() {
        return Some(h);
    }
    h.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
        .then_some(h)
}

/// `host:port` of an authority (`[v6]:port` too).
fn split_authority(a: &str, default_port: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = a.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default_port,
            None => return None,
        };
        (h.to_string(), port)
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (a.to_string(), default_port),
        }
    };
    Some((clean_host(&host)?, port))
}

async fn http(stream: &mut TcpStream, first: u8) -> Result<Ask, Vec<u8>> {
    let mut buf = vec![first];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(bad_request("the request head is too large"));
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.map_err(|_| Vec::new())?;
        if n == 0 {
            return Err(Vec::new());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    parse_http(&buf, end)
}

/// The destination of an HTTP proxy request (`buf[..end]` is the head).
fn parse_http(buf: &[u8], end: usize) -> Result<Ask, Vec<u8>> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(&buf[..end]) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(bad_request("not an HTTP request")),
    }
    let method = req.method.unwrap_or("");
    let target = req.path.unwrap_or("");
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) =
            split_authority(target, 443).ok_or_else(|| bad_request("CONNECT needs host:port"))?;
        return Ok(Ask::Connect {
            host,
            port,
            rest: buf[end..].to_vec(),
        });
    }
    let Ok(url) = url::Url::parse(target) else {
        return Err(bad_request(
            "this is mia-code's proxy: send absolute URLs (HTTP_PROXY) or CONNECT",
        ));
    };
    if url.scheme() != "http" {
        return Err(bad_request(
            "only http:// URLs are forwarded; use CONNECT for https",
        ));
    }
    let host = url
        .host_str()
        .and_then(clean_host)
        .ok_or_else(|| bad_request("the URL has no host"))?;
    let port = url.port_or_known_default().unwrap_or(80);
    // The request as the origin server expects it: origin-form, no proxy
    // headers, one request per connection.
    let mut path = url.path().to_string();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let mut head = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    let mut has_host = false;
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive"
        ) {
            continue;
        }
        has_host |= name == "host";
        head.extend_from_slice(h.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(h.value);
        head.extend_from_slice(b"\r\n");
    }
    if !has_host {
        head.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    head.extend_from_slice(&buf[end..]);
    Ok(Ask::Http {
        host,
        port,
        url: url.to_string(),
        head,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_refuses_metadata_loopback_and_link_local() {
        let r = NetRules::default();
        for h in [
            "169.254.169.254",
            "metadata.google.internal",
            "localhost",
            "127.0.0.1",
            "::1",
            "::ffff:127.0.0.1",
            "169.254.1.1",
            "fe80::1",
            "0.0.0.0",
        ] {
            assert!(builtin_deny(h, &r).is_some(), "{h}");
        }
        for h in ["github.com", "10.0.0.5", "93.184.216.34"] {
            assert!(builtin_deny(h, &r).is_none(), "{h}");
        }
        let local = NetRules {
            allow_localhost: true,
            ..NetRules::default()
        };
        assert!(builtin_deny("127.0.0.1", &local).is_none());
        // Metadata stays refused whatever the rules.
        assert!(builtin_deny("169.254.169.254", &local).is_some());
        assert!(registry_allowed("registry.npmjs.org", 443, &r));
        assert!(!registry_allowed("registry.npmjs.org", 8080, &r));
        let off = NetRules {
            registries: false,
            ..NetRules::default()
        };
        assert!(!registry_allowed("registry.npmjs.org", 443, &off));
    }

    #[test]
    fn http_requests_are_read_for_their_destination() {
        let head = b"CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n\x16\x03";
        match parse_http(head, head.len() - 2) {
            Ok(Ask::Connect { host, port, rest }) => {
                assert_eq!(
                    (host.as_str(), port, rest.as_slice()),
                    ("github.com", 443, &b"\x16\x03"[..])
                );
            }
            _ => panic!("not a CONNECT"),
        }
        let head = b"GET http://Example.COM:8080/a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Connection: keep-alive\r\n\r\n";
        match parse_http(head, head.len()) {
            Ok(Ask::Http {
                host,
                port,
                url,
                head,
            }) => {
                assert_eq!((host.as_str(), port), ("example.com", 8080));
                assert_eq!(url, "http://example.com:8080/a?b=1");
                let text = String::from_utf8(head).unwrap();
                assert!(text.starts_with("GET /a?b=1 HTTP/1.1\r\n"), "{text}");
                assert!(!text.to_lowercase().contains("proxy-connection"), "{text}");
                assert!(text.ends_with("Connection: close\r\n\r\n"), "{text}");
            }
            _ => panic!("not a forward"),
        }
        let head = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        assert!(parse_http(head, head.len()).is_err());
        let head = b"CONNECT [::1]:22 HTTP/1.1\r\n\r\n";
        assert!(
            matches!(parse_http(head, head.len()), Ok(Ask::Connect { host, port: 22, .. }) if host == "::1")
        );
        let head = b"CONNECT a b:1 HTTP/1.1\r\n\r\n";
        assert!(parse_http(head, head.len()).is_err());
    }

    #[test]
    fn the_rules_url_of_a_bare_host() {
        let r = HostRequest {
            host: "github.com".into(),
            port: 443,
            url: None,
            program: None,
        };
        assert_eq!(r.url_for_rules(), "https://github.com/");
        assert_eq!(r.target(), "github.com:443");
        let r = HostRequest {
            host: "::1".into(),
            port: 8443,
            ..r
        };
        assert_eq!(r.url_for_rules(), "https://[::1]:8443/");
        assert_eq!(r.target(), "[::1]:8443");
    }
}
