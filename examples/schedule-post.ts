/**
 * Schedule a post with an image at the user's local time, and handle every error a user must handle (Node).
 *
 * Shows: a streamed media upload with a progress line, the publish time as a wall time in the user's time zone
 * (`atLocalTime`, or the next weekday at 09:00 from `weeklySlots`, right across DST), `posts.create` with an
 * idempotency key (so the SDK may retry it safely), one user-facing answer per error class, listing scheduled
 * posts with `for await`, and cancelling a post.
 *
 *   npm install @postsched/sdk && npm install -D tsx   # tsx runs the TypeScript file as it is
 *
 * Against the local mock of the service (in a clone of this repository, `npm run mock` instead of `npx postsched mock`):
 *   npx postsched mock                    # terminal 1: paste its export lines into terminal 2
 *   npx tsx examples/schedule-post.ts     # terminal 2
 *
 * Against a real service, set POSTSCHED_BASE_URL, POSTSCHED_ACCESS_TOKEN and POSTSCHED_ACCOUNT_ID yourself.
 * Optional: POSTSCHED_MEDIA_FILE=./photo.jpg POSTSCHED_POST_TEXT='Hello!'
 *   POSTSCHED_TIME_ZONE=Europe/Berlin       the user's IANA time zone (default: this machine's)
 *   POSTSCHED_PUBLISH_AT=YYYY-MM-DDTHH:mm   a wall time in that zone (default: the next weekday at 09:00); one that
 *                                           does not exist there (clocks skip it) or happens twice is refused
 *
 * Without POSTSCHED_MEDIA_FILE it uploads a 1×1 PNG. It cancels the post it scheduled at the end, so a run
 * leaves nothing behind; set POSTSCHED_KEEP_POST=1 to keep it. A fixed access token keeps the example short:
 * in an app, pass `auth: tokenManager` (see examples/oauth-express.ts) and tokens refresh themselves.
 */
import { randomUUID } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { basename, extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  PostSched,
  RateLimitError,
  ReauthorizationRequiredError,
  TimeoutError,
  UnprocessableEntityError,
  ValidationError,
  type MediaItem,
  type Post,
} from '@postsched/sdk';
import { atLocalTime, weeklySlots } from '@postsched/sdk/schedule';

/** What the script needs, from environment variables. */
export interface Config {
  baseUrl: string;
  accessToken: string;
  accountId: string;
  /** Path of the image or video to attach; a 1×1 PNG when absent. */
  mediaFile?: string | undefined;
  text: string;
  /** The user's IANA time zone ("Europe/Berlin"). */
  timeZone: string;
  /** When to publish, as a wall time in `timeZone` (`YYYY-MM-DDTHH:mm`); the next weekday at 09:00 when absent. */
  publishAt?: string | undefined;
  keepPost: boolean;
  /** Per-attempt time-out and retries (the SDK's defaults: 30 000 ms, 2). */
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
}

export function configFromEnv(env: Record<string, string | undefined> = process.env): Config {
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`Set ${name} (see the top of examples/schedule-post.ts).`);
    return value;
  };
  const number = (name: string): number | undefined => (env[name] === undefined ? undefined : Number(env[name]));
  return {
    baseUrl: need('POSTSCHED_BASE_URL'),
    accessToken: need('POSTSCHED_ACCESS_TOKEN'),
    accountId: need('POSTSCHED_ACCOUNT_ID'),
    mediaFile: env.POSTSCHED_MEDIA_FILE,
    text: env.POSTSCHED_POST_TEXT ?? 'Scheduled with @postsched/sdk',
    timeZone: env.POSTSCHED_TIME_ZONE ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    publishAt: env.POSTSCHED_PUBLISH_AT,
    keepPost: env.POSTSCHED_KEEP_POST === '1',
    timeoutMs: number('POSTSCHED_TIMEOUT_MS'),
    maxRetries: number('POSTSCHED_MAX_RETRIES'),
  };
}

export function createClient(config: Config): PostSched {
  return new PostSched({
    baseUrl: config.baseUrl,
    auth: config.accessToken,
    ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
    ...(config.maxRetries === undefined ? {} : { maxRetries: config.maxRetries }),
  });
}

