/**
 * A locking store whose writes keep failing (Redis gone) after a refresh: the save retried inside the lock must not
 * keep the process alive. `dispose` (the README's SIGTERM handler) ends with a TokenStoreError naming the user whose
 * rotation was not saved, and the process then exits by itself.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from '../redis/redis-server.js';

const WORKER = fileURLToPath(new URL('./exit-worker.ts', import.meta.url));

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('a save that keeps failing inside the lock', () => {
  it('does not keep the process alive: dispose names the user, then the process exits', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, REDIS_URL: server.url }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // Without the fix the child never exits: the test's own time-out ends it (killed below).
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    clearTimeout(timer);
    const report = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { call: string; disposed: { name: string; message: string } };
    expect(report.call).toBe('SharedTokenStoreError'); // the save's failure, typed by the store
    expect(report.disposed.name).toBe('TokenStoreError');
    expect(report.disposed.message).toContain('"alice"');
    expect(code).toBe(0); // exited by itself, not killed
  });
});
