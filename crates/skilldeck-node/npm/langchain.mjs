// skilldeck skills as LangChain.js tools (`@langchain/core` >= 1.0):
// `createTools(deck, options)`, the same two styles as `skilldeck/ai` and
// as the Python package's `skilldeck.langchain`.
//
// The conversation of a call is the LangGraph / LangChain thread it runs in
// (`configurable.thread_id`) under the tool list's own id, so one tool list
// shared by many threads keeps their activations apart; a run without a
// thread uses the tool list's id; `options.conversation` fixes one id.
// `handleErrors: true` (default): a skilldeck failure is answered to the
// model as the text `Error: <the host's message>`; `false`: it is thrown.
import { tool } from '@langchain/core/tools';
import {
  ACTIVATE_TOOL,
  MAX_TOOLS_PER_REQUEST,
  READ_TOOL,
  SEARCH_TOOL,
  modelErrorText,
  threadConversations,
  toolEntries,
} from './tools-common.mjs';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL };

export function createTools(deck, options = {}) {
  const entries = toolEntries(deck, options);
  const conversationOf = threadConversations('langchain', options.conversation);
  const handleErrors = options.handleErrors ?? true;
  return entries.map((entry) =>
    tool(
      async (input, config) => {
        try {
          return await entry.call(input, conversationOf(config?.configurable?.thread_id));
        } catch (e) {
          const text = handleErrors ? modelErrorText(e) : undefined;
          if (text === undefined) throw e;
          return text;
        }
      },
      { name: entry.name, description: entry.description, schema: entry.inputSchema },
    ),
  );
}
