'use strict';
// Seed 002's API (the Orion agent host's skills loader), as written:
// loadSkills(traceId, options), getSkills, reloadSkills,
// buildSystemPrompt(traceId, base), registerSkillTools(skills, traceId,
// register). Every rule is the host's: discovery, the diagnostics of
// skipped skills and dropped tools, tool names `{skill}__{tool}`, which
// tools are offered (a host-implemented tool only with a handler), the
// catalog. This file shapes the answers as the seed's types and writes the
// seed's log records, each carrying the trace id.
const { resolve } = require('node:path');

/** The seed's skills directory, at the project root. */
const SKILLS_DIR = '.skills';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** The process-wide state of the seed's cached loader. */
const state = {
  /** @type {import('./native').Deck | null} */ deck: null,
  /** @type {Promise<unknown[]> | null} */ cached: null,
  stale: false,
  options: {},
};

function loggerOf(options) {
  const logger = options && options.logger;
  return logger ? { ...silent, ...logger } : silent;
}

function Deck() {
  return require('./index.cjs').Deck;
}

/** The deck options of the seed's call: `roots` (default: the seed's
 * `.skills/` folder under `cwd`, only that root), `config` and
 * `otlpEndpoint` (span export, opt-in). */
function discoverOptions(options) {
  const cwd = options.cwd ?? process.cwd();
  const roots = options.roots ?? [resolve(cwd, SKILLS_DIR)];
  return { roots, config: options.config, cwd, traceId: options.traceId, otlpEndpoint: options.otlpEndpoint };
}

/** Problems that kept a skill or a tool out, as the seed's failures. */
function failuresOf(deck) {
  return deck
    .diagnostics()
    .filter((d) => d.isError || d.code.startsWith('tool-'))
    .map((d) => ({ path: d.file ?? null, code: d.code, error: d.message, help: d.help ?? null }));
}

/** A skill as seed 002's `Skill` (its `tools` as its `SkillTool`s, each
 * with the full name and JSON schema the host gives it). */
async function seedSkill(deck, skill, tools, traceId) {
  const activation = await deck.activate(skill.name, { traceId });
  return {
    name: skill.name,
    description: skill.description,
    instructions: activation.body ?? '',
    tools: tools
      .filter((t) => t.skill === skill.name)
      .map((t) => ({
        name: t.name,
        fullName: t.fullName,
        description: t.description,
        inputSchema: t.inputSchema,
        run: t.run ?? null,
        hostImplemented: t.hostImplemented,
      })),
    filePath: skill.skillMd,
    path: skill.path,
    scope: skill.scope,
    modelInvocable: skill.modelInvocable,
  };
}

/**
 * Loads the skills of `.skills/` (or `options.roots` / `options.config`):
 * every valid skill; skills and tools that could not be loaded are logged
 * (`skills.parse_failed`, with the file and why) and the rest still load.
 * Never throws: a failure is logged (`skills.load_error`) and answers [].
 */
async function loadSkills(traceId, options = {}) {
  const log = loggerOf(options);
  const started = Date.now();
  try {
    const deck = options.deck ?? (await Deck().discover(discoverOptions({ ...options, traceId })));
    state.deck = deck;
    const listed = deck.skills();
    log.info({ event: 'skills.discovery', traceId, found: listed.length });
    const tools = deck.skillTools();
    const failures = failuresOf(deck);
    for (const f of failures) {
      log.warn({ event: 'skills.parse_failed', traceId, path: f.path, code: f.code, error: f.error });
    }
    const skills = [];
    for (const settled of await Promise.allSettled(
      listed.map((s) => seedSkill(deck, s, tools, traceId)),
    )) {
      if (settled.status === 'fulfilled') {
        skills.push(settled.value);
      } else {
        const e = settled.reason;
        failures.push({ path: null, code: e?.name ?? 'Error', error: e?.message ?? String(e) });
        log.warn({ event: 'skills.parse_failed', traceId, error: e?.message ?? String(e) });
      }
    }
    log.info({
      event: 'skills.loaded',
      traceId,
      loaded: skills.length,
      failed: failures.length,
      skillNames: skills.map((s) => s.name),
      failures,
      durationMs: Date.now() - started,
    });
    return skills;
  } catch (e) {
    log.error({ event: 'skills.load_error', traceId, error: e?.message ?? String(e) });
    return [];
  }
}

