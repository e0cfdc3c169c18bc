/**
 * A worker that keeps idle grants alive: every minute (or once, from a cron), `users.keepGrantsAlive()` refreshes the
 * grants of a PostgreSQL token table not refreshed for a week, each at its own moment of the week, so a refresh token
 * the service would end when unused never is. Run it in as many processes as you like: each grant is refreshed once.
 * It also prints how many users need to reconnect (for your "reconnect your account" e-mails).
 *
 *   npm install @postsched/sdk pg && npm install -D tsx @types/pg   # tsx runs the TypeScript file
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`)
 * and a local PostgreSQL (`sudo apt-get install postgresql`, or `brew install postgresql`) holding the tokens your app
 * stored (examples/express-postgres.ts stores them in the same table):
 *   npx postsched mock                                        # terminal 1: paste its export lines into terminal 2
 *   export DATABASE_URL=postgres://localhost/postgres          # terminal 2
 *   export TOKEN_ENCRYPTION_KEY=…                              # the key the tokens were stored with
 *   npx tsx examples/keep-grants-alive.ts                      # a worker loop; ONCE=1 for one run (a cron job)
 *
 * Optional: KEEP_ALIVE_DAYS (the window, default 7), SWEEP_EVERY_MS (between runs, default 60 000), CONCURRENCY (4).
 * SIGTERM or Ctrl-C stops it after the refreshes in flight.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { OAuthClient, UserClients } from '@postsched/sdk';
import { PostgresTokenTable } from '@postsched/sdk/postgres';

const need = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Set ${name} (see the top of examples/keep-grants-alive.ts).`);
  return value;
};
const baseUrl = need('POSTSCHED_BASE_URL');
const windowMs = Number(process.env.KEEP_ALIVE_DAYS ?? 7) * 86_400_000;
const everyMs = Number(process.env.SWEEP_EVERY_MS ?? 60_000);
const concurrency = Number(process.env.CONCURRENCY ?? 4);

const pool = new pg.Pool({ connectionString: need('DATABASE_URL') });
pool.on('error', (error) => console.error('PostgreSQL connection lost:', error.message)); // else a restart kills the process
const table = new PostgresTokenTable({ pool, encryptionKey: need('TOKEN_ENCRYPTION_KEY') });
const oauth = new OAuthClient({
  baseUrl,
  clientId: need('POSTSCHED_CLIENT_ID'),
  clientSecret: need('POSTSCHED_CLIENT_SECRET'),
  redirectUri: process.env.POSTSCHED_REDIRECT_URI ?? 'http://127.0.0.1:3000/callback',
});
const users = new UserClients({
  oauth,
  baseUrl,
  store: table,
  onReauthorizationRequired: (userId, error) => console.log(`User ${userId} must reconnect (${error.reason}).`),
});

/** Sweeps until SIGTERM (or once, with ONCE=1), then closes the pool. */
async function main(): Promise<void> {
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop.abort());

  do {
    const { refreshed, skipped, dead, failed } = await users.keepGrantsAlive({ olderThanMs: windowMs, concurrency, signal: stop.signal });
    let toReconnect = 0;
    for (let page = await table.grants({ status: 'needs_reconnect', limit: 1_000 }); ; page = await table.grants({ status: 'needs_reconnect', limit: 1_000, after: page.next })) {
      toReconnect += page.grants.length;
      if (page.next === undefined) break;
    }
    console.log(`Kept alive: refreshed ${refreshed}, skipped ${skipped}, dead ${dead}, failed ${failed}; ${toReconnect} users need to reconnect.`);
    if (process.env.ONCE === '1') break;
    await sleep(everyMs, undefined, { signal: stop.signal }).catch(() => {}); // SIGTERM ends the pause
  } while (!stop.signal.aborted);

  await users[Symbol.asyncDispose]();
  await pool.end();
}

// Not a top-level await: it fails in a CommonJS project (npm init's default); an error main() does not handle still
// ends the process with its stack.
void main();
