/** Who is calling, as proven by a verified token: never taken from a body or query string. */
export interface Principal {
  tenant: string;
  subject: string | null;
  scopes: readonly string[];
}

export const PUBLISH_SCOPE = 'registry:publish';

/** Tenant-wide administration (settings such as warnings_as_errors). */
export const ADMIN_SCOPE = 'registry:admin';

/** Publishers manage (and so see) every tool of their tenant. */
export function isPublisher(principal: Principal): boolean {
  return principal.scopes.includes(PUBLISH_SCOPE);
}
