#!/usr/bin/env node
// Bundle sizes: what users ship. Each row is the bundle a user's bundler makes of one import of the built package,
// dependencies included: `esbuild --bundle --minify --platform=browser --format=esm` of dist/, then gzip. Run
// after `npm run build`.
//
// - Bundling for the browser platform also proves the default entries use Web standards only: a `node:`
//   import fails the build here.
// - `target` is the budget of an issue (issue 16 for the three rows of USER_BUNDLES in bundle-size.mjs: the whole
//   main entry ≤ 24 KB, a server app's `{ OAuthClient, TokenManager, PostSched }` ≤ 20 KB, `verifyWebhook` alone
//   ≤ 2.0 KB). It is printed as met or MISSED and never hidden.
// - `ceiling` fails CI: a measured size plus a small margin, so that no change makes a bundle larger unnoticed.
//   Lower a ceiling whenever the bundle shrinks; never raise it silently: say here by how much, and why.
// - Then, for each USER_BUNDLES row, where its bytes go (`bundleBreakdown`): per dependency (ky, zod, oauth4webapi)
//   and per src/ folder, or per file for the verifier.
//
// History of the ceilings (gz):
// - Main entry: 29.24 KB, then 29.89 KB after loading ky lazily (esbuild's lazy-init wrapper in a one-file
//   browser bundle; saves ~10 ms on every Node cold start), then 25.73 KB once the resources checked answers and
//   input without zod (issue 11): ceiling 26.3 KB. Then 28.62 KB for issue 12's hardening (bounded bodies,
//   RedirectError and ResponseTooLargeError, scrubbing of quoted server text, header checks, the compare-and-set
//   token manager with time-bounded store calls): +6.8 KB minified, measured file by file with esbuild's
//   metafile; ceiling 28.7 KB. Then 30.63 KB for issue 15 (raw get/post/… and paginate, withOptions, the
//   User-Agent, rate-limit parsing, the TracingChannel and the three hooks: +6.0 KB minified): ceiling 30.7 KB;
//   30.82 KB once the request path kept the answer's bytes beside the original Response (readBody /
//   readableCopy, issue 16): ceiling 30.9 KB. Then 30.90 KB (+0.08 KB): hook views that leave out cookies and
//   proxy credentials and cut an echoed token, the Web Crypto promise test that works across realms (edge-runtime),
//   the body limit counting every body (the Content-Length fast path went, a few bytes less); 30.94 KB with
//   withOptions() refusing a baseUrl or auth instead of dropping it: ceiling 30.95 KB. Then 31.01 KB (+0.07 KB):
//   raw calls check their query values (no `[object Object]` or `NaN` sent), `parse`, and paginate's limit,
//   pageSize and parseItem; PostSched checks `fetch` (one optionalFunction for every function option): ceiling
//   31.05 KB. Then 32.42 KB (+1.37 KB) with issue 20's `UserClients` (a client per user, the bounded cache that
//   never drops a user mid-refresh, dispose): ceiling 32.45 KB.
//   Then the schedule entry (issue 23) made tsup move src/errors.ts into a chunk of its own: the same minified
//   bytes in another module order, which gzip packs 27 bytes worse: ceiling 32.5 KB. Then 33.07 KB (+0.6 KB) with
//   issue 20's token manager at fleet scale (one refresh per refresh token across managers, the memory of rotations,
//   the write-back after Redis loses a write, saves settled before the lock is given up): ceiling 33.1 KB.
//   Issue 22: the webhook names out of the main entry (-2.6 KB: a receiver imports @postsched/sdk/webhooks) and
//   oauth4webapi's OpenID code-response path no longer reached (-0.33 KB), the request path's loop and the one option
//   check in: 30.21 KB once merged with issues 20, 21 and 23: ceiling 30.25 KB. Then 30.30 KB (+0.09 KB, review of
//   the request path): per-call options of the wrong type refused (null options, a signal that is not an
//   AbortSignal, an onProgress that is not a function: +0.04 KB) and a JSON body holding a BigInt or a cycle refused
//   by name (+0.05 KB): ceiling 30.35 KB. Then 30.37 KB (+0.07 KB): a body that breaks off after the status came is
//   a ConnectionError saying the service may have acted, not "Could not reach" (which invited a second write):
//   ceiling 30.4 KB.
// - Webhooks entry: 2.8 KB, then 4.4 KB when createWebhookHandler joined it (issue 14); what a user pays is
//   measured per use since. Verifier (`verifyWebhook`, `verifyWebhookRequest`, `WebhookVerificationError`): 2.52
//   KB, 2.86 KB after reading the body capped and only after the header checks (issue 12 item 6), 2.94 KB with an
//   empty-secret message that says where the secret comes from (issue 13). Handler alone 3.96, then 4.03 KB.
// - Issue 16: `verifyWebhook` alone measured on its own (2.51 KB before): one header-parsing loop instead of a
//   fast path beside it, one message per fix for the secret checks, a constant bundlers can drop, and the Web
//   Crypto HMAC started synchronously (+0.04 KB), a `now` error that says what to pass, a verifyWith that is not
//   async (one promise less per delivery: +0.01 KB): 2.44 KB; the three verifier names 2.88 KB, the handler
//   3.96 KB, the webhooks entry 4.33 KB. Ceilings lowered to those plus 0.02–0.04 KB.
// - Issue 21 (webhooks for a fleet): the handler 5.31 KB (+1.35 KB), the webhooks entry 5.69 KB: the claim states
//   (new / in flight / done, complete, release by claim id) with the in-process wait for a run in flight, the time
//   bounds of the handler and of every store call with WebhookTimeoutError and its messages, the in-memory store's
//   expiries and per-post order, created_at parsed as an instant, Retry-After. The verifier alone is unchanged
//   (2.45 KB: none of it is imported by the verifier). Ceilings: 5.35 KB and 5.72 KB; the handler's 4 KB target is
//   now missed.
// - Server app (`{ OAuthClient, TokenManager, PostSched }`, first measured by issue 16): 25.05 KB before issue
//   12's hardening, 25.91 KB with it, 27.89 KB with issue 15 (the client's raw methods, hooks and tracing are
//   in `PostSched`), 28.08 KB with the request path's readBody / readableCopy (issue 16): ceiling 28.2 KB; 28.22 KB
//   (+0.14 KB) with the hook views' credential hiding and withOptions() refusing a baseUrl or auth: ceiling 28.25 KB;
//   28.26 KB with the raw calls' input checks above: ceiling 28.3 KB. Then 28.40 KB (+0.08 KB measured from the
//   sources) with issue 20's cheap clients: options checked once and shared (client-setup.ts), resources made on
//   first use, a TokenManager's token source as one small object: a client per user costs ~0.25 KB of heap instead
//   of ~1.8 KB: ceiling 28.45 KB.
//   Then +0.03 KB, the same minified bytes in another module order (the errors chunk of issue 23): ceiling 28.5 KB.
//   Then 29.04 KB (+0.59 KB) with issue 20's token manager at fleet scale (above): ceiling 29.05 KB.
// - Schedule entry (issue 23, target 1.5 KB): 4.55 KB, of which the error classes ValidationError pulls in (every one
//   of them until issue 22) are 2.1 KB: 2.48 KB with them stubbed, 2.52 KB once merged beside issue 20 (its
//   invalid-option.ts and module order). Ceilings 4.6 and 2.55 KB.
//   Issue 22 (merged after issues 20, 21 and 23): 28.59 KB: ceiling 28.6 KB. Then 28.67 KB (+0.08 KB) with the same
//   two checks as the main entry: ceiling 28.7 KB. Then 28.74 KB (+0.07 KB), the same broken-off body message:
//   ceiling 28.77 KB.
// - Issue 22 raised the webhook ceilings, by 0.17–0.24 KB: the one option check (`toleranceSeconds`, `maxBodyBytes`
//   are ValidationErrors from `integerOption` like every numeric option: +0.13 KB with ValidationError), the verify
//   sequence assembled once for verifyWebhook, verifyWebhookRequest and the handler (+0.05 KB), `code` beside
//   `reason`. `verifyWebhook` alone 2.64 KB, with verifyWebhookRequest 3.10 KB, the handler 4.10 KB (its 4.0 KB
//   target now missed), the entry 4.57 KB.
// - Review of the OAuth area (branch review-oauth): main entry 30.47 KB, server app 28.87 KB (+0.26 / +0.28 KB) for six
//   fixes, server app per fix: the token request raced against its time-out (+0.03), copies out of RedisTokenStore
//   and getTokens (+0.01), token answers read before oauth4webapi could refuse an id_token, a null field or a negative
//   expires_in (+0.09), fallback scopes checked before the request (+0.06), an empty `iss` refused (+0.02), the bound
//   on refused writes (+0.07): ceilings 30.5 KB and 28.9 KB. Merged with the reviews of the request path and the
//   webhooks (above): main entry 30.63 KB, server app 29.02 KB: ceilings 30.65 KB and 29.05 KB.
// - Review of the edges (branch review-edges): schedule entry 2.76 → 2.83 KB (stubbed 2.52 → 2.59 KB), +0.07 KB for
//   four weeklySlots / zone fixes: slots read by index with a duplicate skipped in order (linear in a long list of
//   times), the days near either end of a Date skipped, a long unknown zone name not measured letter by letter, holes
//   and a BigInt count refused: ceilings 2.85 and 2.6 KB.
// - Review of the spec conformance (branch review-spec): main entry 30.67 KB, server app 29.06 KB (+0.04 KB each): a
//   token error body labelled text/plain read as the §5.2 error it is (+0.02), token requests sending the SDK's
//   User-Agent as the README says every request does (+0.02): ceilings 30.7 KB and 29.1 KB.
// - Review of the Redis area (branch review-redis): main entry 30.65 KB (+23 bytes gz), server app unchanged: UserClients'
//   dispose also waits for dropped managers still in use (+16 bytes), Redis client errors scrubbed as a token store's
//   message (sanitizeCause takes the scrubber: +7 bytes): ceiling 30.7 KB. Merged after the spec review: main entry 30.70 KB,
//   server app 29.07 KB: ceilings 30.73 KB and 29.1 KB.
// - ky through the private import `#ky` (package.json "imports"), so that Node loads it on the first request and a
//   cold import no longer loads Node's fetch (+77 → +35 ms over empty Node, bench "Cold import"): main entry 30.89 KB,
//   server app 29.29 KB. +0.04 KB minified (the loaded check in the request path); the rest, +0.15 KB gz, is ky's
//   same bytes in another place of the bundle (after oauth4webapi instead of inside the request chunk: ky's share
//   of the gzip stream 4.20 → 4.39 KB). Ceilings 30.92 KB and 29.32 KB.
// - Issue 27 §3 (branch i27-webhooks): the handler 5.46 → 5.68 KB, the webhooks entry 5.92 → 6.15 KB (+0.23 KB gz,
//   +0.47 KB minified): a handler past its time-out keeps its claim, renewed until it settles (outlive), a created_at
//   past the signature's timestamp plus the tolerance not used for ordering, inFlightTtlMs through the one option
//   check, the time-out message saying the claim is held: ceilings 5.71 KB and 6.18 KB. The verifier alone 2.65 KB.
// - Issue 27 (users logged out or mixed up): main entry 30.89 → 31.46 KB (+1.66 KB minified), server app 29.29 →
//   29.59 KB (+0.80 KB minified): the user id stamped into stored tokens and refused when another's, the re-read 2 s
//   after a refresh saved in the lock, rotations no store holds kept past the memory's bound (TokenManager, both
//   bundles); UserClients keeping and saving users whose tokens are unsaved, with its error naming them (main entry
//   only). Ceilings 31.49 KB and 29.62 KB.
// - Issue 28 parts 1 and 4 (branch i28-request): the request path as named steps (ky with throwHttpErrors off, the
//   JSON text and the query built once by the SDK, one attempt record for the logger, the hooks and the trace): main
//   entry 32.32 → 32.23 KB, server app 30.37 → 30.26 KB (-0.09 / -0.11 KB gz, -0.39 KB minified each): ceilings
//   32.26 KB and 30.29 KB.
// - Issue 28 §3 (branch i28-webhooks): the webhook receiver in 12 files, the verify sequence one async function that
//   the handler uses too: the verifier alone 2.65 → 2.62 KB, + verifyWebhookRequest 3.10 → 3.05, the handler
//   5.68 → 5.67, the webhooks entry 6.14 → 5.99: ceilings 2.64, 3.07, 5.70 and 6.02 KB.
// - Issue 28 §5 (branch i28-kernel, one kernel in src/core/): RAISED, for the lead to accept or refuse. Main entry
//   32.70 → 32.70, verifier 2.62 → 2.62, + verifyWebhookRequest 3.05 → 3.05 (unchanged); server app 30.70 → 30.76,
//   the handler 6.18 → 6.30, the webhooks entry 6.49 → 6.63, schedule 3.33 → 3.34 (stubbed 3.09 → 3.11). Measured
//   file by file: the one time toolkit's race carries the abort signal the request path needs, and timeBound is now
//   that race (+0.08 KB in the handler); the one RFC 3339 reader checks the calendar and RFC 3339's strict form for
//   publish_at where the dedupe's own regex did neither (+0.05 KB in the handler, the server app's gzip order +0.06);
//   `refusal` beside invalidOption (+0.02 KB schedule). Ceilings 30.78, 6.32, 6.65 and 3.12 KB.
// - Issue 28, the verifier alone (branch i28-verifier): 2.61 → 2.49 KB (-123 bytes gz, -0.38 KB minified),
//   + verifyWebhookRequest 3.05 → 2.93, the handler 6.29 → 6.19, the webhooks entry 6.62 → 6.51; nothing accepted or
//   refused differently. Per change, measured on the sources in the order applied: equalsHex in one loop (-17 B), the
//   Web Crypto key cache inside hmac() (-19 B), shapes that minify smaller (-44 B), WebhookVerificationError's reason
//   and ValidationError's path `declare`d (-8 B), messages in fewer words with the same information (-35 B).
//   Ceilings 2.50 (issue 28's target), 2.95, 6.21 and 6.53 KB.
// - Issue 37 (branch i37-webhooks): RAISED by the measured amounts. The verifier 2.49 → 2.51 KB and with
//   verifyWebhookRequest 2.93 → 2.95 KB (+0.02: no_matching_signature's message says the signature does not match
//   the secret or the raw body was changed); the handler 6.19 → 6.38 KB and the entry 6.51 → 6.70 KB (+0.19 KB, +0.39
//   KB minified: the secret checked when the handler is made, a ValidationError; the `logger` option, checked, and the
//   warning of refused deliveries once per reason per minute; the renewal loop of an overrun claim removed); the redis
//   entry 12.17 → 12.29 KB (+0.12: WebhookDedupeUnavailableError speaks for Redis and PostgreSQL). Ceilings 2.52,
//   2.97, 6.40, 6.72 and 12.30 KB.
// - Issue 37 (branch i37-stores): ids with a lone UTF-16 surrogate refused wherever an id becomes a stored key (one
//   check, src/core/well-formed-id.ts, in UserClients, the token stores and the webhook dedupes): main entry 29.64 KB
//   (0.15 over its ceiling), the handler 6.39 (0.18 over), the webhooks entry 6.71 (0.18), the redis entry 12.35
//   (0.18), RedisTokenStore alone 8.01 (0.16); the message was cut to one sentence first (-0.07). Ceilings 29.65, 6.4, 6.72, 12.36 and 8.02 KB.
import { relative } from 'node:path';
import { bundleBreakdown, bundleSize, buildWithSourceMaps, DEPENDENCIES, groupOf, STUB_ERROR_CLASSES, USER_BUNDLES } from './bundle-size.mjs';

