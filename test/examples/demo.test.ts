import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `npm run demo`'s script the way the README does: a separate Node process, through tsx. */
function runDemo(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      cwd: root,
      env: { ...process.env, POSTSCHED_BASE_URL: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('npm run demo', () => {
  it('walks the whole flow against the bundled fake and exits 0', async () => {
    const { code, output } = await runDemo();
    expect(output, output).toContain('Done: the whole flow ran against the fake service.');
    expect(code).toBe(0);
    expect(output).toMatch(/scope=accounts%3Aread\+posts%3Aread\+posts%3Awrite\+media%3Awrite\+analytics%3Aread/);
    expect(output).toContain('code_challenge_method=S256');
    expect(output).toContain('100%');
    expect(output).toContain('✔ post.scheduled verified');
    expect(output).toContain('✔ post.published verified');
    expect(output).toContain('refresh requests: 1; new access token saved: true');
    // The demo shows the flow, never the secrets that make it work.
    expect(output).not.toMatch(/demo_secret_|whsec_demo_|code=[A-Za-z0-9]/);
  }, 60_000);
});
