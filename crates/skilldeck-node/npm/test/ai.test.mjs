// The Vercel AI SDK tools (`skilldeck/ai`): an AI SDK tool loop with the
// `ai` package's mock model calling a skill tool (seed 002's
// host-implemented tool, answered by a JavaScript handler), and the
// per-skill and activate styles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { seed002Root, TOOL } from './helpers.mjs';
import { Deck } from '../index.mjs';
import { createTools } from '../ai.mjs';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const finish = (unified) => ({ unified, raw: unified });

function toolCall(toolName, input) {
  return { content: [{ type: 'tool-call', toolCallId: `call-${toolName}`, toolName, input: JSON.stringify(input) }], finishReason: finish('tool-calls'), usage, warnings: [] };
}
function text(value) {
  return { content: [{ type: 'text', text: value }], finishReason: finish('stop'), usage, warnings: [] };
}

async function deck() {
  const { root, config } = seed002Root();
  return Deck.discover({ roots: [root], config });
}

test('an AI SDK tool loop: the mock model activates the skill and calls its tool', async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args) => {
    seen.push(args);
    return { task: 'research-7', status: 'started' };
  });
  const tools = createTools(d);
  assert.deepEqual(Object.keys(tools).sort(), ['deep-research', TOOL].sort());
  const model = new MockLanguageModelV4({
    doGenerate: [
      toolCall('deep-research', { arguments: 'rust async' }),
      toolCall(TOOL, { query: 'rust async', sources: ['web'] }),
      text('Research started: research-7.'),
    ],
  });
  const result = await generateText({ model, tools, prompt: 'Research rust async.', stopWhen: stepCountIs(5) });
  assert.equal(result.text, 'Research started: research-7.');
  assert.deepEqual(seen, [{ query: 'rust async', sources: ['web'] }]);
  const results = result.steps.flatMap((s) => s.toolResults);
  assert.equal(results.length, 2);
  assert.match(String(results[0].output), /Deep Research Skill/);
  assert.match(String(results[1].output), /research-7/);
  // The model's second step saw the first tool's result.
  assert.ok(model.doGenerateCalls.length === 3);
});

test('invalid arguments reach the model as a tool error; the handler is not called', async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args) => seen.push(args));
  const model = new MockLanguageModelV4({
    doGenerate: [toolCall(TOOL, { sources: 'web' }), text('Sorry.')],
  });
  const result = await generateText({ model, tools: createTools(d), prompt: 'x', stopWhen: stepCountIs(3) });
  assert.equal(result.text, 'Sorry.');
  const errors = result.steps.flatMap((s) => s.content).filter((p) => p.type === 'tool-error');
  assert.equal(errors.length, 1);
  assert.match(String(errors[0].error?.message ?? errors[0].error), /query|sources/);
  assert.deepEqual(seen, []);
});

test('the activate style offers the host tools, and no tool without its handler', async () => {
  const d = await deck();
  const tools = createTools(d, { style: 'activate', conversation: 'c1' });
  assert.deepEqual(Object.keys(tools).sort(), ['activate_skill', 'read_skill_resource']);
  const first = await tools.activate_skill.execute({ name: 'deep-research' }, { toolCallId: '1', messages: [] });
  assert.match(first, /Deep Research Skill/);
  const again = await tools.activate_skill.execute({ name: 'deep-research' }, { toolCallId: '2', messages: [] });
  assert.doesNotMatch(again, /Deep Research Skill/);
  assert.throws(() => createTools(d, { style: 'both' }), TypeError);
});
