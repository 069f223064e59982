// Seed 002's deep-research SKILL.md, verbatim from the shared fixtures:
// its host-implemented tool loads (the `items: string` shorthand
// accepted), is reported and not offered until a JavaScript handler is
// registered, and its handler is called only with valid arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seed002Root, TOOL } from './helpers.mjs';
import { Deck, InvalidArgumentsError, SkillInvocationError } from '../index.mjs';

async function deck() {
  const { root, config } = seed002Root();
  return Deck.discover({ roots: [root], config });
}

test("seed 002's deep-research loads as written", async () => {
  const d = await deck();
  const tools = d.skillTools();
  assert.equal(tools.length, 1);
  const [tool] = tools;
  assert.equal(tool.fullName, TOOL);
  assert.equal(tool.skill, 'deep-research');
  assert.equal(tool.hostImplemented, true);
  assert.equal(tool.run ?? null, null);
  assert.deepEqual(tool.inputSchema.properties.sources.type, 'array');
  assert.deepEqual(tool.inputSchema.properties.sources.items, { type: 'string' });
  assert.deepEqual(tool.inputSchema.required, ['query']);
});

test('a tool without a handler is reported and not offered', async () => {
  const d = await deck();
  const missing = d.diagnostics().filter((x) => x.code === 'tool-handler-missing');
  assert.equal(missing.length, 1);
  assert.equal(missing[0].line, 7);
  assert.match(missing[0].message, /deep_research__initiate_research/);
  assert.deepEqual(d.offerableSkillTools(), []);
  await assert.rejects(d.callHostTool(TOOL, { query: 'q' }, 'c1'));
});

test('the JavaScript handler is called only with valid arguments', async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args, call) => {
    seen.push({ args, call });
    return { task: 't-1', query: args.query };
  });
  assert.equal(d.hasToolHandler(TOOL), true);
  assert.deepEqual(d.diagnostics().filter((x) => x.code === 'tool-handler-missing'), []);
  assert.deepEqual(d.offerableSkillTools().map((t) => t.fullName), [TOOL]);
  // Invalid: `sources` must be an array of strings; `query` is required.
  for (const bad of [{ query: 'q', sources: 'web' }, { sources: ['web'] }, { query: 'q', sources: [1] }]) {
    await assert.rejects(d.callHostTool(TOOL, bad, 'c1'), (e) => {
      assert.ok(e instanceof InvalidArgumentsError, `${e.name}: ${e.message}`);
      assert.equal(e.kind, 'invalid_arguments');
      return true;
    });
  }
  assert.deepEqual(seen, []);
  const answer = await d.callHostTool(TOOL, { query: 'rust', sources: ['web', 'slack'] }, 'c1', { traceId: 'trace-42' });
  assert.deepEqual(answer.structured, { task: 't-1', query: 'rust' });
  assert.match(answer.text, /"task":\s*"t-1"/);
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].args, { query: 'rust', sources: ['web', 'slack'] });
  assert.equal(seen[0].call.fullName, TOOL);
  assert.equal(seen[0].call.skill, 'deep-research');
  assert.equal(seen[0].call.traceId, 'trace-42');
  assert.equal(seen[0].call.conversation, 'c1');
});

test("a handler's throw or rejection is the tool's error", async () => {
  const d = await deck();
  d.registerToolHandler(TOOL, () => {
    throw new Error('quota spent');
  });
  await assert.rejects(d.callHostTool(TOOL, { query: 'q' }, 'c1'), (e) => {
    assert.ok(e instanceof SkillInvocationError, `${e.name}: ${e.message}`);
    assert.match(e.message, /quota spent/);
    return true;
  });
  d.registerToolHandler(TOOL, async () => Promise.reject(new RangeError('later')));
  await assert.rejects(d.callHostTool(TOOL, { query: 'q' }, 'c1'), /RangeError: later/);
  // A string result is the text as is.
  d.registerToolHandler(TOOL, () => 'started');
  assert.equal((await d.callHostTool(TOOL, { query: 'q' }, 'c1')).text, 'started');
});

test('a handler is refused for an unknown tool or a non-function', async () => {
  const d = await deck();
  assert.throws(() => d.registerToolHandler('nobody__nothing', () => 1), InvalidArgumentsError);
  assert.throws(() => d.registerToolHandler(TOOL, 'not callable'), TypeError);
  assert.equal(d.removeToolHandler(TOOL), false);
  d.registerToolHandler(TOOL, () => 1);
  assert.equal(d.removeToolHandler(TOOL), true);
  assert.deepEqual(d.offerableSkillTools(), []);
});

test('a host-implemented tool is not run as a script', async () => {
  const d = await deck();
  d.registerToolHandler(TOOL, () => 1);
  await assert.rejects(d.callExecutionTool(TOOL, { query: 'q' }, 'c1'), (e) => {
    assert.ok(e instanceof InvalidArgumentsError);
    assert.match(e.message, /handler/);
    return true;
  });
});
