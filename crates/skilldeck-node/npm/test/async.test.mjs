// Every slow call answers a Promise and runs off the JavaScript thread:
// calls overlap (Promise.all), and the JavaScript thread stays free while
// a call is in progress (proved by events, never by timing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deferred, seed002Root, tempDir, writeSkill, TOOL } from './helpers.mjs';
import { Deck } from '../index.mjs';

test('overlapping calls all answer, as the same calls one by one do', async () => {
  const root = tempDir();
  for (let i = 0; i < 20; i++) writeSkill(root, `skill-${i}`, { description: `Skill number ${i}. Use for task ${i}.`, body: `Do $ARGUMENTS (${i}).\n` });
  const [a, b] = await Promise.all([Deck.discover({ roots: [root] }), Deck.discover({ roots: [root] })]);
  const pending = [];
  for (let i = 0; i < 20; i++) {
    pending.push(a.activate(`skill-${i}`, { arguments: `job ${i}` }));
    pending.push(b.search(`task ${i}`, { limit: 1 }));
  }
  pending.push(a.catalog(), b.reload(), a.read('skill-3', 'SKILL.md'));
  for (const p of pending) assert.ok(p instanceof Promise);
  const results = await Promise.all(pending);
  for (let i = 0; i < 20; i++) {
    assert.equal(results[2 * i].body, `Do job ${i} (${i}).`);
    assert.equal(results[2 * i + 1][0].name, `skill-${i}`);
  }
  assert.match(results[40], /skill-19/);
  assert.equal(results[41].catalogChanged, false);
  assert.match(results[42].text, /name: skill-3/);
});

test('the JavaScript thread is free while a call is in progress', async () => {
  const { root, config } = seed002Root();
  const d = await Deck.discover({ roots: [root], config });
  const entered = deferred();
  const release = deferred();
  d.registerToolHandler(TOOL, async (args) => {
    entered.resolve();
    await release.promise;
    return { task: 't-1', query: args.query };
  });
  // The call waits in its handler (on the JavaScript thread's promise) ...
  const slow = d.callHostTool(TOOL, { query: 'q' }, 'c1');
  await entered.promise;
  // ... while other calls go through and JavaScript keeps running.
  const activation = await d.activate('deep-research');
  assert.match(activation.text, /Deep Research Skill/);
  release.resolve();
  const answer = await slow;
  assert.deepEqual(answer.structured, { task: 't-1', query: 'q' });
});
