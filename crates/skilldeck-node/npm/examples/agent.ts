// A TypeScript agent host over skilldeck, checked by `tsc --strict`
// (scripts/test-node.sh): the Deck API, the error classes, seed 002's
// functions and the AI SDK / LangChain.js tools, with their types.
import {
  Deck,
  SkillNotFoundError,
  SkillInvocationError,
  InvalidArgumentsError,
  buildSystemPrompt,
  getDeck,
  getSkills,
  registerSkillTools,
  validate,
  type Activation,
  type Diagnostic,
  type SeedSkill,
  type SkillToolInfo,
  type ToolCall,
  type ToolDefinition,
} from 'skilldeck';
import { createTools } from 'skilldeck/ai';
import { createTools as createLangChainTools } from 'skilldeck/langchain';

const registry = new Map<string, ToolDefinition>();

export async function start(traceId: string): Promise<string> {
  const skills: SeedSkill[] = await getSkills(traceId, {
    logger: { info: (r) => console.log(JSON.stringify(r)) },
  });
  const deck: Deck = await getDeck(traceId);
  deck.registerToolHandler('deep_research__initiate_research', (args: { query: string }, call: ToolCall) => ({
    task: `${call.traceId ?? 'no-trace'}:${args.query}`,
  }));
  registerSkillTools(skills, traceId, (definition) => registry.set(definition.name, definition));
  return buildSystemPrompt(traceId, 'You are Orion.');
}

export async function explore(root: string): Promise<number> {
  const deck = await Deck.discover({ roots: [root], traceId: 'trace-x' });
  const names: string[] = deck.skills().map((s) => s.name);
  const tools: SkillToolInfo[] = deck.offerableSkillTools();
  const problems: Diagnostic[] = [...deck.diagnostics(), ...(await validate(root, 'lenient'))];
  try {
    const a: Activation = await deck.activate(names[0] ?? 'none', { arguments: 'x', conversation: 'c1' });
    console.log(a.alreadyActive ? 'already active' : a.body?.length);
  } catch (e) {
    if (e instanceof SkillNotFoundError) console.log(e.suggestions.join(', '), e.skillName);
    else if (e instanceof SkillInvocationError) console.log(e.kind);
    else if (e instanceof InvalidArgumentsError) console.log(e.kind === 'unknown_tool');
    else throw e;
  }
  const hits = await deck.search('research', { limit: 3 });
  const catalog: string = await deck.catalog({ format: 'markdown', budgetTokens: 2000 });
  const stats = deck.cacheStats();
  const aiTools = createTools(deck, { style: 'activate', traceId: 'trace-x' });
  const lcTools = createLangChainTools(deck, { handleErrors: false });
  return names.length + tools.length + problems.length + hits.length + catalog.length + stats.hits + Object.keys(aiTools).length + lcTools.length;
}
