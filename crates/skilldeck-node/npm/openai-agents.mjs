// skilldeck skills as OpenAI Agents SDK tools (`@openai/agents` /
// `@openai/agents-core` >= 0.20; built with its `tool()` helper and JSON
// schema parameters): `createTools(deck, options)`, an array for
// `new Agent({ tools })`.
//
// The same two styles as `skilldeck/ai`: 'per-skill' (default), one tool per
// skill the model may activate (one `arguments` input); 'activate', the
// host's `activate_skill` and `read_skill_resource`, plus `search_skills`
// when the catalog leaves skills out. Either way the declared skill tools the
// host offers follow (`{skill}__{tool}`, their JSON schema); the host checks
// every argument before anything runs.
//
// Strict mode (`options.strict`): 'auto' (default) makes a tool strict
// exactly when the SDK's strict preparation leaves its schema as written (the
// model is then held to the schema the host checks); a schema the SDK would
// have to rewrite (an optional property becomes a required nullable one, an
// open object is closed) or cannot convert is sent non-strict, unchanged.
// `true`: every tool strict, as the SDK prepares it (a schema it cannot
// convert throws here, naming the tool); `false`: none.
//
// Tool names: the SDK turns every character but ASCII letters and digits
// into `_` (`deep-research` is offered as `deep_research`). Two tools whose
// names become the same (skills `a-b` and `a_b`) would be one name to the
// model: createTools refuses them with an error naming both.
//
// Activations are tracked per conversation (`options.conversation`, else
// one id per createTools call). `handleErrors: true` (default): a skilldeck
// failure (invalid arguments, an unknown skill, a handler's error) is the
// tool's output to the model, `Error: <the host's message>`, through the
// SDK's `errorFunction`; `false`: the run rejects with the SDK's
// `ToolCallError`, whose `error` is the package's error. Any other error
// propagates either way.
import { isDeepStrictEqual } from 'node:util';
import { tool } from '@openai/agents-core';
import { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL, conversationId, modelErrorText, toolEntries } from './tools-common.mjs';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL };

/** The values `options.strict` takes. */
export const STRICT_MODES = ['auto', true, false];

export function createTools(deck, options = {}) {
  const strict = options.strict ?? 'auto';
  if (!STRICT_MODES.includes(strict)) {
    throw new TypeError(`unknown strict mode ${JSON.stringify(strict)} (expected 'auto', true or false)`);
  }
  const entries = toolEntries(deck, options);
  const conversation = conversationId('openai-agents', options.conversation);
  const handleErrors = options.handleErrors ?? true;
  const errorFunction = handleErrors
    ? (_context, error) => {
        const text = modelErrorText(error);
        if (text === undefined) throw error;
        return text;
      }
    : null;
  const tools = entries.map((entry) => {
    const build = (isStrict) =>
      tool({
        name: entry.name,
        description: entry.description,
        parameters: entry.inputSchema,
        strict: isStrict,
        errorFunction,
        execute: (input) => entry.call(input, conversation),
      });
    if (strict !== 'auto') return build(strict);
    let strictTool;
    try {
      strictTool = build(true);
    } catch {
      // The SDK cannot make this schema strict: sent non-strict, as written.
    }
    return strictTool && isDeepStrictEqual(strictTool.parameters, entry.inputSchema) ? strictTool : build(false);
  });
  const byName = new Map();
  tools.forEach((t, i) => {
    const other = byName.get(t.name);
    if (other !== undefined) {
      throw new Error(
        `the OpenAI Agents SDK names both ${JSON.stringify(entries[other].name)} and ${JSON.stringify(entries[i].name)} ` +
          `${JSON.stringify(t.name)} (it turns every character but letters and digits into '_'); rename one of the skills, ` +
          "or use style: 'activate' (skill names are then arguments of activate_skill, not tool names)",
      );
    }
    byName.set(t.name, i);
  });
  return tools;
}
