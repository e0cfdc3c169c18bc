/**
 * A real PostgreSQL server for one test file, started by test/support/postgres-process.ts with the binaries the test
 * set-up provides (test/support/test-tools.ts): POSTGRES_BIN_DIR, the PATH, Debian's /usr/lib/postgresql/<v>/bin, or
 * installed from Debian's `postgresql` package on a fresh machine.
 */
import { inject } from 'vitest';
import { type PostgresServer, startPostgresProcess } from '../support/postgres-process.js';

export type { PostgresServer };

export function startPostgresServer(): Promise<PostgresServer> {
  return startPostgresProcess(inject('postgresBinDir'));
}
