//! Precomputes the BPE token tables of `o200k_base` and `cl100k_base` from
//! the vocabularies tiktoken-rs embeds, so a token budget starts without
//! building them (see `src/tokenizer/mod.rs`). Per encoding, in `OUT_DIR`:
//! `NAME.bytes` (every token's bytes, by rank), `NAME.offsets` (where each
//! rank's bytes start, little-endian `u32`, one more than the ranks) and
//! `NAME.table` (an open-addressing hash table, little-endian `u32` slots,
//! a power of two of them: rank + 1 and a tag of the hash, 0 = empty; the
//! layout is `src/tokenizer/hash.rs`'s).

#[path = "src/tokenizer/hash.rs"]
mod hash;

use std::error::Error;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/tokenizer/hash.rs");
    let out = std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?;
    let out = Path::new(&out);
    let o200k = tiktoken_rs::o200k_base()?;
    write_tables(out, "o200k_base", &o200k, &[199_999, 200_018], 199_998)?;
    let cl100k = tiktoken_rs::cl100k_base()?;
    write_tables(
        out,
        "cl100k_base",
        &cl100k,
        &[100_257, 100_258, 100_259, 100_260, 100_276],
        100_256,
    )
}

/// Writes the three tables of `bpe`'s `ordinary` tokens (ranks 0 up to the
/// first `special` rank or the first rank with no token).
fn write_tables(
    out: &Path,
    name: &str,
    bpe: &tiktoken_rs::CoreBPE,
    special: &[u32],
    ordinary: usize,
) -> Result<(), Box<dyn Error>> {
    // Ordinary ranks are dense from 0; the specials sit above them.
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    for rank in 0u32.. {
        if special.contains(&rank) {
            break;
        }
        match bpe.decode_bytes(&[rank]) {
            Ok(bytes) => tokens.push(bytes),
            Err(_) => break,
        }
    }
    if tokens.len() != ordinary {
        return Err(format!(
            "{name}: {} ordinary tokens, expected {ordinary}",
            tokens.len()
        )
        .into());
    }
    let mut blob = Vec::new();
    let mut offsets = Vec::with_capacity(4 * (tokens.len() + 1));
    for t in &tokens {
        offsets.extend_from_slice(&u32::try_from(blob.len())?.to_le_bytes());
        blob.extend_from_slice(t);
    }
    offsets.extend_from_slice(&u32::try_from(blob.len())?.to_le_bytes());
    if tokens.len() + 1 >= 1 << hash::RANK_BITS {
        return Err(format!(
            "{name}: {} tokens do not fit the table's {} rank bits",
            tokens.len(),
            hash::RANK_BITS
        )
        .into());
    }
    let slots = hash::slots_for(tokens.len());
    let mask = slots - 1;
    let mut table = vec![0u32; slots];
    for (rank, t) in tokens.iter().enumerate() {
        let h = hash::token_hash(t);
        let mut i = (h as usize) & mask;
        while table[i] != 0 {
            i = (i + 1) & mask;
        }
        table[i] = hash::entry(u32::try_from(rank)?, h);
    }
    let table: Vec<u8> = table.iter().flat_map(|e| e.to_le_bytes()).collect();
    std::fs::write(out.join(format!("{name}.bytes")), &blob)?;
    std::fs::write(out.join(format!("{name}.offsets")), &offsets)?;
    std::fs::write(out.join(format!("{name}.table")), &table)?;
    Ok(())
}
