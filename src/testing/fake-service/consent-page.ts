/**
 * The consent page of `consent: 'prompt'`: what a person sees at `/oauth/authorize` (the app's name, the scopes
 * it asks for, Allow / Deny), and the form's answer. The other consent modes answer at once, as tests want.
 */
import { readBoundedText } from './http.js';
import type { Scope } from '../../oauth/types.js';

/** What each scope grants, in the words of the spec's scope table (section 5). */
const SCOPE_TEXT: Record<Scope, string> = {
  'accounts:read': 'List your connected social accounts',
  'posts:read': 'Read your scheduled and published posts',
  'posts:write': 'Create, update and delete your posts',
  'media:write': 'Upload files to your media library',
  'analytics:read': 'Read the analytics of your posts',
};

/** The largest consent form the fake reads (two short fields). */
const MAX_FORM_BYTES = 4 * 1024;

/** A page the browser must not cache, frame or run scripts in. */
export function htmlPage(status: number, title: string, body: string): Response {
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      // No scripts, no framing (clickjacking of the Allow button), nothing loaded from elsewhere.
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
    },
  });
}

/** The page that asks the user; `action` is the authorize path, `consentId` the pending request's one-time id. */
export function consentPage(input: { appName: string; scopes: readonly string[]; redirectUri: string; action: string; consentId: string }): Response {
  const scopes = input.scopes
    .map((s) => `<li><code>${escapeHtml(s)}</code> ${escapeHtml(SCOPE_TEXT[s as Scope] ?? '')}</li>`)
    .join('');
  const app = escapeHtml(input.appName);
  return htmlPage(
    200,
    `Authorize ${input.appName}`,
    `<h1><strong>${app}</strong> wants to use your Post Scheduling account</h1>` +
      `<p>It asks to:</p><ul id="scopes">${scopes}</ul>` +
      `<form method="post" action="${escapeHtml(input.action)}">` +
      `<input type="hidden" name="consent_id" value="${escapeHtml(input.consentId)}">` +
      `<button type="submit" name="decision" value="allow" id="allow">Allow</button> ` +
      `<button type="submit" name="decision" value="deny" id="deny">Deny</button></form>` +
      `<p class="note">Either way you go back to <code>${escapeHtml(new URL(input.redirectUri).origin)}</code>. ` +
      `This page is the fake service of <code>@postsched/sdk</code>.</p>`,
  );
}

/** The consent form's two fields, read from a body of at most a few KB; `undefined` when it is not one. */
export async function readConsentForm(request: Request): Promise<{ consentId: string; decision: string } | undefined> {
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(request.headers.get('content-type') ?? '')) return undefined;
  const text = await readBoundedText(request, MAX_FORM_BYTES);
  if (text === undefined) return undefined;
  const form = new URLSearchParams(text);
  const consentId = form.get('consent_id');
  const decision = form.get('decision');
  return consentId === null || decision === null ? undefined : { consentId, decision };
}


function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;margin:0}' +
  'main{max-width:32rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:.5rem;box-shadow:0 1px 4px #0002}' +
  'h1{font-size:1.3rem}li{margin:.3rem 0}code{background:#eef;padding:0 .25rem;border-radius:.2rem}' +
  'button{font:inherit;padding:.5rem 1.5rem;margin-right:.5rem;border-radius:.3rem;border:1px solid #888;cursor:pointer}' +
  '#allow{background:#1a7f37;color:#fff;border-color:#1a7f37}.note{color:#555;font-size:.85rem}';
