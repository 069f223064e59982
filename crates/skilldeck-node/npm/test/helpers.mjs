// Shared by the tests: a HOME of the test file's own (no user config or
// user skills leak in), small skill folders written per test, the shared
// fixtures (SKILLDECK_FIXTURES, else the checkout's testkit folder).
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const home = mkdtempSync(join(tmpdir(), 'skilldeck-node-home-'));
for (const [name, sub] of [
  ['HOME', ''],
  ['XDG_CONFIG_HOME', '.config'],
  ['XDG_CACHE_HOME', '.cache'],
  ['XDG_STATE_HOME', '.state'],
  ['XDG_DATA_HOME', '.data'],
]) {
  process.env[name] = sub ? join(home, sub) : home;
}
process.chdir(home);

const here = dirname(fileURLToPath(import.meta.url));
export const FIXTURES = process.env.SKILLDECK_FIXTURES
  ? resolve(process.env.SKILLDECK_FIXTURES)
  : resolve(here, '../../../skilldeck-testkit/fixtures');
export const SEED_002 = join(FIXTURES, 'seeds', '002-deep-research');
export const TOOL = 'deep_research__initiate_research';

/** A fresh folder for one test. */
export function tempDir(prefix = 'skilldeck-node-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes `root/name/SKILL.md` (and `files`), returns the folder. */
export function writeSkill(root, name, { description = 'Test skill. Use when testing.', body = '# Instructions\n', frontmatter = '', files = {} } = {}) {
  const folder = join(root, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n${frontmatter}---\n${body}`);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, rel)), { recursive: true });
    writeFileSync(join(folder, rel), content);
  }
  return folder;
}

/** A skills root holding seed 002's deep-research skill as written, and a
 * config offering skill tools in every conversation. */
export function seed002Root() {
  const base = tempDir();
  const root = join(base, 'skills');
  cpSync(SEED_002, join(root, 'deep-research'), { recursive: true });
  const config = join(base, 'skilldeck.toml');
  writeFileSync(config, '[exec]\ntools = "always"\n');
  return { base, root, config };
}

/** A promise and its resolve function (to wait for an event, not a time). */
export function deferred() {
  let resolveIt;
  const promise = new Promise((r) => {
    resolveIt = r;
  });
  return { promise, resolve: resolveIt };
}
