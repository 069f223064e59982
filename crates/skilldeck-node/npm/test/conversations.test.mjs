// Conversations: the model's activations are tracked per conversation (the
// host's rule): the same skill with the same arguments again answers the
// short "already active" notice; another conversation, other arguments or
// `reload` get the instructions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, writeSkill } from './helpers.mjs';
import { Deck } from '../index.mjs';

async function deck() {
  const root = tempDir();
  writeSkill(root, 'review', { body: 'Review $ARGUMENTS carefully.\n' });
  return Deck.discover({ roots: [root] });
}

test('the same activation again in a conversation is the already-active notice', async () => {
  const d = await deck();
  const first = await d.activate('review', { arguments: 'a.rs', conversation: 'c1' });
  assert.equal(first.alreadyActive, false);
  assert.match(first.text, /Review a\.rs carefully/);
  const again = await d.activate('review', { arguments: 'a.rs', conversation: 'c1' });
  assert.equal(again.alreadyActive, true);
  assert.equal(again.body, undefined);
  assert.doesNotMatch(again.text, /carefully/);
});

test('conversations are kept apart (per thread)', async () => {
  const d = await deck();
  await d.activate('review', { arguments: 'a.rs', conversation: 'thread-1' });
  const other = await d.activate('review', { arguments: 'a.rs', conversation: 'thread-2' });
  assert.equal(other.alreadyActive, false);
  assert.match(other.text, /Review a\.rs/);
});

test('other arguments, reload and forget deliver the instructions again', async () => {
  const d = await deck();
  await d.activate('review', { arguments: 'a.rs', conversation: 'c' });
  assert.equal((await d.activate('review', { arguments: 'b.rs', conversation: 'c' })).alreadyActive, false);
  assert.equal((await d.activate('review', { arguments: 'b.rs', conversation: 'c', reload: true })).alreadyActive, false);
  assert.equal((await d.activate('review', { arguments: 'b.rs', conversation: 'c' })).alreadyActive, true);
  assert.equal(d.forget('c', 'review'), true);
  assert.equal((await d.activate('review', { arguments: 'b.rs', conversation: 'c' })).alreadyActive, false);
});

test('the application path always answers the instructions, from the cache', async () => {
  const d = await deck();
  d.clearCache();
  const a = await d.activate('review', { arguments: 'x' });
  const b = await d.activate('review', { arguments: 'x' });
  assert.equal(a.alreadyActive, false);
  assert.equal(b.text, a.text);
  const stats = d.cacheStats();
  assert.ok(stats.hits >= 1, JSON.stringify(stats));
  assert.ok(stats.entries >= 1);
  d.clearCache();
  assert.equal(d.cacheStats().entries, 0);
});
