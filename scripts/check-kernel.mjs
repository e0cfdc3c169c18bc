// The kernel's rules, checked over the import graph of src/ (TypeScript's own import scanner: type-only imports and
// re-exports count too; no build needed). Run by `npm run lint` and .ci/run. Fails, naming each place, when:
// - a file outside src/core/ constructs `ValidationError` or a bare `PostSchedError` (input is refused through
//   src/core/invalid-option.ts: `invalidOption`, `invalidValue`, `integerOption`, `checkOptions`, `constructorOptions`, `refusal`);
// - src/core/ imports anything outside itself (the kernel is the bottom layer);
// - two files import each other, directly or around a loop;
// - two folders of src/ import each other, directly or around a loop (the top-level files count as one folder, ".").
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..');
/** The folder checked: src/ (another one as the argument, for the rules' own test). */
const SRC = process.argv[2] ?? join(ROOT, 'src');
const KERNEL = 'core';

const files = readdirSync(SRC, { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => file.split('\\').join('/'))
  .sort();
const known = new Set(files);
const folderOf = (file) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');

const problems = [];
/** file → the files of src/ it imports. */
const graph = new Map();
for (const file of files) {
  const text = readFileSync(join(SRC, file), 'utf8');
  const imported = new Set();
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    const target = fileName.startsWith('.') ? relative(SRC, join(SRC, dirname(file), fileName)).replace(/\.js$/, '.ts') : undefined;
    if (target === undefined) continue; // a package
    if (!known.has(target)) problems.push(`${file}: imports ${fileName}, which is no file of src/`);
    else imported.add(target);
  }
  graph.set(file, imported);
  if (folderOf(file) === KERNEL) {
    for (const target of imported) if (folderOf(target) !== KERNEL) problems.push(`src/${file}: the kernel imports src/${target}; src/core/ imports only itself`);
  } else {
    // Comments and strings aside: a construction is code.
    const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const [index, line] of code.split('\n').entries()) {
      if (/\bnew\s+(ValidationError|PostSchedError)\s*\(/.test(line)) {
        problems.push(`src/${file}:${index + 1}: \`${line.trim().slice(0, 80)}\`: refuse input through src/core/invalid-option.ts (invalidOption, refusal, …), not a new error here`);
      }
    }
  }
}

/** The strongly connected components of `edges` with more than one node: each is a loop of imports (Tarjan). */
function loops(edges) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const found = [];
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      for (let member; member !== node; ) component.push((member = stack.pop()));
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** One import of each step around the loop, so that the message says where to cut it. */
function describe(component, edges, show) {
  const members = new Set(component);
  const steps = [];
  for (const from of component) for (const to of edges.get(from) ?? []) if (members.has(to)) steps.push(`${show(from)} → ${show(to)}`);
  return steps.join(', ');
}

for (const component of loops(graph)) problems.push(`import cycle between files: ${describe(component, graph, (f) => `src/${f}`)}`);

const folders = new Map();
const via = new Map();
for (const [file, imported] of graph) {
  for (const target of imported) {
    const [from, to] = [folderOf(file), folderOf(target)];
    if (from === to) continue;
    if (!folders.has(from)) folders.set(from, new Set());
    folders.get(from).add(to);
    if (!via.has(`${from} ${to}`)) via.set(`${from} ${to}`, `src/${file} → src/${target}`);
  }
}
for (const component of loops(folders)) {
  const members = new Set(component);
  const steps = [];
  for (const from of component) for (const to of folders.get(from) ?? []) if (members.has(to)) steps.push(`${from}/ → ${to}/ (${via.get(`${from} ${to}`)})`);
  problems.push(`import cycle between folders: ${steps.join(', ')}`);
}

if (problems.length > 0) {
  console.error(`check-kernel: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`check-kernel: ${files.length} files of src/, no direct ValidationError/PostSchedError outside src/core/, no import cycle between files or folders`);
