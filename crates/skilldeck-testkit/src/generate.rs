//! A generated, fixed set of spec-shaped skills for benchmarks and the
//! instruction budgets (`bench/budgets`): the same bytes for the same
//! count and seed, on any machine, with no file outside the repository.
//!
//! Each skill is a folder named after it with a `SKILL.md` (frontmatter:
//! name, a 100–450 character description, license, metadata, allowed-tools,
//! sometimes compatibility; a 2–8 KiB Markdown body, half with
//! `$ARGUMENTS`), a `references/REFERENCE.md` (2–6 KiB), and for some a
//! `scripts/helper.py` or `assets/template.txt`. One skill in 50 has a
//! description with non-ASCII text and one in 100 characters that need
//! escaping, so the slow paths of rendering are exercised too.

use std::io::Write;
use std::path::Path;

const VERBS: [&str; 12] = [
    "analyze",
    "review",
    "generate",
    "convert",
    "validate",
    "summarize",
    "extract",
    "format",
    "migrate",
    "audit",
    "deploy",
    "document",
];
const NOUNS: [&str; 16] = [
    "pdf",
    "csv",
    "json",
    "sql",
    "docker",
    "kubernetes",
    "terraform",
    "git",
    "python",
    "rust",
    "excel",
    "invoice",
    "logs",
    "metrics",
    "schema",
    "release",
];
const DOMAINS: [&str; 8] = [
    "finance", "legal", "devops", "data", "security", "frontend", "backend", "research",
];
const WORDS: [&str; 48] = [
    "the", "of", "and", "to", "in", "is", "for", "with", "on", "that", "by", "file", "data",
    "step", "check", "output", "input", "result", "skill", "agent", "user", "task", "run", "value",
    "field", "table", "error", "config", "option", "format", "schema", "command", "script",
    "template", "rule", "review", "summary", "validate", "convert", "extract", "ensure", "verify",
    "before", "after", "when", "each", "only", "never",
];

/// A small deterministic generator (xorshift64*): no dependency, the same
/// sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.range(0, items.len() - 1)]
    }

    fn sentence(&mut self, lo: usize, hi: usize) -> String {
        let n = self.range(lo, hi);
        let mut s = String::new();
        for i in 0..n {
            let w = self.pick(&WORDS);
            if i == 0 {
                let mut c = w.chars();
                if let Some(first) = c.next() {
                    s.extend(first.to_uppercase());
                    s.push_str(c.as_str());
                }
            } else {
                s.push(' ');
                s.push_str(w);
            }
        }
        s.push('.');
        s
    }

    fn paragraph(&mut self) -> String {
        let n = self.range(3, 6);
        (0..n)
            .map(|_| self.sentence(8, 20))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The name of skill `index` of a set made with `seed` (the folder name).
fn skill_name(rng: &mut Rng, index: usize) -> (String, &'static str, &'static str, &'static str) {
    let (verb, noun, domain) = (rng.pick(&VERBS), rng.pick(&NOUNS), rng.pick(&DOMAINS));
    (
        format!("{verb}-{noun}-{domain}-{index:05}"),
        verb,
        noun,
        domain,
    )
}

/// Writes `n` skills into `root` (created if missing), the same bytes for
/// the same `n` and `seed`. Returns the number of bytes written.
pub fn skill_set(root: impl AsRef<Path>, n: usize, seed: u64) -> std::io::Result<u64> {
    let root = root.as_ref();
    std::fs::create_dir_all(root)?;
    let mut rng = Rng(seed | 1);
    let mut written = 0u64;
    for index in 0..n {
        let (name, verb, noun, domain) = skill_name(&mut rng, index);
        let dir = root.join(&name);
        std::fs::create_dir_all(dir.join("references"))?;
        let mut description = format!("{} {noun} artifacts for {domain} workflows.", capital(verb));
        for _ in 0..rng.range(1, 4) {
            description.push(' ');
            description.push_str(&rng.sentence(6, 14));
        }
        description.truncate(400);
        if index % 50 == 7 {
            description.push_str(" Handles naïve café names — and 日本語 text.");
        }
        if index % 100 == 3 {
            description.push_str(" Reads <input> & writes 'output'.");
        }
        description.push_str(&format!(
            " Use when the user mentions {noun}, {verb} or {domain}."
        ));
        let mut md = format!(
            "---\nname: {name}\ndescription: \"{description}\"\nlicense: {}\n",
            ["MIT", "Apache-2.0", "Proprietary"][index % 3]
        );
        if rng.range(0, 9) < 3 {
            md.push_str("compatibility: Requires python3 and network access\n");
        }
        md.push_str(&format!(
            "metadata:\n  author: team-{domain}\n  version: \"{}.{}.{}\"\n  tags: {noun},{verb},{domain}\nallowed-tools: Read Grep Bash(python:*)\n---\n\n",
            rng.range(0, 3),
            rng.range(0, 9),
            rng.range(0, 9)
        ));
        md.push_str(&format!(
            "# {} {} ({name})\n\n## When to use\n\n{}\n\n",
            capital(verb),
            noun.to_uppercase(),
            rng.paragraph()
        ));
        if rng.range(0, 1) == 0 {
            md.push_str("## Input\n\nThe user request is: $ARGUMENTS\n\n");
        }
        md.push_str("## Instructions\n\n");
        let target = rng.range(2048, 8192);
        let mut step = 1;
        while md.len() < target {
            md.push_str(&format!("{step}. {}\n", rng.sentence(10, 25)));
            if step % 4 == 0 {
                md.push_str(&format!(
                    "\n```bash\npython scripts/helper.py --{noun} input.{noun}\n```\n\n"
                ));
            }
            step += 1;
        }
        md.push_str(
            "\n## Reference\n\nRead [references/REFERENCE.md](references/REFERENCE.md) for the fields.\n",
        );
        written += write(&dir.join("SKILL.md"), md.as_bytes())?;
        let mut reference = format!("# {} reference for {name}\n\n", noun.to_uppercase());
        let target = rng.range(2048, 6144);
        while reference.len() < target {
            reference.push_str(&format!(
                "## Field `{}_{}`\n\n{}\n\n",
                rng.pick(&WORDS),
                rng.range(1, 999),
                rng.paragraph()
            ));
        }
        written += write(&dir.join("references/REFERENCE.md"), reference.as_bytes())?;
        if index % 4 == 1 {
            std::fs::create_dir_all(dir.join("scripts"))?;
            let script = format!(
                "#!/usr/bin/env python3\n\"\"\"Helper for {name}.\"\"\"\nimport json, sys\nprint(json.dumps({{\"skill\": \"{name}\"}}))\n"
            );
            written += write(&dir.join("scripts/helper.py"), script.as_bytes())?;
        }
        if index % 7 == 2 {
            std::fs::create_dir_all(dir.join("assets"))?;
            written += write(&dir.join("assets/template.txt"), rng.paragraph().as_bytes())?;
        }
    }
    Ok(written)
}

fn capital(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|first| first.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn write(path: &Path, bytes: &[u8]) -> std::io::Result<u64> {
    std::fs::File::create(path)?.write_all(bytes)?;
    Ok(bytes.len() as u64)
}
