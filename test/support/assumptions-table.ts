/**
 * The table of wire fields in docs/assumptions.md (linked from the README), rendered from the schemas of the wire
 * contract (src/resources/wire-contract.ts, and src/webhooks/event.ts for the webhook data). test/resources/wire-contract.test.ts fails when the page and the module
 * disagree; to update the page run `npx tsx test/support/assumptions-table.ts --write`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod/mini';
import { answers, fieldsOf, inputs, pageSchema, type WireType } from '../../src/resources/wire-contract.js';
import { PostPublishedDataSchema, WebhookPostDataSchema } from '../../src/webhooks/event.js';

export const ASSUMPTIONS = fileURLToPath(new URL('../../docs/assumptions.md', import.meta.url));
export const BEGIN = '<!-- wire-contract:begin: generated from src/resources/wire-contract.ts (npx tsx test/support/assumptions-table.ts --write) -->';
export const END = '<!-- wire-contract:end -->';

/** The answers of the table: each resource's schema, and the list envelope. */
const TABLE_ANSWERS = { ...answers, page: pageSchema(z.unknown()) };

const ANSWER_LABELS: Record<keyof typeof TABLE_ANSWERS, string> = {
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
const TYPES: Record<WireType, string> = { string: 'string', number: 'number', 'string[]': 'strings', array: 'array', object: 'object', unknown: 'any' };

const typed = (fields: Readonly<Record<string, WireType>>) => Object.entries(fields).map(([name, type]) => `\`${name}\` (${TYPES[type]})`);
const cell = (items: string[]) => (items.length === 0 ? '—' : items.join(', '));

/** The Markdown table, one row per answer and input of the wire contract. */
export function renderTable(): string {
  const rows = [
    '| Where | Given by the spec: required, checked | Assumed: optional, kept as sent |',
    '|---|---|---|',
  ];
  for (const [key, schema] of Object.entries(TABLE_ANSWERS) as [keyof typeof TABLE_ANSWERS, z.ZodMiniType][]) {
    const { given, assumed } = fieldsOf(schema);
    // The page's `data` is required but assumed: the spec does not show it, yet a page without it cannot be used.
    if (key === 'page') {
      const needed = Object.entries(given).map(([name, type]) => `\`${name}\` (${TYPES[type]}; needed: an answer without it is refused)`);
      rows.push(`| ${ANSWER_LABELS[key]} | ${cell([])} | ${cell([...needed, ...typed(assumed)])} |`);
    } else {
      rows.push(`| ${ANSWER_LABELS[key]} | ${cell(typed(given))} | ${cell(typed(assumed))} |`);
    }
  }
  for (const [key, contract] of Object.entries(inputs) as [keyof typeof inputs, (typeof inputs)[keyof typeof inputs]][]) {
    const names = (list: readonly string[]) => list.map((name) => `\`${name}\``);
    rows.push(`| ${INPUT_LABELS[key]} | ${cell(names(contract.given))} | ${cell(names(contract.assumed))} |`);
  }
  const elsewhere = `${typed(fieldsOf(WebhookPostDataSchema).assumed).join(', ')} in the other events (typed, not checked)`;
  rows.push(
    `| Webhook event \`data\` (\`@postsched/sdk/webhooks\`) | in \`post.published\`: ${cell(typed(fieldsOf(PostPublishedDataSchema).given))} | ` +
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
