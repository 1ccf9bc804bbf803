// The embedded server's pid file: the embedded database has one owner, so commands that would open
// it look here first for a running server (and `tidings backup` and `doctor` talk to it instead).
import { existsSync, readFileSync } from 'node:fs';
import type { Config } from '../config.ts';

export function pidFile(cfg: Pick<Config, 'dataDir'>): string {
  return `${cfg.dataDir}/server.pid`;
}

/** The pid of the server running on this data directory, or null. */
export function serverRunning(cfg: Pick<Config, 'dataDir'>): number | null {
  if (!existsSync(pidFile(cfg))) return null;
  const pid = Number(readFileSync(pidFile(cfg), 'utf8'));
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}
