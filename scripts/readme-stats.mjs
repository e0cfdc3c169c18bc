#!/usr/bin/env node
// The README's size for a reader: prose words outside code blocks and inline code, and the share of its bytes that
// is code: fenced code blocks (the share the check holds), and with inline code spans too.
// `--check` fails past the targets: 3,500 prose words, 30% of the bytes in code blocks.
//   node scripts/readme-stats.mjs [--check] [file]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Words: whitespace-separated tokens holding a letter or digit (table pipes and lone punctuation are not words). */
export function readmeStats(markdown) {
  const bytes = Buffer.byteLength(markdown);
  let blockBytes = 0;
  let inlineBytes = 0;
  const withoutBlocks = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[ \t]*$/gm, (block) => {
    blockBytes += Buffer.byteLength(block);
    return ' ';
  });
  const prose = withoutBlocks.replace(/(`+)[\s\S]*?\1/g, (span) => {
    inlineBytes += Buffer.byteLength(span);
    return ' ';
  });
  const words = prose
    .replace(/\]\([^)\s]*\)/g, ']') // a link's target is not read
    .split(/\s+/)
    .filter((token) => /[\p{L}\p{N}]/u.test(token)).length;
  return { bytes, blockShare: blockBytes / bytes, codeShare: (blockBytes + inlineBytes) / bytes, proseWords: words, lines: markdown.split('\n').length };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--')) ?? fileURLToPath(new URL('../README.md', import.meta.url));
  const stats = readmeStats(readFileSync(file, 'utf8'));
  const pct = (share) => `${(share * 100).toFixed(1)}%`;
  console.log(
    `${file}: ${stats.proseWords} prose words (outside code blocks and inline code); ${(stats.bytes / 1024).toFixed(1)} KB, ` +
      `${pct(stats.blockShare)} in code blocks (${pct(stats.codeShare)} with inline code); ${stats.lines} lines`,
  );
  if (args.includes('--check')) {
    const problems = [];
    if (stats.proseWords > 3500) problems.push(`${stats.proseWords} prose words, at most 3,500`);
    if (stats.blockShare < 0.3) problems.push(`${pct(stats.blockShare)} of the bytes in code blocks, at least 30%`);
    if (problems.length > 0) {
      console.error(`README.md is past its targets: ${problems.join('; ')}. Move details to docs/ and link them.`);
      process.exitCode = 1;
    }
  }
}
