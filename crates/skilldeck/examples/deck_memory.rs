//! What a deck holds in memory against the raw text it carries:
//! `cargo run --release -p skilldeck --example deck_memory -- DIR`.

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: deck_memory DIR");
        std::process::exit(2);
    };
    let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([dir.into()]));
    let (held, raw) = (deck.heap_bytes(), deck.raw_bytes());
    println!(
        "{} skills: {:.1} MB held, {:.1} MB raw names/descriptions/paths, {:.2}x ({}-byte Skill)",
        deck.len(),
        held as f64 / 1e6,
        raw as f64 / 1e6,
        held as f64 / raw.max(1) as f64,
        std::mem::size_of::<skilldeck::Skill>()
    );
}
