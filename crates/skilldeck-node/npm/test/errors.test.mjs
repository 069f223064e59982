// The error classes: the Python hierarchy's names, `kind` and the
// structured fields, the same classes from ESM and CommonJS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { tempDir, writeSkill } from './helpers.mjs';
import * as esm from '../index.mjs';

const { Deck, SkilldeckError, SkillNotFoundError, SkillParsingError, ResourceError, InvalidValueError, InvalidArgumentsError, SkillInvocationError, validate } = esm;

async function deck() {
  const root = tempDir();
  writeSkill(root, 'pdf-tools', { files: { 'notes.md': 'hi' } });
  writeSkill(root, 'broken', { frontmatter: 'metadata: [unclosed\n' });
  return { deck: await Deck.discover({ roots: [root] }), root };
}

test('an unknown skill is a SkillNotFoundError with close names', async () => {
  const { deck: d } = await deck();
  await assert.rejects(d.activate('pdf-tool'), (e) => {
    assert.ok(e instanceof SkillNotFoundError);
    assert.ok(e instanceof SkilldeckError);
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'SkillNotFoundError');
    assert.equal(e.skillName, 'pdf-tool');
    assert.deepEqual(e.suggestions, ['pdf-tools']);
    assert.match(e.message, /pdf-tools/);
    return true;
  });
  assert.throws(() => d.get('nope'), SkillNotFoundError);
});

test('a path leaving the skill folder is a ResourceError', async () => {
  const { deck: d } = await deck();
  assert.equal((await d.read('pdf-tools', 'notes.md')).text, 'hi');
  await assert.rejects(d.read('pdf-tools', '../broken/SKILL.md'), ResourceError);
});

test('an option value the core does not accept is an InvalidValueError', async () => {
  const { deck: d } = await deck();
  await assert.rejects(d.catalog({ format: 'yaml' }), InvalidValueError);
  await assert.rejects(d.search('x', { pattern: '(' }), InvalidValueError);
  await assert.rejects(validate('.', 'sloppy'), InvalidValueError);
});

test('arguments that do not match the schema are an InvalidArgumentsError with its kind', async () => {
  const { deck: d } = await deck();
  await assert.rejects(d.callHostTool('activate_skill', { nme: 'x' }, 'c1'), (e) => {
    assert.ok(e instanceof InvalidArgumentsError);
    assert.ok(e instanceof InvalidValueError);
    assert.equal(e.kind, 'invalid_arguments');
    return true;
  });
  await assert.rejects(d.callTool('nobody__nothing', {}), (e) => {
    assert.ok(e instanceof InvalidArgumentsError);
    assert.equal(e.kind, 'unknown_tool');
    return true;
  });
});

test('a skill the model may not use is a SkillInvocationError of kind not_model_invocable', async () => {
  const root = tempDir();
  writeSkill(root, 'manual-only', { frontmatter: 'disable-model-invocation: true\n' });
  const d = await Deck.discover({ roots: [root] });
  await assert.rejects(d.activate('manual-only', { conversation: 'c1' }), (e) => {
    assert.ok(e instanceof SkillInvocationError);
    assert.equal(e.kind, 'not_model_invocable');
    return true;
  });
  // The application may still activate it.
  assert.match((await d.activate('manual-only')).text, /Instructions/);
});

test('a skipped skill is reported with its file, and activating it is a SkillNotFoundError', async () => {
  const { deck: d, root } = await deck();
  const problems = d.diagnostics().filter((x) => x.isError);
  assert.ok(problems.some((x) => x.file && x.file.startsWith(root)), JSON.stringify(problems));
  await assert.rejects(d.activate('broken'), SkillNotFoundError);
  const found = await validate(`${root}/broken`);
  assert.ok(found.some((x) => x.isError && x.line !== null));
});

test('a SKILL.md that became unreadable is a SkillParsingError with diagnostics', async () => {
  const root = tempDir();
  const folder = writeSkill(root, 'changing');
  const d = await Deck.discover({ roots: [root] });
  const { writeFileSync } = await import('node:fs');
  writeFileSync(`${folder}/SKILL.md`, 'no frontmatter any more\n');
  await assert.rejects(d.activate('changing'), (e) => {
    assert.ok(e instanceof SkillParsingError, `${e.name}: ${e.message}`);
    assert.ok(e.diagnostics.length >= 1);
    assert.equal(typeof e.diagnostics[0].code, 'string');
    return true;
  });
});

test('ESM and CommonJS give the same classes and the same addon', () => {
  const require = createRequire(import.meta.url);
  const cjs = require('../index.cjs');
  assert.equal(cjs.SkillNotFoundError, SkillNotFoundError);
  assert.equal(cjs.Deck, Deck);
});
