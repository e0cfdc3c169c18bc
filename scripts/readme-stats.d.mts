export function readmeStats(markdown: string): { bytes: number; blockShare: number; codeShare: number; proseWords: number; lines: number };
