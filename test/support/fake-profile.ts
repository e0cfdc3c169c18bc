/**
 * The wire profile of the fake in this vitest project: vitest.config.ts runs the integration tests, the example
 * tests and the demo once per profile (`full`, `minimal`, `noisy`) through POSTSCHED_FAKE_PROFILE. Tests pass
 * `FAKE_PROFILE_OPTIONS` to `createFakeService`; an assertion on a field the spec does not give holds only under
 * `full` (`FULL`), since the other profiles leave it out or garble it on purpose.
 */
import type { WireProfile } from '@postsched/sdk/testing';

const profiles: readonly WireProfile[] = ['full', 'minimal', 'noisy'];
const fromEnv = process.env['POSTSCHED_FAKE_PROFILE'] ?? 'full';
if (!(profiles as readonly string[]).includes(fromEnv)) throw new Error(`POSTSCHED_FAKE_PROFILE must be one of ${profiles.join(', ')}`);

export const FAKE_PROFILE = fromEnv as WireProfile;
/** Replay a noisy run with POSTSCHED_FAKE_SEED=<n>. */
export const FAKE_SEED = Number(process.env['POSTSCHED_FAKE_SEED'] ?? 1);
export const FAKE_PROFILE_OPTIONS = { profile: FAKE_PROFILE, seed: FAKE_SEED } as const;
/** Answers carry every assumed field as the fake keeps it. */
export const FULL = FAKE_PROFILE === 'full';
