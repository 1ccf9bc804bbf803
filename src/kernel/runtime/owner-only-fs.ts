// The embedded database's files for their owner alone (docs/operations.md § File modes).
//
// PGlite writes through Emscripten's NODEFS, which creates a file and then chmods it to the mode
// the program asked for (0666 in this build), so the process umask does not reach it: every file
// of DATA_DIR/db was 0666, the WAL with tenants' message texts included, whatever the umask. This
// filesystem takes group and other bits off every mode PostgreSQL asks for, when it creates a file
// or directory and when it changes a mode, as PostgreSQL's own builds do (files 0600, directories
// 0700). It hooks Emscripten's public FS calls (mknod, chmod, fchmod) before PostgreSQL starts.
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/** The bits a mode keeps: its type and its owner's permissions. */
const OWNER_ONLY = ~0o077;

type Init = Awaited<ReturnType<NodeFS['init']>>;
type PostgresMod = NonNullable<Init['emscriptenOpts']['preRun']>[number] extends (mod: infer M) => void
  ? M
  : never;

interface ModeCalls {
  mknod(path: string, mode: number, dev: number): unknown;
  chmod(path: unknown, mode: number, dontFollow?: boolean): unknown;
  fchmod(fd: number, mode: number): unknown;
}

function ownerOnly(mod: PostgresMod): void {
  const fs = mod.FS as unknown as ModeCalls;
  const { mknod, chmod, fchmod } = fs;
  fs.mknod = (path, mode, dev) => mknod.call(fs, path, mode & OWNER_ONLY, dev);
  fs.chmod = (path, mode, dontFollow) => chmod.call(fs, path, mode & OWNER_ONLY, dontFollow);
  fs.fchmod = (fd, mode) => fchmod.call(fs, fd, mode & OWNER_ONLY);
}

/** PGlite's Node filesystem on `dir`, whose files and directories only their owner may open. */
export class OwnerOnlyNodeFS extends NodeFS {
  override async init(pg: PGlite, options: Parameters<NodeFS['init']>[1]): Promise<Init> {
    const { emscriptenOpts } = await super.init(pg, options);
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), ownerOnly] } };
  }
}
