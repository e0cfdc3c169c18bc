/**
 * Two figures of issue 22, printed for the closing note: how many files of src/ (and of ky) one warm `posts.get`
 * runs code in (V8 precise coverage, function granularity, over a GET against a loopback server), and how many names
 * the main entry exports (values and types, by the TypeScript checker; the ones the webhook entry exports too).
 * `npx tsx scripts/surface.ts`
 */
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

async function filesPerGet(): Promise<{ src: string[]; ky: string[] }> {
  const server = createServer((_, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"id":"p_1","account_ids":["acc_1"]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const { PostSched } = await import('../src/index.node.js');
  const client = new PostSched({ baseUrl: `http://127.0.0.1:${port}`, auth: 'tok_0123456789', maxRetries: 2 });
  for (let i = 0; i < 5; i++) await client.posts.get('p_1'); // warm: lazy loads and first-call paths done
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage'); // resets the counts
  await client.posts.get('p_1');
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();
  server.close();
  const ran = result
    .filter((script) => script.functions.some((fn) => fn.ranges.some((range) => range.count > 0)))
    .map((script) => script.url)
    .filter((url) => url.startsWith('file:'))
    .map((url) => relative(root, fileURLToPath(url)));
  return {
    src: ran.filter((path) => path.startsWith('src/')).sort(),
    ky: ran.filter((path) => path.includes('node_modules/ky/')).sort(),
  };
}

function exportedNames(entry: string): { values: string[]; types: string[] } {
  const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(entry)!;
  const symbol = checker.getSymbolAtLocation(file)!;
  const values: string[] = [];
  const types: string[] = [];
  for (const exported of checker.getExportsOfModule(symbol)) {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    (target.flags & ts.SymbolFlags.Value ? values : types).push(exported.name);
  }
  return { values: values.sort(), types: types.sort() };
}

const get = await filesPerGet();
console.log(`Files one warm posts.get runs code in: ${get.src.length} of src/, ${get.ky.length} of ky`);
for (const path of [...get.src, ...get.ky]) console.log(`  ${path}`);
const main = exportedNames(`${root}src/index.ts`);
const webhooks = exportedNames(`${root}src/webhooks/index.ts`);
const webhookNames = new Set([...webhooks.values, ...webhooks.types]);
const all = [...main.values, ...main.types];
console.log(
  `\nNames the main entry exports: ${all.length} (${main.values.length} values, ${main.types.length} types); ` +
    `${all.filter((name) => webhookNames.has(name)).length} of them also in @postsched/sdk/webhooks`,
);
console.log(`  values: ${main.values.join(', ')}`);
console.log(`  types: ${main.types.join(', ')}`);
