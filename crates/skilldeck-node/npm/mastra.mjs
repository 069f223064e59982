// skilldeck skills as Mastra tools (`@mastra/core` >= 1.0; built with its
// `createTool()` from `@mastra/core/tools`, the JSON schema as the tool's
// `inputSchema`): `createTools(deck, options)`, keyed by tool name, for
// `new Agent({ tools })`.
//
// The same two styles as `skilldeck/ai`: 'per-skill' (default), one tool per
// skill the model may activate (one `arguments` input); 'activate', the
// host's `activate_skill` and `read_skill_resource`, plus `search_skills`
// when the catalog leaves skills out. Either way the declared skill tools the
// host offers follow (`{skill}__{tool}`, their JSON schema).
//
// Mastra checks a call's input against the JSON schema first and answers a
// mismatch with its own validation error (`{ error: true, message,
// validationErrors }`, the model sees it as the tool's result); the host then
// checks every argument again before anything runs. A skilldeck failure is
// thrown as the package's error and Mastra's agent hands it to the model as a
// tool error.
//
// The conversation of a call is the agent's memory thread
// (`context.agent.threadId`) under the tool list's own id, so one tool list
// shared by many threads keeps their activations apart; a call without a
// thread uses the tool list's id; `options.conversation` fixes one id.
import { createTool } from '@mastra/core/tools';
import { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL, threadConversations, toolEntries } from './tools-common.mjs';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL };

export function createTools(deck, options = {}) {
  const entries = toolEntries(deck, options);
  const conversationOf = threadConversations('mastra', options.conversation);
  const tools = {};
  for (const entry of entries) {
    tools[entry.name] = createTool({
      id: entry.name,
      description: entry.description,
      inputSchema: entry.inputSchema,
      execute: (input, context) => entry.call(input, conversationOf(context?.agent?.threadId)),
    });
  }
  return tools;
}
