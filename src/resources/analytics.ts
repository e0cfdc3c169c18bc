/** Post-level analytics (scope analytics:read). */
import type { APIPromise } from '../http/api-promise.js';
import type { RequestOptions } from '../http/options.js';
import type { Pipeline } from '../http/request.js';
import { routes, withParse } from './routes.js';
import { answerParser } from './validate.js';
import { PostAnalyticsSchema } from './wire-contract.js';

/**
 * Counters of one post. The spec shows none of these fields: each is our assumption about the service and may be
 * absent; a value of another type (or `null`) is kept as sent. Fields the SDK does not know are kept too.
 */
export interface PostAnalytics {
  /** Assumed. The post these counters belong to. */
  post_id?: string | undefined;
  /** Assumed. Times the post was shown. */
  impressions?: number | undefined;
  /** Assumed. Likes (or the network's equivalent). */
  likes?: number | undefined;
  /** Assumed. Shares, reposts or boosts. */
  shares?: number | undefined;
  /** Assumed. Replies and comments. */
  comments?: number | undefined;
  /** Assumed. Clicks on the post's links. */
  clicks?: number | undefined;
  [field: string]: unknown;
}

// Nothing is given by the spec: any JSON object is a usable answer.
const parseAnalytics = /* @__PURE__ */ answerParser<PostAnalytics>('post analytics', PostAnalyticsSchema);

/**
 * `client.analytics`: post-level counters (scope `analytics:read`).
 *
 * @example
 * const { impressions, clicks } = await client.analytics.getPost('post_1')
 */
export class Analytics {
  readonly #pipeline: Pipeline;

  /** Not for you to build (the declarations say so: `new Analytics()` does not compile): use `client.analytics`. */
  private constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  /** Built by `PostSched`. @internal */
  static create(pipeline: Pipeline): Analytics {
    return new Analytics(pipeline);
  }

  /**
   * The analytics of one post.
   *
   * @example
   * const { impressions, clicks } = await client.analytics.getPost('post_1')
   */
  getPost(postId: string, options?: RequestOptions): APIPromise<PostAnalytics> {
    return this.#pipeline.request(() => withParse(routes.getPostAnalytics(postId), parseAnalytics, options));
  }
}
