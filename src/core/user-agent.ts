/**
 * The `User-Agent` the SDK sends: `postsched-sdk/<version> <runtime>/<version>`, then the app's own name when
 * `appInfo` gives it (as stripe-node's `appInfo`). The service's operators can then tell which SDK and runtime a
 * request came from. A browser forbids scripts to set it, so there none is sent.
 */
import { invalidOption } from './invalid-option.js';

declare const __SDK_VERSION__: string | undefined;

/** This SDK's version, written in by the build (`0.0.0-dev` when the sources run unbuilt). */
export const SDK_VERSION: string = typeof __SDK_VERSION__ === 'string' ? __SDK_VERSION__ : '0.0.0-dev';

/** Your application, as it appears at the end of the `User-Agent`: `MyApp/1.2.3 (+https://myapp.example)`. */
export interface AppInfo {
  /** The app's name: letters, digits and `!#$%&'*+-.^_`|~` (an HTTP token). */
  name: string;
  /** Its version, same characters. */
  version?: string;
  /** A page about it. */
  url?: string;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/;

/** The header value, or `undefined` where a User-Agent cannot be set (a browser). */
export function userAgent(appInfo: AppInfo | undefined): string | undefined {
  const runtime = runtimeName();
  if (runtime === null) return undefined;
  return [`postsched-sdk/${SDK_VERSION}`, runtime, appInfo === undefined ? undefined : describeApp(appInfo)].filter(Boolean).join(' ');
}

function describeApp(app: AppInfo): string {
  if (typeof app !== 'object' || app === null || typeof app.name !== 'string' || !TOKEN.test(app.name)) {
    invalidOption('appInfo', 'needs a `name` of letters, digits and -._~ (an HTTP token), such as { name: "MyApp", version: "1.2.3" }.');
  }
  if (app.version !== undefined && (typeof app.version !== 'string' || !TOKEN.test(app.version))) {
    invalidOption('appInfo.version', 'must be letters, digits and -._~ (an HTTP token), such as "1.2.3".', ['appInfo', 'version']);
  }
  if (app.url !== undefined && (typeof app.url !== 'string' || !/^https?:\/\/[\x21-\x7e]{1,200}$/.test(app.url) || /[()]/.test(app.url))) {
    invalidOption('appInfo.url', 'must be an http(s) URL without spaces or parentheses.', ['appInfo', 'url']);
  }
  return `${app.name}${app.version === undefined ? '' : `/${app.version}`}${app.url === undefined ? '' : ` (+${app.url})`}`;
}

/** `node/20.20.2`, `bun/1.4.5`, `deno/2.9.6`, `workerd`, `edge-runtime`; `''` when unknown; `null` in a browser or its workers. */
function runtimeName(): string | null {
  const g = globalThis as {
    Bun?: { version?: unknown };
    Deno?: { version?: { deno?: unknown } };
    EdgeRuntime?: unknown;
    navigator?: { userAgent?: unknown };
    process?: { versions?: { node?: unknown } };
    document?: unknown;
  };
  if (typeof g.Bun?.version === 'string') return `bun/${g.Bun.version}`;
  if (typeof g.Deno?.version?.deno === 'string') return `deno/${g.Deno.version.deno}`;
  if (typeof g.EdgeRuntime === 'string') return 'edge-runtime';
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof g.process?.versions?.node === 'string') return `node/${g.process.versions.node}`;
  // A browser page, or a browser's web or service worker (no `document` there, but a browser's navigator): a
  // User-Agent set by a script is ignored or makes the request need a CORS preflight.
  if (g.document !== undefined || String(g.navigator?.userAgent).startsWith('Mozilla/')) return null;
  return '';
}
