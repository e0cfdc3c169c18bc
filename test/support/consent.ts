/** What a person does on the fake's consent page, done with fetch: open the authorize URL, press Allow (or Deny). */

/** Returns where the service redirects the browser after the answer (the app's callback URL with code or error). */
export async function answerConsentPage(authorizeUrl: string, decision: 'allow' | 'deny' = 'allow'): Promise<string> {
  const page = await fetch(authorizeUrl, { redirect: 'manual' });
  const html = await page.text();
  const id = /name="consent_id" value="([^"]+)"/.exec(html)?.[1];
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (page.status !== 200 || id === undefined || action === undefined) {
    throw new Error(`no consent page at the authorize URL (HTTP ${page.status}):\n${html.slice(0, 500)}`);
  }
  const answer = await fetch(new URL(action, authorizeUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ consent_id: id, decision }).toString(),
    redirect: 'manual',
  });
  const location = answer.headers.get('location');
  if (answer.status !== 302 || location === null) throw new Error(`the consent form answered HTTP ${answer.status}, not a redirect`);
  return location;
}
