import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { type CryptoKey, exportJWK, exportSPKI, generateKeyPair } from 'jose';

/** An asymmetric key pair for tests, with its public key as PEM (what JWT_PUBLIC_KEY holds). */
export interface TestKeyPair {
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicPem: string;
}

/** Generates a key pair for `alg` (RS256, ES256, EdDSA, ...). */
export async function keyPair(alg: string): Promise<TestKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, privateKey, publicKey, publicPem: await exportSPKI(publicKey) };
}

/** Serves a JWKS document on 127.0.0.1 (random port) and counts fetches. */
export async function serveJwks(keys: { pair: TestKeyPair; kid: string }[]): Promise<{ url: string; fetches: () => number; close: () => Promise<void> }> {
  const jwks = { keys: await Promise.all(keys.map(async ({ pair, kid }) => ({ ...(await exportJWK(pair.publicKey)), kid, alg: pair.alg, use: 'sig' }))) };
  let count = 0;
  const server: Server = createServer((_request, response) => {
    count += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    fetches: () => count,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
