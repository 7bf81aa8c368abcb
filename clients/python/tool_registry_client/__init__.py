"""Python client of the tool registry for AI agents (standard library only).

    from tool_registry_client import RegistryClient
    registry = RegistryClient()  # REGISTRY_URL and REGISTRY_TOKEN from the environment
    shortlist = registry.discover("refund my last order", top_k=3, format="anthropic")
"""

from .client import DEFAULT_BASE_URL, RETRY_STATUSES, RegistryClient, __version__, parse_retry_after
from .errors import RegistryError
from .types import (
    AuthorizeReason,
    AuthorizeResponse,
    DiscoveredTool,
    DiscoverResponse,
    DryRunResult,
    ErrorDetail,
    IndexStatus,
    SchemaFormat,
    SearchMode,
    ToolCard,
    ToolPage,
    ToolResult,
    ToolView,
    WriteOutcome,
)

__all__ = [
    "AuthorizeReason", "AuthorizeResponse", "DEFAULT_BASE_URL", "DiscoveredTool", "DiscoverResponse", "DryRunResult", "ErrorDetail",
    "IndexStatus", "RETRY_STATUSES", "RegistryClient", "RegistryError", "SchemaFormat", "SearchMode", "ToolCard", "ToolPage", "ToolResult",
    "ToolView", "WriteOutcome", "__version__", "parse_retry_after",
]