/** The cached skills, loaded on first use (and again after
 * `reloadSkills()`: the same deck rediscovers, keeping its handlers). */
async function getSkills(traceId, options) {
  if (options) state.options = options;
  if (!state.cached) {
    const opts = state.options;
    if (state.stale && state.deck) {
      const deck = state.deck;
      state.cached = deck.reload().then(
        () => loadSkills(traceId, { ...opts, deck }),
        (e) => {
          loggerOf(opts).error({ event: 'skills.load_error', traceId, error: e.message });
          return [];
        },
      );
    } else {
      state.cached = loadSkills(traceId, opts);
    }
    state.stale = false;
  }
  return state.cached;
}

/** Invalidates the cache: the next `getSkills` discovers again. */
function reloadSkills(traceId) {
  state.cached = null;
  state.stale = true;
  if (traceId !== undefined) {
    loggerOf(state.options).info({ event: 'skills.reload_requested', traceId });
  }
}

/** The deck behind `getSkills` (discovered on first use): register tool
 * handlers on it. */
async function getDeck(traceId, options) {
  await getSkills(traceId, options);
  if (!state.deck) {
    throw new (require('./errors.cjs').SkilldeckError)(
      'getDeck: the skills could not be loaded (see the skills.load_error log record)',
    );
  }
  return state.deck;
}

/** `base` followed by the host's skill catalog (names, descriptions,
 * locations: the model activates a skill to read its instructions);
 * `base` alone when no skill is loaded. */
async function buildSystemPrompt(traceId, base = '', options) {
  const skills = await getSkills(traceId, options);
  if (skills.length === 0 || !state.deck) return base;
  const catalog = await state.deck.catalog({ traceId });
  return base ? `${base}\n\n${catalog}` : catalog;
}

/**
 * Registers the tools of `skills` that the host offers (a script tool
 * while `[exec] enabled`, a host-implemented tool once its handler is
 * registered) with `register({name, description, input_schema})`: names
 * `{skill}__{tool}` (the core's rule), descriptions prefixed `[skill]`.
 * Declared tools the host does not offer are logged
 * (`skills.tool_unavailable`, with why). Returns the definitions.
 */
function registerSkillTools(skills, traceId, register, options = {}) {
  const log = loggerOf(options.logger ? options : state.options);
  const deck = options.deck ?? state.deck;
  if (!deck) return [];
  const names = new Set(skills.map((s) => s.name));
  const offered = deck.offerableSkillTools().filter((t) => names.has(t.skill));
  const definitions = [];
  for (const tool of offered) {
    const definition = {
      name: tool.fullName,
      description: `[${tool.skill}] ${tool.description}`,
      input_schema: tool.inputSchema,
    };
    if (typeof register === 'function') register(definition);
    definitions.push(definition);
    log.debug({ event: 'skills.tool_registered', traceId, skillName: tool.skill, toolName: tool.fullName });
  }
  const offeredNames = new Set(offered.map((t) => t.fullName));
  const diagnostics = deck.diagnostics();
  for (const tool of deck.skillTools()) {
    if (!names.has(tool.skill) || offeredNames.has(tool.fullName)) continue;
    // The host's diagnostic naming the tool (tool-handler-missing, ...).
    const reason = diagnostics.find((d) => d.message.includes(tool.fullName));
    log.warn({
      event: 'skills.tool_unavailable',
      traceId,
      skillName: tool.skill,
      toolName: tool.fullName,
      reason: reason ? reason.message : 'not offered to models by the host (model access or [exec] enabled)',
    });
  }
  return definitions;
}

/** Calls the skill tool `name` (`{skill}__{tool}`) as the model asked it
 * (the tool registry's routing): the host checks the arguments first. */
async function callSkillTool(name, input, traceId, conversation = `seed-${process.pid}`) {
  if (!state.deck) {
    throw new (require('./errors.cjs').SkilldeckError)('callSkillTool: no skills loaded yet (call getSkills first)');
  }
  return state.deck.callHostTool(name, input, conversation, { traceId });
}

module.exports = {
  SKILLS_DIR,
  loadSkills,
  getSkills,
  reloadSkills,
  getDeck,
  buildSystemPrompt,
  registerSkillTools,
  callSkillTool,
};
