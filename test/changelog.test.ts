/**
 * CHANGELOG.md is for users (Keep a Changelog): an `[Unreleased]` section on top, a section per release whose
 * version is package.json's or older, every breaking entry with its migration step, and nothing a user upgrading
 * cannot act on: no issue numbers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const CHANGELOG = readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8');
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const KINDS = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];

describe('CHANGELOG.md', () => {
  const releases = [...CHANGELOG.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => ({ name: m[1], date: m[2] }));

  it("opens with [Unreleased], then releases with a date, the newest being package.json's version", () => {
    expect(releases[0]).toEqual({ name: 'Unreleased', date: undefined });
    expect(releases.length).toBeGreaterThan(1);
    expect(releases[1]?.name).toBe(version);
    for (const release of releases.slice(1)) expect(release.date, release.name).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('sorts entries under the six kinds of Keep a Changelog only', () => {
    const kinds = [...CHANGELOG.matchAll(/^### (.*)$/gm)].map((m) => m[1]);
    expect(kinds.filter((kind) => !KINDS.includes(kind as string))).toEqual([]);
  });

  it('gives every breaking entry its migration step, and no issue numbers', () => {
    const entries = CHANGELOG.split(/\n(?=- )/).filter((entry) => entry.startsWith('- '));
    const breaking = entries.filter((entry) => /\*\*Breaking\b/.test(entry));
    expect(breaking.length).toBeGreaterThanOrEqual(10);
    expect(breaking.filter((entry) => !/Migration: /.test(entry)).map((entry) => entry.slice(0, 80))).toEqual([]);
    expect(CHANGELOG).not.toMatch(/\b[Ii]ssues? #?\d+|(?<![\w&])#\d+\b/);
  });
});
