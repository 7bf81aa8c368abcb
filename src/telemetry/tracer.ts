import { type Attributes, type Span, SpanStatusCode, type Tracer } from '@opentelemetry/api';

/**
 * The seam every traced part of the service calls (HTTP, discovery stages, database statements,
 * upstream calls). It imports only the OpenTelemetry API: the SDK is loaded by src/telemetry/sdk.ts
 * when tracing is configured, and until then every helper here is a plain call.
 */
let active: Tracer | undefined;

/** Set by startTracing (and cleared by its shutdown); nothing else calls it. */
export function setTracer(tracer: Tracer | undefined): void {
  active = tracer;
}

/** The tracer while tracing is on; undefined when it is off (no SDK started). */
export function activeTracer(): Tracer | undefined {
  return active;
}

/**
 * Marks a span failed with the error's kind: a SQLSTATE or Node error code, else the error's
 * class. Never its message: a database error quotes the values a statement was given.
 */
export function recordFailure(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown');
}

/**
 * Runs `fn` inside a new span, child of the active one, so that spans `fn` starts (database
 * statements) are its children; with tracing off, just `fn()`.
 */
export function inSpan<T>(name: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
  const tracer = active;
  if (!tracer) return fn();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span over synchronous work, ended by the caller. */
export interface StageSpan {
  end(): void;
}

const NO_SPAN: StageSpan = { end: () => undefined };

/** Starts a span over synchronous work (it starts no other span, so it need not be active). */
export function startStage(name: string): StageSpan {
  return active ? active.startSpan(name) : NO_SPAN;
}
