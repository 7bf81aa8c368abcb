/**
 * One-off PostgreSQL sessions for the bench and the tests' global setup (admin work outside the
 * service: creating databases, the vector extension, reading catalogs).
 */
import pg from 'pg';

/** Runs `work` on a fresh connection to `url`, closed afterwards whatever happens. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** pgvector in the database at `url` (migrations expect it installed, or creatable by the user). */
export async function ensureVectorExtension(url: string): Promise<void> {
  await withClient(url, (client) => client.query('create extension if not exists vector'));
}
