import { describe, expect, it } from 'vitest';
import { JSON_HEADERS, recordingClient } from '../helpers.js';

const mediaItem = { id: 'media_1', filename: 'a.bin', content_type: 'application/octet-stream', size: 3, created_at: '2030-01-01T00:00:00Z' };

/**
 * Any redirect mode but 'error' makes fetch clone the request before sending it, and the clone tees the
 * body: the idle branch holds every byte of the upload (a 256 MB file grew memory by 256 MB; see
 * bench/RESULTS.md, "Peak memory uploading a 256 MB file").
 */
describe('uploads and redirects', () => {
  it('sends an upload with redirect "error", so fetch never tees the streamed file into memory', async () => {
    const { client, seen } = recordingClient(async (request) => {
      await request.arrayBuffer();
      return Response.json(mediaItem, { status: 201, headers: JSON_HEADERS });
    });
    await client.media.upload({ file: new Uint8Array([1, 2, 3]), filename: 'a.bin' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.redirect).toBe('error');
  });

  // Issue 12 item 4: no API call follows a redirect (test/hostile/redirects.test.ts shows what following did).
  it('sends calls without a streamed body with redirect "manual": a redirect is answered as RedirectError, not followed', async () => {
    const { client, seen } = recordingClient(() => Response.json({ data: [], next_cursor: null }, { headers: JSON_HEADERS }));
    await client.accounts.list().toArray();
    expect(seen[0]!.redirect).toBe('manual');
  });
});
