// Types shared by the framework adapters' declarations (ai.d.ts,
// langchain.d.ts, openai-agents.d.ts, mastra.d.ts); tools-common.mjs is not
// an entry point of its own.

export declare const ACTIVATE_TOOL: 'activate_skill';
export declare const READ_TOOL: 'read_skill_resource';
export declare const SEARCH_TOOL: 'search_skills';
/** The most tools one chat request may carry; the per-skill style warns above it. */
export declare const MAX_TOOLS_PER_REQUEST: number;

/** The options every adapter's `createTools` takes. */
export interface CommonToolsOptions {
  /**
   * 'per-skill' (default): one tool per skill the model may activate;
   * 'activate': the host's `activate_skill` and `read_skill_resource`, plus
   * `search_skills` when the catalog leaves skills out. The declared skill
   * tools the host offers follow either way.
   */
  style?: 'per-skill' | 'activate';
  /** One fixed conversation id activations are tracked in. */
  conversation?: string;
  /** The caller's trace id, passed with every call. */
  traceId?: string;
}
