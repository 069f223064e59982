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
import { randomUUID } from 'node:crypto';
import { tool } from '@langchain/core/tools';
import { SkilldeckError } from './index.mjs';
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
  const base = `langchain-${randomUUID()}`;
  const handleErrors = options.handleErrors ?? true;
  const traceId = options.traceId;
  const conversationOf = (config) => {
    if (options.conversation !== undefined) return options.conversation;
    const thread = config?.configurable?.thread_id;
    return thread === undefined || thread === null ? base : `${base}/thread/${thread}`;
  };
  const guard = async (call) => {
    try {
      return await call();
    } catch (e) {
      if (handleErrors && e instanceof SkilldeckError) return `Error: ${e.message}`;
      throw e;
    }
  };
  const tools = [];
  if (style === 'per-skill') {
    const schema = argumentsSchema(deck);
    for (const skill of modelSkills(deck)) {
      const name = skill.name;
      tools.push(
        tool(
          (input, config) =>
            guard(async () => {
              const conversation = conversationOf(config);
              return (await deck.activate(name, { arguments: input?.arguments ?? '', conversation, traceId })).text;
            }),
          { name, description: skill.description, schema },
        ),
      );
    }
  } else {
    for (const spec of activateStyleSpecs(deck)) {
      const name = spec.name;
      tools.push(
        tool(
          (input, config) =>
            guard(async () => (await deck.callHostTool(name, input ?? {}, conversationOf(config), { traceId })).text),
          { name, description: spec.description, schema: spec.inputSchema },
        ),
      );
    }
  }
  for (const declared of deck.offerableSkillTools()) {
    const fullName = declared.fullName;
    tools.push(
      tool(
        (input, config) =>
          guard(async () => (await deck.callHostTool(fullName, input ?? {}, conversationOf(config), { traceId })).text),
        { name: fullName, description: declared.description, schema: declared.inputSchema },
      ),
    );
  }
  warnIfTooMany(tools.length, style, 'createTools');
  return tools;
}
