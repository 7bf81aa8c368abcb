import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

import type { TracingConfig } from '../config.js';
import { VERSION } from '../version.js';
import { setTracer } from './tracer.js';

/** The instrumentation scope every span of the service is created under. */
export const TRACER_NAME = 'tool-registry';

/** A started SDK: flush it before the process exits. */
export interface Tracing {
  /** Exports every ended span not yet sent. */
  flush(): Promise<void>;
  /** Flushes, then unregisters the SDK: the seams in tracer.ts are plain calls again. */
  shutdown(): Promise<void>;
}

/** OTEL_TRACES_SAMPLER as a sampler of the SDK. */
export function samplerFor(config: Pick<TracingConfig, 'sampler' | 'samplerRatio'>): Sampler {
  const root = (kind: 'always_on' | 'always_off' | 'traceidratio'): Sampler =>
    kind === 'always_on' ? new AlwaysOnSampler() : kind === 'always_off' ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
    case 'always_off':
    case 'traceidratio':
      return root(config.sampler);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: root('always_on') });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: root('always_off') });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: root('traceidratio') });
  }
}

/** The batching OTLP/HTTP exporter of `config` (protobuf or JSON bodies). */
function otlpProcessor(config: TracingConfig): SpanProcessor {
  const options = { url: config.endpoint, headers: config.headers, timeoutMillis: config.timeoutMs };
  return new BatchSpanProcessor(config.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options));
}

/**
 * Starts the OpenTelemetry SDK: a tracer provider with the service's resource and sampler,
 * AsyncLocalStorage context and the W3C `traceparent` propagator, registered globally. Spans go
 * to the OTLP endpoint of `config`, or to `processor` (tests: an in-memory exporter). The server
 * calls it only when tracing is configured, and imports this module only then.
 */
export function startTracing(config: TracingConfig, processor: SpanProcessor = otlpProcessor(config)): Tracing {
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: VERSION }),
    ),
    sampler: samplerFor(config),
    spanProcessors: [processor],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  setTracer(provider.getTracer(TRACER_NAME, VERSION));
  return {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      setTracer(undefined);
      try {
        await provider.shutdown();
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}
