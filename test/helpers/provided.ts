/** Values the global setup hands to every test file (see vitest's `provide` / `inject`). */
export interface ExternalPostgres {
  /** Connection URL of a PostgreSQL with pgvector, or null when the leg is skipped. */
  url: string | null;
  /** A streaming replica of that server (TEST_DATABASE_READ_URL), or null when there is none. */
  readUrl: string | null;
  /** Where the URL came from ('TEST_DATABASE_URL', scripts/postgres.sh or testcontainers), or why the leg is skipped. */
  source: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** File holding a migrated PGlite data directory (dumpDataDir), cloned per test file. */
    pgliteTemplate: string;
    externalPostgres: ExternalPostgres;
  }
}
