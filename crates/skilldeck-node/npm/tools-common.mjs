// What the AI SDK and LangChain.js tools share: the names of the host's
// tools, the per-skill tools' input (in the host's words), which host tools
// the activate style offers. No rule of its own: the catalog, the model
// access rule and the offered skill tools are the host's.

export const ACTIVATE_TOOL = 'activate_skill';
export const READ_TOOL = 'read_skill_resource';
export const SEARCH_TOOL = 'search_skills';
/** The most tools one chat request may carry (OpenAI's limit; others are
 * similar). The per-skill style warns above it: use `style: 'activate'`. */
export const MAX_TOOLS_PER_REQUEST = 128;

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
  if (style !== 'per-skill' && style !== 'activate') {
    throw new TypeError(`unknown style ${JSON.stringify(style)} (expected 'per-skill' or 'activate')`);
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
