/** What the resource tests' msw server saw: every request under the base URL, its JSON body parsed. */
import { http } from 'msw';
import type { SetupServer } from 'msw/node';
import { BASE } from '../helpers.js';

export interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

/** Answers every request under the base URL with `answer` and records what arrived. */
export function recordRequests(server: SetupServer, answer: () => Response): Seen[] {
  const seen: Seen[] = [];
  server.use(
    http.all(`${BASE}/*`, async ({ request }) => {
      const text = await request.text();
      seen.push({ method: request.method, url: new URL(request.url), headers: request.headers, body: text === '' ? undefined : JSON.parse(text) });
      return answer();
    }),
  );
  return seen;
}
