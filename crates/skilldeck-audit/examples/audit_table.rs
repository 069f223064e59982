//! Prints the audit's precision and recall per class on the labelled set
//! (the table in docs/benchmarks.md), then every miss and false alarm.
//!
//!     cargo run -p skilldeck-audit --example audit_table

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/measure.rs"]
mod measure;

fn main() {
    let m = measure::measure();
    let malicious = m
        .audits
        .iter()
        .filter(|(_, l)| !l.classes.is_empty())
        .count();
    println!(
        "labelled set: {} skills ({} malicious, {} benign look-alikes)\n",
        m.audits.len(),
        malicious,
        m.audits.len() - malicious
    );
    print!("{}", measure::table(&m));
    if !m.mistakes.is_empty() {
        println!();
        for line in &m.mistakes {
            println!("{line}");
        }
    }
}
