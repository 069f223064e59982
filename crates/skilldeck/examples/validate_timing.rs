//! In-process validation timing over every skill below a folder (the
//! comparison with skills-ref's in-process `validate()` in `bench/run`):
//! `cargo run --release -p skilldeck --example validate_timing -- DIR [RUNS]`.
//! Prints one JSON line: skills, and min/median seconds with and without the
//! advisory lints (skills-ref has none).

use std::time::Instant;

use skilldeck::{ValidationOptions, WalkLimits, find_skill_dirs, validate_many};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: validate_timing DIR [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(7);
    let dirs = find_skill_dirs(dir.as_ref(), WalkLimits::default()).skill_dirs();
    let time = |options: &ValidationOptions| {
        let mut times: Vec<f64> = (0..runs.max(1))
            .map(|_| {
                let t = Instant::now();
                let reports = validate_many(&dirs, options);
                assert_eq!(reports.len(), dirs.len());
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        (times[0], times[times.len() / 2])
    };
    let with = time(&ValidationOptions::strict());
    let without = time(&ValidationOptions {
        lints: false,
        ..ValidationOptions::strict()
    });
    println!(
        "{{\"skills\": {}, \"lints\": [{}, {}], \"rules_only\": [{}, {}]}}",
        dirs.len(),
        with.0,
        with.1,
        without.0,
        without.1
    );
}
