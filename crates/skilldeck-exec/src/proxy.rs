//! The filtering proxy of a host-list network grant (`network =
//! ["api.github.com", "*.pypi.org"]`).
//!
//! The sandbox has its own, empty network namespace: loopback only. Before
//! the script exists, the sandbox's setup process opens a TCP listener on
//! `127.0.0.1:`[`SANDBOX_PROXY_PORT`] *inside* that namespace and hands it
//! to skilldeck over a descriptor channel (`crate::sandbox`); skilldeck
//! accepts on it here, in the host's namespace. A connection accepted
//! there is a plain TCP stream; whatever skilldeck connects to on the
//! script's behalf is opened in the host's namespace. The script itself
//! can reach nothing else: no route out of its namespace, no Unix sockets
//! (seccomp), and (native) Landlock allows TCP connect to this one port.
//!
//! The proxy speaks HTTP `CONNECT host:port` (tunnels, for HTTPS) and
//! plain HTTP in absolute form (`GET http://host/path`). A request is
//! allowed when its host name matches the grant; the name is then resolved
//! here, every address is checked ([`address_refusal`]: loopback, private,
//! link-local, CGNAT, multicast, unspecified, metadata… unless an operator
//! range allows it) and the connection goes to an address that passed,
//! the very address checked (never re-resolved: DNS rebinding cannot swap
//! it). Every refusal is answered `403` with the reason and counted in the
//! run's [`Refusals`].

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Write};
use std::net::{
    IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs,
};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags};
use skilldeck::deck::{IpRange, NetworkGrant, normalize_host};

use crate::refusals::Refusals;

/// The proxy's port inside the sandbox (`HTTP_PROXY=http://127.0.0.1:3128`).
pub(crate) const SANDBOX_PROXY_PORT: u16 = 3128;
/// Connections of one run open at once; more are refused (`503`).
pub const MAX_PROXY_CONNECTIONS: usize = 64;
/// Largest request head (request line and headers) the proxy reads.
pub const MAX_REQUEST_HEAD_BYTES: usize = 16 * 1024;
/// Most header lines in a request head.
pub const MAX_REQUEST_HEADERS: usize = 100;
/// Bytes one run may move through the proxy, both ways together; past
/// it every connection of the run is closed.
pub const MAX_PROXY_BYTES: u64 = 1024 * 1024 * 1024;
/// A connection with no byte either way for this long is closed.
pub const PROXY_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the proxy waits for a request head.
pub const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the proxy tries one address of the target.
pub const PROXY_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Cloud metadata endpoints: refused even inside an allowed range unless
/// the operator allowed that exact address (`/32`, `/128`).
pub const METADATA_ADDRESSES: &[IpAddr] = &[
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// Where the proxy gets addresses for a name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Resolver {
    /// The system resolver (`getaddrinfo`).
    #[default]
    System,
    /// This table only (like `curl --resolve`); a name not in it does not
    /// resolve. Not settable from `skilldeck.toml`: for programs that pin
    /// names, and for the tests (test hosts in network namespaces).
    Table(BTreeMap<String, Vec<IpAddr>>),
}

impl Resolver {
    fn resolve(&self, host: &str, port: u16) -> Vec<SocketAddr> {
        match self {
            Resolver::System => (host, port)
                .to_socket_addrs()
                .map(Iterator::collect)
                .unwrap_or_default(),
            Resolver::Table(t) => t
                .get(host)
                .map(|a| a.iter().map(|ip| SocketAddr::new(*ip, port)).collect())
                .unwrap_or_default(),
        }
    }
}

/// Why `addr` is refused as a destination (`None`: allowed), given the
/// operator's `allow` ranges.
pub fn address_refusal(addr: IpAddr, allow: &[IpRange]) -> Option<&'static str> {
    // An IPv4-mapped or NAT64 address is judged as the IPv4 address it
    // carries.
    let addr = match addr {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .or_else(|| {
                let s = v6.segments();
                (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0]).then(|| {
                    let o = v6.octets();
                    Ipv4Addr::new(o[12], o[13], o[14], o[15])
                })
            })
            .map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    let allowed = allow.iter().any(|r| r.contains(addr));
    if METADATA_ADDRESSES.contains(&addr) {
        let exact = allow.iter().any(|r| {
            r.contains(addr) && matches!(r.to_string().rsplit('/').next(), Some("32" | "128"))
        });
        return (!exact).then_some("cloud metadata address");
    }
    let why = builtin_refusal(addr)?;
    (!allowed).then_some(why)
}

