// The Mastra tools (`skilldeck/mastra`): a Mastra Agent's tool loop driven by
// the `ai` package's mock model (no network; Mastra's telemetry off), tools
// called through Mastra's own `execute` (its input check first, then the
// host's), conversations per Mastra memory thread, and `search_skills`
// offered only when the catalog leaves skills out.
process.env.MASTRA_TELEMETRY_DISABLED = '1';
const { test } = await import('node:test');
const { default: assert } = await import('node:assert/strict');
const { join } = await import('node:path');
const { writeFileSync } = await import('node:fs');
const { Agent } = await import('@mastra/core/agent');
const { MockLanguageModelV4 } = await import('ai/test');
const { seed002Root, tempDir, writeSkill, TOOL } = await import('./helpers.mjs');
const { Deck } = await import('../index.mjs');
const { SEARCH_TOOL, createTools } = await import('../mastra.mjs');

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const finish = (unified) => ({ unified, raw: unified });
let callIds = 0;
function toolCall(toolName, input) {
  callIds += 1;
  const content = [{ type: 'tool-call', toolCallId: `call-${callIds}`, toolName, input: JSON.stringify(input) }];
  return { content, finishReason: finish('tool-calls'), usage, warnings: [] };
}
function text(value) {
  return { content: [{ type: 'text', text: value }], finishReason: finish('stop'), usage, warnings: [] };
}

async function deck() {
  const { root, config } = seed002Root();
  return Deck.discover({ roots: [root], config });
}

/** One `agent.generate` over `tools` whose model answers `steps` in turn;
 * the tool results as the model read them in its last call. */
async function generateWith(tools, steps) {
  const model = new MockLanguageModelV4({ doGenerate: steps });
  const agent = new Agent({ id: 'orion', name: 'orion', instructions: 'You are Orion.', model, tools });
  const result = await agent.generate('Research rust async.', { maxSteps: steps.length + 1 });
  assert.equal(model.doGenerateCalls.length, steps.length);
  const seenByModel = model.doGenerateCalls
    .at(-1)
    .prompt.filter((m) => m.role === 'tool')
    .flatMap((m) => m.content)
    .map((p) => ({ name: p.toolName, output: p.output }));
  return { result, model, seenByModel };
}

test('a Mastra agent loop: the mock model activates the skill and calls its tool with a host handler', async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args) => {
    seen.push(args);
    return { task: 'research-7', status: 'started' };
  });
  const tools = createTools(d);
  assert.deepEqual(Object.keys(tools), ['deep-research', TOOL]);
  const { result, model, seenByModel } = await generateWith(tools, [
    toolCall('deep-research', { arguments: 'rust async' }),
    toolCall(TOOL, { query: 'rust async', sources: ['web'] }),
    text('Research started: research-7.'),
  ]);
  assert.equal(result.text, 'Research started: research-7.');
  assert.deepEqual(seen, [{ query: 'rust async', sources: ['web'] }]);
  assert.deepEqual(seenByModel.map((r) => [r.name, r.output.type]), [
    ['deep-research', 'text'],
    [TOOL, 'text'],
  ]);
  assert.match(seenByModel[0].output.value, /Deep Research Skill/);
  assert.match(seenByModel[1].output.value, /research-7/);
  // The model was offered the declared tool with the host's schema.
  const offered = model.doGenerateCalls[0].tools.find((t) => t.name === TOOL);
  const { $schema: _draft, ...schema } = offered.inputSchema;
  assert.deepEqual(schema, d.offerableSkillTools()[0].inputSchema);
});

test("invalid arguments: Mastra's validation error reaches the model and the handler is not called", async () => {
  const d = await deck();
  const seen = [];
  d.registerToolHandler(TOOL, (args) => seen.push(args));
  const { result, seenByModel } = await generateWith(createTools(d), [toolCall(TOOL, { sources: 'web' }), text('Sorry.')]);
  assert.equal(result.text, 'Sorry.');
  const [answer] = seenByModel;
  assert.equal(answer.output.type, 'json');
  assert.equal(answer.output.value.error, true);
  assert.match(answer.output.value.message, /query/);
  assert.deepEqual(seen, []);
  // Through Mastra's `execute` directly: the same validation error, no call.
  const direct = await createTools(d)[TOOL].execute({ query: 7 }, {});
  assert.equal(direct.error, true);
  assert.deepEqual(seen, []);
});

test("a skilldeck failure is thrown; Mastra's agent hands the host's message to the model", async () => {
  const d = await deck();
  d.registerToolHandler(TOOL, () => {
    throw new Error('quota spent');
  });
  // A path leaving the skill folder (the host's ResourceError), a handler's throw.
  const { seenByModel } = await generateWith(createTools(d, { style: 'activate' }), [
    toolCall('read_skill_resource', { name: 'deep-research', path: '../outside.md' }),
    toolCall(TOOL, { query: 'q' }),
    text('Sorry.'),
  ]);
  assert.deepEqual(seenByModel.map((r) => r.output.type), ['error-text', 'error-text']);
  assert.match(seenByModel[0].output.value, /outside|leave|\.\./);
  assert.match(seenByModel[1].output.value, /quota spent/);
});

test('activations are tracked per Mastra memory thread', async () => {
  const d = await deck();
  const skill = createTools(d)['deep-research'];
  const t1 = { agent: { threadId: 't1', resourceId: 'u1' } };
  assert.match(await skill.execute({ arguments: '' }, t1), /Deep Research Skill/);
  assert.doesNotMatch(await skill.execute({ arguments: '' }, t1), /Deep Research Skill/);
  assert.match(await skill.execute({ arguments: '' }, { agent: { threadId: 't2' } }), /Deep Research Skill/);
  // One fixed conversation across threads.
  const fixed = createTools(d, { conversation: 'c1' })['deep-research'];
  assert.match(await fixed.execute({ arguments: '' }, t1), /Deep Research Skill/);
  assert.doesNotMatch(await fixed.execute({ arguments: '' }, { agent: { threadId: 't2' } }), /Deep Research Skill/);
  assert.throws(() => createTools(d, { style: 'both' }), TypeError);
});

test('search_skills is offered only when the catalog leaves skills out', async () => {
  const root = tempDir();
  for (let i = 0; i < 12; i++) {
    writeSkill(root, `skill-${i}`, { description: `Skill number ${i} does a long and particular thing. Use when thing ${i} is asked for.` });
  }
  const all = await Deck.discover({ roots: [root] });
  assert.deepEqual(Object.keys(createTools(all, { style: 'activate' })), ['activate_skill', 'read_skill_resource']);
  const config = join(tempDir(), 'skilldeck.toml');
  writeFileSync(config, '[catalog]\nbudget-chars = 400\n');
  const tight = await Deck.discover({ roots: [root], config });
  const tools = createTools(tight, { style: 'activate' });
  assert.deepEqual(Object.keys(tools), ['activate_skill', 'read_skill_resource', SEARCH_TOOL]);
  const found = await tools[SEARCH_TOOL].execute({ query: 'thing 11' }, {});
  assert.match(found, /skill-11/);
  assert.equal(Object.keys(createTools(tight)).length, 12);
});
