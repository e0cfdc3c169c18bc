/**
 * The baseline every request measure compares `posts.get` with: a plain ky GET of the same URL with default options,
 * sending the same token. One definition, so the latency, throughput, cpu-profile and compare-builds measures all
 * judge against the same call (and a child process can load it without the peers' SDKs).
 */
import ky from 'ky';

/** The access token every contender sends. */
export const BENCH_TOKEN = 'tok_bench_0123456789';

/** The headers of the bare contenders (the floor, ky alone): the token, and JSON wanted. */
export const BENCH_HEADERS = { authorization: `Bearer ${BENCH_TOKEN}`, accept: 'application/json' } as const;

/** `ky.get(url).json()` of the post the loopback JSON server answers, with ky's default options. */
export function kyAlone(origin: string): () => Promise<{ id: string }> {
  const url = `${origin}/posts/p_1`;
  return () => ky.get(url, { headers: BENCH_HEADERS }).json<{ id: string }>();
}
