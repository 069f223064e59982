//! In-process validation timing over every skill below a folder (the
//! comparison with skills-ref's in-process `validate()` in `bench/run`):
//! `cargo run --release -p skilldeck --example validate_timing -- DIR [RUNS]`.
//! Prints one JSON line: skills, and min/median seconds with and without the
//! advisory lints (skills-ref has none), and `walked`: the folder walked and
//! every skill validated with lints as it is found (`validate_tree`, what
//! `validate -r` does in-process; the walk is counted too, where skills-ref's
//! timing starts from the list of folders).

use std::time::Instant;

use skilldeck::{ValidationOptions, WalkLimits, find_skill_dirs, validate_many, validate_tree};

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
    let mut walked: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            let (found, reports) = validate_tree(
                dir.as_ref(),
                WalkLimits::default(),
                &ValidationOptions::strict(),
            );
            assert_eq!(reports.len(), found.skills.len());
            t.elapsed().as_secs_f64()
        })
        .collect();
    walked.sort_by(f64::total_cmp);
    let without = time(&ValidationOptions {
        lints: false,
        ..ValidationOptions::strict()
    });
    println!(
        "{{\"skills\": {}, \"lints\": [{}, {}], \"rules_only\": [{}, {}], \"walked\": [{}, {}]}}",
        dirs.len(),
        with.0,
        with.1,
        without.0,
        without.1,
        walked[0],
        walked[walked.len() / 2]
    );
}
