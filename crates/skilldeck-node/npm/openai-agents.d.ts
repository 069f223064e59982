import type { FunctionTool } from '@openai/agents-core';
import type { Deck } from './native';
import type { CommonToolsOptions } from './tools-common';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL } from './tools-common';
/** The values `options.strict` takes. */
export declare const STRICT_MODES: readonly ['auto', true, false];

/** `conversation` default: one id per `createTools` call. */
export interface CreateToolsOptions extends CommonToolsOptions {
  /**
   * 'auto' (default): strict when the SDK's strict preparation leaves the
   * tool's schema as written, else non-strict with the schema unchanged;
   * true: every tool strict as the SDK prepares it; false: none strict.
   */
  strict?: 'auto' | boolean;
  /** true (default): a skilldeck failure is the tool's output `Error: ...`; false: the run rejects. */
  handleErrors?: boolean;
}

/** OpenAI Agents SDK function tools for the deck's skills, for `new Agent({ tools })`. */
export declare function createTools(deck: Deck, options?: CreateToolsOptions): FunctionTool<unknown, any, string>[];
