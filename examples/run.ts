// `npm run example -- <name> [arguments]` runs examples/<name>.ts. Through npm, whatever Node runs
// npm itself (20 will do), the examples run on this project's Node 24 (node_modules/.bin comes first
// on npm's PATH), which runs TypeScript as it is; `preexample` builds the SDK first when it is stale.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const names = readdirSync(HERE)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && f !== 'shared.ts')
  .map((f) => f.slice(0, -3))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  process.stderr.write(`usage: npm run example -- <${names.join(' | ')}> [arguments]\n`);
  process.exit(2);
}
// The example reads its own arguments from process.argv[2…], as when run by name.
process.argv = [process.argv[0]!, `${HERE}${name}.ts`, ...args];
await import(`./${name}.ts`);
