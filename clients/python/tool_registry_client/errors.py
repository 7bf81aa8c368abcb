"""The one error type of the client: every failed call raises RegistryError."""

from __future__ import annotations

from typing import List, Optional

from .types import ErrorDetail


class RegistryError(Exception):
    """A failed registry call.

    ``status`` is the HTTP status, or 0 when no response arrived; ``code`` is the service's stable
    error code (``validation_failed``, ``conflict``, ...) or one of the client's own
    (``network_error``, ``timeout``, ``invalid_response``); ``details`` carry JSON pointers.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Optional[List[ErrorDetail]] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details: List[ErrorDetail] = details or []
        self.request_id = request_id
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Worth retrying later: 408, 429, 5xx, network errors and timeouts."""
        return self.status in (408, 429) or self.status >= 500 or self.code in ("network_error", "timeout")

    @property
    def auth(self) -> bool:
        """The token was refused (401) or lacks a scope (403): retrying cannot help."""
        return self.status in (401, 403)

    def __str__(self) -> str:
        where = f", request {self.request_id}" if self.request_id else ""
        lines = [f"{self.message} ({self.status or 'no response'} {self.code}{where})"]
        lines += [f"  {d['pointer']}: {d['message']}" for d in self.details]
        return "\n".join(lines)
