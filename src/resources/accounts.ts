/** Connected social accounts: list and read (scope accounts:read). */
import type { APIPromise } from '../http/api-promise.js';
import type { RequestOptions } from '../http/options.js';
import type { Pipeline } from '../http/request.js';
import { listShape, pageParser, Paginator, type ListParams } from './pagination.js';
import { routes, withParse } from './routes.js';
import { answerParser, checkInput } from './validate.js';
import { AccountSchema } from './wire-contract.js';

/**
 * A connected social account. `id` is given by the spec and always there; the other fields are our assumption
 * about the service: they may be absent, and a value of another type (or `null`) is kept as sent. Fields the SDK
 * does not know are kept too.
 */
export interface Account {
  /** `acc_…` (spec §2). */
  id: string;
  /** Assumed. The social network, for example `"mastodon"`. */
  platform?: string | undefined;
  /** Assumed. The account's display name. */
  name?: string | undefined;
  [field: string]: unknown;
}

/** What `accounts.list` takes. */
export type AccountListParams = ListParams;

const listAccountsShape = /* @__PURE__ */ listShape('accounts.list');
const parseAccount = /* @__PURE__ */ answerParser<Account>('an account', AccountSchema);
const parseAccountPage = /* @__PURE__ */ pageParser<Account>('a page of accounts', AccountSchema);

/**
 * `client.accounts`: the connected social accounts of the user whose token the client uses.
 *
 * @example
 * for await (const account of client.accounts.list()) console.log(account.id, account.name ?? '(no name)')
 */
export class Accounts {
  readonly #pipeline: Pipeline;

  /** Not for you to build (the declarations say so: `new Accounts()` does not compile): use `client.accounts`. */
  private constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /** Built by `PostSched`. @internal */
  static create(pipeline: Pipeline): Accounts {
    return new Accounts(pipeline);
  }

  /**
   * The user's connected accounts, fetched page by page as the loop goes.
   *
   * @example
   * for await (const account of client.accounts.list()) console.log(account.id, account.name ?? '(no name)')
   */
  list(params: AccountListParams = {}, options?: RequestOptions): Paginator<Account> {
    checkInput(params, listAccountsShape);
    const route = routes.listAccounts();
    return Paginator.create<Account>(
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
    return this.#pipeline.request(() => withParse(routes.getAccount(id), parseAccount, options));
  }
}
