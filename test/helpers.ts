/** Shared test fixtures: the base URL, a counting token provider, wire objects. */
import type { AccessTokenProvider } from '@postsched/sdk';

export const BASE = 'https://api.postsched.test/v1';

/** A token provider that counts calls; `forceRefresh` hands out the next token of the list. */
export class FakeTokenProvider implements AccessTokenProvider {
  getCalls = 0;
  refreshCalls: string[] = [];
  #tokens: string[];

  constructor(...tokens: string[]) {
    this.#tokens = tokens.length === 0 ? ['tok_1', 'tok_2'] : tokens;
  }

  get current(): string {
    return this.#tokens[0]!;
  }

  async getAccessToken(): Promise<string> {
    this.getCalls++;
    return this.current;
  }

  async forceRefresh(rejected: string): Promise<string> {
    this.refreshCalls.push(rejected);
    if (this.#tokens.length > 1 && rejected === this.#tokens[0]) this.#tokens.shift();
    return this.current;
  }
}

export function wirePost(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'post_1',
    account_ids: ['acc_1'],
    publish_at: '2030-01-01T09:00:00.000Z',
    status: 'scheduled',
    text: 'Hello',
    created_at: '2029-12-01T00:00:00.000Z',
    ...overrides,
  };
}

export const JSON_HEADERS = { 'content-type': 'application/json', 'x-request-id': 'req_test' };
