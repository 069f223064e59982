//! Benchmark driver for `bench/exec.py`: the cost of the sandbox on
//! `/bin/true` against a plain spawn (and `bwrap` when installed), and the
//! concurrency cap under 100 simultaneous calls. Prints one JSON object.
//!
//!     cargo run --release -p skilldeck-exec --example exec_bench -- [RUNS]

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use skilldeck_exec::{
    CallContext, Caps, Executor, ExecutorConfig, Input, Policy, Profile, Request, probe,
};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn stats((mut ms, mut cpu): (Vec<f64>, Vec<f64>)) -> serde_json::Value {
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    cpu.sort_by(|a, b| a.partial_cmp(b).unwrap());
    serde_json::json!({
        "runs": ms.len(),
        "p50_ms": percentile(&ms, 0.5),
        "p99_ms": percentile(&ms, 0.99),
        "min_ms": ms[0],
        "cpu_p50_ms": percentile(&cpu, 0.5),
        "cpu_p99_ms": percentile(&cpu, 0.99),
    })
}

/// CPU time (user + system) of this process and every waited-for
/// descendant, in ms: the cost of a call, whatever the machine's load.
fn cpu_ms() -> f64 {
    let mut total = 0.0;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage fills the zeroed struct we own.
        #[allow(unsafe_code)]
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut ru);
            ru
        };
        for tv in [ru.ru_utime, ru.ru_stime] {
            total += tv.tv_sec as f64 * 1000.0 + tv.tv_usec as f64 / 1000.0;
        }
    }
    total
}

fn time<F: FnMut()>(runs: usize, mut f: F) -> (Vec<f64>, Vec<f64>) {
    for _ in 0..5 {
        f();
    }
    (0..runs)
        .map(|_| {
            let c = cpu_ms();
            let t = Instant::now();
            f();
            (t.elapsed().as_secs_f64() * 1000.0, cpu_ms() - c)
        })
        .unzip()
}

fn request<'a>(skill: &'a skilldeck::Skill, path: &'a str, agent: &str) -> Request<'a> {
    Request {
        skill,
        path,
        args: Vec::new(),
        stdin: Input::Null,
        context: CallContext {
            agent_id: agent.to_owned(),
            ..CallContext::default()
        },
    }
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("bench");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: bench\ndescription: Benchmark. Use in benchmarks.\n---\n# Bench\n",
    )
    .unwrap();
    std::fs::write(dir.join("scripts/true"), "#!/bin/true\n").unwrap();
    std::fs::write(
        dir.join("scripts/span.sh"),
        "date +%s%N\nsleep 0.05\ndate +%s%N\n",
    )
    .unwrap();
    let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([root
        .path()
        .to_path_buf()]));
    let skill = deck.get("bench").unwrap();
    let script = dir.join("scripts/true");
    let executor = Executor::default();
    let native = Policy::default();
    let none = Policy {
        profile: Profile::None,
        ..Policy::default()
    };

    let plain = time(runs, || {
        assert!(
            Command::new("/bin/true")
                .arg(&script)
                .status()
                .unwrap()
                .success()
        );
    });
    let sandboxed = probe().native_ready.then(|| {
        time(runs, || {
            let o = executor
                .run(request(skill, "scripts/true", "a"), &native)
                .unwrap();
            assert_eq!(
                o.exit_code,
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
        })
    });
    let unsandboxed = time(runs, || {
        let o = executor
            .run(request(skill, "scripts/true", "a"), &none)
            .unwrap();
        assert_eq!(o.exit_code, Some(0));
    });
    let bwrap = skilldeck_exec::on_sandbox_path("bwrap").map(|bwrap| {
        time(runs, || {
            let ok = Command::new(&bwrap)
                .args([
                    "--unshare-all",
                    "--die-with-parent",
                    "--new-session",
                    "--ro-bind",
                    "/usr",
                    "/usr",
                    "--symlink",
                    "usr/bin",
                    "/bin",
                    "--symlink",
                    "usr/lib",
                    "/lib",
                    "--symlink",
                    "usr/lib64",
                    "/lib64",
                    "--proc",
                    "/proc",
                    "--dev",
                    "/dev",
                    "--tmpfs",
                    "/tmp",
                    "/bin/true",
                ])
                .status()
                .unwrap()
                .success();
            assert!(ok);
        })
    });

    // 100 calls from 100 threads at once through one executor capped at 3;
    // each script prints its start and end (ns); the peak overlap is
    // computed from those stamps.
    let capped = Arc::new(Executor::new(ExecutorConfig {
        caps: Caps {
            total: 3,
            per_agent: 3,
            queue: 200,
            wait: Duration::from_secs(120),
        },
        ..ExecutorConfig::default()
    }));
    let policy = if probe().native_ready {
        native.clone()
    } else {
        none.clone()
    };
    let started = Instant::now();
    let intervals: Vec<(u128, u128)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..100)
            .map(|i| {
                let capped = capped.clone();
                let policy = policy.clone();
                s.spawn(move || {
                    let agent = format!("agent-{}", i % 5);
                    let o = capped
                        .run(request(skill, "scripts/span.sh", &agent), &policy)
                        .unwrap();
                    let out = String::from_utf8(o.stdout).unwrap();
                    let mut it = out.lines().map(|l| l.trim().parse::<u128>().unwrap());
                    (it.next().unwrap(), it.next().unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = started.elapsed().as_secs_f64();
    let mut events: Vec<(u128, i32)> = intervals
        .iter()
        .flat_map(|(a, b)| [(*a, 1), (*b, -1)])
        .collect();
    events.sort();
    let (mut now, mut peak) = (0, 0);
    for (_, d) in events {
        now += d;
        peak = peak.max(now);
    }

    let p = |v: &Option<(Vec<f64>, Vec<f64>)>| v.clone().map(stats);
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "plain_spawn": stats(plain),
            "sandboxed_native": p(&sandboxed),
            "profile_none": stats(unsandboxed),
            "bwrap": p(&bwrap),
            "concurrency": {
                "calls": intervals.len(),
                "cap": 3,
                "peak_overlap": peak,
                "wall_s": wall,
                "profile": policy.profile,
            },
            "probe": probe(),
            "load_average": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        }))
        .unwrap()
    );
}
