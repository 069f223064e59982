// Seed 002's API as written: loadSkills(traceId, options) from `.skills/`,
// the cached getSkills and reloadSkills, buildSystemPrompt(traceId, base),
// registerSkillTools(skills, traceId, register); every log record carries
// the trace id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEED_002, TOOL, tempDir, writeSkill } from './helpers.mjs';
import * as skilldeck from '../index.mjs';

function project({ broken = false } = {}) {
  const cwd = tempDir();
  const skills = join(cwd, '.skills');
  mkdirSync(skills);
  cpSync(SEED_002, join(skills, 'deep-research'), { recursive: true });
  writeSkill(skills, 'slack-search', { description: 'Search Slack channels for relevant discussions', body: '# Slack Search Skill\n' });
  writeFileSync(join(cwd, 'skilldeck.toml'), '[exec]\ntools = "always"\n');
  if (broken) writeFileSync(join(writeSkill(skills, 'bad'), 'SKILL.md'), '---\nname: bad\ndescription: [oops\n---\n');
  return cwd;
}

function recorder() {
  const records = [];
  const logger = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (r) => records.push({ level, ...r })]));
  return { records, logger };
}

test('loadSkills reads .skills/ and logs what it loaded with the trace id', async () => {
  const { records, logger } = recorder();
  const skills = await skilldeck.loadSkills('trace-1', { cwd: project({ broken: true }), logger });
  assert.deepEqual(skills.map((s) => s.name).sort(), ['deep-research', 'slack-search']);
  const research = skills.find((s) => s.name === 'deep-research');
  assert.match(research.instructions, /^# Deep Research Skill/);
  assert.match(research.filePath, /deep-research[/\\]SKILL\.md$/);
  assert.equal(research.tools[0].fullName, TOOL);
  assert.deepEqual(research.tools[0].inputSchema.required, ['query']);
  assert.ok(records.length >= 3);
  for (const r of records) assert.equal(r.traceId, 'trace-1', JSON.stringify(r));
  const loaded = records.find((r) => r.event === 'skills.loaded');
  assert.deepEqual([...loaded.skillNames].sort(), ['deep-research', 'slack-search']);
  assert.ok(loaded.failed >= 1);
  const failed = records.filter((r) => r.event === 'skills.parse_failed');
  assert.ok(failed.some((r) => /bad[/\\]SKILL\.md$/.test(r.path ?? '')), JSON.stringify(failed));
});

test('a missing .skills/ directory loads no skill and does not throw', async () => {
  const { records, logger } = recorder();
  assert.deepEqual(await skilldeck.loadSkills('trace-2', { cwd: tempDir(), logger }), []);
  for (const r of records) assert.equal(r.traceId, 'trace-2');
});

test('registerSkillTools registers the offered tools as {skill}__{tool} with [skill] descriptions', async () => {
  const cwd = project();
  const { records, logger } = recorder();
  const skills = await skilldeck.getSkills('trace-3', { cwd, logger, config: join(cwd, 'skilldeck.toml') });
  // No handler yet: the host does not offer the tool, and says why.
  const none = [];
  assert.deepEqual(skilldeck.registerSkillTools(skills, 'trace-3', (d) => none.push(d)), []);
  assert.deepEqual(none, []);
  const unavailable = records.find((r) => r.event === 'skills.tool_unavailable');
  assert.equal(unavailable.toolName, TOOL);
  assert.equal(unavailable.traceId, 'trace-3');
  assert.match(unavailable.reason, /no handler/);

  const deck = await skilldeck.getDeck('trace-3');
  const calls = [];
  deck.registerToolHandler(TOOL, (args) => {
    calls.push(args);
    return { task: 'research-1' };
  });
  const registered = [];
  skilldeck.registerSkillTools(skills, 'trace-3', (d) => registered.push(d));
  assert.equal(registered.length, 1);
  assert.deepEqual(Object.keys(registered[0]), ['name', 'description', 'input_schema']);
  assert.equal(registered[0].name, 'deep_research__initiate_research');
  assert.equal(registered[0].description, '[deep-research] Start a deep research task');
  assert.equal(registered[0].input_schema.type, 'object');
  assert.deepEqual(registered[0].input_schema.properties.sources.items, { type: 'string' });
  assert.deepEqual(registered[0].input_schema.required, ['query']);
  const debug = records.find((r) => r.event === 'skills.tool_registered');
  assert.equal(debug.traceId, 'trace-3');
  assert.equal(debug.toolName, TOOL);

  // The registry's routing: the host checks the arguments first.
  await assert.rejects(skilldeck.callSkillTool(TOOL, { sources: ['web'] }, 'trace-3'), skilldeck.InvalidArgumentsError);
  const answer = await skilldeck.callSkillTool(TOOL, { query: 'q' }, 'trace-3');
  assert.deepEqual(answer.structured, { task: 'research-1' });
  assert.deepEqual(calls, [{ query: 'q' }]);

  // buildSystemPrompt: the base, then the host's catalog of the skills.
  const prompt = await skilldeck.buildSystemPrompt('trace-3', 'You are Orion.');
  assert.ok(prompt.startsWith('You are Orion.\n\n'));
  assert.match(prompt, /deep-research/);
  assert.match(prompt, /slack-search/);

  // getSkills is cached; reloadSkills makes the next call discover again
  // (the same deck: its handlers stay registered).
  assert.equal(await skilldeck.getSkills('trace-3'), skills);
  writeSkill(join(cwd, '.skills'), 'code-review', { description: 'Review code changes. Use for reviews.' });
  skilldeck.reloadSkills('trace-3');
  const again = await skilldeck.getSkills('trace-3');
  assert.notEqual(again, skills);
  assert.ok(again.some((s) => s.name === 'code-review'));
  assert.equal((await skilldeck.getDeck('trace-3')).hasToolHandler(TOOL), true);
  assert.ok(records.some((r) => r.event === 'skills.reload_requested' && r.traceId === 'trace-3'));
});
