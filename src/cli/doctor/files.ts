// The doctor's check of DATA_DIR's modes: the directory and what Tidings keeps in it are for the user
// it runs as alone (kernel/runtime/data-dir.ts). Anything open to others fails: the database's files hold
// tenants' messages, the secrets key opens every sealed secret. Nothing is changed here; `tidings
// serve` closes what it finds at start.
import type { Config } from '../../config.ts';
import { describeOpen, openToOthers } from '../../kernel/runtime/data-dir.ts';
import { type Finding, fail, ok } from './findings.ts';

export function checkFileModes(config: Pick<Config, 'dataDir'>): Finding {
  const open = openToOthers(config.dataDir);
  if (open.length === 0)
    return ok('files', `${config.dataDir} and what Tidings keeps there are the owner's alone`);
  return fail(
    'files',
    `${open.length} in ${config.dataDir} open to other users: ${describeOpen(open)}; run chmod -R go-rwx ${config.dataDir} (tidings serve also closes them at start)`,
  );
}
