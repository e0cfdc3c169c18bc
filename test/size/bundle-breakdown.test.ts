/**
 * `npm run check:size` says where a bundle's bytes go (scripts/bundle-size.mjs `bundleBreakdown`): each output
 * byte charged to the source it came from through esbuild's source map. Checked here on the verifier, bundled
 * from src/ (the script itself bundles a source-mapped copy of the build).
 */
import { describe, expect, it } from 'vitest';
import { bundleBreakdown, bundleSize, groupOf } from '../../scripts/bundle-size.mjs';

const verifier = { file: 'src/webhooks/index.ts', names: ['verifyWebhook'] };

describe('bundleBreakdown', () => {
  it('charges every byte of the bundle to one source, and the gzip shares add up to its gzip size', async () => {
    const result = await bundleBreakdown(verifier, groupOf('file'));
    const plain = await bundleSize(verifier); // the same bundle, built without a source map
    expect(result.minBytes).toBe(plain.minBytes);
    expect(result.gzipBytes).toBe(plain.gzipBytes);
    expect(result.groups.reduce((sum, group) => sum + group.minBytes, 0)).toBe(result.minBytes);
    expect(result.groups.reduce((sum, group) => sum + group.gzipBytes, 0)).toBe(result.gzipBytes);
  });

  it('names the sources the verifier is made of, and none of the handler', async () => {
    const names = (await bundleBreakdown(verifier, groupOf('file'))).groups.map((group) => group.name);
    expect(names).toEqual(expect.arrayContaining(['src/webhooks/signature.ts', 'src/webhooks/crypto-web.ts', 'src/core/base-error.ts']));
    expect(names.filter((name) => /handler|dedupe/.test(name))).toEqual([]);
  });

  it('groups by dependency and by src/ folder', () => {
    const group = groupOf('dependency');
    expect(group('node_modules/ky/source/core/Ky.ts')).toBe('ky');
    expect(group('node_modules/@scope/pkg/index.js')).toBe('@scope/pkg');
    expect(group('src/oauth/token-manager.ts')).toBe('src/oauth');
    expect(group('src/client.ts')).toBe('src/*.ts (top-level files)');
    expect(groupOf('file')('src/webhooks/signature.ts')).toBe('src/webhooks/signature.ts');
  });
});
