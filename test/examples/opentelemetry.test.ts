/** examples/opentelemetry.ts: PostSchedInstrumentation registered, its spans against the fake on 127.0.0.1. */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeService, type FakeService } from '@postsched/sdk/testing';
import { FAKE_PROFILE_OPTIONS } from '../support/fake-profile.js';
import { main } from '../../examples/opentelemetry.js';

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
  it('main(): a span per call under the app span, a CLIENT span per request under it, with the HTTP attributes', async () => {
    // main() shuts its provider down, which empties an InMemorySpanExporter: collect the spans as they end.
    const finished: ReadableSpan[] = [];
    const exporter: SpanExporter = {
      export: (batch, done) => {
        finished.push(...batch);
        done({ code: ExportResultCode.SUCCESS });
      },
      shutdown: async () => undefined,
    };
    fake.faults.error({ method: 'GET', path: '/accounts', status: 503, times: 1 });
    await main({ baseUrl: url, accessToken: fake.issueTokens().access_token }, exporter);

    const id = (span: ReadableSpan | undefined) => span?.spanContext().spanId;
    const report = finished.find((span) => span.name === 'report');
    const calls = finished.filter((span) => span.kind === SpanKind.INTERNAL && span !== report);
    expect(calls.map((span) => span.name)).toEqual(['GET /accounts', 'GET /posts/{id}', 'GET /posts']);
    expect(calls.every((span) => span.parentSpanContext?.spanId === id(report))).toBe(true);
    // Each call's requests under it: the 503 and its retry for the accounts.
    const requests = finished.filter((span) => span.kind === SpanKind.CLIENT);
    expect(calls.map((call) => requests.filter((span) => span.parentSpanContext?.spanId === id(call)).map((span) => span.attributes['http.response.status_code']))).toEqual([
      [503, 200],
      [404],
      [200],
    ]);
    expect(requests[1]!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.template': '/accounts',
      'server.address': '127.0.0.1',
      'http.request.resend_count': 1,
    });
    const notFound = requests.find((span) => span.attributes['http.response.status_code'] === 404)!;
    expect(notFound.status.code).toBe(SpanStatusCode.ERROR);
    expect(notFound.attributes['url.full']).toBe(`${url}/posts/post_does_not_exist`);
  });
});
