/** Account routes of the wire contract: `GET /accounts` and `GET /accounts/{id}` [accounts:read]. */
import { requireScope } from './bearer.js';
import { json, notFound } from './http.js';
import { paginate } from './pagination.js';
import type { RouteHandler } from './router.js';

export const listAccounts: RouteHandler = (ctx, request, _params, url) => {
  requireScope(ctx, request, 'accounts:read');
  return json(200, paginate(url, [...ctx.state.accounts.values()]));
};

export const getAccount: RouteHandler = (ctx, request, params) => {
  requireScope(ctx, request, 'accounts:read');
  const id = params.id as string;
  return json(200, ctx.state.accounts.get(id) ?? notFound('account', id));
};
