export interface BundleWhat {
  file?: string;
  specifier?: string;
  names?: string[];
  conditions?: string[];
  plugins?: import('esbuild').Plugin[];
  platform?: 'browser' | 'node';
  external?: string[];
}
export const STUB_ERROR_CLASSES: import('esbuild').Plugin;
export function bundleSize(what: BundleWhat): Promise<{ minBytes: number; gzipBytes: number }>;
export function bundleBreakdown(
  what: BundleWhat,
  groupOf: (path: string) => string,
): Promise<{ minBytes: number; gzipBytes: number; groups: { name: string; minBytes: number; gzipBytes: number }[] }>;
export const USER_BUNDLES: {
  label: string;
  file: string;
  names?: string[];
  target: number;
  breakdown: 'dependency' | 'file';
}[];
export const DEPENDENCIES: string[];
export function groupOf(kind: 'dependency' | 'file'): (path: string) => string;
export function buildWithSourceMaps(outDir?: string): Promise<string>;
export function tsupConfigs(tmpDir?: string): Promise<import('tsup').Options[]>;
