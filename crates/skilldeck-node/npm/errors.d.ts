import type { Diagnostic } from './native';

/** Base class of every skilldeck error. */
export declare class SkilldeckError extends Error {
  constructor(message: string, fields?: { cause?: unknown });
}
/** No served skill has that name; `suggestions` are close names, best first. */
export declare class SkillNotFoundError extends SkilldeckError {
  constructor(message: string, fields?: { skillName?: string | null; suggestions?: string[] });
  readonly skillName: string | null;
  readonly suggestions: string[];
}
/** A SKILL.md or config file could not be read or parsed. */
export declare class SkillParsingError extends SkilldeckError {
  constructor(message: string, fields?: { diagnostics?: Diagnostic[] });
  readonly diagnostics: Diagnostic[];
}
/** A skill file was refused or could not be read. */
export declare class ResourceError extends SkilldeckError {}
/** The skill could not be activated or its code run as asked. */
export declare class SkillInvocationError extends SkilldeckError {
  constructor(message: string, fields?: { kind?: InvocationErrorKind | null });
  readonly kind: InvocationErrorKind | null;
}
export type InvocationErrorKind =
  | 'denied'
  | 'unavailable'
  | 'busy'
  | 'execution_failed'
  | 'timed_out'
  | 'failed'
  | 'not_model_invocable';
/** An option value the core does not accept. */
export declare class InvalidValueError extends SkilldeckError {}
/** Arguments the host refused before anything ran. */
export declare class InvalidArgumentsError extends InvalidValueError {
  constructor(message: string, fields?: { kind?: 'invalid_arguments' | 'unknown_tool' | null });
  readonly kind: 'invalid_arguments' | 'unknown_tool' | null;
}
