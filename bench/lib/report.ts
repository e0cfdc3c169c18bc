/**
 * One benchmark result table: what was measured, one row per contender, and whether the target was met.
 * Ratios, not absolute times, carry the verdict: this machine is shared, so only numbers taken in the same
 * run are compared.
 */
export interface Row {
  name: string;
  /** The measured value, already formatted (e.g. "1.24 ms", "812,000 /s"). */
  value: string;
  /** Ratio against the section's baseline, formatted; empty for the baseline itself. */
  ratio?: string;
  note?: string;
}

/** One target and what decided it: a ratio measured in the same run, never an absolute time alone. */
export interface Verdict {
  /** The target, e.g. "posts.get ≤ 1.05x a plain ky GET (median latency)". */
  target: string;
  /** What was measured against it, e.g. "1.39x". */
  measured: string;
  met: boolean | undefined;
}

export interface Section {
  title: string;
  /** What the numbers are and how they were taken. */
  method: string;
  /** Label of the value column ("median", "events/s", …). */
  unit: string;
  rows: Row[];
  target: string;
  /** `true` met, `false` missed, `undefined` when it could not be decided. */
  met: boolean | undefined;
  /**
   * One line per target, each with the ratio that decided it; when given, they replace `target` and `met` in
   * the output (`met` should be their conjunction).
   */
  verdicts?: Verdict[];
  /** The 1-minute load average when the section was measured (bench/run.ts fills it in when absent). */
  loadAverage?: number;
  notes?: string[];
}

export function toMarkdown(sections: Section[], header: string): string {
  const out = [header, ''];
  for (const s of sections) {
    out.push(`## ${s.title}`, '', s.method, '');
    out.push(`| Contender | ${s.unit} | Ratio | Note |`, '|---|---:|---:|---|');
    for (const r of s.rows) out.push(`| ${r.name} | ${r.value} | ${r.ratio ?? ''} | ${r.note ?? ''} |`);
    out.push('');
    const verdicts = verdictLines(s);
    for (const line of verdicts) out.push(`${line}  `);
    if (verdicts.length > 0) out.push('');
    for (const n of s.notes ?? []) out.push(`- ${n}`);
    if ((s.notes ?? []).length > 0) out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

export function toConsole(s: Section): string {
  const w = Math.max(...s.rows.map((r) => r.name.length), 10);
  const lines = [`\n${s.title}`];
  for (const r of s.rows) {
    lines.push(`  ${r.name.padEnd(w)}  ${r.value.padStart(16)}  ${(r.ratio ?? '').padStart(8)}  ${r.note ?? ''}`);
  }
  for (const line of verdictLines(s)) lines.push(`  ${line.replaceAll('**', '')}`);
  for (const note of s.notes ?? []) lines.push(`  - ${note}`);
  return lines.join('\n');
}

/** Each verdict as one line: the target, what was measured, met or MISSED, and the load it was measured under. */
export function verdictLines(s: Section): string[] {
  const load = s.loadAverage === undefined ? '' : `; load average ${s.loadAverage.toFixed(2)}`;
  if (s.verdicts === undefined) return [`**Target:** ${s.target} — **${verdict(s.met)}**${load ? ` (${load.slice(2)})` : ''}`];
  return s.verdicts.map((v) => `**Target:** ${v.target} — measured ${v.measured}: **${verdict(v.met)}** (same run${load})`);
}

function verdict(met: boolean | undefined): string {
  return met === undefined ? 'not decided' : met ? 'met' : 'MISSED';
}

/** A verdict that is met when `ratio` is on the right side of `limit`. */
export function ratioVerdict(target: string, ratio: number, limit: number, direction: '≤' | '≥'): Verdict {
  return { target, measured: fmt.x(ratio), met: Number.isFinite(ratio) ? (direction === '≤' ? ratio <= limit : ratio >= limit) : undefined };
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  ms: (n: number) => `${n < 1 ? n.toFixed(3) : n.toFixed(2)} ms`,
  kb: (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`,
  mb: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`,
  x: (ratio: number) => `${ratio.toFixed(2)}x`,
};
