/**
 * `@postsched/sdk/schedule`: post at the user's local time. Wall-clock times in an IANA time zone become the
 * instants the service takes as `publish_at`, right across DST, with Temporal's semantics for the times that do
 * not exist or happen twice. Web standards only (`Intl.DateTimeFormat` reads the runtime's own time-zone data),
 * and nothing of the HTTP or OAuth parts.
 */
export { atLocalTime, type AtLocalTimeOptions, type Disambiguation } from './local-time.js';
export { weeklySlots, type Weekday, type WeeklySlotsOptions } from './weekly-slots.js';
