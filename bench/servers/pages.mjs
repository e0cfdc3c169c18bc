// A loopback HTTP server generating pages of posts: GET /posts?limit=&cursor= answers `limit` posts and the
// cursor of the next page, for PAGES pages in all. Run in its own process; prints its port on stdout.
import { createServer } from 'node:http';

const PAGES = Number(process.argv[2] ?? 1000);

function post(n) {
  return {
    id: `post_${n}`,
    account_ids: ['acc_1', 'acc_2'],
    publish_at: '2030-01-01T09:30:00.000Z',
    status: 'scheduled',
    text: `Post number ${n}: an ordinary scheduled post with a link https://example.com/p/${n}`,
    created_at: '2029-12-31T12:00:00.000Z',
  };
}

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const page = Number(url.searchParams.get('cursor') ?? 0);
  const data = Array.from({ length: limit }, (_, i) => post(page * limit + i));
  const body = JSON.stringify({ data, next_cursor: page + 1 < PAGES ? String(page + 1) : null });
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${page}` });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
