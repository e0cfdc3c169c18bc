// Serves worker.mjs under Deno or Bun on 127.0.0.1 (a free port, printed as `LISTENING <port>`), resolved with
// the `worker` export condition as given on the command line: the package's default (Web Crypto) entry.
import worker from './worker.mjs';

const ready = (port) => console.log(`LISTENING ${port}`);
if (typeof Deno !== 'undefined') {
  Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: ({ port }) => ready(port) }, worker.fetch);
} else {
  ready(Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: worker.fetch }).port);
}
