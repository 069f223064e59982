'use strict';
// The error hierarchy of the package: the Python binding's classes, under
// the same names. Which host or core error becomes which class is decided
// in one place, the addon (crates/skilldeck-node/src/errors.rs); this file
// only builds the objects from what it sends.

/** Base class of every skilldeck error. */
class SkilldeckError extends Error {
  constructor(message, options) {
    super(message, options && options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = new.target.name;
  }
}

/** No served skill has that name (unknown, skipped by discovery, or turned
 * off). `skillName` is the name asked for; `suggestions` close names, best
 * first. (Python's `.name` is `skillName` here: `name` is the class's.) */
class SkillNotFoundError extends SkilldeckError {
  constructor(message, fields = {}) {
    super(message, fields);
    this.skillName = fields.skillName ?? null;
    this.suggestions = Array.isArray(fields.suggestions) ? fields.suggestions : [];
  }
}

/** A SKILL.md (or config file) could not be read or parsed; `diagnostics`
 * locate the problem (code, file, line, column). */
class SkillParsingError extends SkilldeckError {
  constructor(message, fields = {}) {
    super(message, fields);
    this.diagnostics = Array.isArray(fields.diagnostics) ? fields.diagnostics : [];
  }
}

/** A skill file was refused (it leaves the skill folder, ...) or could not
 * be read. */
class ResourceError extends SkilldeckError {}

/** The skill could not be activated or its code run as asked. `kind` says
 * which for a run: `denied`, `unavailable`, `busy`, `execution_failed`,
 * `timed_out`, `failed`, `not_model_invocable`; `null` otherwise. */
class SkillInvocationError extends SkilldeckError {
  constructor(message, fields = {}) {
    super(message, fields);
    this.kind = fields.kind ?? null;
  }
}

/** An option value the core does not accept (a catalog format, a search
 * pattern, a validation mode). Python raises `ValueError`. */
class InvalidValueError extends SkilldeckError {}

/** Arguments the host refused before anything ran: a skill tool's arguments
 * that do not match its JSON schema (the message names the failing field),
 * an unknown tool, a timeout out of range. `kind` is `invalid_arguments` or
 * `unknown_tool`. (Python: also a `ValueError`.) */
class InvalidArgumentsError extends InvalidValueError {
  constructor(message, fields = {}) {
    super(message, fields);
    this.kind = fields.kind ?? null;
  }
}

const CLASSES = {
  SkilldeckError,
  SkillNotFoundError,
  SkillParsingError,
  ResourceError,
  SkillInvocationError,
  InvalidValueError,
  InvalidArgumentsError,
};

/** What the addon's error messages start with (errors.rs `PREFIX`). */
const PREFIX = 'skilldeck-error:';

/** The package's error for an error the addon threw; anything else as is. */
function convert(error) {
  if (!error || typeof error.message !== 'string' || !error.message.startsWith(PREFIX)) {
    return error;
  }
  let payload;
  try {
    payload = JSON.parse(error.message.slice(PREFIX.length));
  } catch {
    return error;
  }
  const Class = CLASSES[payload.class] ?? SkilldeckError;
  return new Class(String(payload.message ?? ''), payload);
}

module.exports = { ...CLASSES, convert };
