//! Every count and every token boundary is tiktoken-rs's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Texts that reach every branch: ASCII prose and code, contractions in
/// both cases, digits, whitespace runs with `\r\n` and tabs, letters from
/// several scripts with combining marks, emoji, lone symbols, pieces longer
/// than the heap threshold (random letters make no long token), and
/// special-token markers as plain text.
fn samples() -> Vec<String> {
    let mut fixed: Vec<String> = [
        "",
        " ",
        "a",
        "Hello, world!",
        "It's THEY'RE we'll I'M you'd she'S",
        "fn main() {\n    println!(\"{}\", 12345678);\n}\r\n\r\n\t\tend  ",
        "   leading and trailing   \n\n   ",
        "naïve café — Zürich, Ελληνικά, русский, 日本語のテキスト, 한국어, العربية, हिन्दी",
        "e\u{301}\u{302} combining marks, ZWJ 👩\u{200d}💻 and flags 🇫🇷🇩🇪",
        "<|endoftext|> and <|endofprompt|> are text here",
        "path/to/file.rs:12:3 https://example.com/a?b=c&d=e#f ~/x/y/z",
        "1 12 123 1234 12345 3.14159 1e-9 0xdeadBEEF",
        "\u{0}\u{1}\u{7f}\u{85}\u{202e} controls \u{feff}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // A seeded mix of the same material, and long pieces.
    let alphabet: Vec<char> = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\r\t.,;:'\"!?()[]{}<>/\\-_=+*&^%$#@~`|éüñ日本語한국어ру€😀\u{301}"
        .chars()
        .collect();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for len in [5usize, 17, 64, 99, 100, 101, 250, 1000, 4000] {
        for _ in 0..20 {
            let s: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            fixed.push(s);
        }
        let letters: String = (0..len)
            .map(|_| char::from(b'a' + (next() % 26) as u8))
            .collect();
        fixed.push(letters);
    }
    fixed.push("a".repeat(5000));
    fixed.push(" ".repeat(300) + "x");
    fixed.push(include_str!("../../../../README.md").to_owned());
    fixed
}

#[test]
fn counts_and_token_boundaries_are_tiktokens_for_both_encodings() {
    let pairs = [
        (
            Bpe::o200k_base().unwrap(),
            tiktoken_rs::o200k_base().unwrap(),
        ),
        (
            Bpe::cl100k_base().unwrap(),
            tiktoken_rs::cl100k_base().unwrap(),
        ),
    ];
    for (ours, theirs) in &pairs {
        for text in samples() {
            let tokens = theirs.encode_ordinary(&text);
            let mut at = 0u32;
            let ends: Vec<u32> = tokens
                .iter()
                .map(|t| {
                    at += theirs.decode_bytes(&[*t]).unwrap().len() as u32;
                    at
                })
                .collect();
            assert_eq!(ours.count(&text), tokens.len(), "{text:?}");
            assert_eq!(ours.token_ends(&text), ends, "{text:?}");
        }
    }
}

#[test]
fn the_o200k_pattern_is_tiktokens() {
    assert_eq!(O200K_BASE_PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
}

#[test]
fn every_token_is_found_at_its_rank() {
    for vocab in [Vocab::O200K_BASE, Vocab::CL100K_BASE] {
        for rank in 0..u32::try_from(vocab.len()).unwrap() {
            assert_eq!(vocab.rank(vocab.token(rank)), Some(rank));
        }
        assert_eq!(vocab.rank(b"\xff\xfe not a token \xff"), None);
    }
}
