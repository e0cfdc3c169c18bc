/** Connected social accounts: list and read (scope accounts:read). */
import * as z from 'zod/mini';
import type { APIPromise } from '../http/api-promise.js';
import type { Pipeline, RequestOptions } from '../http/request.js';
import { pageSchema, Paginator, type ListParams, type Page } from './pagination.js';
import { routes } from './routes.js';
import { responseParser } from './validate.js';

/** A connected social account. Fields the SDK does not know are kept. */
export interface Account {
  /** `acc_…` */
  id: string;
  /** The social network, for example `"mastodon"`. */
  platform: string;
  /** The account's display name. */
  name: string;
  [field: string]: unknown;
}

/** What `accounts.list` takes. */
export type AccountListParams = ListParams;

// Module-level schemas are built in `/* @__PURE__ */` IIFEs: the build puts the SDK in one chunk, and this lets a
// user's bundler drop them when this resource is not imported (see inspectAs in oauth/inspect.ts).
// The shape answers are checked against (zod/mini): required known fields, unknown fields kept.
const AccountSchema = /* @__PURE__ */ (() => z.looseObject({ id: z.string(), platform: z.string(), name: z.string() }))();

const parseAccount = /* @__PURE__ */ (() => responseParser<Account>(AccountSchema, 'an account'))();
const parseAccountPage = /* @__PURE__ */ (() => responseParser<Page<Account>>(pageSchema(AccountSchema), 'a page of accounts'))();

/**
 * `client.accounts`: the connected social accounts of the user whose token the client uses.
 *
 * @example
 * for await (const account of client.accounts.list()) console.log(account.platform, account.name)
 */
export class Accounts {
  readonly #pipeline: Pipeline;

  /** Built by `PostSched`; use `client.accounts`. @internal */
  constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /**
   * The user's connected accounts, fetched page by page as the loop goes.
   *
   * @example
   * for await (const account of client.accounts.list()) console.log(account.platform, account.name)
   */
  list(params: AccountListParams = {}, options?: RequestOptions): Paginator<Account> {
    const route = routes.listAccounts();
    return new Paginator<Account>(
      (query, opts) => this.#pipeline.request({ ...route, query, parse: parseAccountPage, options: opts }),
      params,
      options,
    );
  }

  /**
   * One account by id.
   *
   * @example
   * const account = await client.accounts.get('acc_1')
   */
  get(id: string, options?: RequestOptions): APIPromise<Account> {
    return this.#pipeline.request(() => ({ ...routes.getAccount(id), parse: parseAccount, options }));
  }
}
