import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

import { devSecret } from '../auth/dev-secret.js';
import type { Config } from '../config.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const DEV_KEY_FILE = 'dev-upstream-key';

/**
 * Seals an upstream's headers (its credentials) with AES-256-GCM: base64 of iv | tag | ciphertext.
 * The tenant and upstream name are the additional data, so a sealed value copied onto another
 * row does not open.
 */
export class HeaderSealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the upstream header key must be 32 bytes');
  }

  seal(headers: Record<string, string>, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(JSON.stringify(headers), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string, context: string): Record<string, string> {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Record<string, string>;
  }
}

/**
 * The key in force: UPSTREAM_SECRET_KEY, else (embedded database only, like the JWT development
 * secret) a key created in DATA_DIR on first use; an external database without the variable has
 * none, and registering headers is refused naming it.
 */
export function resolveSealer(config: Pick<Config, 'upstreams' | 'databaseUrl' | 'dataDir'>): HeaderSealer | undefined {
  if (config.upstreams.secretKey) return new HeaderSealer(config.upstreams.secretKey);
  if (config.databaseUrl) return undefined;
  const dev = devSecret(config.dataDir, true, DEV_KEY_FILE);
  return dev === undefined ? undefined : new HeaderSealer(Buffer.from(dev, 'base64url'));
}

/** Context bound into a sealed value: the row it belongs to. */
export const sealContext = (tenant: string, name: string): string => `${tenant}\u0000${name}`;

/** Replaces every header value in `text` (an upstream's error message may echo a request). */
export function redact(text: string, headers: Record<string, string>): string {
  let result = text;
  for (const value of Object.values(headers)) {
    if (value.length >= 4) result = result.split(value).join('[redacted]');
    for (const part of value.split(/\s+/)) if (part.length >= 8) result = result.split(part).join('[redacted]');
  }
  return result;
}
