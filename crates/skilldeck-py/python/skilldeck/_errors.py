"""The exception hierarchy. The native module raises these; which host or
core error becomes which class is decided in one place
(``crates/skilldeck-py/src/errors.rs``), and the messages are the core's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, List, Optional

if TYPE_CHECKING:
    from ._native import Diagnostic


class SkilldeckError(Exception):
    """Base class of every skilldeck error."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SkillNotFoundError(SkilldeckError, LookupError):
    """No served skill has that name (unknown, skipped by discovery, or
    turned off). ``suggestions`` are close names, best first."""

    def __init__(
        self, message: str, *, name: Optional[str] = None, suggestions: Iterable[str] = ()
    ) -> None:
        super().__init__(message)
        self.name = name
        self.suggestions: List[str] = list(suggestions)


class SkillParsingError(SkilldeckError):
    """A ``SKILL.md`` (or config file) could not be read or parsed;
    ``diagnostics`` locate the problem (code, file, line, column)."""

    def __init__(self, message: str, *, diagnostics: Iterable["Diagnostic"] = ()) -> None:
        super().__init__(message)
        self.diagnostics: List["Diagnostic"] = list(diagnostics)


class ResourceError(SkilldeckError):
    """A skill file was refused (it leaves the skill folder, ...) or could
    not be read."""


class SkillInvocationError(SkilldeckError):
    """The skill could not be activated or its code run as asked (arguments
    over the limit, a skill only the user may invoke, a run refused, failed
    or timed out, ...). ``kind`` says which for a run: ``denied``,
    ``unavailable`` (a sandbox layer is missing), ``busy``,
    ``execution_failed`` (non-zero exit or a signal), ``timed_out``,
    ``failed``; ``None`` otherwise."""

    def __init__(self, message: str, *, kind: Optional[str] = None) -> None:
        super().__init__(message)
        self.kind = kind


class InvalidArgumentsError(SkilldeckError, ValueError):
    """Arguments the host refused before anything ran: a skill tool's
    arguments that do not match its JSON schema (the message names the
    failing field), an unknown tool, a timeout out of range. ``kind`` is
    ``invalid_arguments`` or ``unknown_tool``."""

    def __init__(self, message: str, *, kind: Optional[str] = None) -> None:
        super().__init__(message)
        self.kind = kind


class RegistryError(SkilldeckError):
    """A registry refused a request, could not be reached, or served a
    skill that does not verify against its fingerprint
    (``Deck.from_registry`` and its ``reload``). ``status`` is the HTTP
    status when the registry answered (401: the token is missing or
    wrong; 404: no such agent), else ``None``."""

    def __init__(self, message: str, *, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status
