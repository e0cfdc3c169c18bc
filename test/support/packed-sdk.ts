/**
 * The SDK as `npm pack` packs it, built by tsup.config.ts (without declarations), unpacked into a project's
 * node_modules/@postsched/sdk: what a user's project installs. Its dependencies (zod) and the project's own (express,
 * pg, jest, tsx) resolve from the repository's node_modules, above the project in .tmp/, so nothing is fetched.
 */
import { execFile as execFileCb } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build as tsup } from 'tsup';
import { tsupConfigs } from '../../scripts/bundle-size.mjs';
import { ROOT } from './processes.js';

const execFile = promisify(execFileCb);

/** Builds and packs the package in `work`, and unpacks it into `project`'s node_modules. */
export async function installPackedSdk(work: string, project: string): Promise<void> {
  const pkg = join(work, 'package');
  mkdirSync(pkg, { recursive: true });
  // The package's builds (not the `postsched` executable), into pkg/dist, from the repository's root as tsup runs.
  for (const config of await tsupConfigs(work)) {
    if (config.platform === 'node') continue;
    await tsup({ ...config, config: false, dts: false, clean: false, silent: true, outDir: join(pkg, 'dist') });
  }
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  const { stdout } = await execFile('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: pkg });
  const tarball = join(work, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  const installed = join(project, 'node_modules/@postsched/sdk');
  mkdirSync(installed, { recursive: true });
  await execFile('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
}
