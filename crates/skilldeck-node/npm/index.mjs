// ESM entry of `skilldeck`: the CommonJS module's exports (one addon, one
// set of error classes, whichever way the package is loaded).
import skilldeck from './index.cjs';

export const {
  Deck,
  validate,
  flushTelemetry,
  shutdownTelemetry,
  telemetryEnabled,
  SkilldeckError,
  SkillNotFoundError,
  SkillParsingError,
  ResourceError,
  SkillInvocationError,
  InvalidValueError,
  InvalidArgumentsError,
  SKILLS_DIR,
  loadSkills,
  getSkills,
  reloadSkills,
  getDeck,
  buildSystemPrompt,
  registerSkillTools,
  callSkillTool,
} = skilldeck;
export default skilldeck;
