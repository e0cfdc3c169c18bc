/** examples/opentelemetry.ts: the SDK's TracingChannel turned into OpenTelemetry spans, against the fake on 127.0.0.1. */
import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ExportResultCode } from '@opentelemetry/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PostSched } from '@postsched/sdk';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { FAKE_PROFILE_OPTIONS } from '../support/fake-profile.js';
import { instrumentPostSched, main } from '../../examples/opentelemetry.js';

let fake: FakeService;
let url: string;
beforeEach(async () => {
  fake = createFakeService(FAKE_PROFILE_OPTIONS);
  ({ url } = await fake.listen());
  vi.spyOn(console, 'log').mockImplementation(() => {});
});
afterEach(async () => {
  vi.restoreAllMocks();
  await fake.close();
});

describe('examples/opentelemetry.ts', () => {
  it('main(): one CLIENT span per call, named by method and route template, with the HTTP attributes', async () => {
    // main() shuts its provider down, which empties an InMemorySpanExporter: collect the spans as they end.
    const finished: ReadableSpan[] = [];
    const exporter: SpanExporter = {
      export: (batch, done) => {
        finished.push(...batch);
        done({ code: ExportResultCode.SUCCESS });
      },
      shutdown: async () => undefined,
    };
    await main({ baseUrl: url, accessToken: fake.issueTokens().access_token }, exporter);
    const spans = finished.map((span) => ({ name: span.name, attributes: span.attributes, status: span.status.code }));
    expect(spans.map((s) => s.name)).toEqual(['GET /accounts', 'GET /posts/{id}', 'GET /posts']);
    expect(spans[0]!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.template': '/accounts',
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
    });
    expect(spans[1]).toMatchObject({ attributes: { 'url.template': '/posts/{id}', 'http.response.status_code': 404 }, status: SpanStatusCode.ERROR });
    // The id never reaches the span: only the template.
    expect(JSON.stringify(spans)).not.toContain('post_does_not_exist');
  });

  it('a retried call gives one span per attempt, the retry with http.request.resend_count; a failure records the error', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const stop = instrumentPostSched(provider.getTracer('test'));
    try {
      fake.faults.error({ method: 'GET', path: '/accounts', status: 503, times: 1 });
      const client = new PostSched({ baseUrl: url, auth: fake.issueTokens().access_token });
      await client.accounts.list().toArray();
      const failing = new PostSched({ baseUrl: 'http://127.0.0.1:9', auth: 't', maxRetries: 0 });
      await expect(failing.accounts.list().toArray()).rejects.toMatchObject({ name: 'ConnectionError' });
    } finally {
      stop();
    }
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => [s.attributes['http.response.status_code'], s.attributes['http.request.resend_count']])).toEqual([
      [503, undefined],
      [200, 1],
      [undefined, undefined],
    ]);
    expect(spans[2]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(spans[2]!.attributes['error.type']).toBe('ConnectionError');
    expect(spans[2]!.events.map((e) => e.name)).toEqual(['exception']);
  });
});
