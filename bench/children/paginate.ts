/**
 * Child process of the pagination-heap measure (run with --expose-gc): walks every post of the list with
 * `for await`, and after a forced GC samples the heap before the walk and, every `sampleEvery` pages, in the
 * middle of a page (all samples are printed). Also measures the heap one parsed page holds. Prints JSON on stdout.
 * `node --expose-gc --import tsx paginate.ts <ours|floor> <baseUrl> <pageSize> <sampleEvery>`
 * `floor` walks the same pages with bare fetch + JSON.parse in an async generator.
 */
import { PostSched } from '@postsched/sdk';

const [mode, baseUrl, pageSizeArg, sampleEveryArg] = process.argv.slice(2) as [string, string, string, string];
const pageSize = Number(pageSizeArg);
const sampleEvery = Number(sampleEveryArg);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
/**
 * heapUsed after a full GC. The event loop turns once between two GCs so that FinalizationRegistry
 * clean-ups run (undici registers every Request that has a signal): without it, their cells linger and read
 * as a slow leak that a real program, whose loop turns, never has.
 */
const heap = async () => {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 5));
  gc();
  return process.memoryUsage().heapUsed;
};

type Item = { id: string };
const client = new PostSched({ baseUrl, auth: 'tok_bench' });

async function* floorWalk(limit = Infinity): AsyncGenerator<Item> {
  let cursor: string | null = null;
  let left = limit;
  do {
    const query: string = cursor === null ? '' : `&cursor=${cursor}`;
    const response = await fetch(`${baseUrl}/posts?limit=${pageSize}${query}`, { headers: { authorization: 'Bearer tok_bench' } });
    const page = JSON.parse(await response.text()) as { data: Item[]; next_cursor: string | null };
    for (const item of page.data) {
      if (left-- <= 0) return;
      yield item;
    }
    cursor = page.next_cursor;
  } while (cursor !== null);
}

const walk = (limit?: number): AsyncIterable<Item> =>
  mode === 'floor' ? floorWalk(limit) : client.posts.list(limit === undefined ? { pageSize } : { pageSize, limit });

// Warm-up over 200 pages (modules, JIT tiers, connection), then what one page costs to hold.
for await (const item of walk(200 * pageSize)) if (item.id === '') throw new Error('empty id');
// Ten pages held at once, for a figure above the GC's noise.
const held: Item[] = [];
await heap();
const empty = await heap();
for await (const item of walk(10 * pageSize)) held.push(item);
const onePage = ((await heap()) - empty) / 10;
if (held.length !== 10 * pageSize) throw new Error('the held pages were short');
held.length = 0;

const before = await heap();
const samples: number[] = [];
let count = 0;
for await (const item of walk()) {
  if (item.id !== `post_${count}`) throw new Error(`item ${count} is ${item.id}`);
  count++;
  // Mid-page: this page is held by the loop, the next is not fetched yet.
  if (count % pageSize === pageSize / 2 && Math.floor(count / pageSize) % sampleEvery === 0) samples.push(await heap());
}
const after = await heap();
process.stdout.write(`${JSON.stringify({ count, before, samples, after, onePage })}\n`);
