import type { Tool } from 'ai';
import type { Deck } from './native';

export declare const ACTIVATE_TOOL: 'activate_skill';
export declare const READ_TOOL: 'read_skill_resource';
export declare const SEARCH_TOOL: 'search_skills';
export declare const MAX_TOOLS_PER_REQUEST: number;

export interface CreateToolsOptions {
  /** 'per-skill' (default): one tool per skill; 'activate': the host's tools. */
  style?: 'per-skill' | 'activate';
  /** The conversation activations are tracked in (default: one per call). */
  conversation?: string;
  /** The caller's trace id, passed with every call. */
  traceId?: string;
}

/** AI SDK tools for the deck's skills, keyed by tool name. */
export declare function createTools(deck: Deck, options?: CreateToolsOptions): Record<string, Tool>;
