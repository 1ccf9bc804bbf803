export { adminSocketPath, openAdminSocket } from './admin-socket.ts';
export type { BackupManifest } from './format.ts';
export { BackupFormatError, decodeBackup } from './format.ts';
export { countRows, takeBackup } from './take.ts';
