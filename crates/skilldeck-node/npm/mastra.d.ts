import type { Tool } from '@mastra/core/tools';
import type { Deck } from './native';
import type { CommonToolsOptions } from './tools-common';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL } from './tools-common';

/** `conversation` default: the agent's memory thread under the list's id. */
export interface CreateToolsOptions extends CommonToolsOptions {}

/** Mastra tools for the deck's skills, keyed by tool name, for `new Agent({ tools })`. */
export declare function createTools(deck: Deck, options?: CreateToolsOptions): Record<string, Tool<unknown, string>>;
