//! `skilldeck sandbox`: which isolation layers this machine offers and the
//! policy `run` would apply, so an operator can see it before trusting it.

use std::io::Write;

use skilldeck_exec::{Executor, Profile, TreeLimitsKind, TreeLimitsMode, probe};
use skilldeck_host::execution::Execution;

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::render;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let probe = probe();
    // The config's [exec] section (no skill's grants); `auto` may refuse.
    let execution = crate::run::execution(ctx)?;
    let (policy, refusal) = match execution.policy("") {
        Ok(p) => (p, None),
        Err(e) => {
            // `auto` with nothing available: show the native policy it
            // would have, and the refusal.
            let mut exec = execution.config().clone();
            exec.sandbox = skilldeck::deck::SandboxProfile::Landlock;
            (Execution::new(exec).policy("")?, Some(e.to_string()))
        }
    };
    let profile = policy.profile;
    let executor = Executor::default();
    let effective = executor.effective(&policy);
    if args.format == Format::Json {
        let mut out = render::stdout();
        render::write_json(
            &mut out,
            &serde_json::json!({
                "probe": probe,
                "profile": profile,
                "ready": refusal.is_none() && (profile != Profile::Native || probe.native_ready),
                "refusal": refusal,
                "policy": effective,
                "work_root": executor.work_root(),
            }),
        )?;
        out.flush()?;
        return Ok(exit::OK);
    }
    let mut out = render::text_stdout();
    writeln!(out, "Isolation layers on this machine:")?;
    for layer in &probe.layers {
        let mark = if layer.available { "yes" } else { "NO " };
        writeln!(out, "  {:<14} {mark}  {}", layer.name, layer.detail)?;
    }
    let bwrap = &probe.bwrap_layer;
    if bwrap.available {
        writeln!(
            out,
            "  {:<14} yes  {}: profile `bwrap` available (--sandbox bwrap)",
            bwrap.name, bwrap.detail
        )?;
    } else {
        writeln!(
            out,
            "  {:<14} NO   {}: profile `bwrap` refuses",
            bwrap.name, bwrap.detail
        )?;
    }
    let tree = &probe.tree_limits;
    writeln!(
        out,
        "  {:<14} {}  {}",
        "tree-limits",
        if tree.kind == TreeLimitsKind::None {
            "NO "
        } else {
            "yes"
        },
        match tree.kind {
            TreeLimitsKind::None => format!("none: {}", tree.detail),
            kind => format!("{}: {}", kind.name(), tree.detail),
        }
    )?;
    writeln!(out, "\nConfigured profile: {}", policy.profile.name())?;
    if let Some(refusal) = &refusal {
        writeln!(out, "  {refusal}")?;
    }
    if probe.native_ready {
        writeln!(out, "\nProfile native: ready (every layer available).")?;
    } else {
        writeln!(
            out,
            "\nProfile native: REFUSES to run: missing {}.\n  (an operator may choose `--sandbox none`: no isolation)",
            probe.missing().join("; ")
        )?;
    }
    let l = &effective.limits;
    writeln!(out, "\nPolicy that `skilldeck run` applies:")?;
    writeln!(out, "  layers:      {}", effective.layers.join(", "))?;
    writeln!(out, "  runs as uid: {}", effective.uid)?;
    writeln!(
        out,
        "  filesystem:  system dirs read-only; the skill folder read-only; a private work dir (cwd, HOME) and TMPDIR; nothing else"
    )?;
    writeln!(
        out,
        "  network:     {}",
        match &effective.network {
            skilldeck_exec::NetworkGrant::All => "granted".to_owned(),
            skilldeck_exec::NetworkGrant::None => {
                "none (no TCP/UDP/DNS, no host Unix sockets)".to_owned()
            }
            hosts @ skilldeck_exec::NetworkGrant::Hosts(_) => hosts.describe(),
        }
    )?;
    writeln!(
        out,
        "  environment: cleared; PATH, LANG, HOME, TMPDIR and SKILLDECK_* only"
    )?;
    writeln!(
        out,
        "  per process: timeout {} s, output {} bytes per stream, address space {} bytes, {} processes (RLIMIT_NPROC), files up to {} bytes, {} s CPU, {} open files",
        l.timeout.as_secs(),
        l.output_cap,
        l.memory_bytes,
        l.max_processes,
        l.file_size_bytes,
        l.cpu_seconds,
        l.open_files
    )?;
    let per_run = match (effective.tree_limits.kind, policy.tree_limits) {
        (TreeLimitsKind::None, TreeLimitsMode::Require) => format!(
            "REQUIRED but unavailable: every run is refused ({})",
            effective.tree_limits.detail
        ),
        (TreeLimitsKind::None, TreeLimitsMode::Auto) => format!(
            "NOT APPLIED (tree-limits = \"auto\"): memory and processes are capped per process only ({})",
            effective.tree_limits.detail
        ),
        (kind, _) => format!(
            "{} bytes of memory (swap off) and {} processes for the whole run ({})",
            l.memory_bytes,
            l.max_processes,
            kind.name()
        ),
    };
    writeln!(out, "  per run:     {per_run}")?;
    writeln!(
        out,
        "  work dir:    {}; under {}",
        match effective.workdir_quota_bytes {
            Some(b) => format!("a tmpfs of {b} bytes (ENOSPC past it)"),
            None => "a host folder, no size cap (profile none)".to_owned(),
        },
        executor.work_root().display()
    )?;
    writeln!(
        out,
        "  concurrency: {} at once (overall and per agent), {} may wait",
        ctx.config.exec.concurrency, ctx.config.exec.queue
    )?;
    out.flush()?;
    Ok(exit::OK)
}
