#!/usr/bin/env node
/** The `postsched` executable (package.json "bin"; Node only). */
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
