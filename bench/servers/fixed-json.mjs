// A loopback HTTP server answering every GET with the same small JSON post, run in its own process so that
// its work does not share the event loop of the clients being measured. Prints its port on stdout.
import { createServer } from 'node:http';

const body = Buffer.from(
  JSON.stringify({
    id: 'post_1',
    account_ids: ['acc_1', 'acc_2'],
    publish_at: '2030-01-01T09:30:00.000Z',
    status: 'scheduled',
    text: 'Hello from the benchmark: a post of ordinary length, with a link https://example.com/launch',
    media_ids: ['media_1'],
    created_at: '2029-12-31T12:00:00.000Z',
    object: 'post',
  }),
);
const headers = {
  'content-type': 'application/json',
  'content-length': String(body.length),
  'x-request-id': 'req_bench',
  'request-id': 'req_bench', // stripe-node reads this one
};

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('disconnect', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
