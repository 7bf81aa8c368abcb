"""HTTP client of the tool registry, standard library only (urllib)."""

from __future__ import annotations

import json
import os
import platform
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union, cast

from .errors import RegistryError
from .types import (
    AuthorizeResponse,
    DiscoverResponse,
    DryRunResult,
    IndexStatus,
    SchemaFormat,
    SearchMode,
    ToolCard,
    ToolPage,
    ToolResult,
    ToolView,
)

__version__ = "0.1.0"

DEFAULT_BASE_URL = "http://localhost:8080"
RETRY_STATUSES = (408, 429, 500, 502, 503, 504)

Token = Union[str, Callable[[], str]]


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Retry-After (delta seconds or an HTTP date) in seconds, or None."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        at = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))


class RegistryClient:
    """Typed client of the registry API.

    Without arguments it reads ``REGISTRY_URL`` (default http://localhost:8080) and
    ``REGISTRY_TOKEN`` from the environment. 408, 429, 5xx and network errors are retried with
    exponential backoff (with jitter), honouring Retry-After; every failure raises RegistryError.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[Token] = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.2,
        max_delay: float = 10.0,
        user_agent: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = (base_url or os.environ.get("REGISTRY_URL") or DEFAULT_BASE_URL).rstrip("/")
        self._token: Optional[Token] = token if token is not None else (os.environ.get("REGISTRY_TOKEN") or None)
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_delay = max_delay
        agent = f"tool-registry-client-python/{__version__} python/{platform.python_version()}"
        self.user_agent = f"{user_agent} {agent}" if user_agent else agent
        self._headers = dict(headers or {})
        self._sleep = sleep

    # -- transport -----------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, Optional[str]]] = None,
        accept: Sequence[int] = (),
    ) -> "tuple[int, Mapping[str, str], Any]":
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._once(method, path, query, body, headers, accept)
            except RegistryError as error:
                retryable = error.status in RETRY_STATUSES or error.code in ("network_error", "timeout")
                if attempt > self.retries or not retryable:
                    raise
                delay = min(self.max_delay, self.backoff * 2 ** (attempt - 1))
                delay = delay / 2 + random.random() * delay / 2
                self._sleep(min(self.max_delay, max(delay, error.retry_after or 0.0)))

    def _once(self, method: str, path: str, query: Optional[Mapping[str, Any]], body: Any, headers: Optional[Mapping[str, Optional[str]]], accept: Sequence[int]) -> "tuple[int, Mapping[str, str], Any]":
        params = {k: ("true" if v is True else "false" if v is False else str(v)) for k, v in (query or {}).items() if v is not None}
        url = f"{self.base_url}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        sent: Dict[str, str] = {"accept": "application/json", "user-agent": self.user_agent, **self._headers}
        token = self._token() if callable(self._token) else self._token
        if token:
            sent["authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["content-type"] = "application/json"
        for key, value in (headers or {}).items():
            if value is not None:
                sent[key] = value
        request = urllib.request.Request(url, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return self._parse(response.status, dict(response.headers.items()), response.read(), accept)
        except urllib.error.HTTPError as error:
            return self._parse(error.code, dict(error.headers.items()), error.read(), accept)
        except TimeoutError as error:
            raise RegistryError(0, "timeout", f"no response from {self.base_url} within {self.timeout} s") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise RegistryError(0, "timeout", f"no response from {self.base_url} within {self.timeout} s") from error
            raise RegistryError(0, "network_error", f"cannot reach {self.base_url}: {error.reason}") from error
        except OSError as error:
            raise RegistryError(0, "network_error", f"cannot reach {self.base_url}: {error}") from error

    @staticmethod
    def _parse(status: int, headers: Mapping[str, str], raw: bytes, accept: Sequence[int]) -> "tuple[int, Mapping[str, str], Any]":
        lower = {k.lower(): v for k, v in headers.items()}
        request_id = lower.get("x-request-id")
        text = raw.decode("utf-8", errors="replace")
        body: Any = None
        if text:
            try:
                body = json.loads(text)
            except ValueError:
                if 200 <= status < 300:
                    raise RegistryError(status, "invalid_response", f"response is not JSON: {text[:200]}", request_id=request_id) from None
        if 200 <= status < 300 or status == 304 or status in accept:
            return status, lower, body
        retry_after = parse_retry_after(lower.get("retry-after"))
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            raise RegistryError(status, error["code"], str(error.get("message", "")), list(error.get("details") or []), error.get("request_id") or request_id, retry_after)
        raise RegistryError(status, "internal" if status >= 500 else "bad_request", f"HTTP {status}: {text[:200]}", request_id=request_id, retry_after=retry_after)

    @staticmethod
    def _tool_path(name: str) -> str:
        return f"/v1/tools/{urllib.parse.quote(name, safe='')}"

    # -- discovery and authorization --------------------------------------------------------

    def discover(
        self,
        query: str,
        *,
        top_k: Optional[int] = None,
        format: Optional[SchemaFormat] = None,
        mode: Optional[SearchMode] = None,
        filters: Optional[Mapping[str, Any]] = None,
        strict: Optional[bool] = None,
    ) -> DiscoverResponse:
        """POST /v1/discover: the few tools that fit ``query``, full schemas for those only."""
        body: Dict[str, Any] = {"query": query}
        for key, value in (("top_k", top_k), ("format", format), ("mode", mode), ("filters", filters), ("strict", strict)):
            if value is not None:
                body[key] = value
        return cast(DiscoverResponse, self._request("POST", "/v1/discover", body=body)[2])

    def authorize(self, tool: str, arguments: Mapping[str, Any], *, version: Optional[str] = None, discovery_id: Optional[str] = None) -> AuthorizeResponse:
        """POST /v1/authorize: may this token run ``tool`` with ``arguments``? A deny is a result, not an error."""
        body: Dict[str, Any] = {"tool": tool, "arguments": dict(arguments)}
        if version is not None:
            body["version"] = version
        if discovery_id is not None:
            body["discovery_id"] = discovery_id
        return cast(AuthorizeResponse, self._request("POST", "/v1/authorize", body=body)[2])

    # -- tools ----------------------------------------------------------------------------

    def create_tool(self, document: Mapping[str, Any]) -> ToolResult:
        """POST /v1/tools: registers a tool (RegistryError 409 ``conflict`` when the name exists)."""
        _, headers, body = self._request("POST", "/v1/tools", body=document)
        return {"tool": cast(ToolView, body), "etag": headers.get("etag", "")}

    def dry_run_create(self, document: Mapping[str, Any]) -> DryRunResult:
        """POST /v1/tools?dry_run=true: every check of create_tool, nothing stored."""
        return cast(DryRunResult, self._request("POST", "/v1/tools", query={"dry_run": True}, body=document)[2])

    def update_tool(self, name: str, document: Mapping[str, Any], *, if_match: Optional[str] = None) -> ToolResult:
        """PUT /v1/tools/{name}: publishes a new version (identical content is a no-op)."""
        _, headers, body = self._request("PUT", self._tool_path(name), body=document, headers={"if-match": if_match})
        return {"tool": cast(ToolView, body), "etag": headers.get("etag", "")}

    def dry_run_update(self, name: str, document: Mapping[str, Any], *, if_match: Optional[str] = None) -> DryRunResult:
        """PUT /v1/tools/{name}?dry_run=true: every check of update_tool (versions, If-Match), nothing stored."""
        return cast(DryRunResult, self._request("PUT", self._tool_path(name), query={"dry_run": True}, body=document, headers={"if-match": if_match})[2])

    def get_tool(self, name: str) -> ToolResult:
        """GET /v1/tools/{name} (RegistryError 404 when unknown or not visible)."""
        _, headers, body = self._request("GET", self._tool_path(name))
        return {"tool": cast(ToolView, body), "etag": headers.get("etag", "")}

    def find_tool(self, name: str) -> Optional[ToolResult]:
        """Like get_tool, but None instead of a 404."""
        try:
            return self.get_tool(name)
        except RegistryError as error:
            if error.status == 404:
                return None
            raise

    def list_tools(self, *, limit: Optional[int] = None, cursor: Optional[str] = None, include_retired: Optional[bool] = None, category: Optional[str] = None, tags: Optional[Sequence[str]] = None) -> ToolPage:
        """GET /v1/tools: one page of cards the caller may see, by name."""
        query = {"limit": limit, "cursor": cursor, "include_retired": include_retired, "category": category, "tags": ",".join(tags) if tags else None}
        return cast(ToolPage, self._request("GET", "/v1/tools", query=query)[2])

    def iter_tools(self, *, limit: Optional[int] = None, category: Optional[str] = None, tags: Optional[Sequence[str]] = None, include_retired: Optional[bool] = None) -> Iterator[ToolCard]:
        """Every card the caller may see, following next_cursor."""
        cursor: Optional[str] = None
        while True:
            page = self.list_tools(limit=limit, cursor=cursor, category=category, tags=tags, include_retired=include_retired)
            yield from page["tools"]
            cursor = page["next_cursor"]
            if cursor is None:
                return

    def list_versions(self, name: str) -> List[Dict[str, Any]]:
        """GET /v1/tools/{name}/versions: version history (publishers)."""
        return cast(List[Dict[str, Any]], self._request("GET", f"{self._tool_path(name)}/versions")[2]["versions"])

    def retire_tool(self, name: str, *, if_match: Optional[str] = None) -> ToolResult:
        """DELETE /v1/tools/{name}: retires the tool (history kept; a PUT restores it)."""
        _, headers, body = self._request("DELETE", self._tool_path(name), headers={"if-match": if_match})
        return {"tool": cast(ToolView, body), "etag": headers.get("etag", "")}

    def wait_for_index(self, name: str, *, timeout: float = 60.0, interval: float = 0.5) -> IndexStatus:
        """Polls index_status (publishers) until indexed or failed, or the timeout; returns the last status."""
        deadline = time.monotonic() + timeout
        while True:
            status = cast(IndexStatus, self.get_tool(name)["tool"].get("index_status", "indexed"))
            if status != "pending" or time.monotonic() >= deadline:
                return status
            self._sleep(min(interval, max(0.0, deadline - time.monotonic())))

    # -- operations -----------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """GET /healthz: liveness."""
        return cast(Dict[str, Any], self._request("GET", "/healthz")[2])

    def ready(self) -> Dict[str, Any]:
        """GET /readyz: readiness, with ``ready`` False on 503 (not retried)."""
        saved, self.retries = self.retries, 0
        try:
            status, _, body = self._request("GET", "/readyz", accept=(503,))
        finally:
            self.retries = saved
        return {**cast(Dict[str, Any], body), "ready": status == 200}
