import { describe, expect, it } from 'vitest';
import { answers, fieldsOf } from '../../src/resources/wire-contract.js';
import { readmeTable, renderTable } from '../support/assumptions-table.js';

describe('the wire contract (src/resources/wire-contract.ts)', () => {
  it('requires in answers only what the spec gives: a post id and account_ids, an account id', () => {
    expect(Object.fromEntries(Object.entries(answers).map(([name, schema]) => [name, fieldsOf(schema).given]))).toEqual({
      post: { id: 'string', account_ids: 'string[]' },
      account: { id: 'string' },
      mediaItem: {},
      postAnalytics: {},
    });
  });

  it('is what docs/assumptions.md (the README links it) lists, every assumed field by name', () => {
    const table = readmeTable();
    expect(table, 'docs/assumptions.md lacks the generated wire-contract block').toBeDefined();
    // On a mismatch, update the page: npx tsx test/support/assumptions-table.ts --write
    expect(table).toBe(renderTable());
    for (const schema of Object.values(answers)) {
      for (const field of Object.keys(fieldsOf(schema).assumed)) expect(table).toContain(`\`${field}\``);
    }
  });
});
