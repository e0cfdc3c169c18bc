import type { Plugin } from 'esbuild';
export declare const withoutIdTokenCheck: Plugin;
export declare const withoutOauthUnusedOptions: Plugin;
export declare const withoutKyProgress: Plugin;
export declare const withoutKyUnusedOptions: Plugin;
export declare const DEPENDENCY_CUTS: Plugin[];
