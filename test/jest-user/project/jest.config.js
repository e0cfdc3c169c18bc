// A user's jest set-up, as it is by default (CJS, no transform of node_modules). `msw` is the repository's msw@2.11.2
// (installed under the alias `msw-2.11.2`: the root's own msw is newer): from 2.11.3 on, msw itself requires ESM-only
// packages that CJS jest cannot load (docs/testing.md).
module.exports = {
  testEnvironment: 'node',
  moduleNameMapper: { '^msw(/.*)?$': 'msw-2.11.2$1' },
};
