/** The route table: method + path template → handler. Paths are relative to the base URL's path. */
import type { Context } from './context.js';

export type RouteHandler = (
  ctx: Context,
  request: Request,
  params: Record<string, string>,
  url: URL,
) => Response | Promise<Response>;

export interface Route {
  method: string;
  /** Template with `{name}` segments, e.g. `/posts/{id}`. */
  path: string;
  handle: RouteHandler;
}

export interface RouteMatch {
  route: Route | undefined;
  /** The template matched (for counters and faults), or the raw path when nothing matched. */
  template: string;
  params: Record<string, string>;
  /** Methods allowed on the path, when the path exists but not with this method. */
  allowed: string[];
}

function matchPath(template: string, path: string): Record<string, string> | undefined {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    if (w.startsWith('{')) {
      if (g === '') return undefined;
      try {
        params[w.slice(1, -1)] = decodeURIComponent(g);
      } catch {
        return undefined;
      }
    } else if (w !== g) return undefined;
  }
  return params;
}

export function matchRoute(routes: readonly Route[], method: string, path: string): RouteMatch {
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, path);
    if (params === undefined) continue;
    if (route.method === method) return { route, template: route.path, params, allowed };
    allowed.push(route.method);
  }
  const template = routes.find((r) => matchPath(r.path, path) !== undefined)?.path ?? path;
  return { route: undefined, template, params: {}, allowed };
}
