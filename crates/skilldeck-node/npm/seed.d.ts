import type { Deck, HostToolAnswer } from './native';

/** Seed 002's structured logger: each record carries `event` and `traceId`. */
export interface SkillLogger {
  debug?(record: Record<string, unknown>): void;
  info?(record: Record<string, unknown>): void;
  warn?(record: Record<string, unknown>): void;
  error?(record: Record<string, unknown>): void;
}

export interface LoadSkillsOptions {
  /** Skill roots (default: `.skills/` under `cwd`). */
  roots?: string[];
  /** A `skilldeck.toml` (e.g. `[exec] tools = "always"` to offer skill
   * tools in every conversation, as seed 002 registers them at start-up). */
  config?: string;
  /** The project root (default: the working folder). */
  cwd?: string;
  /** Where the log records go (default: nowhere). */
  logger?: SkillLogger;
  /** An existing deck to load from instead of discovering one. */
  deck?: Deck;
  /** Export the host's spans to this OTLP/HTTP collector (base URL); the
   * load's spans carry the call's `traceId` (see `DiscoverOptions`). */
  otlpEndpoint?: string;
}

/** A declared tool of a skill, as seed 002's `SkillTool`. */
export interface SeedSkillTool {
  name: string;
  fullName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  run: string | null;
  hostImplemented: boolean;
}

/** A loaded skill, as seed 002's `Skill`. */
export interface SeedSkill {
  name: string;
  description: string;
  instructions: string;
  tools: SeedSkillTool[];
  filePath: string;
  path: string;
  scope: string;
  modelInvocable: boolean;
}

/** What `register` receives (seed 002's `ToolDefinition`). */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export declare const SKILLS_DIR: '.skills';
export declare function loadSkills(traceId: string, options?: LoadSkillsOptions): Promise<SeedSkill[]>;
export declare function getSkills(traceId: string, options?: LoadSkillsOptions): Promise<SeedSkill[]>;
export declare function reloadSkills(traceId?: string): void;
export declare function getDeck(traceId: string, options?: LoadSkillsOptions): Promise<Deck>;
export declare function buildSystemPrompt(
  traceId: string,
  base?: string,
  options?: LoadSkillsOptions,
): Promise<string>;
export declare function registerSkillTools(
  skills: ReadonlyArray<{ name: string }>,
  traceId: string,
  register?: (definition: ToolDefinition) => void,
  options?: { deck?: Deck; logger?: SkillLogger },
): ToolDefinition[];
export declare function callSkillTool(
  name: string,
  input: Record<string, unknown>,
  traceId: string,
  conversation?: string,
): Promise<HostToolAnswer>;
