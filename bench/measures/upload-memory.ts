/**
 * Peak memory while uploading a 256 MB file from disk to the fake service on loopback: RSS before the
 * upload against the peak RSS during it, in a child process (so the fake, running here, is not counted).
 * The floor is the same upload with a bare fetch of a streamed body.
 */
import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createFakeService } from '@postsched/sdk/testing';
import { fmt, type Section } from '../lib/report.js';

const FILE_SIZE = 256 * 1024 * 1024;
const LIMIT = 64 * 1024 * 1024;

type Result = { before: number; peak: number; size: number };

function writeFile(path: string): void {
  const block = new Uint8Array(1024 * 1024);
  for (let i = 0; i < block.length; i++) block[i] = (i * 31 + 7) & 0xff;
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < FILE_SIZE; written += block.length) writeSync(fd, block);
  } finally {
    closeSync(fd);
  }
}

type Mode = 'ours' | 'floor' | 'floor-no-redirect';

async function runChild(mode: Mode, url: string, token: string, path: string): Promise<Result> {
  const script = new URL('../children/upload.ts', import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, mode, url, token, path], {
    maxBuffer: 1024 * 1024,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Result;
  if (result.size !== FILE_SIZE) throw new Error(`${mode}: the fake received ${result.size} bytes, not ${FILE_SIZE}`);
  return result;
}

export async function measureUploadMemory({ quick }: { quick: boolean }): Promise<Section> {
  const dir = mkdtempSync(join(tmpdir(), 'postsched-bench-'));
  const path = join(dir, 'big.bin');
  const fake = createFakeService({ media: { keepBytes: 1024 } });
  try {
    writeFile(path);
    const { url } = await fake.listen();
    const { access_token: token } = fake.issueTokens({ scopes: ['media:write'] });
    const runs = quick ? 1 : 3;
    const growth: Record<Mode, number[]> = { ours: [], floor: [], 'floor-no-redirect': [] };
    for (let i = 0; i < runs; i++) {
      for (const mode of ['floor', 'floor-no-redirect', 'ours'] as const) {
        const r = await runChild(mode, url, token, path);
        growth[mode].push(r.peak - r.before);
      }
    }
    const worst = (a: number[]) => Math.max(...a);
    return {
      title: 'Peak memory uploading a 256 MB file',
      method:
        `A 256 MB file on disk uploaded to the fake service on 127.0.0.1 (\`media.upload\` of \`fs.createReadStream\`), ` +
        `in a child process: peak RSS during the upload (sampled every 5 ms, and the kernel's maxRSS) minus RSS ` +
        `before it; worst of ${runs} run(s). Floor: bare \`fetch\` of the same multipart bytes as a stream.`,
      notes: [
        "Node 20's fetch clones a request unless its redirect mode is 'error' (Fetch standard, HTTP-network-or-cache " +
          'fetch), and the clone tees a streamed body: the idle branch queues the whole file. The SDK sends uploads ' +
          "with `redirect: 'error'` (a stream cannot follow a 307/308 anyway).",
      ],
      unit: 'RSS growth',
      rows: [
        { name: 'floor: fetch of a streamed body', value: fmt.mb(worst(growth.floor)), note: "fetch's default redirect: 'follow'" },
        { name: "floor with redirect: 'error'", value: fmt.mb(worst(growth['floor-no-redirect'])) },
        { name: '@postsched/sdk media.upload', value: fmt.mb(worst(growth.ours)), note: `file ${fmt.mb(FILE_SIZE)}` },
        { name: 'openai-node, stripe-node', value: 'n/a', note: 'no equivalent call: their uploads go to their own APIs' },
      ],
      target: 'grows by ≤ 64 MB (the file is streamed)',
      met: worst(growth.ours) <= LIMIT,
    };
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
