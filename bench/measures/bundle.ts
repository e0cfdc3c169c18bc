/**
 * Bundle size of what users ship (the rows and targets of `npm run check:size`, scripts/bundle-size.mjs): each
 * import bundled for the browser with its dependencies, minified, gzipped (esbuild), beside the peers' bundles.
 */
import { bundleSize, USER_BUNDLES } from '../../scripts/bundle-size.mjs';
import { fmt, type Row, type Section, type Verdict } from '../lib/report.js';

type Size = { gzipBytes: number; minBytes: number };
const gz = (b: Size) => `${fmt.kb(b.gzipBytes)} gz (${fmt.kb(b.minBytes)} min)`;

/** Our USER_BUNDLES rows whose label starts with `prefix`, each with its target as a verdict. */
async function ours(prefix: string): Promise<{ rows: Row[]; verdicts: Verdict[]; first: Size }> {
  const rows: Row[] = [];
  const verdicts: Verdict[] = [];
  let first: Size | undefined;
  for (const bundle of USER_BUNDLES.filter((b) => b.label.startsWith(prefix))) {
    const size = await bundleSize(bundle);
    first ??= size;
    rows.push({ name: `@postsched/sdk: ${bundle.label}`, value: gz(size) });
    verdicts.push({
      target: `${bundle.label} ≤ ${fmt.kb(bundle.target)} gz`,
      measured: fmt.kb(size.gzipBytes),
      met: size.gzipBytes <= bundle.target,
    });
  }
  return { rows, verdicts, first: first! };
}

function section(title: string, method: string, mine: Awaited<ReturnType<typeof ours>>, peers: [string, Size][]): Section {
  return {
    title,
    method,
    unit: 'size',
    rows: [...mine.rows, ...peers.map(([name, size]) => ({ name, value: gz(size), ratio: fmt.x(size.gzipBytes / mine.first.gzipBytes) }))],
    target: mine.verdicts.map((v) => v.target).join('; '),
    met: mine.verdicts.every((v) => v.met),
    verdicts: mine.verdicts,
  };
}

export async function measureBundles(): Promise<Section[]> {
  const main = await ours('whole main entry');
  const server = await ours('server app');
  const verifier = await ours('webhook verifier');
  const esbuild = '`esbuild --bundle --minify --platform=browser --format=esm`, all dependencies included, then gzip';
  return [
    section(
      'Bundle size: main entry',
      `${esbuild}: the whole entry (\`export *\`), then a server app's imports. Ratio: peer ÷ our whole entry.`,
      { rows: [...main.rows, ...server.rows], verdicts: [...main.verdicts, ...server.verdicts], first: main.first },
      [
        ['openai', await bundleSize({ specifier: 'openai' })],
        ['stripe (worker build)', await bundleSize({ specifier: 'stripe', conditions: ['worker'] })],
      ],
    ),
    section(
      'Bundle size: webhook verifier',
      `${esbuild}, of \`verifyWebhook\` alone from \`@postsched/sdk/webhooks\` and of each peer's whole package. Ratio: peer ÷ ours.`,
      verifier,
      [
        ['standardwebhooks', await bundleSize({ specifier: 'standardwebhooks' })],
        ['@octokit/webhooks-methods', await bundleSize({ specifier: '@octokit/webhooks-methods' })],
      ],
    ),
  ];
}
