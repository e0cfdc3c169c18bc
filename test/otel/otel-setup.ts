/**
 * OpenTelemetry as an app sets it up, in memory: a tracer provider with an in-memory exporter, a meter provider with
 * a reader the test collects, the AsyncLocalStorage context manager and the W3C propagator; and a 127.0.0.1 server
 * that answers from a script and records the `traceparent` headers of every request it gets.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AggregationTemporality, MeterProvider, MetricReader, type HistogramMetricData, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export interface Telemetry {
  readonly exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  /** The data points of histogram `name`: their attributes and counts. */
  histogram(name: string): Promise<Array<DataPoint<Histogram>>>;
  close(): Promise<void>;
}

/** Installs the global providers, context manager and propagator; `close()` takes them away. */
export function setUpTelemetry(): Telemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    async histogram(name) {
      const { resourceMetrics } = await reader.collect();
      const found = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === name) as HistogramMetricData[];
      return found.flatMap((metric) => metric.dataPoints);
    },
    async close() {
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** What the server got: one entry per request, with its `traceparent` headers (all of them). */
export interface Received {
  method: string;
  path: string;
  traceparents: string[];
}

export type Script = (request: IncomingMessage, body: string, n: number) => { status: number; headers?: Record<string, string>; json?: unknown };

/** A server on 127.0.0.1 answering each request by `script` (`n`: how many it got, this one included). */
export async function scriptedServer(script: Script): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const traceparents: string[] = [];
      for (let i = 0; i < request.rawHeaders.length; i += 2) if (request.rawHeaders[i]!.toLowerCase() === 'traceparent') traceparents.push(request.rawHeaders[i + 1]!);
      received.push({ method: request.method!, path: request.url!, traceparents });
      const answer = script(request, body, received.length);
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      response.end(answer.json === undefined ? '' : JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The span id a `traceparent` names as the request's parent. */
export function parentIdOf(traceparent: string): string {
  return traceparent.split('-')[2]!;
}
