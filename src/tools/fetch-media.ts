/**
 * `upload_media_from_url`'s download: the URL comes from a model, which may have read it in a hostile post, so the
 * download is bounded (size, time, redirects) and refuses non-http(s) URLs and loopback, private and link-local
 * targets (cloud metadata at 169.254.169.254, the app's own admin port): an agent must not be an SSRF vector.
 */
import { ToolRefusal } from './define.js';

/** Options of the media download (`postschedTools(client, { media })`). */
export interface MediaDownloadOptions {
  /** The largest file, in bytes (default 25 MiB). */
  maxBytes?: number | undefined;
  /** The whole download's time limit, in ms (default 30 000). */
  timeoutMs?: number | undefined;
  /**
   * Allow loopback, private (RFC 1918, fc00::/7), link-local and other non-public targets (default `false`; for a
   * local test server only).
   */
  allowPrivateNetworks?: boolean | undefined;
  /**
   * Resolves a host name to its addresses, each checked as a literal IP is (Node: `(h) => dns.lookup(h, { all: true
   * }).then((a) => a.map((x) => x.address))`; `postsched mcp` passes that). Without it, only literal IPs and
   * local names (`localhost`, `*.local`, `*.internal`) are checked. A resolver cannot stop DNS rebinding between
   * its answer and the connection: for that, give a `fetch` that connects through an egress proxy.
   */
  lookup?: ((hostname: string) => Promise<readonly string[]>) | undefined;
  /** The `fetch` used to download (default: the global one). */
  fetch?: typeof fetch | undefined;
}

const MAX_REDIRECTS = 3;

/** Downloads `url` as the options bound it; the bytes, their type and a file name. */
export async function downloadMedia(
  url: string,
  options: MediaDownloadOptions,
  signal: AbortSignal | undefined,
): Promise<{ bytes: Uint8Array; contentType: string; filename: string }> {
  const maxBytes = options.maxBytes ?? 25 * 1024 * 1024;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const stop = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
  let target = await checkUrl(url, options);
  try {
    for (let hop = 0; ; hop++) {
      const response = await (options.fetch ?? fetch)(target, { redirect: 'manual', signal: stop });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new ToolRefusal(`The URL redirected more than ${MAX_REDIRECTS} times: nothing was uploaded.`);
        target = await checkUrl(new URL(location, target).href, options);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ToolRefusal(`Downloading the file failed: HTTP ${response.status} from ${target.origin}. Nothing was uploaded.`);
      }
      const bytes = await readCapped(response, maxBytes);
      const contentType = (response.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim();
      return { bytes, contentType, filename: decodeURIComponent(target.pathname.split('/').pop() || 'file').slice(0, 200) };
    }
  } catch (error) {
    if (error instanceof ToolRefusal) throw error;
    const why = timeout.aborted ? `it took longer than ${(options.timeoutMs ?? 30_000) / 1000} s` : signal?.aborted ? 'the call was aborted' : 'the connection failed';
    throw new ToolRefusal(`Downloading the file from ${target.origin} failed: ${why}. Nothing was uploaded.`);
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new ToolRefusal(`The file is larger than ${maxBytes} bytes, the limit: nothing was uploaded.`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (let read = await reader?.read(); read !== undefined && !read.done; read = await reader!.read()) {
    size += read.value.byteLength;
    if (size > maxBytes) {
      await reader!.cancel();
      throw tooLarge();
    }
    chunks.push(read.value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** The URL, once it is http(s) without credentials and its host is public (or private targets are allowed). */
async function checkUrl(text: string, options: MediaDownloadOptions): Promise<URL> {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ToolRefusal(`url must be an absolute http or https URL; got ${JSON.stringify(text.slice(0, 100))}.`);
  }
  if (url.username !== '' || url.password !== '') throw new ToolRefusal('url must not hold a user name or password.');
  if (options.allowPrivateNetworks === true) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const local = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)\.?$/.test(host) || !host.includes('.') && !host.includes(':');
  const addresses = isIp(host) ? [host] : local ? [] : ((await options.lookup?.(host).catch(() => [])) ?? []);
  if (local || addresses.some((address) => !isPublic(address))) {
    throw new ToolRefusal(`url points at a private, loopback or local address (${host}): refused, the tools only download from public hosts.`);
  }
  return url;
}

function isIp(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

/** Whether an IP address is public unicast (not loopback, private, link-local, CGNAT, multicast or reserved). */
export function isPublic(address: string): boolean {
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/i.exec(address);
  if (v4 !== null) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return !(
      a === 0 || a === 10 || a === 127 || a >= 224 ||
      (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 192 && b === 0) || (a === 198 && (b === 18 || b === 19))
    );
  }
  const v6 = address.toLowerCase();
  if (v6.startsWith('::ffff:')) return false; // a mapped address in hex form: not worth decoding, refused
  return !(v6 === '::' || v6 === '::1' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || v6.startsWith('ff') || v6.startsWith('64:ff9b') || v6.startsWith('2001:db8'));
}
