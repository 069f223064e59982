// What the framework adapters (`skilldeck/ai`, `skilldeck/langchain`,
// `skilldeck/openai-agents`) share: which tools a deck offers in each style,
// their names, descriptions and input schemas, and what calling one does.
// An adapter only wraps these entries in its framework's tool type. No rule
// of its own: the catalog, the model access rule, the offered skill tools
// and every argument check are the host's.
import { randomUUID } from 'node:crypto';
import { SkilldeckError } from './index.mjs';

export const ACTIVATE_TOOL = 'activate_skill';
export const READ_TOOL = 'read_skill_resource';
export const SEARCH_TOOL = 'search_skills';
/** The most tools one chat request may carry (OpenAI's limit; others are
 * similar). The per-skill style warns above it: use `style: 'activate'`. */
export const MAX_TOOLS_PER_REQUEST = 128;
/** The styles `createTools` takes; the first is the default. */
export const STYLES = ['per-skill', 'activate'];

/** The per-skill tools' one input, `arguments`, described as the host's
 * `activate_skill` describes it. */
export function argumentsSchema(deck) {
  const activate = deck.toolSpecs().find((s) => s.name === ACTIVATE_TOOL);
  const described = activate?.inputSchema?.properties?.arguments ?? {};
  return {
    type: 'object',
    properties: { arguments: { type: 'string', description: String(described.description ?? '') } },
    additionalProperties: false,
  };
}

/** The host tools of the activate style: `activate_skill` and
 * `read_skill_resource`, and `search_skills` when the catalog in
 * `activate_skill`'s description leaves skills out (its closing line sends
 * the model there). None when no skill is served. */
export function activateStyleSpecs(deck) {
  const specs = new Map(deck.toolSpecs().map((s) => [s.name, s]));
  const wanted = [ACTIVATE_TOOL, READ_TOOL];
  const activate = specs.get(ACTIVATE_TOOL);
  if (activate && activate.description.includes(SEARCH_TOOL)) wanted.push(SEARCH_TOOL);
  return wanted.filter((n) => specs.has(n)).map((n) => specs.get(n));
}

/** The skills the per-skill style gives tools: those the model may activate. */
export function modelSkills(deck) {
  const usable = new Set(deck.modelInvocable());
  return deck.skills().filter((s) => usable.has(s.name));
}

export function checkStyle(style) {
  if (!STYLES.includes(style)) {
    throw new TypeError(`unknown style ${JSON.stringify(style)} (expected ${STYLES.map((s) => `'${s}'`).join(' or ')})`);
  }
}

export function warnIfTooMany(count, style, name) {
  if (style === 'per-skill' && count > MAX_TOOLS_PER_REQUEST) {
    process.emitWarning(
      `${name}: ${count} tools, more than the ${MAX_TOOLS_PER_REQUEST} one chat request may carry ` +
        "(OpenAI's limit); use style: 'activate' for the catalog in one activate_skill tool " +
        '(with search_skills when it cannot list every skill)',
      'SkilldeckWarning',
    );
  }
}

/** The conversation of one adapter's tool list: `fixed` when the caller set
 * one (`options.conversation`), else a new `{adapter}-{uuid}`. */
export function conversationId(adapter, fixed) {
  return fixed ?? `${adapter}-${randomUUID()}`;
}

/** The conversation of a call for frameworks with threads (LangGraph's
 * `thread_id`, Mastra's memory thread): `fixed` when the caller set one, else
 * the thread under the tool list's own id (one tool list shared by many
 * threads keeps their activations apart), else the tool list's id. */
export function threadConversations(adapter, fixed) {
  if (fixed !== undefined) return () => fixed;
  const base = conversationId(adapter);
  return (thread) => (thread === undefined || thread === null ? base : `${base}/thread/${thread}`);
}

/**
 * The tools of one `createTools` call, framework-neutral, in the order the
 * model sees them: with style 'per-skill' (default) one per skill the model
 * may activate (one `arguments` input), with 'activate' the host's tools
 * (`activateStyleSpecs`); then the declared skill tools the host offers
 * (`{skill}__{tool}`, their JSON schema). Each entry is `{name,
 * description, inputSchema, call(input, conversation) => Promise<string>}`;
 * `call` goes through the host, which checks every argument before anything
 * runs and throws the package's error classes.
 */
export function toolEntries(deck, { style = STYLES[0], traceId } = {}, adapter = 'createTools') {
  checkStyle(style);
  const entries = [];
  const hostTool = (name, description, inputSchema) => ({
    name,
    description,
    inputSchema,
    call: async (input, conversation) => (await deck.callHostTool(name, input ?? {}, conversation, { traceId })).text,
  });
  if (style === 'per-skill') {
    const inputSchema = argumentsSchema(deck);
    for (const skill of modelSkills(deck)) {
      const name = skill.name;
      entries.push({
        name,
        description: skill.description,
        inputSchema,
        call: async (input, conversation) =>
          (await deck.activate(name, { arguments: input?.arguments ?? '', conversation, traceId })).text,
      });
    }
  } else {
    for (const spec of activateStyleSpecs(deck)) entries.push(hostTool(spec.name, spec.description, spec.inputSchema));
  }
  for (const declared of deck.offerableSkillTools()) {
    entries.push(hostTool(declared.fullName, declared.description, declared.inputSchema));
  }
  warnIfTooMany(entries.length, style, adapter);
  return entries;
}

/** The text a model is answered when a skilldeck call fails and the adapter
 * hands failures to the model (`handleErrors`): `Error: <the host's
 * message>`. Anything else (a bug, not the model's doing) is `undefined`:
 * the adapter lets it propagate. */
export function modelErrorText(error) {
  return error instanceof SkilldeckError ? `Error: ${error.message}` : undefined;
}
