/**
 * The table of wire fields in docs/assumptions.md (linked from the README), rendered from the one wire-contract
 * module (src/resources/wire-contract.ts). test/resources/wire-contract.test.ts fails when the page and the module
 * disagree; to update the page run `npx tsx test/support/assumptions-table.ts --write`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { answers, inputs, webhookData, type WireType } from '../../src/resources/wire-contract.js';

export const ASSUMPTIONS = fileURLToPath(new URL('../../docs/assumptions.md', import.meta.url));
export const BEGIN = '<!-- wire-contract:begin: generated from src/resources/wire-contract.ts (npx tsx test/support/assumptions-table.ts --write) -->';
export const END = '<!-- wire-contract:end -->';

const ANSWER_LABELS: Record<keyof typeof answers, string> = {
  post: 'A post (every `posts` method)',
  account: 'An account (`accounts.get`, `accounts.list`)',
  mediaItem: 'A media item (`media.upload`)',
  postAnalytics: 'Post analytics (`analytics.getPost`)',
  page: 'A list page (`posts.list`, `accounts.list`)',
};
const INPUT_LABELS: Record<keyof typeof inputs, string> = {
  postBody: 'Body of `posts.create` and `posts.update`',
  postListQuery: 'Query of `posts.list`',
  accountListQuery: 'Query of `accounts.list`',
  mediaUploadForm: 'Form of `media.upload` (part name)',
};
const TYPES: Record<WireType, string> = { string: 'string', number: 'number', 'string[]': 'strings', array: 'array' };

const typed = (fields: Readonly<Record<string, WireType>>) => Object.entries(fields).map(([name, type]) => `\`${name}\` (${TYPES[type]})`);
const cell = (items: string[]) => (items.length === 0 ? '—' : items.join(', '));

/** The Markdown table, one row per answer and input of the wire contract. */
export function renderTable(): string {
  const rows = [
    '| Where | Given by the spec: required, checked | Assumed: optional, kept as sent |',
    '|---|---|---|',
  ];
  for (const [key, contract] of Object.entries(answers) as [keyof typeof answers, (typeof answers)[keyof typeof answers]][]) {
    const needed =
      'needed' in contract
        ? Object.entries(contract.needed).map(([name, type]) => `\`${name}\` (${TYPES[type]}; needed: an answer without it is refused)`)
        : [];
    rows.push(`| ${ANSWER_LABELS[key]} | ${cell(typed(contract.given))} | ${cell([...needed, ...typed(contract.assumed)])} |`);
  }
  for (const [key, contract] of Object.entries(inputs) as [keyof typeof inputs, (typeof inputs)[keyof typeof inputs]][]) {
    const names = (list: readonly string[]) => list.map((name) => `\`${name}\``);
    rows.push(`| ${INPUT_LABELS[key]} | ${cell(names(contract.given))} | ${cell(names(contract.assumed))} |`);
  }
  const elsewhere = `${typed(webhookData.assumedElsewhere).join(', ')} in the other events (typed, not checked)`;
  rows.push(
    `| Webhook event \`data\` (\`@postsched/sdk/webhooks\`) | in \`${webhookData.givenFor}\`: ${cell(typed(webhookData.given))} | ` +
      `${elsewhere}; every other field, kept as sent |`,
  );
  return rows.join('\n');
}

/** The page's generated block, or `undefined` when the markers are missing. */
export function readmeTable(text = readFileSync(ASSUMPTIONS, 'utf8')): string | undefined {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  return start === -1 || end < start ? undefined : text.slice(start + BEGIN.length, end).trim();
}

if (process.argv.includes('--write')) {
  const text = readFileSync(ASSUMPTIONS, 'utf8');
  if (readmeTable(text) === undefined) throw new Error(`docs/assumptions.md has no ${BEGIN} … ${END} block`);
  const start = text.indexOf(BEGIN) + BEGIN.length;
  writeFileSync(ASSUMPTIONS, `${text.slice(0, start)}\n${renderTable()}\n${text.slice(text.indexOf(END))}`);
  console.log('docs/assumptions.md: wire-contract table updated');
}
