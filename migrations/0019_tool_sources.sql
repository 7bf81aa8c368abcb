-- Who owns a tool for declarative catalog sync (issue 36): the `source` a POST /v1/catalog/sync
-- named (a repository, a service), or `upstream:<name>` for the tools an upstream MCP server
-- serves. NULL: published tool by tool (POST/PUT /v1/tools); a sync may adopt such a tool.
-- A sync reads one source's tools of one tenant: the partial index serves prune's lookup.
ALTER TABLE tools ADD COLUMN source text;
CREATE INDEX tools_by_source ON tools (tenant_id, source) WHERE source IS NOT NULL;

-- Tools an upstream already serves belong to it: a catalog sync must leave them alone.
UPDATE tools t SET source = 'upstream:' || u.upstream_name
FROM upstream_tools u
WHERE u.tenant_id = t.tenant_id AND u.tool_name = t.name;
