export function bundleSize(what: { file?: string; specifier?: string; conditions?: string[] }): Promise<{
  minBytes: number;
  gzipBytes: number;
}>;