// A 1×1 transparent PNG, so the example runs without a file at hand.
const PIXEL_PNG = Uint8Array.from(
  atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='),
  (c) => c.charCodeAt(0),
);

const CONTENT_TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.mp4': 'video/mp4',
};

/** Where progress goes: `process.stdout` by default. */
export interface Output {
  write(text: string): unknown;
}

/**
 * Uploads `path` (or the 1×1 PNG) with a progress line. `openAsBlob` streams from disk and knows the size,
 * so the progress has a total and the upload can be retried; the idempotency key makes a retry safe.
 */
export async function uploadMedia(client: PostSched, path: string | undefined, out: Output = process.stdout): Promise<MediaItem> {
  const filename = path === undefined ? 'pixel.png' : basename(path);
  const contentType = path === undefined ? 'image/png' : (CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream');
  const file = path === undefined ? new Blob([PIXEL_PNG], { type: contentType }) : await openAsBlob(path, { type: contentType });
  const item = await client.media.upload(
    { file, filename, contentType },
    {
      idempotencyKey: randomUUID(),
      onProgress: ({ loaded, total }) => {
        const percent = total === undefined || total === 0 ? 100 : Math.floor((loaded / total) * 100);
        out.write(`\rUploading ${filename}: ${percent}% (${loaded} of ${total ?? '?'} bytes)`);
      },
    },
  );
  // Every media field is the SDK's assumption about the service: check before relying on one.
  out.write(`\nUploaded ${filename} as ${typeof item.id === 'string' ? item.id : 'a media item without an id (the post goes without it)'}\n`);
  return item;
}

/**
 * The instant to send as `publish_at`: the user's wall time in their zone, as they think of it. 'reject' refuses a
 * time that does not exist that night (clocks skip it) or happens twice (clocks go back) with a ValidationError
 * that says so, instead of moving it silently; the default, 'compatible', would move a skipped 02:30 to 03:30.
 */
export function publishTime(config: Pick<Config, 'timeZone' | 'publishAt'>, now = new Date()): Date {
  if (config.publishAt !== undefined) return atLocalTime(config.publishAt, config.timeZone, { disambiguation: 'reject' });
  const [nextWeekdayAtNine] = weeklySlots({ timeZone: config.timeZone, days: ['mon', 'tue', 'wed', 'thu', 'fri'], times: ['09:00'], from: now, count: 1 });
  return nextWeekdayAtNine!;
}

/**
 * Schedules a post. The idempotency key is what lets the SDK retry the POST after a 5xx or a time-out without
 * creating it twice. Make it once per intent and keep it with the intent (say, your database row), so a retry
 * after your own process crashed sends the same key; this script makes one per run.
 */
export function schedulePost(
  client: PostSched,
  params: { accountId: string; mediaId?: string; text: string; publishAt: Date; idempotencyKey?: string },
): Promise<Post> {
  return client.posts.create(
    {
      account_ids: [params.accountId],
      publish_at: params.publishAt,
      text: params.text,
      ...(params.mediaId === undefined ? {} : { media_ids: [params.mediaId] }),
    },
    { idempotencyKey: params.idempotencyKey ?? randomUUID() },
  );
}

/** Every scheduled post, fetched page by page as the loop goes. */
export async function listScheduled(client: PostSched, out: Output = process.stdout): Promise<Post[]> {
  const posts: Post[] = [];
  for await (const post of client.posts.list({ status: 'scheduled' })) {
    out.write(`  ${post.id}  ${shown(post.publish_at)}  ${typeof post.text === 'string' ? post.text : ''}\n`);
    posts.push(post);
  }
  return posts;
}

/**
 * What to tell the user about an error, or `undefined` for an error that is a bug (let it crash).
 * Order matters: the specific classes come before `APIError`, their parent.
 */
export function explain(error: unknown): string | undefined {
  if (error instanceof ValidationError) {
    // Caught before anything was sent: a mistake in our input.
    return `Invalid input: ${error.message}`;
  }
  if (error instanceof ReauthorizationRequiredError || error instanceof AuthenticationError) {
    return 'The access token was refused or expired: log in again to get a new one.';
  }
  if (error instanceof PermissionDeniedError) {
    return error.missingScope === undefined
      ? `Not allowed (request ${error.requestId ?? 'unknown'}).`
      : `The access token lacks the "${error.missingScope}" scope: authorize the app again, asking for it.`;
  }
  if (error instanceof RateLimitError) {
    // The SDK already waited and retried when the wait was short; this one was longer than maxRetryAfterMs.
    const wait = error.retryAfterMs === undefined ? 'a moment' : `${Math.ceil(error.retryAfterMs / 1000)} s`;
    return `Too many requests: try again in ${wait}.`;
  }
  if (error instanceof ConflictError) {
    return 'That post is no longer scheduled (already published, failed or cancelled), so it cannot change.';
  }
  if (error instanceof UnprocessableEntityError) {
    const field = fieldOf(error.body);
    return `The service refused ${field === undefined ? 'the post' : `"${field}"`}: ${error.message}`;
  }
  if (error instanceof NotFoundError) {
    return `Not found: ${error.message}`;
  }
  if (error instanceof APIError) {
    // 5xx (already retried when safe) or an unexpected status: the request id is what support needs.
    return `The service failed (HTTP ${error.status}). If it persists, contact support quoting request ${error.requestId ?? 'unknown'}.`;
  }
  if (error instanceof TimeoutError) {
    return (
      `The service did not answer within ${error.timeoutMs} ms. A post may or may not have been created: ` +
      'list the scheduled posts before trying again (or retry with the same idempotency key).'
    );
  }
  if (error instanceof ConnectionError) {
    return `Could not reach the service (${error.message}). Check POSTSCHED_BASE_URL and the network.`;
  }
  return undefined;
}

/** The `field` of the wire error body `{"error":{"code","message","field"}}`. */
function fieldOf(body: unknown): string | undefined {
  const field = (body as { error?: { field?: unknown } } | null)?.error?.field;
  return typeof field === 'string' ? field : undefined;
}

/**
 * A field the spec does not give (`status`, `publish_at`…) may be missing from the service's answer, or be of
 * another type: say so rather than print `undefined`.
 */
function shown(value: unknown): string {
  if (value === undefined || value === null) return 'not given';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** What a run did. */
export interface RunResult {
  media: MediaItem;
  post: Post;
  scheduled: Post[];
  cancelled: Post | undefined;
}

/** Upload, schedule, list, cancel. Prints a user-facing line and sets exit code 1 on an expected error. */
export async function main(config: Config = configFromEnv(), out: Output = process.stdout): Promise<RunResult | undefined> {
  const client = createClient(config);
  try {
    const publishAt = publishTime(config); // first: a wrong time zone or wall time is refused before anything is sent
    const media = await uploadMedia(client, config.mediaFile, out);
    const post = await schedulePost(client, {
      accountId: config.accountId,
      ...(typeof media.id === 'string' ? { mediaId: media.id } : {}),
      text: config.text,
      publishAt,
    });
    // The wall time back in the user's zone, "YYYY-MM-DD HH:mm:ss" (Swedish dates are written as ISO 8601).
    const local = publishAt.toLocaleString('sv-SE', { timeZone: config.timeZone });
    out.write(`Scheduled ${post.id} for ${shown(post.publish_at)} (${local} in ${config.timeZone})\nScheduled posts:\n`);
    const scheduled = await listScheduled(client, out);
    let cancelled: Post | undefined;
    if (!config.keepPost) {
      cancelled = await client.posts.delete(post.id);
      out.write(`Cancelled ${post.id} (status ${shown(cancelled?.status)})\n`);
    }
    return { media, post, scheduled, cancelled };
  } catch (error) {
    const message = explain(error);
    if (message === undefined) throw error;
    console.error(message);
    process.exitCode = 1;
    return undefined;
  }
}

// Run only when executed directly, not when imported (by your app or a test). Not a top-level await: it fails in a
// CommonJS project (npm init's default); an error main() does not handle still ends the process with its stack.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main();
}
