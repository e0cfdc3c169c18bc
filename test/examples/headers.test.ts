/**
 * Every example runs as copied (the guide): its header names every install it needs, `tsx` included when it says
 * `npx tsx`, and every package it imports.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';

const dir = new URL('../../examples/', import.meta.url);
// demo.ts runs in a clone of this repository (`npm run demo`), where everything is installed.
const examples = readdirSync(dir).filter((name) => name.endsWith('.ts') && name !== 'demo.ts');

describe('example headers', () => {
  it.each(examples)('%s names every install it needs', (name) => {
    const source = readFileSync(new URL(name, dir), 'utf8');
    const header = source.slice(0, source.indexOf('*/'));
    const installed = new Set(
      [...header.matchAll(/npm install ([^#\n]+)/g)].flatMap(([, names]) => names!.split(/\s+|&&/).filter((word) => word !== '' && !word.startsWith('-'))),
    );
    const imported = [...source.matchAll(/^(?:import|export)[^;]*? from '([^'.][^']*)'/gm)]
      .map(([, specifier]) => specifier!)
      .filter((specifier) => !specifier.startsWith('node:'))
      .map((specifier) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!));
    const needed = [...new Set(['@postsched/sdk', ...imported, ...(header.includes('npx tsx') ? ['tsx'] : [])])];
    expect(needed.filter((pkg) => !installed.has(pkg))).toEqual([]);
  });

  // `npm init -y` makes a CommonJS project, where `npx tsx` compiles the file to CommonJS: a top-level await fails
  // there ("Top-level await is currently not supported with the cjs output format") before the example starts.
  it.each(examples)('%s runs in the CommonJS project npm init makes (no top-level await)', (name) => {
    const source = readFileSync(new URL(name, dir), 'utf8');
    expect(() => transformSync(source, { loader: 'ts', format: 'cjs', logLevel: 'silent' })).not.toThrow();
  });
});
