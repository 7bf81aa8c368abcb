import { createPublicKey, type KeyObject, webcrypto } from 'node:crypto';

import { createRemoteJWKSet, decodeProtectedHeader, errors, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';

import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { Principal } from './principal.js';

/** Verifies a bearer token and returns the caller; throws a 401 AppError otherwise. */
export type TokenVerifier = (token: string) => Promise<Principal>;

const RSA_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const EC_ALGS: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** Algorithms a public key may verify: derived from the key itself, never from the token. */
export function algorithmsForKey(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
      return RSA_ALGS;
    case 'ec': {
      const alg = EC_ALGS[key.asymmetricKeyDetails?.namedCurve ?? ''];
      if (!alg) throw new Error(`unsupported JWT_PUBLIC_KEY curve ${key.asymmetricKeyDetails?.namedCurve ?? 'unknown'}`);
      return [alg];
    }
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      throw new Error(`unsupported JWT_PUBLIC_KEY type ${key.asymmetricKeyType ?? 'unknown'}`);
  }
}

// RFC 6750: every 401 for a presented token names the problem in WWW-Authenticate.
const INVALID_TOKEN = { 'www-authenticate': 'Bearer error="invalid_token"' };

/**
 * Claims become database keys: a string with an unpaired surrogate has no UTF-8 form, and drivers
 * replace it with U+FFFD, so `org\ud800`, `org\udfff` and `org\ufffd` would name one tenant.
 */
const LONE_SURROGATE = /\p{Cs}/u;
/**
 * Nor can PostgreSQL store NUL: a `sub` of "mallory\u0000" failed the batched discovery log on every
 * flush, for every tenant (issue 32, finding 2). No claim that names a tenant, subject or scope
 * has a use for control characters, so all of them (C0, DEL, C1) are refused with NUL.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

function wellFormed(claim: string, value: string): string {
  if (LONE_SURROGATE.test(value)) throw new AppError('unauthorized', `token claim '${claim}' is not well-formed Unicode (it has an unpaired surrogate)`, [], INVALID_TOKEN);
  if (CONTROL.test(value)) throw new AppError('unauthorized', `token claim '${claim}' holds a control character (such as NUL)`, [], INVALID_TOKEN);
  return value;
}

/** Tenant and scopes from verified claims; scopes may be a space-separated string or an array. */
export function principalFromClaims(payload: JWTPayload, tenantClaim: string, scopeClaim: string): Principal {
  const tenant = payload[tenantClaim];
  if (typeof tenant !== 'string' || tenant.trim() === '') {
    throw new AppError('unauthorized', `token has no '${tenantClaim}' claim naming the tenant`, [], INVALID_TOKEN);
  }
  wellFormed(tenantClaim, tenant);
  // The default claim name reads both conventions (OAuth `scope`, Azure-style `scp`).
  const claims = scopeClaim === 'scope' ? ['scope', 'scp'] : [scopeClaim];
  const scopes = new Set<string>();
  for (const claim of claims) {
    const value = payload[claim];
    const list = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value : [];
    for (const scope of list) if (typeof scope === 'string' && scope !== '') scopes.add(wellFormed(claim, scope));
  }
  return { tenant, subject: typeof payload.sub === 'string' ? wellFormed('sub', payload.sub) : null, scopes: [...scopes].sort() };
}

/**
 * Header parameters that point at a key or at another token. jose never fetches or trusts them,
 * but a token that carries them was made for a verifier that does (key injection through `jwk`,
 * key URLs through `jku`/`x5u`, certificate chains through `x5c`, nested tokens through `cty`):
 * refusing them keeps the one key source the configuration names, as the README promises.
 */
const REFUSED_HEADERS = ['jku', 'x5u', 'jwk', 'x5c', 'cty'];

/** The first refused header parameter of a token, or undefined (also for a token that does not decode: jwtVerify reports that). */
function refusedHeader(token: string): string | undefined {
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return undefined;
  }
  return REFUSED_HEADERS.find((name) => Object.hasOwn(header, name));
}

function describeJoseError(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'token expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `token claim '${error.claim}' is invalid: ${error.reason}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token algorithm is not allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token signature is invalid';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key matches the token';
  if (error instanceof errors.JOSEError) return 'token is invalid';
  return 'token could not be verified';
}

/** Verified tokens remembered per process, and for how long at most. */
const VERIFIED_TOKENS = 10_000;
const VERIFIED_TOKEN_MS = 5 * 60_000;

/**
 * Builds the verifier for the configured key: an HS256 secret, a PEM public key, or a JWKS URL
 * (fetched lazily and cached by jose). The algorithm allow-list never includes `none`, and never
 * HS* when an asymmetric key is configured (config rejects mixing them).
 */
export function createVerifier(jwt: Config['jwt']): TokenVerifier {
  let key: Promise<webcrypto.CryptoKey> | KeyObject | JWTVerifyGetKey;
  let algorithms: string[];
  if (jwt.jwksUrl) {
    key = createRemoteJWKSet(new URL(jwt.jwksUrl));
    algorithms = [...RSA_ALGS, 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
  } else if (jwt.publicKey) {
    const publicKey = createPublicKey(jwt.publicKey);
    key = publicKey;
    algorithms = algorithmsForKey(publicKey);
  } else if (jwt.secret) {
    // Imported once: jose would import raw secret bytes again on every verification.
    key = webcrypto.subtle.importKey('raw', new TextEncoder().encode(jwt.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    algorithms = ['HS256'];
  } else {
    throw new Error('no JWT verification key configured');
  }
  const options = {
    algorithms,
    issuer: jwt.issuer,
    audience: jwt.audience,
    clockTolerance: jwt.clockToleranceSeconds,
    requiredClaims: ['exp'],
  };
  // Verified tokens, so a gateway's or runtime's token reused on every call is checked once: a hit
  // stands until the token itself expires (what jwtVerify would accept, tolerance included), and
  // at most VERIFIED_TOKEN_MS, so a key withdrawn from the JWKS stops working within that bound.
  const verified = new LRUCache<string, { principal: Principal; until: number }>({ max: VERIFIED_TOKENS });
  return async (token) => {
    const hit = verified.get(token);
    if (hit && Date.now() < hit.until) return hit.principal;
    if (hit) verified.delete(token);
    // Checked before the signature: no key work for a token the registry would refuse anyway.
    const refused = refusedHeader(token);
    if (refused) throw new AppError('unauthorized', `token header '${refused}' is not accepted (keys come only from the configured key or JWKS)`, [], INVALID_TOKEN);
    let payload: JWTPayload;
    try {
      // Overloads differ by key kind; both paths run the same verification.
      payload = typeof key === 'function' ? (await jwtVerify(token, key, options)).payload : (await jwtVerify(token, await key, options)).payload;
    } catch (error) {
      throw new AppError('unauthorized', describeJoseError(error), [], INVALID_TOKEN);
    }
    const claims = principalFromClaims(payload, jwt.tenantClaim, jwt.scopeClaim);
    // Shared by every request that presents the token: frozen, so none can change it for the next.
    const principal = Object.freeze({ ...claims, scopes: Object.freeze(claims.scopes) });
    // exp is required (requiredClaims), so every verified token has one.
    verified.set(token, { principal, until: Math.min((payload.exp! + jwt.clockToleranceSeconds) * 1000, Date.now() + VERIFIED_TOKEN_MS) });
    return principal;
  };
}
