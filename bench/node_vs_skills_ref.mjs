#!/usr/bin/env node
// skilldeck's Node package against npm `skills-ref` 0.1.5's parser, side by
// side in one run, on the same generated skills (bench/lib/gen_skills.py).
//
//   discover   await Deck.discover({ roots: [DIR] })  vs  every folder's
//              skills-ref readProperties(dir) (Promise.all, as a Node
//              host would load them)
//   activate   K skills activated with arguments, first (cold) and then the
//              same calls again (cached): deck.activate(name, { arguments })
//              vs what a skills-ref user does for each activation (no
//              activation in skills-ref): read SKILL.md, parseFrontmatter,
//              substitute $ARGUMENTS (replaceAll) or append the arguments
//
// Page cache warm (every SKILL.md is read once before timing). Every figure
// is min / median over the repetitions; ratios are of medians (skills-ref
// time / skilldeck time: above 1 means skilldeck is faster).
//
// Setup (release addon built by scripts/test-node.sh or `npm run build` in
// crates/skilldeck-node/npm, skills-ref from npm in a scratch folder):
//
//   npm install --prefix /tmp/nb skills-ref@0.1.5
//   node bench/node_vs_skills_ref.mjs --n 10000 --skills-ref /tmp/nb/node_modules/skills-ref
//
// --dir DIR reuses generated skills; --reps R (default 5); --k K activated
// skills (default 200); --json prints the figures as JSON.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const n = Number(opt('n', '10000'));
const reps = Number(opt('reps', '5'));
const k = Number(opt('k', '200'));
const skillsRefDir = opt('skills-ref', null);
if (!skillsRefDir) {
  console.error('--skills-ref PATH (the installed skills-ref package folder) is required; see the header');
  process.exit(2);
}
const ARGS = 'review   src/main.py  for security issues';

const { Deck } = await import(pathToFileURL(resolve(here, '../crates/skilldeck-node/npm/index.mjs')).href);
const ref = await import(pathToFileURL(resolve(skillsRefDir, 'dist/index.js')).href);

let dir = opt('dir', null);
let generated = null;
if (!dir) {
  generated = mkdtempSync(join(tmpdir(), 'skilldeck-node-bench-'));
  dir = join(generated, 'skills');
  execFileSync('python3', [join(here, 'lib', 'gen_skills.py'), String(n), dir], { stdio: 'ignore' });
}
try {
  const folders = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
  for (const f of folders) readFileSync(join(f, 'SKILL.md')); // warm the page cache

  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { min: s[0], median: s[Math.floor(s.length / 2)], n: s.length };
  };
  async function time(fn) {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  }

  // Discovery.
  const deckTimes = [];
  const refTimes = [];
  let deck;
  let refCount = 0;
  for (let r = 0; r < reps; r++) {
    deckTimes.push(await time(async () => {
      deck = await Deck.discover({ roots: [dir] });
    }));
    refTimes.push(await time(async () => {
      const props = await Promise.all(folders.map((f) => ref.readProperties(f)));
      refCount = props.length;
    }));
  }
  if (deck.size !== folders.length || refCount !== folders.length) {
    throw new Error(`skill counts differ: skilldeck ${deck.size}, skills-ref ${refCount}, folders ${folders.length}`);
  }

  // Activation: K skills spread over the deck, cold then cached.
  const names = deck.skills().map((s) => s.name);
  const picked = Array.from({ length: Math.min(k, names.length) }, (_, i) => names[Math.floor((i * names.length) / Math.min(k, names.length))]);
  const folderOf = new Map(deck.skills().map((s) => [s.name, s.path]));
  async function refActivate(name) {
    const text = await readFile(join(folderOf.get(name), 'SKILL.md'), 'utf8');
    const [, body] = ref.parseFrontmatter(text);
    return body.includes('$ARGUMENTS') ? body.replaceAll('$ARGUMENTS', ARGS) : `${body}\n\nARGUMENTS: ${ARGS}`;
  }
  deck.clearCache();
  const deckCold = await time(async () => {
    for (const name of picked) await deck.activate(name, { arguments: ARGS });
  });
  const deckCached = [];
  const refEach = [];
  for (let r = 0; r < reps; r++) {
    deckCached.push(await time(async () => {
      for (const name of picked) await deck.activate(name, { arguments: ARGS });
    }));
    refEach.push(await time(async () => {
      for (const name of picked) await refActivate(name);
    }));
  }

  const result = {
    n: folders.length,
    reps,
    k: picked.length,
    node: process.version,
    discover: { skilldeck_ms: stats(deckTimes), skills_ref_ms: stats(refTimes) },
    activate: { skilldeck_cold_ms: deckCold, skilldeck_cached_ms: stats(deckCached), skills_ref_ms: stats(refEach) },
  };
  result.ratios = {
    discover: result.discover.skills_ref_ms.median / result.discover.skilldeck_ms.median,
    activate_cached: result.activate.skills_ref_ms.median / result.activate.skilldeck_cached_ms.median,
  };
  if (args.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const f = (x) => `${x.toFixed(1)} ms`;
    console.log(`${result.n} skills, ${reps} repetitions, Node ${process.version}`);
    console.log(`discover   skilldeck ${f(result.discover.skilldeck_ms.median)} (min ${f(result.discover.skilldeck_ms.min)})   skills-ref ${f(result.discover.skills_ref_ms.median)} (min ${f(result.discover.skills_ref_ms.min)})   ratio ${result.ratios.discover.toFixed(1)}x`);
    console.log(`activate   ${result.k} skills: skilldeck cached ${f(result.activate.skilldeck_cached_ms.median)} (cold ${f(deckCold)})   skills-ref ${f(result.activate.skills_ref_ms.median)}   ratio ${result.ratios.activate_cached.toFixed(1)}x`);
  }
} finally {
  if (generated) rmSync(generated, { recursive: true, force: true });
}
