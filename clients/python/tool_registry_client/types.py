"""Wire types of the registry API (the service's OpenAPI document is the reference)."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

SchemaFormat = Literal["openai", "openai-responses", "anthropic", "gemini", "mcp", "raw"]
SearchMode = Literal["hybrid", "lexical", "vector"]
IndexStatus = Literal["pending", "indexed", "failed"]
WriteOutcome = Literal["created", "updated", "restored", "unchanged"]
JsonSchema = Dict[str, Any]


class ErrorDetail(TypedDict):
    """One validation problem (the service may add ``in``: body, querystring, params or headers)."""

    pointer: str
    message: str


class ToolCard(TypedDict):
    name: str
    version: str
    status: Literal["active", "retired"]
    summary: str
    not_for: Optional[str]
    aliases: List[str]
    examples: List[str]
    tags: List[str]
    category: Optional[str]
    required_scopes: List[str]
    sensitivity: Literal["low", "medium", "high"]
    side_effects: bool
    tokens: Dict[str, int]
    updated_at: str


class _ToolViewBase(ToolCard):
    description: str
    parameters: JsonSchema
    returns: Optional[JsonSchema]
    policy: List[Dict[str, Any]]
    revision: int
    created_at: str


class ToolWarning(TypedDict):
    """What makes a stored tool harder to find or call (``code``, JSON ``pointer``, ``message``)."""

    code: str
    pointer: str
    message: str


class ToolView(_ToolViewBase, total=False):
    """The stored tool; publishers also get ``learned_aliases``, ``index_status`` and ``warnings``."""

    learned_aliases: List[Dict[str, Any]]
    index_status: IndexStatus
    warnings: List[ToolWarning]


class ToolResult(TypedDict):
    tool: ToolView
    etag: str


class DryRunResult(TypedDict):
    dry_run: Literal[True]
    outcome: WriteOutcome
    changes: List[str]
    etag: str
    warnings: List[ToolWarning]
    tool: ToolView


class ToolPage(TypedDict):
    tools: List[ToolCard]
    next_cursor: Optional[str]


class DiscoveredTool(TypedDict):
    name: str
    version: str
    score: float
    card: ToolCard
    schema: Dict[str, Any]


class ShortlistTokens(TypedDict):
    shortlist: int
    catalog: int


class DiscoverResponse(TypedDict):
    discovery_id: str
    tools: List[DiscoveredTool]
    tokens: ShortlistTokens
    low_confidence: bool
    search_mode: SearchMode


class _AuthorizeReasonBase(TypedDict):
    code: str
    message: str


class AuthorizeReason(_AuthorizeReasonBase, total=False):
    pointer: str


class AuthorizedTool(TypedDict):
    name: str
    version: Optional[str]


class AuthorizeResponse(TypedDict):
    decision: Literal["allow", "deny"]
    reasons: List[AuthorizeReason]
    tool: AuthorizedTool
