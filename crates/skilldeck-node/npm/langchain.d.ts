import type { StructuredToolInterface } from '@langchain/core/tools';
import type { Deck } from './native';

export declare const ACTIVATE_TOOL: 'activate_skill';
export declare const READ_TOOL: 'read_skill_resource';
export declare const SEARCH_TOOL: 'search_skills';
export declare const MAX_TOOLS_PER_REQUEST: number;

export interface CreateToolsOptions {
  /** 'per-skill' (default): one tool per skill; 'activate': the host's tools. */
  style?: 'per-skill' | 'activate';
  /** One fixed conversation id (default: the run's thread under the list's id). */
  conversation?: string;
  /** true (default): a skilldeck failure is answered as `Error: ...`; false: thrown. */
  handleErrors?: boolean;
  /** The caller's trace id, passed with every call. */
  traceId?: string;
}

/** LangChain.js tools for the deck's skills. */
export declare function createTools(deck: Deck, options?: CreateToolsOptions): StructuredToolInterface[];