const KB = 1024;
/** Ceilings of the USER_BUNDLES rows, by label. */
const CEILINGS = {
  // Issue 27 §4: +0.31 KB main, +0.26 KB server app: one options reader (own properties, unknown keys refused with
  // the closest name), lenient-server dot segments, private constructors with their internal factories. Issue 27 as
  // merged (§1–§4 together, measured on main): main entry 30.89 → 32.31 KB, server app 29.29 → 30.37 KB.
  // Issue 28 §2: the token manager in three parts (fresh-token cache, saved tokens, refresh coordinator) and one
  // token-set module: +0.47 KB main, +0.44 KB server app (32.23 → 32.70, 30.26 → 30.70 measured on main): the links
  // between the parts and their public-to-each-other method names, which the minifier keeps. Module functions over
  // private state would minify like the one class did; not done yet (issue 28 stays open on its size targets).
  // Issue 28's size targets (branch i28-size): main entry 32.70 → 30.54 KB, server app 30.70 → 28.57 KB:
  // code of the bundled dependencies the SDK never reaches cut from the build (scripts/dependency-cuts.mjs):
  // oauth4webapi's OpenID id_token check (-1.41 KB each), ky's progress streams (-0.36 KB) and the parts of ky's
  // retry that `retry: 0` skips (-0.23 KB); five long messages in fewer words (-0.13 KB); UserClients' `oauth`
  // checked once, by the TokenManager it makes to check the manager options (-0.04 KB, main entry). The verifier
  // 2.62 → 2.61 KB (`now` read as a number). Ceilings 30.6, 28.6 and 2.63 KB; the targets (29.5, 28.0, 2.5 KB) still missed.
  // Issue 31 (branch i31-docs): the first-hour messages, +0.48 KB main, +0.46 KB server app (32.70 → 33.18,
  // 30.70 → 31.16, +1.1 KB minified): a 404 on a client's first call under a `baseUrl` with a path says to check it
  // (answer.ts, the request loop's flag), a `baseUrl` left undefined says so, a zone-less `publish_at` points at
  // atLocalTime, `no_tokens` names `users.connect` for a UserClients user. Words a newcomer needs, in the bundle.
  // Issue 30 (branch i30-limiter): one backoff per user, in-process (RateLimiter: a Map of blocked keys, the answer
  // read for Retry-After / RateLimit-Remaining: 0, the held calls' wait with its jitter and its RateLimitError, the
  // cleared timer and onRateLimit, users.rateLimit() / client.rateLimit, the rateLimiter option, RateLimitError's
  // retryAt, a block kept at most a day): main entry 32.70 → 33.49 KB (+0.79 KB gz, +2.49 KB minified), server app 30.70 → 31.46 KB (+0.76 KB gz,
  // +2.31 KB minified). Everything Redis is in @postsched/sdk/redis. Ceilings 33.5 KB and 31.5 KB.
  // The three branches merged: main entry 31.83 KB, server app 29.82 KB (the cuts, less the first-hour messages and
  // the rate limiter): ceilings 31.86 / 29.85 KB.
  // With the kernel folder (src/core: the one time race with its abort signal, the strict date reader): main entry
  // 31.83 → 31.88 KB, server app 29.82 → 29.94 KB: ceilings 31.91 / 29.97 KB.
  // Issue 29 (no rotation lost when the store is slow): 32.81 KB main, 30.80 KB server app measured, over the ceilings
  // above by 0.08 / 0.07 KB: a refresh whose save fails past storeTimeoutMs keeps the store's lock until it lands.
  // All merged (the cuts, the first-hour messages, the rate limiter, the kernel, the kept lock): 32.00 / 30.05 KB.
  // Issue 29, a process starved mid-refresh (branch i29-starve): the lease of a refresh in flight lasts its bound
  // (TokenStoreLockOptions.leaseMs, OAuthClient.timeoutMs, take/extend given the lease's length): main entry 32.00 →
  // 32.03 KB, server app 30.05 → 30.09 KB, redis entry 10.53 → 10.62 KB, RedisTokenStore alone 7.79 → 7.89 KB (measured
  // on main and on the branch, npm run build then this script; the lock's part, +0.05 KB, is the release tried again
  // after a failure or a take of unknown outcome). Ceilings 32.05 / 30.11 / 10.63 / 7.90 KB: for the lead.
  // Issue 28's size targets, third pass (branch i28-size3): ky bundled as the SDK calls it (dependency-cuts.mjs
  // withoutKyUnusedOptions, which replaces the retry cut: ky's retries, hooks, HTTPError, prefixUrl, searchParams,
  // json, parseJson, response shortcuts and instance methods left out, each of those options refused by name): main
  // entry 32.01 → 29.55 KB, server app 30.08 → 27.61 KB (-2.46 KB gz each, -7.9 KB minified); ky's form-boundary
  // size, read only by its progress streams: -0.05 KB each. Ceilings 29.53 and 27.59 KB.
  // oauth4webapi as OAuthClient calls it (withoutOauthUnusedOptions, with the id_token cut: DPoP, the mTLS aliases,
  // the signal option, base64url decoding, several content types' wording, the "no state" checks): 29.50 → 29.21 KB,
  // 27.56 → 27.27 KB (-0.29 KB gz each). Ceilings 29.24 and 27.30 KB. The ky cut's refusal in fewer words (it names
  // the option; the SDK's own calling convention is in dependency-cuts.mjs): 29.18 / 27.24 KB (-0.03 KB each).
  // Ceilings 29.21 and 27.27 KB.
  // Issue 30's targets (a user's stated quota paced across processes): the limiter takes a turn before each attempt and
  // keeps a quota window per limited key (its end, what is left, the requests still on their way), the request loop
  // counts its client's requests on their way: main entry 32.01 → 32.74 KB, server app 30.08 → 30.79 KB (+0.73 /
  // +0.71 KB gz, +1.9 KB minified). Ceilings 32.77 / 30.82 KB: for the lead.
  // Both merged (the cuts and the paced quota): main entry 29.92 KB, server app 27.95 KB. Ceilings 29.95 / 27.98 KB.
  // The audit's fixes (branch audit): ids refused for control characters and for dot segments behind a '/' or '\\',
  // a callback repeating `code` named as such, an over-limit body's cancel not awaited: main entry 29.92 → 29.97 KB,
  // server app 27.95 → 28.00 KB (+0.05 KB gz each, measured after npm run build). Ceilings 30.00 / 28.03 KB.
  // Issue 28's request path (branch i28-speed): ky called as the SDK calls it in fewer steps (no merge of absent
  // defaults, no copy of the headers into a Headers, no request copy for a retry, no tick, no init for fetch; the merge
  // module gone): main entry 29.96 → 29.46 KB, server app 28.01 → 27.51 KB (-0.50 KB gz each). Ceilings 29.49 / 27.54 KB.
  // Issue 37's token path (branch i37-refresh): a refused refresh token remembered per process, the lock's
  // pendingSaveMs, the refresh as one sequence over a store adapter: main entry 29.46 → 29.59 KB, server app
  // 27.51 → 27.63 KB (+0.13 / +0.12 KB gz). Ceilings 29.62 / 27.66 KB.
  // Issue 38 (branch i38-ky): ky and oauth4webapi bundled as published (no cuts), ky running every attempt (its
  // retry loop, time-out, beforeRequest hook, HTTPError): main entry 29.46 → 34.79 KB, server app 27.51 → 32.86 KB
  // (ky 4.21 KB gz, oauth4webapi 4.97 KB gz of it; zod external, counted from node_modules, 0 KB until a part imports
  // it). Targets 40 / 38 KB (issue 38). Ceilings 34.82 / 32.89 KB.
  // Issue 38 §3 (branch i38-zod): the wire contract in zod/mini schemas, zod external and counted as a consumer's
  // bundler sees it: main entry 29.46 → 36.03 KB, server app 27.51 → 34.03 KB, verifyWebhook alone 2.5 → 8.27 KB (the
  // event schemas; ~6 KB of it is zod/mini's core). Ceilings 36.04 / 34.04 / 8.28 KB.
  // Issue 40 (branch i40-otel): the channels `postsched:call` and `postsched:wait`, token requests published, the trace
  // headers a subscriber sets sent with each request: main entry 29.46 → 29.90 KB, server app 27.51 → 27.92 KB
  // (+0.44 / +0.41 KB gz). Re-measured on main after issue 38: main entry 42.06 → 42.49 KB, server app 39.84 → 40.24 KB
  // (+0.43 / +0.40 KB gz); the ceilings below are main's, left to the work that shrinks these bundles.
  // Issue 38 §5 (branch i38-size): the input schemas without z.partial, z.enum and z.minLength (z.optional, a union of
  // literals, z.refine: the same checks and messages), the TokenSet's accessToken by z.refine: main entry 42.06 → 41.23 KB,
  // server app 39.84 → 38.96 KB; verifyWebhook 8.29 (no zod feature it uses could go).
  // Issue 39 §1 and issue 40 §2–3 merged on that: the unknown-outcome re-send of a refresh, the short-token floor of
  // stored tokens, the outcome-unknown errors of writes and the retry budget: main entry 41.70 → 42.46 KB, server app
  // 39.43 → 40.18 KB. Issue 38's targets (40 / 38 KB) are missed by 2.46 / 2.18 KB (bench/RESULTS.md).
  // The ids' and enums' checks back on z.minLength and z.enum, which a JSON Schema shows (`minItems`, `minLength`,
  // `enum`; the agent tools hand those schemas to models): +0.48 / +0.47 KB gz, main entry 42.92, server app 40.63 KB.
  // Issue 38 §5, the bundle rows (branch i38-bundle; npm run build, then this script): main entry 42.92 → 42.72 KB,
  // server app 40.63 → 40.43 KB (-0.20 KB gz each): the TokenSet's tokenType and accessToken by z.custom, which the
  // entry has anyway (z.literal, the only one of the entry, and z.refine left out: -0.15 KB), the public fields of the
  // error classes, OAuthClient and TokenManager `declare`d and set by their constructors (no field initializer:
  // -0.07 KB). verifyWebhook alone 8.29 → 8.03 KB (-0.26 KB): the unknown event checked and renamed by one z.check,
  // not z.pipe + z.transform. Targets still missed: 40 / 38 KB by 2.72 / 2.43 KB (bench/RESULTS.md), 8 KB by 0.03.
  // Issue 39 §2–3 (branch i39-sweep): UserClients takes a PostgresTokenTable / RedisTokenSpace as `store` and gains
  // keepGrantsAlive() (the sweep's loop itself is in the redis and postgres entries): main entry 42.68 → 42.92 KB.
  // Issue 39 §2 (branch i39-dead, merged on that): dead grants (the store's mark read with the tokens, told once,
  // grantStatus, disconnect, onReconnected) and OAuthClient.revoke (oauth4webapi's revocation request): main entry
  // 42.72 → 43.93 KB, server app 40.43 → 41.23 KB (npm run build, then this script). Both merged: main entry 44.18 KB.
  'whole main entry (export *)': 44.2 * KB,
  'server app: { OAuthClient, TokenManager, PostSched }': 41.25 * KB,
  'webhook verifier alone: { verifyWebhook }': 8.05 * KB,
};
const rows = [
  ...USER_BUNDLES.map((bundle) => ({ ...bundle, ceiling: CEILINGS[bundle.label] })),
  // What else the webhooks entry costs per use: the handler must not grow the verifier (issue 14: they tree-shake
  // apart, test/size/webhooks-tree-shaking.test.ts), so each has its own ceiling.
  {
    label: '  + verifyWebhookRequest, WebhookVerificationError',
    file: 'dist/webhooks/index.js',
    names: ['verifyWebhook', 'verifyWebhookRequest', 'WebhookVerificationError'],
    // Issue 38 §3: the event schemas and zod/mini, 2.95 → 8.70 KB.
    // Issue 38 §5 (branch i38-size): 8.72 → 8.72 KB, ceiling at the measure.
    // Issue 38 §5 (branch i38-bundle): 8.71 → 8.46 KB, the unknown event's one z.check (above).
    ceiling: 8.48 * KB,
  },
  // Its target: stay under standardwebhooks' verifier alone (4.8 KB, bench/RESULTS.md) with a margin.
  // Issue 38 §5 (branch i38-size): 12.30 → 12.30 KB as merged on main (over the 12.2 KB ceiling of the zod branch
  // alone), ceiling at the measure.
  // Issue 38 §5 (branch i38-bundle): 12.30 → 12.06 KB, the unknown event's one z.check.
  { label: 'webhook handler alone: { createWebhookHandler }', file: 'dist/webhooks/index.js', names: ['createWebhookHandler'], target: 4 * KB, ceiling: 12.08 * KB },
  // Issue 27 §4: +0.51 KB: createWebhookHandler refuses unknown options by name, with the closest (checkOptions,
  // Levenshtein); with §3 (the claim kept through an overrun, +0.23 KB) the handler 6.19 KB, the entry 6.64 KB.
  // Issue 28 §3 merged on that: the handler 6.17 KB, the entry 6.48 KB.
  // Issue 38 §3 (the event schemas and zod/mini): the handler 6.21 → 11.92 KB, the entry 6.53 → 12.31 KB.
  // Issue 38 §5 (branch i38-size): 12.70 → 12.70 KB as merged on main, ceiling at the measure.
  // Issue 38 §5 (branch i38-bundle): 12.70 → 12.45 KB, the unknown event's one z.check.
  { label: 'webhooks entry (export *)', file: 'dist/webhooks/index.js', ceiling: 12.47 * KB },
  // Issue 23's target: the whole schedule entry ≤ 1.5 KB. Its one import from the rest of the SDK is ValidationError,
  // which ships every error class until issue 22 makes them tree-shakable: the second row is the entry with them
  // replaced by a minimal class, so what the schedule code itself costs stays visible.
  // Issue 27 §4: +0.50 KB (2.83 → 3.33, 2.59 → 3.09): the options reader (typos refused, own properties only) and
  // weeklySlots's offsets read every 6 hours (the first of 86,400 slots a day after ~50 readings, not 1.75 million).
  { label: 'schedule entry (export *)', file: 'dist/schedule/index.js', target: 1.5 * KB, ceiling: 3.35 * KB },
  { label: '  the same, error classes stubbed (see issue 22)', file: 'dist/schedule/index.js', plugins: [STUB_ERROR_CLASSES], ceiling: 3.12 * KB },
  // The agent tools (issue 41): their own entry, so that the main entry does not grow (the list of post statuses is
  // exported for the tools instead of copied: +20 bytes min). With zod external it shares the split build's chunks:
  // zod's JSON Schema converter, which only the tools import, stays out of every other entry. What it bundles: the post
  // input schema it composes, atLocalTime and weeklySlots, the Web Crypto HMAC of the webhooks, the client's code
  // (a bundler dedupes it with the main entry's): 68.87 KB min, 23.94 KB gz. Ceiling 23.96 KB.
  // An error quoting the service fenced as untrusted too: 68.74 → 68.99 KB min, 23.88 → 23.97 KB gz; schedule_post
  // remembering its posts by key (one post without relying on the service's idempotency): 69.32 KB min, 24.08 KB gz;
  // an aborted call said as such: 69.52 KB min, 24.16 KB gz. Ceiling 24.18 KB.
  { label: 'tools entry (export *)', file: 'dist/tools/index.js', ceiling: 24.18 * KB },
  // The Redis entry (issue 28: reported, no target yet). Node-only (`node:async_hooks`): bundled for the node platform,
  // as a server bundle would be, Node's modules left as imports. It holds the token manager's kernel it shares with
  // the main entry (errors, the token-set checks, the option reader), so a server app that imports both pays it once.
  // With RedisRateLimiter (issue 30): 9.04 → 10.39 KB (its extend-only script, the subscriber, the bounded commands);
  // RedisTokenStore alone 7.57 → 7.64 KB (the connection wrapper's duplicate() for the subscriber); with the kernel's
  // one time race and refusal module 10.53 / 7.79 KB: ceilings 10.56 / 7.82 KB.
  // onRateLimit through the one hook caller (callHook, with its scrubbed views' module): 10.62 → 10.66 KB: 10.69 KB.
  // Issue 30's targets: RedisRateLimiter's two scripts (TAKE, LEARN: a quota window in a hash, on Redis's clock) for the
  // one that only extended a block: 10.66 → 12.08 KB (the Lua text is most of it). RedisTokenStore alone 7.89 → 7.82
  // KB (the limiter's scripts no longer left in its bundle): ceilings 12.11 / 7.85 KB.
  // Issue 28's heap per cached user (branch i28-speed): each store's lease one object of a class (RedisLease) instead of
  // an object of four closures, a settings object and a fifth closure (a RedisTokenStore 1,104 → 652 B of heap):
  // 12.11 → 12.14 KB (+0.03 KB gz; main measured 12.11 KB, at its ceiling), RedisTokenStore alone 7.82 → 7.84 KB.
  // Ceiling 12.17 KB.
  // Issue 37, secure by default (branch i37-secure): a store refuses to start without `encryptionKey` (the message names
  // the unset variable and `openssl rand -base64 32`), keyrings take `allowPlaintext` / `current: 'none'` for the move
  // from clear to a key, a key of the wrong kind is named, rotations encrypt values in clear and a dry run with
  // unreadable values fails saying why: 12.17 → 13.02 KB, RedisTokenStore alone 7.83 → 8.40 KB (measured on the branch
  // point and on the branch, npm run build then this script; the messages are most of it). Ceilings 13.05 / 8.43 KB (13.35 / 8.6 with the webhook dedupe and id-check changes beside them; re-measured after the merges).
  // Issue 37's lease (branch i37-refresh): a take from a holder that never released it waits for that holder's save
  // (the lease lock's look loop, the holder note), a failed take released only when it may have landed (one backing-off
  // loop per lock): 12.14 → 12.60 KB, RedisTokenStore alone 7.84 → 8.28 KB. Ceilings 12.63 / 8.31 KB.
  // Issue 38 §3: the stored TokenSet checked by its zod/mini schema: the entry 12.17 → 17.62 KB, RedisTokenStore alone
  // 7.85 → 13.27 KB.
  // Issue 38 §5 (branch i38-size): the TokenSet's accessToken checked by z.refine, not z.minLength: 19.30 → 19.06 KB,
  // RedisTokenStore alone 14.42 → 14.17 KB.
  // Issue 40 §3: the retry budget's RETRY script in RedisRateLimiter: 19.06 → 19.29 KB.
  // Issue 39 §0 (branch i39-stores): one SharedTokenStoreError with codes for both stores, the stores' get/set/lock
  // flow once in src/store/ over each store's own commands: redis entry 19.30 → 19.39 KB, RedisTokenStore alone
  // 14.42 → 14.61 KB; the postgres rows, new, 17.18 → 17.26 KB and 14.87 → 14.95 KB (measured on the branch point
  // 3006167 and on the branch: npm run build, then this script). Ceilings at the measured values.
  // All merged (the retry budget's script, the stores' one flow): redis entry 19.37 KB, RedisTokenStore alone 14.37,
  // postgres entry 17.02, PostgresTokenStore alone 14.73 KB. The lock's take as one script (a resent take finds the
  // lease its own): redis entry 19.40 KB, RedisTokenStore alone 14.40 KB. RedisRateLimiter holds a RateLimiter instead of
  // extending it, and the pipeline reads the answer's rate-limit headers (answerFacts): redis entry 18.91 KB; 18.94 KB
  // with its paced-key test (`paced`) back in the pipeline's order.
  // The stored TokenSet's literal checks by z.custom: redis entry 18.71, RedisTokenStore alone 14.17, postgres entry
  // 16.78, PostgresTokenStore alone 14.51 KB.
  // Issue 39 §2–3 (branch i39-sweep): RedisTokenSpace and PostgresTokenTable (the grants' index and list, the sweep):
  // redis entry 18.71 → 20.50 KB, postgres entry 16.78 → 18.26 KB (measured after the merge); the stores alone unchanged (the new statements and
  // scripts are the table's and the space's own, the scripts `@__PURE__`).
  // Issue 39 §2 (branch i39-dead): the mark of a dead grant (read with the tokens, its scripts or statements) and
  // delete: redis entry 18.71 → 19.16, RedisTokenStore alone 14.17 → 14.62, postgres entry 16.78 → 17.05,
  // PostgresTokenStore alone 14.51 → 14.78 KB.
  // Both merged: redis entry 20.93, RedisTokenStore alone 14.62, postgres entry 18.49, PostgresTokenStore alone 14.78 KB.
  // The space's claim reads a mark as the store does (only while it names the stored value): redis entry 21.01 KB.
  // After an outage, RedisRateLimiter hands its refills to the shared retry budget every 10 answers until it is full
  // (branch i40-audit): 21.01 → 21.07 KB (npm run build, then this script, on main and on the branch).
  { label: 'redis entry (export *)', file: 'dist/redis/index.js', platform: 'node', ceiling: 21.09 * KB },
  { label: '  RedisTokenStore alone', file: 'dist/redis/index.js', names: ['RedisTokenStore'], platform: 'node', ceiling: 14.64 * KB },
  { label: 'postgres entry (export *)', file: 'dist/postgres/index.js', platform: 'node', ceiling: 18.51 * KB },
  { label: '  PostgresTokenStore alone', file: 'dist/postgres/index.js', names: ['PostgresTokenStore'], platform: 'node', ceiling: 14.8 * KB },
  // The OpenTelemetry entry (issue 40): Node-only (`node:diagnostics_channel`), `@opentelemetry/api` its peer, so left
  // an import as the app has it anyway. The channels' names are all it takes from the SDK: 1.73 KB gz (its throw-proof span starts included), ceiling 1.76 KB.
  { label: 'otel entry (export *)', file: 'dist/otel/index.js', platform: 'node', external: ['@opentelemetry/api'], ceiling: 1.76 * KB },
];

