/**
 * The fake's clock. Everything time-based in the fake (token and code expiry, publication at `publish_at`,
 * webhook retry backoff, idempotency-key expiry) reads this clock and schedules work on it, so a test can
 * move time forward deterministically instead of sleeping.
 */

/** A unit of work due at an instant of the fake's clock. */
interface ClockTask {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void | Promise<void>;
}

/**
 * The fake service's controllable clock.
 *
 * In `manual` mode (the default) time stands still until `advance()` or `set()` moves it; every task due on
 * the way runs in order, and the call resolves once they (and the webhook deliveries they start) settled.
 * In `real` mode time follows `Date.now()` and due tasks run on timers, which is what the demo wants;
 * `advance()` still jumps ahead (to let a token expire without waiting an hour).
 *
 * @example
 * const fake = createFakeService();
 * await fake.clock.advance(3_600_000); // access tokens issued before are now expired
 */
export interface FakeClock {
  /** The fake's current time, in epoch milliseconds. */
  now(): number;
  /** Moves time forward by `ms`, running every publication and webhook retry that falls due on the way. */
  advance(ms: number): Promise<void>;
  /** Moves time forward to `date` (it cannot go back: expiries and schedules would stop making sense). */
  set(date: Date | number): Promise<void>;
  /** `'manual'` (time moves only when told) or `'real'` (time follows the wall clock). */
  readonly mode: 'manual' | 'real';
}

/** How the fake's clock runs: `'manual'` (default) or `'real'`; `start` sets the initial time of a manual clock. */
export interface ClockOptions {
  mode?: 'manual' | 'real';
  /** Initial time of a manual clock. Default: the real time when the fake is created. */
  start?: Date | number;
}

/** The clock plus the scheduling side that only the fake itself uses. */
export class Scheduler implements FakeClock {
  readonly mode: 'manual' | 'real';
  #manualNow: number;
  #offset = 0;
  #tasks: ClockTask[] = [];
  #seq = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Awaited before and after each step so async work started by a task (a delivery) finishes in order. */
  readonly #settle: () => Promise<void>;

  constructor(options: ClockOptions, settle: () => Promise<void>) {
    this.mode = options.mode ?? 'manual';
    this.#manualNow = options.start === undefined ? Date.now() : +options.start;
    this.#settle = settle;
  }

  now(): number {
    return this.mode === 'real' ? Date.now() + this.#offset : this.#manualNow;
  }

  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new RangeError(`clock.advance(ms) needs a finite number >= 0 of milliseconds; got ${String(ms)}`);
    }
    await this.#moveTo(this.now() + ms);
  }

  async set(date: Date | number): Promise<void> {
    const target = +date;
    if (!Number.isFinite(target)) throw new RangeError('clock.set(date) needs a valid Date or epoch milliseconds');
    if (target < this.now()) {
      throw new RangeError('clock.set(date) cannot move the fake clock backwards; create a new fake instead');
    }
    await this.#moveTo(target);
  }

  /** Runs `run` when the clock reaches `at` (immediately on the next step when `at` is already past). */
  schedule(at: number, run: () => void | Promise<void>): void {
    if (this.#closed) return;
    this.#tasks.push({ at, seq: this.#seq++, run });
    this.#tasks.sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.#arm();
  }

  /** Stops the real-mode timer and drops every pending task. */
  close(): void {
    this.#closed = true;
    this.#tasks = [];
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #moveTo(target: number): Promise<void> {
    await this.#settle();
    // Step task by task so that work scheduled by a task (a retry) runs too when it falls before `target`.
    for (let next = this.#tasks[0]; next !== undefined && next.at <= target; next = this.#tasks[0]) {
      this.#setNow(Math.max(next.at, this.now()));
      await this.#runDue();
    }
    this.#setNow(Math.max(target, this.now()));
    await this.#runDue();
  }

  #setNow(t: number): void {
    if (this.mode === 'real') this.#offset += t - this.now();
    else this.#manualNow = t;
  }

  async #runDue(): Promise<void> {
    const now = this.now();
    const due: ClockTask[] = [];
    while (this.#tasks[0] !== undefined && this.#tasks[0].at <= now) due.push(this.#tasks.shift() as ClockTask);
    await Promise.all(due.map(async (task) => task.run()));
    await this.#settle();
    this.#arm();
  }

  #arm(): void {
    if (this.mode !== 'real' || this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const next = this.#tasks[0];
    if (next === undefined) return;
    // Timers are capped at ~24.8 days; re-arming on wake-up covers longer waits.
    const delay = Math.min(Math.max(0, next.at - this.now()), 2 ** 31 - 1);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#runDue();
    }, delay);
    // A pending publication must not keep a demo process alive after it is done (Node only; optional chaining).
    (this.#timer as { unref?: () => void }).unref?.();
  }
}
