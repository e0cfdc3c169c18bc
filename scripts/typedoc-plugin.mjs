// TypeDoc plugin for `npm run docs`:
// - names each module after the import path users type (`@postsched/sdk/webhooks`), not after its file;
// - leaves out PostSchedError's `[Symbol.hasInstance]` static: it is the machinery of cross-copy `instanceof`
//   (explained on PostSchedError), not something a user calls or reads (the classes' `id` is `@internal`).
import { Converter, ReflectionKind } from 'typedoc';

const MODULE_NAMES = {
  index: '@postsched/sdk',
  webhooks: '@postsched/sdk/webhooks',
  testing: '@postsched/sdk/testing',
  redis: '@postsched/sdk/redis',
  postgres: '@postsched/sdk/postgres',
  schedule: '@postsched/sdk/schedule',
};
const HIDDEN_STATICS = new Set(['[hasInstance]']);

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const { project } = context;
    for (const module of project.getChildrenByKind(ReflectionKind.Module)) {
      module.name = MODULE_NAMES[module.name] ?? module.name;
    }
    for (const member of project.getReflectionsByKind(ReflectionKind.Property | ReflectionKind.Method)) {
      if (HIDDEN_STATICS.has(member.name) && member.flags.isStatic) project.removeReflection(member);
    }
  });
}
