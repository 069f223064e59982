// The OpenAI Agents SDK tools (`skilldeck/openai-agents`): runs driven by
// the SDK's own Runner with its ScriptedModel (`@openai/agents-core/testing`,
// the SDK's test double for a model; no network): a skill activates, seed
// 002's host-implemented tool is called only with valid arguments, invalid
// arguments come back as the tool's output (or the SDK's ToolCallError),
// strict mode follows the SDK's own preparation, and `search_skills` is
// offered only when the catalog leaves skills out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Agent, Runner, ToolCallError, setTracingDisabled } from '@openai/agents-core';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents-core/testing';
import { seed002Root, tempDir, writeSkill, TOOL } from './helpers.mjs';
import { Deck, InvalidArgumentsError } from '../index.mjs';
import { SEARCH_TOOL, createTools } from '../openai-agents.mjs';

setTracingDisabled(true);

async function deck() {
  const { root, config } = seed002Root();
  return Deck.discover({ roots: [root], config });
}

/** One run of an agent holding `tools` whose model answers `steps` in turn. */
async function runWith(tools, steps, prompt = 'Research rust async.') {
  const model = new ScriptedModel(steps);
  const agent = new Agent({ name: 'orion', instructions: 'You are Orion.', model, tools });
  const result = await new Runner({ tracingDisabled: true }).run(agent, prompt);
  model.assertComplete();
  return { result, model };
}

const outputs = (result) =>
  result.newItems.filter((i) => i.type === 'tool_call_output_item').map((i) => ({ name: i.rawItem.name, output: String(i.output) }));

test('an Agents SDK run: the scripted model activates the skill and calls its tool with a host handler', async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args) => {
    seen.push(args);
    return { task: 'research-7', status: 'started' };
  });
  const tools = createTools(d);
  // The SDK's function name for the skill `deep-research`.
  assert.deepEqual(tools.map((t) => t.name), ['deep_research', TOOL]);
  const { result, model } = await runWith(tools, [
    [functionCall('deep_research', { arguments: 'rust async' }, { callId: 'c1' })],
    [functionCall(TOOL, { query: 'rust async', sources: ['web'] }, { callId: 'c2' })],
    [assistantMessage('Research started: research-7.')],
  ]);
  assert.equal(result.finalOutput, 'Research started: research-7.');
  assert.deepEqual(seen, [{ query: 'rust async', sources: ['web'] }]);
  const [activated, called] = outputs(result);
  assert.equal(activated.name, 'deep_research');
  assert.match(activated.output, /Deep Research Skill/);
  assert.equal(called.name, TOOL);
  assert.match(called.output, /research-7/);
  // The model was offered both tools, with the host's schema for the declared one.
  const offered = model.calls[0].request.tools;
  assert.deepEqual(offered.map((t) => t.name), ['deep_research', TOOL]);
  assert.deepEqual(offered[1].parameters, d.offerableSkillTools()[0].inputSchema);
});

test('invalid arguments: the handler is not called and the model reads the host\'s message as the tool output', async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args) => seen.push(args));
  const { result } = await runWith(createTools(d), [
    [functionCall(TOOL, { sources: 'web' }, { callId: 'c1' })],
    [assistantMessage('Sorry.')],
  ]);
  assert.equal(result.finalOutput, 'Sorry.');
  const [answer] = outputs(result);
  assert.match(answer.output, /^Error: .*(query|sources)/s);
  assert.deepEqual(seen, []);
});

test("handleErrors: false rejects the run with the SDK's ToolCallError carrying the package's error", async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args) => seen.push(args));
  await assert.rejects(
    runWith(createTools(d, { handleErrors: false }), [[functionCall(TOOL, { query: 7 }, { callId: 'c1' })]]),
    (e) => {
      assert.ok(e instanceof ToolCallError, `${e.name}: ${e.message}`);
      assert.ok(e.error instanceof InvalidArgumentsError, `${e.error?.name}: ${e.error?.message}`);
      return true;
    },
  );
  assert.deepEqual(seen, []);
});

