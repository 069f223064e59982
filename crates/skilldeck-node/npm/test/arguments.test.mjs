// Seed 003's five `$ARGUMENTS` cases (and the positional and escaped
// forms), from Node, as the core's substitution defines them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir, writeSkill } from './helpers.mjs';
import { Deck } from '../index.mjs';

async function bodyOf(body, args) {
  const root = tempDir();
  writeSkill(root, 's', { body });
  const deck = await Deck.discover({ roots: [root] });
  const activation = await deck.activate('s', { arguments: args });
  return activation.body;
}

test('the arguments placeholder is replaced by the whole string', async () => {
  assert.equal(await bodyOf('Review: $ARGUMENTS', 'code'), 'Review: code');
});

test('every arguments placeholder is replaced', async () => {
  assert.equal(await bodyOf('$ARGUMENTS\n\n$ARGUMENTS', 'test'), 'test\n\ntest');
});

test('empty arguments make the placeholder empty', async () => {
  assert.equal(await bodyOf('[$ARGUMENTS]', ''), '[]');
});

test('arguments without a placeholder are appended', async () => {
  assert.equal(await bodyOf('Review code', 'def foo()'), 'Review code\n\nARGUMENTS: def foo()');
});

test('no arguments and no placeholder leave the body unchanged', async () => {
  assert.equal(await bodyOf('Review code', ''), 'Review code');
});

test('positional and quoted arguments', async () => {
  assert.equal(await bodyOf('$0 / $1 / $ARGUMENTS', '"a b" c'), 'a b / c / "a b" c');
});

test('an escaped placeholder stays literal', async () => {
  assert.equal(await bodyOf('Type \\$ARGUMENTS', 'x'), 'Type $ARGUMENTS\n\nARGUMENTS: x');
});
