//! `loadgen`: `tools/call activate_skill` load on `skilldeck serve --http`,
//! every request with a JSON-RPC id unique in its session (what `oha` and
//! `wrk` cannot do: they send one fixed body, and a server rightly refuses
//! a second request with the id of one still in flight).
//!
//! ```text
//! loadgen --addr 127.0.0.1:8765 [--path /mcp] [--connections 64] [--sessions 8]
//!         [--seconds 10] [--mode keep-alive|new] [--skills a,b,c] [--threads 1]
//! ```
//!
//! Opens `--sessions` MCP sessions (`initialize`, `notifications/initialized`),
//! then runs `--connections` clients for `--seconds`, each with one request
//! in flight, spread round-robin over the sessions, either reusing its
//! socket (`keep-alive`) or opening a new one per request (`new`, sent with
//! `Connection: close`, so the server closes first and holds the
//! `TIME_WAIT`). A request counts as answered when the status is 200 and
//! the body carries its own id and a `result`. Prints one JSON object:
//! requests, errors, requests/s, latency percentiles (ms) and the CPU time
//! the generator itself used (to tell server from client cost).
//!
//! A second mode, plain HTTP GETs (for the registry's REST API):
//!
//! ```text
//! loadgen --get TARGETS --addr 127.0.0.1:7878 [--connections 64] [--seconds 10]
//!         [--mode keep-alive|new] [--revalidate] [--threads 1]
//! ```
//!
//! `TARGETS` is a file of `PATH<TAB>TOKEN[<TAB>ETAG]` lines (empty lines
//! and `#` comments skipped; `-` as TOKEN sends no `Authorization`). Each
//! client walks the list from its own offset, one request in flight, sending
//! `Authorization: Bearer TOKEN` and, when the line has an ETAG,
//! `If-None-Match: ETAG`. With `--revalidate` a client remembers the `ETag`
//! of each target's last `200` and sends it as `If-None-Match` next time (a
//! cache that revalidates). A request counts as an error when it fails on
//! the wire or its status is neither 2xx nor 304. Prints one JSON object:
//! requests, errors, requests/s, status counts, bytes of bodies, latency
//! percentiles (ms) and the generator's own CPU time.

use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

const PROTOCOL: &str = "2025-11-25";

/// The command line, parsed.
#[derive(Debug, Clone)]
struct Args {
    addr: String,
    path: String,
    connections: usize,
    sessions: usize,
    seconds: f64,
    keep_alive: bool,
    skills: Vec<String>,
    threads: usize,
    /// `--get FILE`: the plain GET mode, its targets.
    get: Option<String>,
    revalidate: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        addr: String::new(),
        path: "/mcp".to_owned(),
        connections: 64,
        sessions: 8,
        seconds: 10.0,
        keep_alive: true,
        skills: Vec::new(),
        threads: 1,
        get: None,
        revalidate: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: String| {
            v.parse::<usize>()
                .map_err(|e| format!("{flag}: {v:?} is not a count ({e})"))
        };
        match flag.as_str() {
            "--addr" => args.addr = value()?,
            "--path" => args.path = value()?,
            "--connections" => args.connections = number(value()?)?.max(1),
            "--sessions" => args.sessions = number(value()?)?.max(1),
            "--threads" => args.threads = number(value()?)?.max(1),
            "--seconds" => {
                let v = value()?;
                args.seconds = v
                    .parse()
                    .map_err(|e| format!("--seconds: {v:?} is not a number ({e})"))?;
            }
            "--mode" => {
                args.keep_alive = match value()?.as_str() {
                    "keep-alive" => true,
                    "new" => false,
                    other => return Err(format!("--mode: {other:?} is not keep-alive or new")),
                }
            }
            "--skills" => {
                args.skills = value()?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            "--get" => args.get = Some(value()?),
            "--revalidate" => args.revalidate = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.addr.is_empty() {
        return Err("--addr HOST:PORT is required".to_owned());
    }
    if args.get.is_none() && args.revalidate {
        return Err("--revalidate needs --get TARGETS".to_owned());
    }
    if args.get.is_none() && args.skills.is_empty() {
        return Err("--skills a,b,c is required (names to activate)".to_owned());
    }
    Ok(args)
}

/// One HTTP/1.1 response: status, the session header, the body.
struct Answer {
    status: u16,
    session: Option<String>,
    etag: Option<String>,
    body: Vec<u8>,
}

fn bad(message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.into())
}

/// Reads one response (`Content-Length`, chunked, or to the end).
async fn read_answer(reader: &mut BufReader<TcpStream>) -> std::io::Result<Answer> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).await?;
    let status = std::str::from_utf8(&line)
        .ok()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let mut length = None;
    let mut chunked = false;
    let mut session = None;
    let mut etag = None;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Err(bad("headers cut short"));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if text.is_empty() {
            break;
        }
        if let Some((name, value)) = text.split_once(':') {
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_owned()),
                "etag" => etag = Some(value.to_owned()),
                _ => {}
            }
        }
    }
    let mut body = Vec::new();
    // 1xx, 204 and 304 answers have no body, whatever the headers say.
    if status < 200 || status == 204 || status == 304 {
    } else if let Some(n) = length {
        body.resize(n, 0);
        reader.read_exact(&mut body).await?;
    } else if chunked {
        loop {
            line.clear();
            reader.read_until(b'\n', &mut line).await?;
            let size = std::str::from_utf8(&line)
                .ok()
                .map(|l| l.trim().split(';').next().unwrap_or("").to_owned())
                .and_then(|s| usize::from_str_radix(&s, 16).ok())
                .ok_or_else(|| bad("bad chunk size"))?;
            if size == 0 {
                line.clear();
                reader.read_until(b'\n', &mut line).await?;
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..]).await?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf).await?;
        }
    } else {
        reader.read_to_end(&mut body).await?;
    }
    Ok(Answer {
        status,
        session,
        etag,
        body,
    })
}

