"""Errors the assignor raises, so callers can tell bad input from a refused change.

Every message names the offending item (a member, a task, a topic) and, where the
user can act, says what to do; nothing is guessed on the caller's behalf.
"""

from __future__ import annotations


class AssignorError(ValueError):
    """Base of every error the assignor raises on purpose."""


class InvalidRequest(AssignorError):
    """The request contradicts itself (a member twice, a task owned twice, ...)."""


class ExpansionRefused(AssignorError):
    """A partition-count change that would move keys between tasks."""
