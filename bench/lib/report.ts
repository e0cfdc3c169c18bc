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
  notes?: string[];
}

export function toMarkdown(sections: Section[], header: string): string {
  const out = [header, ''];
  for (const s of sections) {
    out.push(`## ${s.title}`, '', s.method, '');
    out.push(`| Contender | ${s.unit} | Ratio | Note |`, '|---|---:|---:|---|');
    for (const r of s.rows) out.push(`| ${r.name} | ${r.value} | ${r.ratio ?? ''} | ${r.note ?? ''} |`);
    out.push('', `**Target:** ${s.target} — **${verdict(s.met)}**`, '');
    for (const n of s.notes ?? []) out.push(`- ${n}`);
    if ((s.notes ?? []).length > 0) out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

export function toConsole(s: Section): string {
  const w = Math.max(...s.rows.map((r) => r.name.length), 10);
  const lines = [`\n${s.title}  [${verdict(s.met)}: ${s.target}]`];
  for (const r of s.rows) {
    lines.push(`  ${r.name.padEnd(w)}  ${r.value.padStart(16)}  ${(r.ratio ?? '').padStart(8)}  ${r.note ?? ''}`);
  }
  return lines.join('\n');
}

function verdict(met: boolean | undefined): string {
  return met === undefined ? 'not decided' : met ? 'met' : 'MISSED';
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  ms: (n: number) => `${n < 1 ? n.toFixed(3) : n.toFixed(2)} ms`,
  kb: (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`,
  mb: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`,
  x: (ratio: number) => `${ratio.toFixed(2)}x`,
};