fn request(args: &Args, session: Option<&str>, body: &str, keep_alive: bool) -> Vec<u8> {
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nConnection: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        args.path,
        args.addr,
        if keep_alive { "keep-alive" } else { "close" },
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n"
        ));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

async fn connect(addr: &str) -> std::io::Result<BufReader<TcpStream>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(BufReader::new(stream))
}

/// One request on a new connection (closed after).
async fn once(args: &Args, session: Option<&str>, body: &str) -> std::io::Result<Answer> {
    let mut conn = connect(&args.addr).await?;
    conn.get_mut()
        .write_all(&request(args, session, body, false))
        .await?;
    read_answer(&mut conn).await
}

/// Opens one MCP session; returns its id.
async fn open_session(args: &Args) -> std::io::Result<String> {
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                   "clientInfo": {"name": "loadgen", "version": "0"}},
    });
    let answer = once(args, None, &init.to_string()).await?;
    let session = answer
        .session
        .filter(|_| answer.status == 200)
        .ok_or_else(|| bad(format!("initialize answered {}", answer.status)))?;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    once(args, Some(&session), note).await?;
    Ok(session)
}

/// What one client measured: latencies (µs) and errors.
#[derive(Default)]
struct Tally {
    latencies: Vec<u32>,
    errors: u64,
}

/// One client: requests back to back until `deadline`.
async fn client(
    args: std::sync::Arc<Args>,
    session: String,
    index: usize,
    deadline: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let mut conn: Option<BufReader<TcpStream>> = None;
    let mut n: u64 = 0;
    while Instant::now() < deadline {
        n += 1;
        let id = format!("c{index}-{n}");
        let skill = &args.skills[(index + n as usize) % args.skills.len()];
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"activate_skill","arguments":{{"name":"{skill}"}}}}}}"#
        );
        let bytes = request(&args, Some(&session), &body, args.keep_alive);
        let started = Instant::now();
        let result = async {
            let reader = match conn.as_mut() {
                Some(c) => c,
                None => conn.insert(connect(&args.addr).await?),
            };
            reader.get_mut().write_all(&bytes).await?;
            read_answer(reader).await
        }
        .await;
        let elapsed = started.elapsed();
        tally
            .latencies
            .push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
        let needle = format!(r#""id":"{id}""#);
        let ok = match &result {
            Ok(a) => {
                a.status == 200
                    && contains(&a.body, needle.as_bytes())
                    && contains(&a.body, br#""result""#)
            }
            Err(_) => false,
        };
        if !ok {
            tally.errors += 1;
        }
        if result.is_err() {
            conn = None;
        } else if !args.keep_alive
            && let Some(mut c) = conn.take()
        {
            // The server closes first (`Connection: close`): wait for its
            // FIN so the TIME_WAIT stays on its side.
            let mut rest = [0u8; 64];
            let _ = tokio::time::timeout(Duration::from_secs(1), c.read(&mut rest)).await;
        }
    }
    tally
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// User and system CPU seconds this process used so far (Linux `/proc`).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn percentile(sorted: &[u32], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((q * sorted.len() as f64) as usize).min(sorted.len() - 1);
    f64::from(sorted[i]) / 1000.0
}

