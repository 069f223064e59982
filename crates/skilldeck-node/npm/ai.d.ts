import type { Tool } from 'ai';
import type { Deck } from './native';
import type { CommonToolsOptions } from './tools-common';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL } from './tools-common';

/** `conversation` default: one id per `createTools` call. */
export interface CreateToolsOptions extends CommonToolsOptions {}

/** AI SDK tools for the deck's skills, keyed by tool name. */
export declare function createTools(deck: Deck, options?: CreateToolsOptions): Record<string, Tool>;
