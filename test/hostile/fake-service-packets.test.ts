/**
 * Issue 12 item 7: the fake service, which users run inside their own test processes, answered `OPTIONS *`, an
 * absolute-form target or TRACE with an unhandled rejection that ended the process. Every request it cannot
 * handle now gets a 4xx, bodies it reads are capped, and it keeps serving afterwards.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT, login, start, type Harness } from '../testing/helpers.js';

let h: Harness;
let port: number;
beforeAll(async () => {
  h = await start('listen');
  port = Number(new URL(h.baseUrl).port);
});
afterAll(() => h.close());

/** Sends raw bytes and resolves with the status line of the answer (or '' when the connection just closed). */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.slice(0, answer.indexOf('\r\n')));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
  });
}

describe('requests the fake cannot handle', () => {
  it.each([
    ['OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['GET http://evil.example/posts HTTP/1.1\r\nHost: evil.example\r\n\r\n', 400],
    ['TRACE / HTTP/1.1\r\nHost: x\r\n\r\n', 405],
    ['TRACK / HTTP/1.1\r\nHost: x\r\n\r\n', 400], // not an HTTP method: node:http's parser answers 400 itself
    ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405],
  ])('%j gets %i, and the process goes on', async (request, status) => {
    expect(await raw(request)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    // Still serving.
    expect((await fetch(`${h.baseUrl}/accounts`)).status).toBe(401);
  });

  it('a target starting with "//" is a path on the fake, not another host: no route, never the list at the path after it', async () => {
    const tokens = await login(h);
    const path = new URL(h.baseUrl).pathname.replace(/\/$/, '');
    const answer = await raw(`GET //evil.example${path}/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.access_token}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
  });

  it('a JSON body over 1 MiB gets 413 without being read whole', async () => {
    const tokens = await login(h);
    const response = await fetch(`${h.baseUrl}/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: `{"text":"${'x'.repeat(2 * 1024 * 1024)}"}`,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('a token request body over 1 MiB is an invalid_request', async () => {
    const response = await fetch(`${h.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${'x'.repeat(2 * 1024 * 1024)}&client_id=${CLIENT.clientId}`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

});