async fn run(args: Args) -> Result<serde_json::Value, String> {
    let mut sessions = Vec::new();
    for _ in 0..args.sessions {
        sessions.push(
            open_session(&args)
                .await
                .map_err(|e| format!("cannot open a session on {}: {e}", args.addr))?,
        );
    }
    let args = std::sync::Arc::new(args);
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.seconds);
    let tasks: Vec<_> = (0..args.connections)
        .map(|i| {
            tokio::spawn(client(
                std::sync::Arc::clone(&args),
                sessions[i % sessions.len()].clone(),
                i,
                deadline,
            ))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let tally = task.await.map_err(|e| format!("a client failed: {e}"))?;
        latencies.extend(tally.latencies);
        errors += tally.errors;
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    latencies.sort_unstable();
    Ok(serde_json::json!({
        "mode": if args.keep_alive { "keep-alive" } else { "new" },
        "connections": args.connections,
        "sessions": args.sessions,
        "seconds": wall,
        "requests": latencies.len(),
        "errors": errors,
        "rps": latencies.len() as f64 / wall,
        "p50_ms": percentile(&latencies, 0.50),
        "p90_ms": percentile(&latencies, 0.90),
        "p99_ms": percentile(&latencies, 0.99),
        "max_ms": percentile(&latencies, 1.0),
        "client_cpu_s": cpu,
    }))
}

/// One target of the GET mode: a path, its bearer token, and an ETag to
/// send as `If-None-Match`.
struct Target {
    path: String,
    token: Option<String>,
    etag: Option<String>,
}

/// Reads `PATH<TAB>TOKEN[<TAB>ETAG]` lines; errors name the file and line.
fn read_targets(file: &str) -> Result<Vec<Target>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let mut targets = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{file}:{}", i + 1);
        let mut fields = line.split('\t');
        let path = fields.next().unwrap_or("");
        let token = fields.next();
        let etag = fields.next();
        if fields.next().is_some() {
            return Err(format!("{}: more than PATH, TOKEN and ETAG", at()));
        }
        if !path.starts_with('/') || path.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(format!(
                "{}: {path:?} is not a path (starts with /, no spaces)",
                at()
            ));
        }
        let printable = |v: &str| !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic());
        let token = match token {
            None | Some("-") => None,
            Some(t) if printable(t) => Some(t.to_owned()),
            Some(_) => return Err(format!("{}: the token is empty or has spaces", at())),
        };
        let etag = match etag {
            None => None,
            Some(e) if printable(e.trim()) => Some(e.trim().to_owned()),
            Some(_) => return Err(format!("{}: the ETag is empty or not ASCII", at())),
        };
        targets.push(Target {
            path: path.to_owned(),
            token,
            etag,
        });
    }
    if targets.is_empty() {
        return Err(format!("{file}: no targets"));
    }
    Ok(targets)
}

