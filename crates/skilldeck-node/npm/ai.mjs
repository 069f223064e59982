// skilldeck skills as Vercel AI SDK tools (`ai` >= 5; built with its
// `tool()` and `jsonSchema()`): `createTools(deck, options)`.
//
// style 'per-skill' (default): one tool per skill the model may activate
// (its name and description, one `arguments` input); style 'activate': the
// host's `activate_skill` (the catalog in its description) and
// `read_skill_resource`, plus `search_skills` when the catalog leaves
// skills out. Either way the declared skill tools the host offers follow,
// under `{skill}__{tool}` with their JSON schema (script tools while
// `[exec] enabled`, host-implemented tools once a handler is registered):
// the host checks every argument before anything runs.
//
// Activations are tracked per conversation (`options.conversation`, else
// one id per createTools call): the same skill with the same arguments
// again answers a short "already active" notice. A failure throws the
// package's error class with the host's message; the AI SDK hands it to the
// model as a tool error.
import { randomUUID } from 'node:crypto';
import { jsonSchema, tool } from 'ai';
import {
  ACTIVATE_TOOL,
  MAX_TOOLS_PER_REQUEST,
  READ_TOOL,
  SEARCH_TOOL,
  activateStyleSpecs,
  argumentsSchema,
  checkStyle,
  modelSkills,
  warnIfTooMany,
} from './tools-common.mjs';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL };

export function createTools(deck, options = {}) {
  const style = options.style ?? 'per-skill';
  checkStyle(style);
  const conversation = options.conversation ?? `ai-sdk-${randomUUID()}`;
  const traceId = options.traceId;
  const tools = {};
  if (style === 'per-skill') {
    const schema = jsonSchema(argumentsSchema(deck));
    for (const skill of modelSkills(deck)) {
      const name = skill.name;
      tools[name] = tool({
        description: skill.description,
        inputSchema: schema,
        execute: async (input) =>
          (await deck.activate(name, { arguments: input?.arguments ?? '', conversation, traceId })).text,
      });
    }
  } else {
    for (const spec of activateStyleSpecs(deck)) {
      const name = spec.name;
      tools[name] = tool({
        description: spec.description,
        inputSchema: jsonSchema(spec.inputSchema),
        execute: async (input) => (await deck.callHostTool(name, input ?? {}, conversation, { traceId })).text,
      });
    }
  }
  for (const declared of deck.offerableSkillTools()) {
    const fullName = declared.fullName;
    tools[fullName] = tool({
      description: declared.description,
      inputSchema: jsonSchema(declared.inputSchema),
      execute: async (input) => (await deck.callHostTool(fullName, input ?? {}, conversation, { traceId })).text,
    });
  }
  warnIfTooMany(Object.keys(tools).length, style, 'createTools');
  return tools;
}
