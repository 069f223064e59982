//! Network by host name: a skill granted `network = ["allowed.test"]`
//! reaches that name only, through skilldeck's proxy, and never an
//! address in a refused range unless the operator allows the range.
//!
//! The test hosts are real: each test makes a network namespace of its
//! own (`ip netns`) joined to the host's by a veth pair, with a public-
//! style address (198.51.100.0/24, a documentation range the proxy does
//! not refuse) and a private one (10.213.N.0/30), and serves HTTP there
//! from a thread that entered the namespace. Names map to those
//! addresses through the executor's resolver table
//! (`ExecutorConfig::resolver`, not settable from `skilldeck.toml`), so
//! nothing ever leaves the machine. Each test owns slot N (the namespace
//! `sdnp-N`, created atomically by `ip netns add`), so parallel tests and
//! parallel runs never share addresses; everything is deleted on drop.
//!
//! Needs root and `ip` (CI runs as root): elsewhere each test says so on
//! stderr and returns.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use skilldeck_exec::{
    CallContext, ErrorKind, Executor, ExecutorConfig, HostPattern, Input, IpRange, NetworkGrant,
    Outcome, Policy, Profile, Request, Resolver, probe,
};
use skilldeck_testkit::Root;

use crate::common::text;

/// Slots for test hosts (each a /30 of 198.51.100.0/24).
const SLOTS: u8 = 64;

fn ip(args: &[&str]) -> std::process::Output {
    Command::new("ip").args(args).output().expect("ip runs")
}

fn ip_ok(args: &[&str]) {
    let out = ip(args);
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Root and `ip` are here; else says why on stderr.
fn can_make_test_hosts() -> bool {
    let root = rustix::process::geteuid().is_root();
    let has_ip = Command::new("ip").arg("-V").output().is_ok();
    if !root || !has_ip {
        eprintln!(
            "SKIPPED: the proxy tests make network namespaces and veth pairs: they need root (have {}) and iproute2's `ip` (found: {has_ip})",
            if root { "root" } else { "no root" }
        );
        return false;
    }
    true
}

/// A test host in a network namespace of its own, serving HTTP on port
/// 80 of both its addresses.
struct TestHost {
    slot: u8,
    stop: Arc<AtomicBool>,
    server: Option<std::thread::JoinHandle<()>>,
}

impl TestHost {
    fn new() -> TestHost {
        let slot = (0..SLOTS)
            .find(|n| ip(&["netns", "add", &format!("sdnp-{n}")]).status.success())
            .expect("a free test-host slot (ip netns add sdnp-N)");
        let host = TestHost {
            slot,
            stop: Arc::new(AtomicBool::new(false)),
            server: None,
        };
        let ns = host.netns();
        let (h, n) = (format!("sdnp{slot}h"), format!("sdnp{slot}n"));
        ip_ok(&[
            "link", "add", &h, "type", "veth", "peer", "name", &n, "netns", &ns,
        ]);
        ip_ok(&[
            "addr",
            "add",
            &format!("{}/30", host.public_gateway()),
            "dev",
            &h,
        ]);
        ip_ok(&["addr", "add", &format!("10.213.{slot}.1/30"), "dev", &h]);
        ip_ok(&["link", "set", &h, "up"]);
        ip_ok(&[
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{}/30", host.public()),
            "dev",
            &n,
        ]);
        ip_ok(&[
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{}/30", host.private()),
            "dev",
            &n,
        ]);
        ip_ok(&["-n", &ns, "link", "set", &n, "up"]);
        ip_ok(&["-n", &ns, "link", "set", "lo", "up"]);
        host.serve()
    }

    fn netns(&self) -> String {
        format!("sdnp-{}", self.slot)
    }

    fn public(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, 51, 100, self.slot * 4 + 2)
    }

    fn public_gateway(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, 51, 100, self.slot * 4 + 1)
    }

    fn private(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 213, self.slot, 2)
    }

    fn private_range(&self) -> IpRange {
        IpRange::parse(&format!("10.213.{}.0/30", self.slot)).unwrap()
    }

    /// Starts the HTTP server: a thread that enters the namespace, binds
    /// port 80 there (before this returns), and answers each request with
    /// `hello from ADDRESS`.
    fn serve(mut self) -> TestHost {
        let path = format!("/run/netns/{}", self.netns());
        let stop = self.stop.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        self.server = Some(std::thread::spawn(move || {
            let ns = std::fs::File::open(&path).unwrap();
            rustix::thread::move_into_link_name_space(
                ns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .unwrap();
            let listener = TcpListener::bind("0.0.0.0:80").unwrap();
            ready_tx.send(()).unwrap();
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let mut buf = [0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let body = format!("hello from {}\n", conn.local_addr().unwrap().ip());
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        }));
        ready_rx.recv().unwrap();
        self
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the server's accept so its thread ends and lets the
        // namespace go.
        let _ = TcpStream::connect_timeout(
            &SocketAddr::new(IpAddr::V4(self.public()), 80),
            Duration::from_secs(5),
        );
        if let Some(t) = self.server.take() {
            let _ = t.join();
        }
        let _ = ip(&["link", "del", &format!("sdnp{}h", self.slot)]);
        let _ = ip(&["netns", "del", &self.netns()]);
    }
}

struct Fixture {
    _root: Root,
    deck: skilldeck::Deck,
}

fn fixture(script: &str) -> Fixture {
    let root = Root::new();
    root.skill("net")
        .description("Network probes. Use in tests.")
        .body("# Net\n")
        .file("scripts/probe.sh", script)
        .write();
    let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([root
        .path()
        .to_path_buf()]));
    Fixture { _root: root, deck }
}

