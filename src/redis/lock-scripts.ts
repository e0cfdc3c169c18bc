/**
 * The Lua scripts of the Redis parts: the token lock's take, release, extension and lock-guarded write (RedisTokenStore),
 * the compare-and-set of a stored value (RedisTokenStore's `set`, rotateTokenEncryption), and the release of a
 * webhook claim (RedisWebhookDedupe, the claim id as owner). A script runs atomically on the server, so "is the lock
 * still mine" and the action it guards cannot be split by another client (the single-instance pattern of the Redis
 * docs, https://redis.io/docs/latest/develop/use/patterns/distributed-locks/).
 */
import { defineScript } from './redis-connection.js';

/**
 * Take: the lock when free, or already ours (a take whose answer was lost and that the client sent again after a
 * reconnect, as ioredis does by default: its first copy took the lock), and the note of the lease before it.
 * KEYS[1] lock key, KEYS[2] holder note; ARGV[1] owner token, ARGV[2] TTL in ms, ARGV[3] the note's TTL in ms.
 * Returns 0 when held by another, 1 when taken from a released lease, 2 when from one that expired unreleased (its
 * note, which a release deletes, is still there).
 */
export const TAKE_LOCK = defineScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
local before = redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3], 'GET')
if before and before ~= ARGV[1] then return 2 end
return 1
`);

/**
 * Release: delete the lock only if it still holds our owner token (a plain DEL would free a lock that expired and
 * was taken by another process meanwhile), with the note of its holder (`RedisTokenStore`: a lease released).
 * KEYS[1] lock key, KEYS[2] the holder note where there is one (a webhook claim has none); ARGV[1] owner token.
 * Returns 1 when released, 0 when it was no longer ours.
 */
export const RELEASE_LOCK = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', unpack(KEYS))
  return 1
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

/**
 * Compare-and-set on the stored value itself: write only if the key still holds exactly what the store just read
 * (or still nothing, when ARGV[3] is '1'). The store decides from the decoded tokens whether the write is allowed
 * (TokenStoreSetOptions.expectedRefreshToken); this makes the decision and the write one atomic step, so a late
 * or repeated write can never put older tokens over a newer rotation. No format change: older SDK versions
 * sharing the key read and write it as before.
 * KEYS[1] token key, KEYS[2] (RedisTokenStore) its mark `${key}:reconnect`: a write over nothing is refused while it
 * says the tokens were removed on purpose (`"of":""`, see REMOVE_TOKENS); ARGV[1] value read, ARGV[2] value to write,
 * ARGV[3] '1' when nothing was stored. Returns 1 or 0.
 */
export const SET_IF_UNCHANGED = defineScript(`
local current = redis.call('GET', KEYS[1])
if ARGV[3] == '1' then
  if current then return 0 end
  if KEYS[2] then
    local mark = redis.call('GET', KEYS[2])
    if mark and string.find(mark, '"of":""', 1, true) then return 0 end
  end
elseif current ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`);

/**
 * RedisTokenStore's plain write (a new sign-in): the tokens, and the mark cleared.
 * KEYS[1] token key, KEYS[2] its mark; ARGV[1] value. Returns 1.
 */
export const WRITE_TOKENS = defineScript(`
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
`);

/**
 * RedisTokenStore's mark of a dead grant: set only while the key holds exactly the refused value and no mark of that
 * value stands. The mark names the value it is about (`"of":"<SHA-1 of the value>"`): a later write of tokens makes it
 * stale without touching it (a save costs no command for the mark), and a reader ignores a stale one.
 * KEYS[1] token key, KEYS[2] its mark; ARGV[1] the refused value, ARGV[2] the mark (JSON), ARGV[3] its `"of":"…"`.
 * Returns 1 when set, else 0.
 */
export const MARK_IF_UNCHANGED = defineScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local mark = redis.call('GET', KEYS[2])
if mark and string.find(mark, ARGV[3], 1, true) then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
`);

/**
 * RedisTokenStore's removal of the tokens (a disconnect): the value deleted, the mark (reason no_tokens, `"of":""`: of
 * no value) left. KEYS[1] token key, KEYS[2] its mark; ARGV[1] the mark (JSON). Returns 1.
 */
export const REMOVE_TOKENS = defineScript(`
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1])
return 1
`);
