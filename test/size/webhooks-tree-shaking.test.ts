/**
 * The webhooks entry holds the verifier and the handler; a user's bundle keeps only what it imports. Bundled
 * from source with esbuild, as a user's bundler would (browser platform, minified).
 */
import { build, type Plugin } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const VERIFIER = ['verifyWebhook', 'verifyWebhookRequest', 'WebhookVerificationError'];

/** The entry without the handler: its modules (handler, Node adapter, dedupe) replaced by empty ones. */
const WITHOUT_HANDLER: Plugin = {
  name: 'without-handler',
  setup(b) {
    b.onLoad({ filter: /src[\\/]webhooks[\\/](handler|handler-node|dedupe)\.ts$/ }, () => ({
      contents: 'export const createHandlerWith = undefined, webhookDedupeKey = undefined;',
      loader: 'ts',
    }));
  },
};

async function bundle(names: string[], from: string, plugins: Plugin[] = []): Promise<string> {
  const result = await build({
    plugins,
    stdin: { contents: `export { ${names.join(', ')} } from ${JSON.stringify(from)};`, resolveDir: root },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** Strings only the handler has: its answers and its dedupe store. */
const HANDLER_MARKERS = ['method_not_allowed', 'server_error', 'req.body was parsed', 'in_flight', 'handlerTimeoutMs'];

describe('tree-shaking of @postsched/sdk/webhooks', () => {
  it('the verifier alone is byte for byte what it is without the handler in the entry', async () => {
    const fromEntry = await bundle(VERIFIER, './src/webhooks/index.ts');
    const verifierOnly = await bundle(VERIFIER, './src/webhooks/index.ts', [WITHOUT_HANDLER]);
    expect(fromEntry.length).toBe(verifierOnly.length);
    for (const marker of HANDLER_MARKERS) expect(fromEntry).not.toContain(marker);
  });

  it('the handler alone keeps its code (the markers above are real)', async () => {
    const handler = await bundle(['createWebhookHandler'], './src/webhooks/index.ts');
    for (const marker of HANDLER_MARKERS) expect(handler).toContain(marker);
  });
});
