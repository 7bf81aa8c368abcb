import { randomUUID } from 'node:crypto';

import { type CryptoKey, type KeyObject, SignJWT } from 'jose';

/** The HS256 secret test apps verify with (JWT_SECRET needs 32 characters or more). */
export const TEST_SECRET = 'test-secret-0123456789abcdef-0123456789abcdef';

export interface TokenOptions {
  /** Tenant claim value; null leaves the claim out. Default: 'acme'. */
  tenant?: string | null;
  /** Scopes: an array goes into `scp`-style arrays only when `scopeClaim` says so; default `scope` string. */
  scopes?: string[];
  /** Where scopes go (default `scope`, space-separated); an array claim when `scopeAsArray`. */
  scopeClaim?: string;
  scopeAsArray?: boolean;
  tenantClaim?: string;
  sub?: string;
  /** Expiry: seconds since epoch, a jose duration ('1h'), or null to leave `exp` out. Default '10m'. */
  exp?: number | string | null;
  nbf?: number | string;
  iat?: number;
  iss?: string;
  aud?: string | string[];
  alg?: string;
  /** Signing key; default the HS256 TEST_SECRET. */
  key?: Uint8Array | KeyObject | CryptoKey;
  kid?: string;
  claims?: Record<string, unknown>;
}

/** Signs a test JWT with jose; every claim can be bent for attack cases. */
export async function token(options: TokenOptions = {}): Promise<string> {
  const claims: Record<string, unknown> = { ...options.claims };
  const tenant = options.tenant === undefined ? 'acme' : options.tenant;
  if (tenant !== null) claims[options.tenantClaim ?? 'tenant_id'] = tenant;
  if (options.scopes !== undefined) {
    claims[options.scopeClaim ?? 'scope'] = options.scopeAsArray ? options.scopes : options.scopes.join(' ');
  }
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT', ...(options.kid ? { kid: options.kid } : {}) })
    .setSubject(options.sub ?? 'user-1')
    .setJti(randomUUID())
    .setIssuedAt(options.iat);
  const exp = options.exp === undefined ? '10m' : options.exp;
  if (exp !== null) jwt = jwt.setExpirationTime(exp);
  if (options.nbf !== undefined) jwt = jwt.setNotBefore(options.nbf);
  if (options.iss !== undefined) jwt = jwt.setIssuer(options.iss);
  if (options.aud !== undefined) jwt = jwt.setAudience(options.aud);
  return jwt.sign(options.key ?? new TextEncoder().encode(TEST_SECRET));
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An unsigned token (`alg: none`), which jose refuses to produce on purpose. */
export function unsignedToken(claims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ tenant_id: 'acme', scope: 'registry:publish', sub: 'mallory', iat: now, exp: now + 600, ...claims })}.`;
}

let counter = 0;
/** A tenant name no other test uses, so tests sharing a database stay independent. */
export function uniqueTenant(prefix = 'tenant'): string {
  counter += 1;
  return `${prefix}-${counter}-${randomUUID().slice(0, 8)}`;
}

export const PUBLISH = 'registry:publish';
