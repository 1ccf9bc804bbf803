// PGlite's WebAssembly module, compiled once per process, with its SQL parser kept off V8's
// optimising compiler.
//
// V8 runs WebAssembly first as compiled by its baseline compiler (Liftoff) and compiles the
// functions that run hot a second time with its optimising compiler (TurboFan). For PostgreSQL's
// grammar (`raw_parser`, 105 KB of WebAssembly with the generated parser inlined into it) that second
// compile takes about 600 MiB of compiler memory for most of a second, and it comes wherever the
// database first works hard (a first start's migrations, the first few thousand statements): it
// was most of the embedded server's peak (877 of it; the rest of the server holds ~300 MiB). The
// other ~1,000 hot functions together take less than 150 MiB at their peak, and without them
// PGlite runs about a quarter slower (docs/history/issue-27.md, the embedded server's memory).
//
// So only the parser stays on Liftoff. V8 has no setting for one function, but whether Liftoff's
// code of a function counts its runs towards a tier-up is decided when that code is compiled, by
// `--wasm-tier-up-filter` (only the function of that index counts; -1, the default, all). Functions
// are compiled on their first call and the code belongs to the module, shared by its instances. So
// the parser is compiled first, while the filter names no function: through a throwaway instance of
// the module (its imports do nothing) whose `raw_parser` export is called once and traps at once on
// its empty memory. Then the filter is reset and PGlite instantiates the same module.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

// The WebAssembly API's few parts used here (the project's TypeScript libraries leave it out).
type WasmModule = object;
interface WasmApi {
  Module: {
    new (bytes: Uint8Array): WasmModule;
    exports(module: WasmModule): { name: string; kind: string }[];
    imports(module: WasmModule): { module: string; name: string; kind: string }[];
  };
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
  Memory: new (limits: MemoryLimits) => object;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const PARSER_EXPORT = 'raw_parser';
const NO_FUNCTION = 2 ** 31 - 1;

let compiled: WasmModule | null = null;

/**
 * The compiled module for `PGlite.create({ pgliteWasmModule })`. `optimizeParser` (V8's default)
 * counts at the first call only: V8 keeps one compiled module for the same bytes in a process.
 */
export function pgliteWasmModule(optimizeParser: boolean): WasmModule {
  if (compiled) return compiled;
  const path = fileURLToPath(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite')));
  const bytes = readFileSync(path);
  // Quick: V8 compiles each function on its first call.
  compiled = new wasm.Module(bytes);
  if (!optimizeParser) compileParserWithoutTierUp(compiled, memoryImportLimits(bytes));
  return compiled;
}

/** True when the parser's code was compiled while the filter excluded it (tests check this). */
export let parserPinned = false;

function compileParserWithoutTierUp(module: WasmModule, memory: MemoryLimits | null): void {
  if (!memory || !wasm.Module.exports(module).some((e) => e.name === PARSER_EXPORT)) return;
  const imports: Record<string, Record<string, unknown>> = {};
  for (const entry of wasm.Module.imports(module)) {
    imports[entry.module] ??= {};
    const value = entry.kind === 'memory' ? new wasm.Memory(memory) : () => 0;
    if (entry.kind === 'memory' || entry.kind === 'function') imports[entry.module]![entry.name] = value;
  }
  v8.setFlagsFromString(`--wasm-tier-up-filter=${NO_FUNCTION}`);
  try {
    const instance = new wasm.Instance(module, imports);
    const parse = instance.exports[PARSER_EXPORT] as (text: number, mode: number) => number;
    try {
      parse(0, 0);
    } catch {
      // Expected: its memory context is a null pointer. Compiling it was the point.
    }
    parserPinned = true;
  } catch {
    // An instance could not be made (a PGlite whose imports this does not foresee): V8's default.
  } finally {
    v8.setFlagsFromString('--wasm-tier-up-filter=-1');
  }
}

interface MemoryLimits {
  initial: number;
  maximum?: number;
  shared?: boolean;
}

/**
 * The limits of the module's imported memory, read from its import section (the JavaScript API
 * does not tell them): a throwaway instance needs a memory that fits. Null if there is none.
 */
function memoryImportLimits(bytes: Uint8Array): MemoryLimits | null {
  let at = 8; // after the magic number and the version
  const leb = (): number => {
    let value = 0;
    let scale = 1;
    let byte: number;
    do {
      byte = bytes[at++]!;
      value += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte & 0x80);
    return value;
  };
  const skipName = () => {
    const length = leb(); // read before `at` is: leb() moves it
    at += length;
  };
  while (at < bytes.length) {
    const section = bytes[at++]!;
    const size = leb();
    const end = at + size;
    if (section === 2) {
      for (let count = leb(); count > 0; count--) {
        skipName();
        skipName();
        const kind = bytes[at++]!;
        if (kind === 0x00)
          leb(); // function: its type
        else if (kind === 0x01) {
          at++; // table: element type, then limits
          if (bytes[at++]! & 1) leb();
          leb();
        } else if (kind === 0x02) {
          const flags = bytes[at++]!;
          const initial = leb();
          const maximum = flags & 1 ? leb() : undefined;
          return {
            initial,
            ...(maximum === undefined ? {} : { maximum }),
            ...(flags & 2 ? { shared: true } : {}),
          };
        } else if (kind === 0x03)
          at += 2; // global: value type, mutability
        else return null; // a kind this reader does not know (tags): give up
      }
      return null;
    }
    at = end;
  }
  return null;
}
