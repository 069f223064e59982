import type { StructuredToolInterface } from '@langchain/core/tools';
import type { Deck } from './native';
import type { CommonToolsOptions } from './tools-common';

export { ACTIVATE_TOOL, MAX_TOOLS_PER_REQUEST, READ_TOOL, SEARCH_TOOL } from './tools-common';

/** `conversation` default: the run's thread under the list's id. */
export interface CreateToolsOptions extends CommonToolsOptions {
  /** true (default): a skilldeck failure is answered as `Error: ...`; false: thrown. */
  handleErrors?: boolean;
}

/** LangChain.js tools for the deck's skills. */
export declare function createTools(deck: Deck, options?: CreateToolsOptions): StructuredToolInterface[];