fn hosts(patterns: &[&str]) -> NetworkGrant {
    NetworkGrant::Hosts(
        patterns
            .iter()
            .map(|p| HostPattern::parse(p).unwrap())
            .collect(),
    )
}

/// The resolver table of `host`: `allowed.test` and `other.test` at its
/// public address, `private.test` at its private one.
fn resolver(host: &TestHost) -> Resolver {
    let mut t = BTreeMap::new();
    t.insert("allowed.test".to_owned(), vec![IpAddr::V4(host.public())]);
    t.insert("other.test".to_owned(), vec![IpAddr::V4(host.public())]);
    t.insert("private.test".to_owned(), vec![IpAddr::V4(host.private())]);
    Resolver::Table(t)
}

/// The profiles that can run here (bwrap only where usable; CI requires
/// it through `SKILLDECK_TEST_REQUIRE_BWRAP=1`).
fn profiles() -> Vec<Profile> {
    let p = probe();
    let mut out = Vec::new();
    if p.native_ready {
        out.push(Profile::Native);
    } else {
        eprintln!(
            "native profile unavailable here: {}",
            p.missing().join("; ")
        );
    }
    let require = std::env::var_os("SKILLDECK_TEST_REQUIRE_BWRAP").is_some_and(|v| v == "1");
    if p.bwrap_layer.available {
        out.push(Profile::Bwrap);
    } else {
        assert!(
            !require,
            "SKILLDECK_TEST_REQUIRE_BWRAP=1 but {}",
            p.bwrap_layer.detail
        );
    }
    out
}

