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
import { jsonSchema, tool } from 'ai';
import { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL, conversationId, toolEntries } from './tools-common.mjs';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL };

export function createTools(deck, options = {}) {
  const entries = toolEntries(deck, options);
  const conversation = conversationId('ai-sdk', options.conversation);
  const schemas = new Map();
  const tools = {};
  for (const entry of entries) {
    // One AI SDK schema per distinct JSON schema (the per-skill tools share one).
    if (!schemas.has(entry.inputSchema)) schemas.set(entry.inputSchema, jsonSchema(entry.inputSchema));
    tools[entry.name] = tool({
      description: entry.description,
      inputSchema: schemas.get(entry.inputSchema),
      execute: (input) => entry.call(input, conversation),
    });
  }
  return tools;
}