fn get_request(args: &Args, target: &Target, etag: Option<&str>) -> Vec<u8> {
    let mut head = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: {}\r\nAccept: */*\r\n",
        target.path,
        args.addr,
        if args.keep_alive {
            "keep-alive"
        } else {
            "close"
        },
    );
    if let Some(token) = &target.token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if let Some(etag) = etag {
        head.push_str(&format!("If-None-Match: {etag}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// What one GET client measured.
#[derive(Default)]
struct GetTally {
    latencies: Vec<u32>,
    errors: u64,
    wire_errors: u64,
    statuses: std::collections::BTreeMap<u16, u64>,
    bytes: u64,
}

/// One GET client: requests back to back until `deadline`, walking the
/// targets from `index`'s own offset.
async fn get_client(
    args: std::sync::Arc<Args>,
    targets: std::sync::Arc<Vec<Target>>,
    index: usize,
    deadline: Instant,
) -> GetTally {
    let mut tally = GetTally::default();
    let mut conn: Option<BufReader<TcpStream>> = None;
    let mut learned: std::collections::HashMap<usize, String> = std::collections::HashMap::new();
    let mut next = index * targets.len() / args.connections.max(1);
    while Instant::now() < deadline {
        let t = next % targets.len();
        next = next.wrapping_add(1);
        let target = &targets[t];
        let etag = learned
            .get(&t)
            .map(String::as_str)
            .or(target.etag.as_deref());
        let bytes = get_request(&args, target, etag);
        let started = Instant::now();
        let result = async {
            let reader = match conn.as_mut() {
                Some(c) => c,
                None => conn.insert(connect(&args.addr).await?),
            };
            reader.get_mut().write_all(&bytes).await?;
            read_answer(reader).await
        }
        .await;
        tally
            .latencies
            .push(u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX));
        match &result {
            Ok(answer) => {
                *tally.statuses.entry(answer.status).or_default() += 1;
                tally.bytes += answer.body.len() as u64;
                if !((200..300).contains(&answer.status) || answer.status == 304) {
                    tally.errors += 1;
                }
                if args.revalidate
                    && answer.status == 200
                    && let Some(etag) = &answer.etag
                {
                    learned.insert(t, etag.clone());
                }
            }
            Err(_) => {
                tally.errors += 1;
                tally.wire_errors += 1;
                conn = None;
            }
        }
        if result.is_ok()
            && !args.keep_alive
            && let Some(mut c) = conn.take()
        {
            let mut rest = [0u8; 64];
            let _ = tokio::time::timeout(Duration::from_secs(1), c.read(&mut rest)).await;
        }
    }
    tally
}

async fn run_get(args: Args, file: String) -> Result<serde_json::Value, String> {
    let targets = std::sync::Arc::new(read_targets(&file)?);
    // One request first, so a server that is not there fails loudly.
    connect(&args.addr)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", args.addr))?;
    let args = std::sync::Arc::new(args);
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.seconds);
    let tasks: Vec<_> = (0..args.connections)
        .map(|i| {
            tokio::spawn(get_client(
                std::sync::Arc::clone(&args),
                std::sync::Arc::clone(&targets),
                i,
                deadline,
            ))
        })
        .collect();
    let mut total = GetTally::default();
    for task in tasks {
        let tally = task.await.map_err(|e| format!("a client failed: {e}"))?;
        total.latencies.extend(tally.latencies);
        total.errors += tally.errors;
        total.wire_errors += tally.wire_errors;
        total.bytes += tally.bytes;
        for (status, n) in tally.statuses {
            *total.statuses.entry(status).or_default() += n;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    total.latencies.sort_unstable();
    let statuses: serde_json::Map<String, serde_json::Value> = total
        .statuses
        .iter()
        .map(|(status, n)| (status.to_string(), serde_json::Value::from(*n)))
        .collect();
    Ok(serde_json::json!({
        "mode": if args.keep_alive { "keep-alive" } else { "new" },
        "targets": targets.len(),
        "revalidate": args.revalidate,
        "connections": args.connections,
        "seconds": wall,
        "requests": total.latencies.len(),
        "errors": total.errors,
        "wire_errors": total.wire_errors,
        "statuses": statuses,
        "body_bytes": total.bytes,
        "rps": total.latencies.len() as f64 / wall,
        "p50_ms": percentile(&total.latencies, 0.50),
        "p90_ms": percentile(&total.latencies, 0.90),
        "p99_ms": percentile(&total.latencies, 0.99),
        "max_ms": percentile(&total.latencies, 1.0),
        "client_cpu_s": cpu,
    }))
}

fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("loadgen: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = if args.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads)
            .enable_all()
            .build()
    };
    let result = runtime
        .map_err(|e| format!("no runtime: {e}"))
        .and_then(|rt| {
            rt.block_on(async move {
                match args.get.clone() {
                    Some(file) => run_get(args, file).await,
                    None => run(args).await,
                }
            })
        });
    match result {
        Ok(report) => {
            println!("{report}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("loadgen: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