test('the activate style: one conversation per tool list, a second activation is the short notice', async () => {
  const d = await deck();
  const tools = createTools(d, { style: 'activate' });
  assert.deepEqual(tools.map((t) => t.name), ['activate_skill', 'read_skill_resource']);
  const { result } = await runWith(tools, [
    [functionCall('activate_skill', { name: 'deep-research' }, { callId: 'c1' })],
    [functionCall('activate_skill', { name: 'deep-research' }, { callId: 'c2' })],
    [functionCall('activate_skill', { name: 'no-such-skill' }, { callId: 'c3' })],
    [assistantMessage('ok')],
  ]);
  const [first, again, missing] = outputs(result);
  assert.match(first.output, /Deep Research Skill/);
  assert.doesNotMatch(again.output, /Deep Research Skill/);
  assert.match(missing.output, /^Error: .*no-such-skill/s);
  assert.throws(() => createTools(d, { style: 'both' }), TypeError);
  assert.throws(() => createTools(d, { strict: 'yes' }), TypeError);
});

test("strict 'auto': a tool is strict exactly when the SDK's strict preparation leaves its schema as written", async () => {
  const d = await deck();
  d.registerToolHandler(TOOL, () => 'ok');
  const hostSchemas = new Map([
    ...d.toolSpecs().map((s) => [s.name, s.inputSchema]),
    ...d.offerableSkillTools().map((t) => [t.fullName, t.inputSchema]),
  ]);
  const auto = createTools(d, { style: 'activate' });
  for (const t of auto) {
    // Sent as the host wrote it, strict or not.
    assert.deepEqual(t.parameters, hostSchemas.get(t.name), t.name);
  }
  const byName = new Map(auto.map((t) => [t.name, t]));
  // Every property required and the object closed: strict as written.
  assert.equal(byName.get('read_skill_resource').strict, true);
  // An optional property (`arguments`, `sources`): the SDK would rewrite it, so not strict.
  assert.equal(byName.get('activate_skill').strict, false);
  assert.equal(byName.get(TOOL).strict, false);
  // strict: true takes the SDK's preparation (optional becomes required and nullable).
  const forced = new Map(createTools(d, { style: 'activate', strict: true }).map((t) => [t.name, t]));
  assert.ok([...forced.values()].every((t) => t.strict));
  assert.deepEqual([...forced.get(TOOL).parameters.required].sort(), ['query', 'sources']);
  assert.ok(createTools(d, { style: 'activate', strict: false }).every((t) => !t.strict));
});

test('search_skills is offered only when the catalog leaves skills out', async () => {
  const root = tempDir();
  for (let i = 0; i < 12; i++) {
    writeSkill(root, `skill-${i}`, { description: `Skill number ${i} does a long and particular thing. Use when thing ${i} is asked for.` });
  }
  const all = await Deck.discover({ roots: [root] });
  assert.deepEqual(createTools(all, { style: 'activate' }).map((t) => t.name), ['activate_skill', 'read_skill_resource']);
  const config = join(tempDir(), 'skilldeck.toml');
  writeFileSync(config, '[catalog]\nbudget-chars = 400\n');
  const tight = await Deck.discover({ roots: [root], config });
  const tools = createTools(tight, { style: 'activate' });
  assert.deepEqual(tools.map((t) => t.name), ['activate_skill', 'read_skill_resource', SEARCH_TOOL]);
  // The model finds a left-out skill through search_skills, then activates it.
  const { result } = await runWith(tools, [
    [functionCall(SEARCH_TOOL, { query: 'thing 11' }, { callId: 'c1' })],
    [functionCall('activate_skill', { name: 'skill-11' }, { callId: 'c2' })],
    [assistantMessage('done')],
  ]);
  const [found, activated] = outputs(result);
  assert.match(found.output, /skill-11/);
  assert.doesNotMatch(activated.output, /^Error/);
  // The per-skill style gives every skill its own tool instead.
  assert.equal(createTools(tight).length, 12);
});

test('two skills the SDK would give one tool name are refused, naming both', async () => {
  const root = tempDir();
  writeSkill(root, 'a-b');
  writeSkill(root, 'a_b');
  const d = await Deck.discover({ roots: [root] });
  assert.throws(() => createTools(d), /"a-b" and "a_b" "a_b".*style: 'activate'/s);
  // The activate style names no skill in a tool name: both stay reachable.
  const tools = createTools(d, { style: 'activate', conversation: 'c1' });
  assert.deepEqual(tools.map((t) => t.name), ['activate_skill', 'read_skill_resource']);
});
