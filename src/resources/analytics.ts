/** Post-level analytics (scope analytics:read). */
import * as z from 'zod/mini';
import type { APIPromise } from '../http/api-promise.js';
import type { Pipeline, RequestOptions } from '../http/request.js';
import { routes } from './routes.js';
import { responseParser } from './validate.js';

/** Counters of one post. Fields the SDK does not know are kept. */
export interface PostAnalytics {
  /** The post these counters belong to. */
  post_id: string;
  /** Times the post was shown. */
  impressions: number;
  /** Likes (or the network's equivalent). */
  likes: number;
  /** Shares, reposts or boosts. */
  shares: number;
  /** Replies and comments. */
  comments: number;
  /** Clicks on the post's links. */
  clicks: number;
  [field: string]: unknown;
}

// Module-level schemas are built in `/* @__PURE__ */` IIFEs: the build puts the SDK in one chunk, and this lets a
// user's bundler drop them when this resource is not imported (see inspectAs in oauth/inspect.ts).
// The shape answers are checked against (zod/mini): required known fields, unknown fields kept.
const PostAnalyticsSchema = /* @__PURE__ */ (() => z.looseObject({
  post_id: z.string(),
  impressions: z.number(),
  likes: z.number(),
  shares: z.number(),
  comments: z.number(),
  clicks: z.number(),
}))();

const parseAnalytics = /* @__PURE__ */ (() => responseParser<PostAnalytics>(PostAnalyticsSchema, 'post analytics'))();

/**
 * `client.analytics`: post-level counters (scope `analytics:read`).
 *
 * @example
 * const { impressions, clicks } = await client.analytics.getPost('post_1')
 */
export class Analytics {
  readonly #pipeline: Pipeline;

  /** Built by `PostSched`; use `client.analytics`. @internal */
  constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /**
   * The analytics of one post.
   *
   * @example
   * const { impressions, clicks } = await client.analytics.getPost('post_1')
   */
  getPost(postId: string, options?: RequestOptions): APIPromise<PostAnalytics> {
    return this.#pipeline.request(() => ({ ...routes.getPostAnalytics(postId), parse: parseAnalytics, options }));
  }
}