fn run(
    fixture: &Fixture,
    host: &TestHost,
    profile: Profile,
    network: NetworkGrant,
    allow: Vec<IpRange>,
    args: &[String],
) -> Outcome {
    let executor = Executor::new(ExecutorConfig {
        resolver: resolver(host),
        ..ExecutorConfig::default()
    });
    let mut policy = Policy {
        profile,
        ..Policy::default()
    };
    policy.limits.timeout = Duration::from_secs(60);
    policy.grants.network = network;
    policy.grants.allow_ranges = allow;
    executor
        .run(
            Request {
                skill: fixture.deck.get("net").unwrap(),
                path: "scripts/probe.sh",
                args: args.to_vec(),
                stdin: Input::Null,
                context: CallContext::local("netproxy-test"),
            },
            &policy,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", profile.name()))
}

/// `curl` through the proxy: `$1` plain HTTP, `$2` CONNECT (a tunnel
/// even for http://), each printing the body or `FAILED <code>`.
const CURL_BOTH: &str = "for mode in plain tunnel; do\n\
    if [ $mode = tunnel ]; then p=-p; else p=; fi\n\
    out=$(curl -sS -m 30 $p -o - -w ' status=%{http_code}' \"$1\" 2>&1) || true\n\
    echo \"$mode: $out\"\n\
    done\n";

#[test]
fn a_granted_name_is_reached_by_connect_and_by_plain_http() {
    if !can_make_test_hosts() {
        return;
    }
    let host = TestHost::new();
    let f = fixture(CURL_BOTH);
    for profile in profiles() {
        let o = run(
            &f,
            &host,
            profile,
            hosts(&["allowed.test"]),
            Vec::new(),
            &["http://allowed.test/".to_owned()],
        );
        let out = text(&o.stdout);
        let hello = format!("hello from {}", host.public());
        assert!(
            out.contains(&format!("plain: {hello}")) && out.contains(&format!("tunnel: {hello}")),
            "{}: {out}\nstderr: {}",
            profile.name(),
            text(&o.stderr)
        );
        assert_eq!(o.refusals.connections_blocked, 0, "{:?}", o.refusals);
        assert!(
            o.policy.layers.contains(&"network-proxy"),
            "{:?}",
            o.policy.layers
        );
    }
}

#[test]
fn a_name_outside_the_grant_is_refused_and_counted_by_name() {
    if !can_make_test_hosts() {
        return;
    }
    let host = TestHost::new();
    let f = fixture(CURL_BOTH);
    for profile in profiles() {
        // other.test resolves to the very address allowed.test does: only
        // the grant tells them apart.
        let o = run(
            &f,
            &host,
            profile,
            hosts(&["allowed.test", "*.allowed.test"]),
            Vec::new(),
            &["http://other.test/".to_owned()],
        );
        let out = text(&o.stdout);
        assert!(!out.contains("hello from"), "{}: {out}", profile.name());
        assert!(
            out.contains("status=403") || out.contains("403"),
            "{}: {out}",
            profile.name()
        );
        assert_eq!(o.refusals.connections_blocked, 2, "{:?}", o.refusals);
        assert!(
            o.refusals
                .connections
                .iter()
                .all(|c| c.host == "other.test" && c.port == 80 && c.reason == "host-not-granted"),
            "{:?}",
            o.refusals.connections
        );
        assert!(
            o.refusals.summary().contains("other.test:80"),
            "{}",
            o.refusals.summary()
        );
    }
}

#[test]
fn a_granted_name_resolving_to_a_private_address_is_refused_unless_the_operator_allows_the_range() {
    if !can_make_test_hosts() {
        return;
    }
    let host = TestHost::new();
    let f = fixture(CURL_BOTH);
    for profile in profiles() {
        let grant = hosts(&["private.test"]);
        let o = run(
            &f,
            &host,
            profile,
            grant.clone(),
            Vec::new(),
            &["http://private.test/".to_owned()],
        );
        let out = text(&o.stdout);
        assert!(!out.contains("hello from"), "{}: {out}", profile.name());
        assert_eq!(o.refusals.connections_blocked, 2, "{:?}", o.refusals);
        assert!(
            o.refusals
                .connections
                .iter()
                .all(|c| c.reason == "address-refused"),
            "{:?}",
            o.refusals.connections
        );
        // The operator's range lets the same name through.
        let o = run(
            &f,
            &host,
            profile,
            grant,
            vec![host.private_range()],
            &["http://private.test/".to_owned()],
        );
        let out = text(&o.stdout);
        let hello = format!("hello from {}", host.private());
        assert!(
            out.contains(&format!("plain: {hello}")) && out.contains(&format!("tunnel: {hello}")),
            "{}: {out}",
            profile.name()
        );
        assert_eq!(o.refusals.connections_blocked, 0, "{:?}", o.refusals);
    }
}

#[test]
fn raw_tcp_that_bypasses_the_proxy_reaches_nothing() {
    if !can_make_test_hosts() {
        return;
    }
    let host = TestHost::new();
    // The host itself reaches the test host directly: what fails below
    // fails because of the sandbox.
    let mut direct = TcpStream::connect_timeout(
        &SocketAddr::new(IpAddr::V4(host.public()), 80),
        Duration::from_secs(5),
    )
    .expect("the test host answers the host directly");
    direct.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut answer = String::new();
    direct.read_to_string(&mut answer).unwrap();
    assert!(answer.contains("hello from"), "{answer}");
    let f = fixture(
        "#!/bin/bash\n\
         if (exec 3<>/dev/tcp/$1/80) 2>/dev/null; then echo raw-connected; else echo raw-blocked; fi\n\
         if curl -sS -m 10 --noproxy '*' http://$1/ >/dev/null 2>&1; then echo noproxy-connected; else echo noproxy-blocked; fi\n\
         if (exec 3<>/dev/tcp/127.0.0.1/80) 2>/dev/null; then echo loopback-connected; else echo loopback-blocked; fi\n\
         if (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null; then echo proxy-port-open; fi\n",
    );
    for profile in profiles() {
        let o = run(
            &f,
            &host,
            profile,
            hosts(&["allowed.test"]),
            Vec::new(),
            &[host.public().to_string()],
        );
        let out = text(&o.stdout);
        // The proxy port itself is open: the one way out.
        for want in [
            "raw-blocked",
            "noproxy-blocked",
            "loopback-blocked",
            "proxy-port-open",
        ] {
            assert!(
                out.contains(want),
                "{}: {out}\n{}",
                profile.name(),
                text(&o.stderr)
            );
        }
    }
}

#[test]
fn a_host_list_is_refused_where_nothing_could_enforce_it() {
    let f = fixture("echo ran\n");
    let mut policy = Policy {
        profile: Profile::None,
        ..Policy::default()
    };
    policy.grants.network = hosts(&["allowed.test"]);
    let err = Executor::default()
        .run(
            Request {
                skill: f.deck.get("net").unwrap(),
                path: "scripts/probe.sh",
                args: Vec::new(),
                stdin: Input::Null,
                context: CallContext::local("netproxy-test"),
            },
            &policy,
        )
        .expect_err("profile none cannot enforce a host list");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains("by host name"), "{err}");
}
