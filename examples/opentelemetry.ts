/**
 * OpenTelemetry spans for every request the SDK makes, from its `postsched:request` TracingChannel (Node).
 *
 * Shows: subscribing to `node:diagnostics_channel` (no monkey-patching of fetch, no OpenTelemetry package inside the
 * SDK), one CLIENT span per attempt named `GET /posts/{id}` with the semantic-convention attributes
 * `http.request.method`, `url.template`, `server.address`, `http.request.resend_count` and
 * `http.response.status_code`, and errors recorded on their span. The route is the template: ids stay out of span
 * names, so they group well. Headers, tokens and bodies are never published on the channel.
 *
 *   npm install @postsched/sdk @opentelemetry/api @opentelemetry/sdk-trace-base @opentelemetry/semantic-conventions
 *   npm install -D tsx                      # runs the TypeScript file as it is
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`):
 *   npx postsched mock                      # terminal 1: paste its export lines into terminal 2
 *   npx tsx examples/opentelemetry.ts       # terminal 2: prints the spans of a few calls
 *
 * Against a real service, set POSTSCHED_BASE_URL and POSTSCHED_ACCESS_TOKEN yourself. In an app, give
 * `instrumentPostSched` the tracer of your own provider (the OpenTelemetry Node SDK, an OTLP exporter …).
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { pathToFileURL } from 'node:url';
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_TEMPLATE,
} from '@opentelemetry/semantic-conventions/incubating';
import { NotFoundError, PostSched, REQUEST_CHANNEL, type RequestTrace } from '@postsched/sdk';

/**
 * Turns the SDK's request events into spans of `tracer`; returns the function that stops it. Call once at start-up.
 */
export function instrumentPostSched(tracer: Tracer): () => void {
  const channel = diagnostics_channel.tracingChannel(REQUEST_CHANNEL);
  const spans = new WeakMap<object, Span>();
  const handlers = {
    start(message: unknown) {
      const trace = message as RequestTrace;
      const origin = new URL(trace.origin);
      const span = tracer.startSpan(`${trace.method} ${trace.route}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: trace.method,
          [ATTR_URL_TEMPLATE]: trace.route,
          [ATTR_SERVER_ADDRESS]: origin.hostname,
          [ATTR_SERVER_PORT]: Number(origin.port || (origin.protocol === 'https:' ? 443 : 80)),
          ...(trace.attempt > 1 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: trace.attempt - 1 } : {}),
        },
      });
      spans.set(trace, span);
    },
    error(message: unknown) {
      const trace = message as RequestTrace;
      const span = spans.get(trace);
      const error = trace.error instanceof Error ? trace.error : new Error(String(trace.error));
      span?.recordException(error);
      span?.setAttribute(ATTR_ERROR_TYPE, error.name);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error.name });
    },
    asyncEnd(message: unknown) {
      const trace = message as RequestTrace;
      const span = spans.get(trace);
      if (span === undefined) return;
      if (trace.status !== undefined) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, trace.status);
        // OpenTelemetry HTTP conventions: a 4xx/5xx on a client span is an error.
        if (trace.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
      spans.delete(trace);
    },
    end() {},
    asyncStart() {},
  };
  channel.subscribe(handlers);
  return () => channel.unsubscribe(handlers);
}

/** What the script needs, from environment variables. */
export interface Config {
  baseUrl: string;
  accessToken: string;
}

export function configFromEnv(env: Record<string, string | undefined> = process.env): Config {
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`Set ${name} (see the top of examples/opentelemetry.ts).`);
    return value;
  };
  return { baseUrl: need('POSTSCHED_BASE_URL'), accessToken: need('POSTSCHED_ACCESS_TOKEN') };
}

/** A few calls, each traced: the accounts, a post that does not exist (a 404 span), the first account's posts. */
export async function main(config: Config, exporter: SpanExporter = new ConsoleSpanExporter()): Promise<void> {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const stop = instrumentPostSched(provider.getTracer('postsched-example'));
  try {
    const client = new PostSched({ baseUrl: config.baseUrl, auth: config.accessToken });
    const accounts = await client.accounts.list().toArray();
    console.log(`${accounts.length} account(s)`);
    await client.posts.get('post_does_not_exist').catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
      console.log('post_does_not_exist: 404, as expected (its span has status ERROR)');
    });
    const posts = await client.posts.list({ limit: 5 }).toArray();
    console.log(`${posts.length} post(s)`);
  } finally {
    stop();
    await provider.shutdown();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(configFromEnv()).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
