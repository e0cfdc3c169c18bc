/**
 * The SDK's channels (src/core/tracing.ts) as OpenTelemetry spans and metrics. Each call's span and each request's
 * CLIENT span are made active around their work by binding the channel's `start` to OpenTelemetry's context (a
 * `bindStore` whose store runs `context.with`): what the SDK does inside, and undici's span when its instrumentation
 * is on, are their children. Nothing is patched; with the instrumentation disabled the channels have no subscriber.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import type { AsyncLocalStorage } from 'node:async_hooks';
import {
  context,
  metrics,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { CALL_CHANNEL, REQUEST_CHANNEL, WAIT_CHANNEL, type CallTrace, type RequestTrace, type WaitTrace } from '../core/tracing.js';
import { createInstruments, errorType, fullUrl, routeAttributes, type Instruments } from './attributes.js';

/** The options of `PostSchedInstrumentation` (those of every OpenTelemetry instrumentation). */
export interface PostSchedInstrumentationConfig {
  /** `false`: built disabled, until `enable()` (`registerInstrumentations` enables it). Default `true`. */
  enabled?: boolean;
}

declare const __SDK_VERSION__: string | undefined;

/** undici's own diagnostics channel: `@opentelemetry/instrumentation-undici` listens on it while it is enabled. */
const UNDICI_REQUEST_CREATE = 'undici:request:create';

/** What a span of a request still needs when it ends: the attributes its metric is recorded with. */
interface Open {
  readonly span: Span | undefined;
  readonly attributes: Attributes;
}

/**
 * OpenTelemetry instrumentation of `@postsched/sdk`: one span per SDK call (`GET /posts/{id}`), one CLIENT span
 * per wire request under it (each attempt, each token request), `traceparent` on every request, and the metrics
 * `http.client.request.duration`, `postsched.rate_limiter.wait.duration` and `postsched.token.refresh.duration`.
 * With `@opentelemetry/instrumentation-undici` on, undici's span is each attempt's (under the call's span) and
 * measures it: the SDK makes no CLIENT span and records no duration of its own. Node ≥ 20.16, Bun or Deno.
 * No token, secret, code, verifier or body appears in a span or a metric.
 *
 * @example
 * import { registerInstrumentations } from '@opentelemetry/instrumentation'
 * import { PostSchedInstrumentation } from '@postsched/sdk/otel'
 * registerInstrumentations({ instrumentations: [new PostSchedInstrumentation()] })
 */
export class PostSchedInstrumentation {
  /** The instrumentation scope of its spans and metrics. */
  readonly instrumentationName = '@postsched/sdk';
  /** The SDK's version, written in by the build, as SDK_VERSION (core/user-agent.ts, whose refusals this entry does not need). */
  readonly instrumentationVersion: string = typeof __SDK_VERSION__ === 'string' ? __SDK_VERSION__ : '0.0.0-dev';
  #config: PostSchedInstrumentationConfig;
  #tracer!: Tracer;
  #instruments!: Instruments;
  #enabled = false;
  /** The open span of each call and request record. */
  readonly #open = new WeakMap<object, Open>();
  readonly #call = diagnostics_channel.tracingChannel<Context, CallTrace>(CALL_CHANNEL);
  readonly #request = diagnostics_channel.tracingChannel<Context, RequestTrace>(REQUEST_CHANNEL);
  /** `bindStore`'s store: runs each traced function in the context the transforms below made. */
  readonly #store = { run: (active: Context, fn: () => unknown) => context.with(active, fn) } as unknown as AsyncLocalStorage<Context>;

