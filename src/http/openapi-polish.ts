/**
 * Post-processing of the generated OpenAPI document, so generated clients work as written:
 * - every operation has an `operationId` (the SDK's method names for the known ones, a derived
 *   camelCase name for any other route);
 * - a field or parameter with a default is never `required` (the service fills it in; a
 *   generated client that had to send it would reject a perfectly valid call);
 * - `servers` names the development default.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const OPERATION_IDS: Record<string, string> = {
  'post /v1/tools': 'createTool',
  'get /v1/tools': 'listTools',
  'get /v1/tools/{name}': 'getTool',
  'put /v1/tools/{name}': 'updateTool',
  'delete /v1/tools/{name}': 'retireTool',
  'get /v1/tools/{name}/versions': 'listToolVersions',
  'get /v1/tools/{name}/learned-aliases': 'listLearnedAliases',
  'delete /v1/tools/{name}/learned-aliases/{id}': 'deleteLearnedAlias',
  'post /v1/discover': 'discover',
  'get /v1/discoveries': 'listDiscoveries',
  'post /v1/authorize': 'authorize',
  'post /v1/call': 'callTool',
  'post /v1/upstreams': 'createUpstream',
  'get /v1/upstreams': 'listUpstreams',
  'get /v1/upstreams/{name}': 'getUpstream',
  'delete /v1/upstreams/{name}': 'deleteUpstream',
  'post /v1/upstreams/{name}/sync': 'syncUpstream',
  'post /v1/catalog/sync': 'syncCatalog',
  'get /v1/catalog/index-status': 'indexProgress',
  'get /v1/audit': 'listAudit',
  'get /v1/reports/misses': 'getMissesReport',
  'get /healthz': 'health',
  'get /readyz': 'ready',
  'get /metrics': 'metrics',
  'get /.well-known/oauth-protected-resource': 'getProtectedResourceMetadata',
  'get /.well-known/oauth-protected-resource/mcp': 'getMcpProtectedResourceMetadata',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** A camelCase operation id from the method and the path's words, for routes not in the table. */
function derivedOperationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean).filter((w) => !/^v\d+$/.test(w));
  return [method.toLowerCase(), ...words.map((w) => w.charAt(0).toUpperCase() + w.slice(1))].join('');
}

/** Drops defaulted properties from `required`, everywhere in a schema (iterative). */
function optionalDefaults(root: unknown): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (isObject(node)) {
      if (Array.isArray(node.required) && isObject(node.properties)) {
        const properties = node.properties;
        const required = node.required.filter((name) => !(typeof name === 'string' && isObject(properties[name]) && 'default' in properties[name]));
        if (required.length > 0) node.required = required;
        else delete node.required;
      }
      stack.push(...Object.values(node));
    }
  }
}

/** Applies the rules above to a generated document, in place, and returns it. */
export function polishOpenApi(document: Json): Json {
  document.servers = [{ url: '/', description: 'the service that serves this document (relative to where it was fetched)' }];
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      operation.operationId ??= OPERATION_IDS[`${method} ${path}`] ?? derivedOperationId(method, path);
      for (const parameter of Array.isArray(operation.parameters) ? operation.parameters : []) {
        if (isObject(parameter) && parameter.in !== 'path' && isObject(parameter.schema) && 'default' in parameter.schema) parameter.required = false;
      }
      optionalDefaults(operation.requestBody);
    }
  }
  optionalDefaults(document.components);
  return document;
}
