/**
 * OpenTelemetry traces of the SDK's calls: `PostSchedInstrumentation` registered like every other instrumentation.
 *
 * Shows: one span per call (`GET /posts/{id}`, under the app's active span), a CLIENT span per wire request under it
 * (retries, the token refresh) with the HTTP semantic-convention attributes, and `traceparent` sent on each request.
 * In an app, the OpenTelemetry Node SDK (`@opentelemetry/sdk-node`) makes the provider, the context manager and the
 * propagator that `main` makes by hand here: give it `instrumentations: [new PostSchedInstrumentation()]`.
 *
 *   npm install @postsched/sdk @opentelemetry/api @opentelemetry/context-async-hooks @opentelemetry/core @opentelemetry/instrumentation @opentelemetry/sdk-trace-base
 *   npm install -D tsx                      # runs the TypeScript file as it is
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`):
 *   npx postsched mock                      # terminal 1: paste its export lines into terminal 2
 *   npx tsx examples/opentelemetry.ts       # terminal 2: prints the spans of a few calls
 *
 * Against a real service, set POSTSCHED_BASE_URL and POSTSCHED_ACCESS_TOKEN yourself.
 */
import { pathToFileURL } from 'node:url';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NotFoundError, PostSched } from '@postsched/sdk';
import { PostSchedInstrumentation } from '@postsched/sdk/otel';

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

/** A few calls under one span of the app: the accounts, a post that does not exist (a 404), the posts. */
export async function main(config: Config, exporter: SpanExporter = new ConsoleSpanExporter()): Promise<void> {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const unregister = registerInstrumentations({ instrumentations: [new PostSchedInstrumentation()] });
  try {
    const client = new PostSched({ baseUrl: config.baseUrl, auth: config.accessToken });
    await trace.getTracer('example').startActiveSpan('report', async (span) => {
      const accounts = await client.accounts.list().toArray();
      await client.posts.get('post_does_not_exist').catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error;
      });
      const posts = await client.posts.list({ limit: 5 }).toArray();
      console.log(`${accounts.length} account(s), ${posts.length} post(s)`);
      span.end();
    });
  } finally {
    unregister();
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(configFromEnv()).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