fn builtin_refusal(addr: IpAddr) -> Option<&'static str> {
    match addr {
        IpAddr::V4(a) => {
            let o = a.octets();
            if a.is_unspecified() || o[0] == 0 {
                Some("unspecified address")
            } else if a.is_loopback() {
                Some("loopback address")
            } else if a.is_private() {
                Some("private address")
            } else if a.is_link_local() {
                Some("link-local address")
            } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
                Some("shared (CGNAT) address")
            } else if o[0] == 192 && o[1] == 0 && o[2] == 0 {
                Some("IETF protocol address")
            } else if o[0] == 198 && (o[1] & 0xfe) == 18 {
                Some("benchmarking address")
            } else if a.is_multicast() {
                Some("multicast address")
            } else if o[0] >= 240 {
                Some("reserved or broadcast address")
            } else {
                None
            }
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            if a.is_unspecified() {
                Some("unspecified address")
            } else if a.is_loopback() {
                Some("loopback address")
            } else if (s[0] & 0xfe00) == 0xfc00 {
                Some("private (unique local) address")
            } else if (s[0] & 0xffc0) == 0xfe80 || (s[0] & 0xffc0) == 0xfec0 {
                Some("link-local address")
            } else if a.is_multicast() {
                Some("multicast address")
            } else if s[0] == 0x100 && s[1..4] == [0, 0, 0] {
                Some("discard-only address")
            } else if s[0..6] == [0, 0, 0, 0, 0, 0] {
                Some("IPv4-compatible address")
            } else {
                None
            }
        }
    }
}

/// What the proxy of one run allows.
#[derive(Debug, Clone)]
pub(crate) struct ProxyRules {
    pub grant: NetworkGrant,
    pub allow_ranges: Vec<IpRange>,
    pub resolver: Resolver,
}

/// State shared by the accept loop and the connections of one run.
struct Shared {
    rules: ProxyRules,
    refusals: Arc<Mutex<Refusals>>,
    active: AtomicUsize,
    bytes: AtomicU64,
    /// Live streams by connection id, shut down when the run ends.
    streams: Mutex<HashMap<u64, Vec<TcpStream>>>,
}

impl Shared {
    fn refuse(&self, host: &str, port: u16, reason: &'static str) {
        self.refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .connection(host, port, reason);
    }

    fn track(&self, id: u64, stream: &TcpStream) {
        if let Ok(clone) = stream.try_clone() {
            self.streams
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(id)
                .or_default()
                .push(clone);
        }
    }

