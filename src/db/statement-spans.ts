import type { PGlite, Transaction } from '@electric-sql/pglite';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_TEXT, ATTR_DB_SYSTEM_NAME, DB_SYSTEM_NAME_VALUE_POSTGRESQL } from '@opentelemetry/semantic-conventions';
import type pg from 'pg';

import { activeTracer, recordFailure } from '../telemetry/tracer.js';

/**
 * A span per database statement, at the driver (a pg client, a PGlite instance): every query of
 * every repository, transaction and migration passes here, whichever door it came through.
 * Auto-instrumentation of pg would miss PGlite in process and needs module hooks under ESM. The
 * span carries the statement's text, which is parameterized ($1, $2...): never the values.
 * Statements outside any span (background passes, migrations) are not traced. With tracing off,
 * each statement costs one check.
 */

// Long statements (retrieval, migrations) are cut: a trace backend is not a SQL archive.
const MAX_TEXT = 2048;

/** Runs one statement inside a client span named after its operation (SELECT, INSERT, BEGIN...). */
export function traceStatement<T>(text: string, run: () => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  // Only inside a traced operation: a background pass's statements would each be a trace of their own.
  if (!tracer || trace.getSpan(context.active()) === undefined) return run();
  const operation = /^\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
  const attributes = {
    [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
    [ATTR_DB_OPERATION_NAME]: operation,
    [ATTR_DB_QUERY_TEXT]: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text,
  };
  return tracer.startActiveSpan(operation, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await run();
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The SQL text of a pg query argument (a string or a QueryConfig), if it is one we trace. */
function pgText(config: unknown): string | undefined {
  if (typeof config === 'string') return config;
  if (typeof config !== 'object' || config === null) return undefined;
  const { text, submit } = config as { text?: unknown; submit?: unknown };
  // A Submittable (cursor, stream) is driven by events, not by the promise: left alone.
  return typeof text === 'string' && typeof submit !== 'function' ? text : undefined;
}

/** Traces the promise-style `query` calls of a node-postgres client (callback style is passed through). */
export function traceClientStatements(client: pg.Client): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const traced = (...args: unknown[]): unknown => {
    const text = pgText(args[0]);
    if (text === undefined || !activeTracer() || args.some((arg) => typeof arg === 'function')) return query(...args);
    return traceStatement(text, () => query(...args) as Promise<unknown>);
  };
  client.query = traced as pg.Client['query'];
}

type Queries = Pick<Transaction, 'query' | 'exec'>;

/** `target`'s query and exec, traced. */
function tracedQueries(target: Queries): Queries {
  const query = target.query.bind(target);
  const exec = target.exec.bind(target);
  return {
    query: (text, params, options) => traceStatement(text, () => query(text, params, options)),
    exec: (text, options) => traceStatement(text, () => exec(text, options)),
  };
}

const tracedClients = new WeakSet<PGlite>();

/** Traces an in-process PGlite's statements, those of its transactions included (once per instance). */
export function tracePgliteStatements(client: PGlite): void {
  if (tracedClients.has(client)) return;
  tracedClients.add(client);
  Object.assign(client, tracedQueries(client));
  const transaction = client.transaction.bind(client);
  client.transaction = <T>(callback: (tx: Transaction) => Promise<T>): Promise<T> =>
    transaction((tx) => {
      const traced = tracedQueries(tx);
      const view = new Proxy(tx, {
        get(target, key) {
          if (key === 'query' || key === 'exec') return traced[key];
          const value: unknown = Reflect.get(target, key);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      return callback(view);
    });
}