const kb = (bytes) => `${(bytes / KB).toFixed(2)} KB`;
let failed = false;
const measured = new Map();
console.log('What a user ships: esbuild --bundle --minify --platform=browser (node for the redis, postgres and otel rows) --format=esm of dist/, then gzip');
for (const { label, file, names, plugins, platform, external, target, ceiling } of rows) {
  const size = await bundleSize({ file, names, plugins, platform, external });
  measured.set(label, size);
  const underCeiling = size.gzipBytes <= ceiling;
  failed ||= !underCeiling;
  console.log(
    `${underCeiling ? 'ok  ' : 'FAIL'} ${label.padEnd(53)} ${kb(size.minBytes).padStart(9)} min ${kb(size.gzipBytes).padStart(9)} gz` +
      (target === undefined ? '' : `  target ${kb(target)}: ${size.gzipBytes <= target ? 'met' : 'MISSED'}`) +
      `  ceiling ${kb(ceiling)}${underCeiling ? '' : ': OVER, the bundle grew'}`,
  );
}

// Where the bytes go: the same imports of a source-mapped copy of the build (tsup.config.ts's ESM build, maps on).
const mapped = await buildWithSourceMaps();
console.log(
  '\nWhere the bytes go, per dependency and src/ folder (per file for the verifier). min: the exact output bytes ' +
    "each source became. gz: each one's share of the gzip stream, in file order: gzip of the bundle up to the end " +
    'of its bytes minus gzip up to their start, so the shares add up to the total; text repeated across sources ' +
    'counts for the first.',
);
for (const { label, file, names, breakdown } of USER_BUNDLES) {
  const result = await bundleBreakdown({ file: file.replace(/^dist/, relative(process.cwd(), mapped)), names }, groupOf(breakdown));
  const shipped = measured.get(label);
  const same = result.gzipBytes === shipped.gzipBytes;
  console.log(`\n  ${label}: ${kb(result.gzipBytes)} gz${same ? '' : ` (dist/: ${kb(shipped.gzipBytes)}: is dist/ older than src/? npm run build)`}`);
  const groups = [...result.groups];
  if (breakdown === 'dependency') {
    for (const name of DEPENDENCIES) {
      if (!groups.some((group) => group.name === name)) groups.push({ name, minBytes: 0, gzipBytes: 0 });
    }
  }
  for (const group of groups) {
    const name = group.name.replace(/^src\/webhooks\//, '');
    const share = `${((100 * group.gzipBytes) / result.gzipBytes).toFixed(1)}%`;
    console.log(`    ${name.padEnd(28)} ${kb(group.minBytes).padStart(9)} min ${kb(group.gzipBytes).padStart(9)} gz ${share.padStart(6)}`);
  }
}
process.exit(failed ? 1 : 0);
