/**
 * The two Lua scripts of the token lock. A script runs atomically on the server, so "is the lock still mine"
 * and the action it guards cannot be split by another client (the single-instance pattern of the Redis
 * docs, https://redis.io/docs/latest/develop/use/patterns/distributed-locks/).
 */
import { defineScript } from './redis-connection.js';

/**
 * Release: delete the lock only if it still holds our owner token. A plain DEL would free a lock that
 * expired and was taken by another process meanwhile.
 * KEYS[1] lock key; ARGV[1] owner token. Returns 1 when released, 0 when it was no longer ours.
 */
export const RELEASE_LOCK = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);

/**
 * Compare-and-set: write the tokens only while the lock holds our owner token, so a holder whose lock
 * expired (it stalled past the TTL) cannot overwrite tokens a later holder already refreshed.
 * KEYS[1] lock key, KEYS[2] token key; ARGV[1] owner token, ARGV[2] stored value. Returns 1 or 0.
 */
export const SET_IF_LOCK_OWNER = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[2])
  return 1
end
return 0
`);

/**
 * Extend: push the lock's expiry out again while it is still ours, so a live holder whose refresh is slow
 * keeps the lock, and only a dead (or stalled) one loses it after `lockTtlMs`.
 * KEYS[1] lock key; ARGV[1] owner token, ARGV[2] TTL in ms. Returns 1, or 0 when the lock is not ours.
 */
export const EXTEND_LOCK = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`);
