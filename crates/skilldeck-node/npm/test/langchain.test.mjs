// The LangChain.js tools (`skilldeck/langchain`): per-skill tools keyed by
// the run's thread, the activate style, the declared tool with its handler.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seed002Root, TOOL } from './helpers.mjs';
import { Deck, ResourceError } from '../index.mjs';
import { createTools } from '../langchain.mjs';

async function deck() {
  const { root, config } = seed002Root();
  return Deck.discover({ roots: [root], config });
}

test('per-skill tools track activations per LangGraph thread', async () => {
  const d = await deck();
  const [skill] = createTools(d);
  assert.equal(skill.name, 'deep-research');
  const t1 = { configurable: { thread_id: 't1' } };
  assert.match(await skill.invoke({ arguments: '' }, t1), /Deep Research Skill/);
  assert.doesNotMatch(await skill.invoke({ arguments: '' }, t1), /Deep Research Skill/);
  assert.match(await skill.invoke({ arguments: '' }, { configurable: { thread_id: 't2' } }), /Deep Research Skill/);
});

test('the declared tool is offered with its handler; errors reach the model as text', async () => {
  const d = await deck();
  assert.equal(createTools(d).length, 1);
  d.registerToolHandler(TOOL, (args) => ({ task: 't', query: args.query }));
  const tools = createTools(d, { style: 'activate' });
  assert.deepEqual(tools.map((t) => t.name), ['activate_skill', 'read_skill_resource', TOOL]);
  const declared = tools[2];
  assert.match(await declared.invoke({ query: 'q' }), /"task":\s*"t"/);
  // A path leaving the skill folder: the host refuses it.
  const bad = { name: 'deep-research', path: '../outside.md' };
  const strict = createTools(d, { style: 'activate', handleErrors: false })[1];
  await assert.rejects(strict.invoke(bad), ResourceError);
  const lenient = createTools(d, { style: 'activate' })[1];
  assert.match(await lenient.invoke(bad), /^Error: /);
});
