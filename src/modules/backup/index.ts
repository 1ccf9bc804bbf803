// The face of backup: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { adminSocketPath, openAdminSocket } from './admin-socket.ts';
export type { BackupManifest } from './format.ts';
export { BackupFormatError, decodeBackup } from './format.ts';
export { countRows, takeBackup } from './take.ts';
