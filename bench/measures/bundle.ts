/** Bundle size: each entry bundled for the browser with its dependencies, minified, gzipped (esbuild). */
import { bundleSize } from '../../scripts/bundle-size.mjs';
import { fmt, type Section } from '../lib/report.js';

export async function measureBundles(): Promise<Section[]> {
  const main = await bundleSize({ file: 'dist/index.js' });
  const webhooks = await bundleSize({ file: 'dist/webhooks/index.js' });
  const openai = await bundleSize({ specifier: 'openai' });
  const stripe = await bundleSize({ specifier: 'stripe', conditions: ['worker'] });
  const standardwebhooks = await bundleSize({ specifier: 'standardwebhooks' });
  const octokit = await bundleSize({ specifier: '@octokit/webhooks-methods' });
  const gz = (b: { gzipBytes: number; minBytes: number }) => `${fmt.kb(b.gzipBytes)} gz (${fmt.kb(b.minBytes)} min)`;
  return [
    {
      title: 'Bundle size: main entry',
      method:
        '`esbuild --bundle --minify --platform=browser --format=esm` of the whole entry (`export *`), all dependencies included, then gzip. Ratio: peer ÷ ours.',
      unit: 'size',
      rows: [
        { name: '@postsched/sdk', value: gz(main) },
        { name: 'openai', value: gz(openai), ratio: fmt.x(openai.gzipBytes / main.gzipBytes) },
        { name: 'stripe (worker build)', value: gz(stripe), ratio: fmt.x(stripe.gzipBytes / main.gzipBytes) },
      ],
      target: 'main entry ≤ 20 KB gz',
      met: main.gzipBytes <= 20 * 1024,
    },
    {
      title: 'Bundle size: webhooks entry',
      method: 'As above, for the webhook verifier alone. Ratio: peer ÷ ours.',
      unit: 'size',
      rows: [
        { name: '@postsched/sdk/webhooks', value: gz(webhooks) },
        {
          name: 'standardwebhooks',
          value: gz(standardwebhooks),
          ratio: fmt.x(standardwebhooks.gzipBytes / webhooks.gzipBytes),
        },
        {
          name: '@octokit/webhooks-methods',
          value: gz(octokit),
          ratio: fmt.x(octokit.gzipBytes / webhooks.gzipBytes),
        },
      ],
      target: '`@postsched/sdk/webhooks` ≤ 1.5 KB gz',
      met: webhooks.gzipBytes <= 1.5 * 1024,
    },
  ];
}
