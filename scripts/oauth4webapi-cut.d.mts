import type { Plugin } from 'esbuild';
export declare const withoutIdTokenCheck: Plugin;