    fn untrack(&self, id: u64) {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    fn shutdown_all(&self) {
        let streams = std::mem::take(&mut *self.streams.lock().unwrap_or_else(|e| e.into_inner()));
        for s in streams.values().flatten() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// Serves the proxy on `listener` (the port inside the sandbox) until
/// `stop` becomes readable (the run ended), then closes every connection.
pub(crate) fn serve(
    listener: OwnedFd,
    stop: &OwnedFd,
    rules: ProxyRules,
    refusals: Arc<Mutex<Refusals>>,
) {
    let listener = TcpListener::from(listener);
    let shared = Arc::new(Shared {
        rules,
        refusals,
        active: AtomicUsize::new(0),
        bytes: AtomicU64::new(0),
        streams: Mutex::new(HashMap::new()),
    });
    let mut next_id: u64 = 0;
    loop {
        let mut fds = [
            PollFd::new(&listener, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        if !fds[1].revents().is_empty() {
            break;
        }
        if fds[0].revents().is_empty() {
            continue;
        }
        let Ok((client, _)) = listener.accept() else {
            continue;
        };
        next_id = next_id.wrapping_add(1);
        let id = next_id;
        if shared.active.load(Ordering::SeqCst) >= MAX_PROXY_CONNECTIONS {
            shared.refuse("-", 0, "limit");
            let _ = respond(
                &client,
                503,
                "too many connections through the proxy at once",
            );
            continue;
        }
        shared.active.fetch_add(1, Ordering::SeqCst);
        shared.track(id, &client);
        let conn = shared.clone();
        std::thread::spawn(move || {
            handle(&conn, id, client);
            conn.untrack(id);
            conn.active.fetch_sub(1, Ordering::SeqCst);
        });
    }
    shared.shutdown_all();
}

/// Writes a short plain-text response and closes the write side.
fn respond(mut client: &TcpStream, status: u16, why: &str) -> io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let body = format!("skilldeck proxy: {why}\n");
    write!(
        client,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nX-Skilldeck-Refused: {}\r\n\r\n{body}",
        body.len(),
        why.replace(['\r', '\n'], " ")
    )?;
    client.flush()?;
    client.shutdown(Shutdown::Write)
}

/// One parsed request head.
struct Head {
    connect: bool,
    host: String,
    port: u16,
    /// Plain HTTP: the head to send upstream (origin form, hop-by-hop
    /// headers dropped, `Connection: close`).
    upstream_head: Vec<u8>,
    /// Bytes read after the head (a body or a TLS hello already sent).
    rest: Vec<u8>,
}

/// Reads the request head; `Err` carries the response's reason.
fn read_head(client: &mut TcpStream) -> Result<Head, String> {
    let _ = client.set_read_timeout(Some(REQUEST_HEAD_TIMEOUT));
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    loop {
        let n = match client.read(&mut chunk) {
            Ok(0) => return Err("the request ended before its head".to_owned()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the request: {e}")),
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; MAX_REQUEST_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let rest = buf[len..].to_vec();
                return head_of(&req, rest);
            }
            Ok(httparse::Status::Partial) if buf.len() <= MAX_REQUEST_HEAD_BYTES => {}
            Ok(httparse::Status::Partial) => {
                return Err(format!(
                    "the request head is over {MAX_REQUEST_HEAD_BYTES} bytes"
                ));
            }
            Err(e) => return Err(format!("not an HTTP request ({e})")),
        }
    }
}

/// `host:port` of an authority (`[v6]:port` too).
fn split_authority(authority: &str, default_port: Option<u16>) -> Option<(String, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default_port?,
            None => return None,
        };
        return Some((host.to_owned(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_owned(), port.parse().ok()?)),
        None => Some((authority.to_owned(), default_port?)),
    }
}

fn head_of(req: &httparse::Request<'_, '_>, rest: Vec<u8>) -> Result<Head, String> {
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target, None)
            .ok_or_else(|| format!("CONNECT needs host:port, got '{}'", target.escape_debug()))?;
        return Ok(Head {
            connect: true,
            host,
            port,
            upstream_head: Vec::new(),
            rest,
        });
    }
    let Some(after) = target.strip_prefix("http://") else {
        return Err(if target.starts_with("https://") {
            "an https:// URL must go through CONNECT (set HTTPS_PROXY)".to_owned()
        } else {
            "this is a proxy: send an absolute http:// URL or CONNECT".to_owned()
        });
    };
    let (authority, path) = match after.find(['/', '?']) {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    if authority.contains('@') {
        return Err("credentials in the URL are not forwarded".to_owned());
    }
    let (host, port) = split_authority(authority, Some(80))
        .ok_or_else(|| format!("bad host in '{}'", target.escape_debug()))?;
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    // The Host header is the URL's authority, the name that was checked:
    // a different one would ask the granted server for another site.
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n").into_bytes();
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "host" | "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive"
        ) {
            continue;
        }
        head.extend_from_slice(h.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(h.value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Head {
        connect: false,
        host,
        port,
        upstream_head: head,
        rest,
    })
}

/// The addresses `host` may be reached at, or the refusal's reason and
/// text.
fn destinations(
    rules: &ProxyRules,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, (&'static str, String)> {
    let Ok(name) = normalize_host(host) else {
        return Err((
            "host-not-granted",
            format!(
                "'{}' is not a host name this skill may reach (only names listed in its grant)",
                host.escape_debug()
            ),
        ));
    };
    if !rules.grant.allows_host(&name) {
        return Err((
            "host-not-granted",
            format!("{name} is not in this skill's network grant"),
        ));
    }
    let resolved = rules.resolver.resolve(&name, port);
    if resolved.is_empty() {
        return Err(("resolve-failed", format!("{name} does not resolve")));
    }
    let mut refused = None;
    let allowed: Vec<SocketAddr> = resolved
        .into_iter()
        .filter(|a| match address_refusal(a.ip(), &rules.allow_ranges) {
            None => true,
            Some(why) => {
                refused.get_or_insert((a.ip(), why));
                false
            }
        })
        .collect();
    match (allowed.is_empty(), refused) {
        (true, Some((ip, why))) => Err((
            "address-refused",
            format!(
                "{name} resolves to {ip}, a {why} (an operator may allow its range with [exec] network-allow-ranges)"
            ),
        )),
        (true, None) => Err(("resolve-failed", format!("{name} does not resolve"))),
        (false, _) => Ok(allowed),
    }
}

fn handle(shared: &Shared, id: u64, mut client: TcpStream) {
    let head = match read_head(&mut client) {
        Ok(h) => h,
        Err(why) => {
            shared.refuse("-", 0, "bad-request");
            let _ = respond(&client, 400, &why);
            return;
        }
    };
    let addrs = match destinations(&shared.rules, &head.host, head.port) {
        Ok(a) => a,
        Err((reason, why)) => {
            // Counted before the answer: a script that saw the 403 finds
            // it in the run's refusals.
            shared.refuse(&head.host, head.port, reason);
            let _ = respond(&client, 403, &why);
            return;
        }
    };
    // The very addresses checked above, never the name again.
    let upstream = addrs
        .iter()
        .find_map(|a| TcpStream::connect_timeout(a, PROXY_CONNECT_TIMEOUT).ok());
    let Some(mut upstream) = upstream else {
        let _ = respond(
            &client,
            502,
            &format!("{}:{} did not answer", head.host, head.port),
        );
        return;
    };
    shared.track(id, &upstream);
    let ready = if head.connect {
        client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
    } else {
        upstream.write_all(&head.upstream_head)
    };
    if ready.is_err() || upstream.write_all(&head.rest).is_err() {
        return;
    }
    relay(shared, client, upstream);
}

/// Copies both ways until both ends are done, an end is idle for
/// [`PROXY_IDLE_TIMEOUT`] or the run's byte budget is spent.
fn relay(shared: &Shared, client: TcpStream, upstream: TcpStream) {
    for s in [&client, &upstream] {
        let _ = s.set_read_timeout(Some(PROXY_IDLE_TIMEOUT));
    }
    let (Ok(client2), Ok(upstream2)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    std::thread::scope(|scope| {
        scope.spawn(|| copy(shared, client2, upstream2));
        copy(shared, upstream, client);
    });
}

fn copy(shared: &Shared, mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                let _ = from.shutdown(Shutdown::Both);
                let _ = to.shutdown(Shutdown::Both);
                return;
            }
        };
        let total = shared
            .bytes
            .fetch_add(u64::try_from(n).unwrap_or(u64::MAX), Ordering::SeqCst);
        if total.saturating_add(u64::try_from(n).unwrap_or(u64::MAX)) > MAX_PROXY_BYTES {
            shared.refuse("-", 0, "byte-limit");
            shared.shutdown_all();
            return;
        }
        if to.write_all(&buf[..n]).is_err() {
            let _ = from.shutdown(Shutdown::Both);
            return;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn internal_and_metadata_addresses_are_refused_public_ones_pass() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "fc00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "100.100.100.200",
        ] {
            assert!(address_refusal(ip(bad), &[]).is_some(), "{bad} passed");
        }
        for good in [
            "93.184.216.34",
            "2606:4700::1111",
            "198.51.100.7",
            "::ffff:93.184.216.34",
        ] {
            assert_eq!(address_refusal(ip(good), &[]), None, "{good}");
        }
    }

    #[test]
    fn an_operator_range_lets_its_addresses_through_but_metadata_only_by_exact_address() {
        let ten = IpRange::parse("10.1.0.0/16").unwrap();
        assert_eq!(address_refusal(ip("10.1.4.5"), &[ten]), None);
        assert!(address_refusal(ip("10.2.4.5"), &[ten]).is_some());
        let link = IpRange::parse("169.254.0.0/16").unwrap();
        assert!(address_refusal(ip("169.254.169.254"), &[link]).is_some());
        assert_eq!(address_refusal(ip("169.254.1.1"), &[link]), None);
        let exact = IpRange::parse("169.254.169.254/32").unwrap();
        assert_eq!(address_refusal(ip("169.254.169.254"), &[exact]), None);
    }

    #[test]
    fn plain_http_is_rewritten_to_origin_form_for_the_checked_host_without_proxy_headers() {
        let raw = b"GET http://api.example.com:8080/a?b=1 HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\nBODY";
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        let httparse::Status::Complete(len) = req.parse(raw).unwrap() else {
            panic!("partial")
        };
        let head = head_of(&req, raw[len..].to_vec()).unwrap();
        assert!(!head.connect);
        assert_eq!((head.host.as_str(), head.port), ("api.example.com", 8080));
        let text = String::from_utf8(head.upstream_head).unwrap();
        assert!(
            text.starts_with("GET /a?b=1 HTTP/1.1\r\nHost: api.example.com:8080\r\n"),
            "{text}"
        );
        assert!(!text.contains("evil.example"), "{text}");
        assert!(!text.to_lowercase().contains("proxy-authorization"));
        assert!(text.ends_with("Connection: close\r\n\r\n"));
        assert_eq!(head.rest, b"BODY");
        assert_eq!(
            split_authority("[2001:db8::1]:443", None),
            Some(("2001:db8::1".to_owned(), 443))
        );
    }
}
