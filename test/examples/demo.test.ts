import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FAKE_PROFILE, FAKE_SEED } from '../support/fake-profile.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `npm run demo`'s script the way the README does: a separate Node process, through tsx. */
function runDemo(env: Record<string, string | undefined> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      cwd: root,
      // The demo's fake answers in this project's wire profile (vitest.config.ts matrix).
      env: { ...process.env, POSTSCHED_BASE_URL: undefined, POSTSCHED_FAKE_PROFILE: FAKE_PROFILE, POSTSCHED_FAKE_SEED: String(FAKE_SEED), ...env },
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
    expect(output).toContain(`(answers: ${FAKE_PROFILE} profile)`);
    // A field the spec does not give reads "not given" when the service leaves it out, never "undefined".
    expect(output).not.toMatch(/undefined|\[object Object\]|NaN/);
    if (FAKE_PROFILE === 'full') {
      expect(output).toMatch(/post_\S+, status: scheduled, publish_at: \d{4}-/);
      expect(output).toContain('platform: x          name: Demo on X');
      expect(output).toMatch(/impressions: \d+, likes: \d+/);
    }
    if (FAKE_PROFILE === 'minimal') {
      expect(output).toMatch(/post_\S+, status: not given, publish_at: not given, accounts: acc_demo_x, acc_demo_linkedin/);
      expect(output).toContain('platform: not given  name: not given');
      expect(output).toContain('impressions: not given, likes: not given, shares: not given, clicks: not given');
    }
    // The demo shows the flow, never the secrets that make it work.
    expect(output).not.toMatch(/demo_secret_|whsec_demo_|code=[A-Za-z0-9]/);
  }, 60_000);

  it("with a service's variables set and stdin closed, says it needs the callback URL and exits 1", async () => {
    // Nothing listens on port 9: the demo must stop at the question, before any request.
    const { code, output } = await runDemo({
      POSTSCHED_BASE_URL: 'http://127.0.0.1:9',
      POSTSCHED_CLIENT_ID: 'demo_app',
      POSTSCHED_CLIENT_SECRET: 'demo_secret_closed_stdin',
      POSTSCHED_REDIRECT_URI: 'http://127.0.0.1:3000/callback',
    });
    expect(output, output).toContain('callback URL:');
    expect(output).toMatch(/The demo failed: Error: no callback URL was given \(stdin is closed/);
    expect(output).toContain('echo "<callback URL>" | npm run demo');
    expect(code).toBe(1);
  }, 60_000);
});
