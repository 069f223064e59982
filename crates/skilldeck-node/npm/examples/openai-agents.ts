// An OpenAI Agents SDK agent over skilldeck, checked by `tsc --strict`
// (scripts/test-node.sh): `skilldeck/openai-agents` tools in an Agent, with
// the SDK's types.
import { Agent, Runner, ToolCallError, type FunctionTool, type Model } from '@openai/agents-core';
import { Deck, InvalidArgumentsError } from 'skilldeck';
import { createTools, type CreateToolsOptions } from 'skilldeck/openai-agents';

export async function research(model: Model, root: string, question: string): Promise<string> {
  const deck = await Deck.discover({ roots: [root], traceId: 'trace-x' });
  deck.registerToolHandler('deep_research__initiate_research', (args: { query: string }) => ({ task: args.query }));
  const options: CreateToolsOptions = { style: 'activate', strict: 'auto', handleErrors: false, traceId: 'trace-x' };
  const tools: FunctionTool<unknown, any, string>[] = createTools(deck, options);
  const strictOnes: string[] = tools.filter((t) => t.strict).map((t) => t.name);
  console.log('strict:', strictOnes.join(', '));
  const agent = new Agent({ name: 'orion', instructions: 'You are Orion.', model, tools });
  try {
    const result = await new Runner().run(agent, question);
    return String(result.finalOutput ?? '');
  } catch (e) {
    if (e instanceof ToolCallError && e.error instanceof InvalidArgumentsError) return `bad arguments: ${e.error.message}`;
    throw e;
  }
}

export function perSkill(deck: Deck): Agent {
  return new Agent({ name: 'orion', instructions: 'You are Orion.', tools: createTools(deck, { conversation: 'c1', strict: false }) });
}
