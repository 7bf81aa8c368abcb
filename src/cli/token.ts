import { SignJWT } from 'jose';

import { resolveJwt } from '../bootstrap.js';
import { type Config, ConfigError } from '../config.js';

export interface TokenOptions {
  tenant: string;
  scope: string;
  subject: string;
  ttl: string;
}

/**
 * Mints an HS256 token for JWT_SECRET or the development secret in DATA_DIR. With asymmetric
 * keys the private key lives with the identity provider, so the registry cannot mint tokens.
 */
export async function mintToken(config: Config, options: TokenOptions): Promise<string> {
  const { jwt } = resolveJwt(config, false);
  if (!jwt.secret) throw new ConfigError('tokens can only be minted with JWT_SECRET or in development mode; ask your identity provider');
  const claims: Record<string, unknown> = { [jwt.tenantClaim]: options.tenant, [jwt.scopeClaim]: options.scope.trim() };
  let builder = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(options.subject).setIssuedAt().setExpirationTime(options.ttl);
  if (jwt.issuer) builder = builder.setIssuer(jwt.issuer);
  if (jwt.audience) builder = builder.setAudience(jwt.audience);
  return builder.sign(new TextEncoder().encode(jwt.secret));
}