  constructor(config: PostSchedInstrumentationConfig = {}) {
    this.#config = { enabled: true, ...config };
    this.setTracerProvider(trace.getTracerProvider());
    this.setMeterProvider(metrics.getMeterProvider());
    if (this.#config.enabled === true) this.enable();
  }

  /** The provider of its spans (`registerInstrumentations` gives it; by default the global one). */
  setTracerProvider(tracerProvider: TracerProvider): void {
    this.#tracer = tracerProvider.getTracer(this.instrumentationName, this.instrumentationVersion);
  }

  /** The provider of its metrics (`registerInstrumentations` gives it; by default the global one). */
  setMeterProvider(meterProvider: MeterProvider): void {
    this.#instruments = createInstruments(meterProvider.getMeter(this.instrumentationName, this.instrumentationVersion));
  }

  /** Its options; `enabled` tells whether it listens now. */
  getConfig(): PostSchedInstrumentationConfig {
    return { ...this.#config, enabled: this.#enabled };
  }

  /** Replaces its options (`enabled` is read at construction only: `enable()` and `disable()` switch it). */
  setConfig(config: PostSchedInstrumentationConfig): void {
    this.#config = { ...config };
  }

  /** Starts listening to the SDK's channels (done at construction unless `enabled: false`). */
  enable(): void {
    if (this.#enabled) return;
    this.#enabled = true;
    this.#call.start.bindStore(this.#store, safely(this.#startCall));
    this.#call.subscribe(this.#callHandlers);
    this.#request.start.bindStore(this.#store, safely(this.#startRequest));
    this.#request.subscribe(this.#requestHandlers);
    diagnostics_channel.subscribe(WAIT_CHANNEL, this.#onWait);
  }

  /** Stops listening: the SDK then builds nothing for tracing and sends no trace header. */
  disable(): void {
    if (!this.#enabled) return;
    this.#enabled = false;
    this.#call.start.unbindStore(this.#store);
    this.#call.unsubscribe(this.#callHandlers);
    this.#request.start.unbindStore(this.#store);
    this.#request.unsubscribe(this.#requestHandlers);
    diagnostics_channel.unsubscribe(WAIT_CHANNEL, this.#onWait);
  }

  /** A call starts: its span, under the app's active one, is active for all the call does. */
  readonly #startCall = (record: CallTrace): Context => {
    const parent = context.active();
    const attributes = routeAttributes(record.method, record.route, record.origin);
    const span = this.#tracer.startSpan(`${record.method} ${record.route}`, { kind: SpanKind.INTERNAL, attributes }, parent);
    this.#open.set(record, { span, attributes });
    return trace.setSpan(parent, span);
  };

  readonly #callHandlers = {
    start() {},
    end() {},
    asyncStart() {},
    error: (record: unknown) => {
      const { error } = record as CallTrace;
      this.#open.get(record as object)?.span?.setAttribute('error.type', errorType(error)).setStatus({ code: SpanStatusCode.ERROR });
    },
    asyncEnd: (record: unknown) => {
      this.#open.get(record as object)?.span?.end();
      this.#open.delete(record as object);
    },
  };

  /**
   * A wire request starts: its CLIENT span under the call's, active while it is sent, and its `traceparent` handed to
   * the SDK to send. Under undici's instrumentation, undici makes both: the request runs in the call's context.
   */
  readonly #startRequest = (record: RequestTrace): Context => {
    const parent = context.active();
    const attributes = routeAttributes(record.method, record.route, record.origin);
    if (diagnostics_channel.hasSubscribers(UNDICI_REQUEST_CREATE)) {
      this.#open.set(record, { span: undefined, attributes });
      return parent;
    }
    const span = this.#tracer.startSpan(
      `${record.method} ${record.route}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...attributes,
          'url.full': fullUrl(record.url),
          ...(record.attempt > 1 ? { 'http.request.resend_count': record.attempt - 1 } : {}),
        },
      },
      parent,
    );
    this.#open.set(record, { span, attributes });
    const active = trace.setSpan(parent, span);
    const headers: Record<string, string> = {};
    propagation.inject(active, headers);
    record.traceHeaders = headers;
    return active;
  };

  readonly #requestHandlers = {
    start() {},
    end() {},
    asyncStart() {},
    error: (record: unknown) => {
      const { error } = record as RequestTrace;
      const open = this.#open.get(record as object);
      if (open === undefined) return;
      open.attributes['error.type'] = errorType(error);
      if (error instanceof Error) open.span?.recordException(error);
    },
    asyncEnd: (record: unknown) => this.#endRequest(record as RequestTrace),
  };

  /** The request's span ended with its status or its error, and its duration recorded. */
  #endRequest(record: RequestTrace): void {
    const open = this.#open.get(record);
    if (open === undefined) return;
    this.#open.delete(record);
    const { span, attributes } = open;
    if (record.status !== undefined) {
      attributes['http.response.status_code'] = record.status;
      // The conventions: a 4xx or 5xx answer is a client span's error, its status code the error's type.
      if (record.status >= 400) attributes['error.type'] = String(record.status);
    }
    const seconds = (record.durationMs ?? 0) / 1000;
    if (span !== undefined) {
      span.setAttributes(attributes);
      if (attributes['error.type'] !== undefined) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      // undici's instrumentation measures the requests it saw: recorded here only when it did not.
      this.#instruments.requestDuration.record(seconds, attributes);
    }
    if (record.grantType === 'refresh_token') {
      this.#instruments.tokenRefresh.record(seconds, { 'server.address': attributes['server.address'], ...(attributes['error.type'] === undefined ? {} : { 'error.type': attributes['error.type'] }) });
    }
  }

  /** A call waits for its turn: the wait measured, and marked on the call's span (the active one). */
  readonly #onWait = (message: unknown): void => {
    const { method, route, origin, waitMs } = message as WaitTrace;
    this.#instruments.rateLimiterWait.record(waitMs / 1000, routeAttributes(method, route, origin));
    trace.getActiveSpan()?.addEvent('postsched.rate_limiter.wait', { 'postsched.wait.duration': waitMs / 1000 });
  };
}

/**
 * A `bindStore` transform that never throws: Node reports a throwing transform as an uncaught exception, which would
 * end the app; a failing tracer (a broken propagator, an exporter's hook) costs the span only.
 */
function safely<T>(start: (record: T) => Context): (record: T) => Context {
  return (record) => {
    try {
      return start(record);
    } catch {
      return context.active();
    }
  };
}
