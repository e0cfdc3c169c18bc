/**
 * Wire profiles: how the fake writes its answers to the resource routes (the `profile` option of
 * `createFakeService`). Only the serialised answer changes; the fake's state and behaviour are the same in all three.
 *
 * - `full`: every field the fake keeps, the SDK's assumptions included.
 * - `minimal`: only the fields the spec gives (src/resources/wire-contract.ts) and what a flow needs to go on: a
 *   page's `data` and `next_cursor` (left out on the last page), a media item's `id`.
 * - `noisy` (seeded): each assumed field is kept, left out, `null` or of another type; unknown status values,
 *   unknown fields and nested objects are added; key order is shuffled. The page envelope keeps `data` and a
 *   string `next_cursor`, so lists still walk.
 */
import { answers, fieldsOf } from '../../resources/wire-contract.js';

/** The answer profiles of the fake: see `FakeServiceOptions.profile`. */
export type WireProfile = 'full' | 'minimal' | 'noisy';

/** The profiles, for checks and CLIs. */
export const WIRE_PROFILES: readonly WireProfile[] = ['full', 'minimal', 'noisy'];

/** Which answer a route gives: one resource, or a page of them. */
export interface AnswerShape {
  kind: 'post' | 'account' | 'mediaItem' | 'postAnalytics';
  page?: boolean;
}

type Json = unknown;
type JsonObject = Record<string, Json>;

/** Fields `minimal` keeps beyond the given ones, because a flow cannot go on without them. */
const FLOW_FIELDS: Partial<Record<AnswerShape['kind'], readonly string[]>> = { mediaItem: ['id'] };

const UNKNOWN_STATUSES = ['queued_for_review', 'PUBLISHED', 'partially_published', 'archived'];
const UNKNOWN_FIELDS = ['meta', 'links', 'labels', 'x_trace', 'platform_data', 'reach', 'flags', 'version'];

/** Reshapes a JSON answer body for `profile`; `undefined` for `full` (nothing to do). */
export function answerShaper(profile: WireProfile, seed: number): ((body: Json, shape: AnswerShape) => Json) | undefined {
  if (profile === 'full') return undefined;
  if (profile === 'minimal') return (body, shape) => (shape.page === true ? minimalPage(body, shape) : minimalItem(body, shape));
  const random = mulberry32(seed);
  const noisy = new Noise(random);
  return (body, shape) => (shape.page === true ? noisy.page(body, shape) : noisy.item(body, shape));
}

function isObject(value: Json): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function minimalItem(body: Json, { kind }: AnswerShape): Json {
  if (!isObject(body)) return body;
  const keep = [...Object.keys(fieldsOf(answers[kind]).given), ...(FLOW_FIELDS[kind] ?? [])];
  return Object.fromEntries(keep.filter((key) => key in body).map((key) => [key, body[key]]));
}

function minimalPage(body: Json, shape: AnswerShape): Json {
  if (!isObject(body) || !Array.isArray(body.data)) return body;
  const page: JsonObject = { data: body.data.map((item) => minimalItem(item, shape)) };
  if (typeof body.next_cursor === 'string') page.next_cursor = body.next_cursor;
  return page;
}

/** mulberry32: a small seeded PRNG, so a noisy run can be replayed with its seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Noise {
  constructor(readonly random: () => number) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  item(body: Json, { kind }: AnswerShape): Json {
    if (!isObject(body)) return body;
    const { assumed } = fieldsOf(answers[kind]);
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(body)) {
      if (!(key in assumed)) out[key] = value; // given, or a field the client sent: as is
      else {
        const roll = this.random();
        if (roll < 0.2) continue; // left out
        if (roll < 0.4) out[key] = null;
        else if (roll < 0.6) out[key] = this.otherType(value);
        else if (key === 'status' && roll < 0.75) out[key] = this.pick(UNKNOWN_STATUSES);
        else out[key] = value;
      }
    }
    this.addUnknownFields(out);
    return this.shuffle(out);
  }

  page(body: Json, shape: AnswerShape): Json {
    if (!isObject(body) || !Array.isArray(body.data)) return body;
    const out: JsonObject = { ...body, data: body.data.map((item) => this.item(item, shape)) };
    if (body.next_cursor === null && this.random() < 0.5) delete out.next_cursor;
    this.addUnknownFields(out);
    return this.shuffle(out);
  }

  /** A value of another JSON type than `value`'s. */
  otherType(value: Json): Json {
    if (typeof value === 'string') return this.pick<Json>([42, true, { value }, [value]]);
    if (typeof value === 'number') return this.pick<Json>([String(value), false, { count: value }]);
    if (Array.isArray(value)) return this.pick<Json>([value.join(','), { items: value }, 7]);
    return this.pick<Json>(['other', 0]);
  }

  addUnknownFields(out: JsonObject): void {
    const count = 1 + Math.floor(this.random() * 3);
    for (let i = 0; i < count; i++) {
      const key = this.pick(UNKNOWN_FIELDS);
      if (!(key in out)) out[key] = this.value(0);
    }
  }

  /** Any JSON value, nested objects and arrays up to depth 3. */
  value(depth: number): Json {
    const roll = Math.floor(this.random() * (depth < 3 ? 7 : 5));
    switch (roll) {
      case 0:
        return null;
      case 1:
        return this.random() < 0.5;
      case 2:
        return Math.round(this.random() * 1e6) / 100;
      case 3:
        return `v${Math.floor(this.random() * 1e6).toString(36)}`;
      case 4:
        return '';
      case 5:
        return [this.value(depth + 1), this.value(depth + 1)];
      default:
        return { [this.pick(UNKNOWN_FIELDS)]: this.value(depth + 1), nested: this.value(depth + 1) };
    }
  }

  shuffle(out: JsonObject): JsonObject {
    const entries = Object.entries(out);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [entries[i], entries[j]] = [entries[j] as [string, Json], entries[i] as [string, Json]];
    }
    return Object.fromEntries(entries);
  }
}
