/**
 * The refresh-token policy of the fake (`FakeServiceOptions.refreshPolicy`): which refresh tokens the token endpoint
 * accepts, what a refresh answers, and when a grant ends. Every instant is read from the fake's clock.
 */
import { checkOptions, integerOption, invalidValue, optionNames } from '../../core/invalid-option.js';
import type { Context } from './context.js';
import { randomId } from './http.js';
import type { Grant, RefreshPolicy, RefreshToken } from './state.js';

/** The policy with its defaults filled in (`0` for a window or lifetime: none). */
export type ResolvedRefreshPolicy = Context['refreshPolicy'];

const POLICY_OPTIONS = /* @__PURE__ */ optionNames<RefreshPolicy>({
  rotation: 0, reuseDetection: 0, overlapMs: 0, grantLifetimeMs: 0, idleLifetimeMs: 0,
});
const ROTATIONS = ['static', 'rotate', 'retain-until-used'] as const;
/** Ten years: more than any test needs, small enough that `now + ms` stays an exact integer. */
const MAX_MS = 10 * 365 * 24 * 3_600_000;

/** Checks the option and fills in the defaults; `revokeOnReuse` is the older `refreshTokenReuse: 'revoke-grant'`. */
export function resolveRefreshPolicy(policy: RefreshPolicy = {}, revokeOnReuse: boolean): ResolvedRefreshPolicy {
  policy = checkOptions(policy, POLICY_OPTIONS, 'refreshPolicy');
  const rotation = policy.rotation ?? 'rotate';
  if (!ROTATIONS.includes(rotation)) invalidValue('refreshPolicy.rotation', rotation, `; use one of ${ROTATIONS.join(', ')}.`);
  const reuseDetection = policy.reuseDetection ?? revokeOnReuse;
  if (typeof reuseDetection !== 'boolean') invalidValue('refreshPolicy.reuseDetection', reuseDetection, '; use true or false.');
  const overlapMs = integerOption(policy.overlapMs, 'refreshPolicy.overlapMs', 0, 0, MAX_MS);
  if (overlapMs > 0 && rotation !== 'rotate') {
    invalidValue('refreshPolicy.overlapMs', overlapMs, `: a window only applies to rotation 'rotate' (got '${rotation}').`);
  }
  return {
    rotation,
    reuseDetection,
    overlapMs,
    grantLifetimeMs: integerOption(policy.grantLifetimeMs, 'refreshPolicy.grantLifetimeMs', 0, 0, MAX_MS),
    idleLifetimeMs: integerOption(policy.idleLifetimeMs, 'refreshPolicy.idleLifetimeMs', 0, 0, MAX_MS),
  };
}

/**
 * Why `record` is refused for a refresh now, or `undefined` when it is accepted. A rotated-out token sent outside its
 * window is a reuse: counted, and with reuse detection its whole grant is revoked.
 */
export function refreshRefusal(ctx: Context, record: RefreshToken): string | undefined {
  const now = ctx.clock.now();
  const { grant } = record;
  const policy = ctx.refreshPolicy;
  if (grant.revoked) return 'The grant was revoked.';
  if (grant.endsAt !== undefined && now >= grant.endsAt) return 'The grant reached the end of its lifetime; authorize again.';
  if (policy.idleLifetimeMs > 0 && now - record.lastUsedAt >= policy.idleLifetimeMs) {
    return 'The refresh token expired unused (idle lifetime); authorize again.';
  }
  if (record.rotatedAt === undefined) return undefined;
  const inWindow =
    !record.retired && (policy.rotation === 'retain-until-used' || now < record.rotatedAt + policy.overlapMs);
  if (inWindow) return undefined;
  grant.reuseEvents++;
  ctx.stats.grants.reuseEvents++;
  if (policy.reuseDetection) revoke(ctx, record.grant);
  return policy.reuseDetection
    ? 'The refresh token was already used; the whole grant is now revoked (reuse detection).'
    : 'The refresh token was already used (tokens rotate on every refresh).';
}

/** A new grant (one consent), ending after the policy's grant lifetime. */
export function createGrant(ctx: Context, clientId: string, scopes: readonly string[]): Grant {
  const lifetime = ctx.refreshPolicy.grantLifetimeMs;
  return {
    id: randomId('grant'),
    clientId,
    scopes: [...scopes],
    revoked: false,
    ...(lifetime > 0 ? { endsAt: ctx.clock.now() + lifetime } : {}),
    tokenRequests: 0,
    reuseEvents: 0,
  };
}

/** Revokes every token of `grant` (counted once). */
export function revoke(ctx: Context, grant: Grant): void {
  if (grant.revoked) return;
  grant.revoked = true;
  ctx.stats.grants.revocations++;
}

/**
 * A refresh token was used: by a refresh, or through an access token issued with it. Its first use retires its
 * predecessor (`retain-until-used`); a refresh also restarts its idle time.
 */
export function markUsed(ctx: Context, record: RefreshToken, by: 'refresh' | 'access'): void {
  if (by === 'refresh') record.lastUsedAt = ctx.clock.now();
  if (record.predecessor !== undefined) {
    record.predecessor.retired = true;
    delete record.predecessor;
  }
}
