// A Mastra agent over skilldeck, checked by `tsc --strict`
// (scripts/test-node.sh): `skilldeck/mastra` tools in an Agent, with
// Mastra's types.
import { Agent } from '@mastra/core/agent';
import type { Tool } from '@mastra/core/tools';
import type { MastraModelConfig } from '@mastra/core/llm';
import { Deck } from 'skilldeck';
import { createTools, type CreateToolsOptions } from 'skilldeck/mastra';

export async function research(model: MastraModelConfig, root: string, question: string): Promise<string> {
  const deck = await Deck.discover({ roots: [root], traceId: 'trace-x' });
  deck.registerToolHandler('deep_research__initiate_research', (args: { query: string }) => ({ task: args.query }));
  const options: CreateToolsOptions = { style: 'activate', traceId: 'trace-x' };
  const tools: Record<string, Tool<unknown, string>> = createTools(deck, options);
  const agent = new Agent({ id: 'orion', name: 'orion', instructions: 'You are Orion.', model, tools });
  const result = await agent.generate(question, { maxSteps: 8 });
  return result.text;
}

export async function searchDirectly(deck: Deck, query: string): Promise<unknown> {
  const tools = createTools(deck, { style: 'activate', conversation: 'c1' });
  const search = tools['search_skills'];
  return search?.execute?.({ query }, {} as never);
}
