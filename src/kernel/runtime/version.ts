// The running code's version (package.json): `tidings --version`, and the manifest of a backup.
import { readFileSync } from 'node:fs';

export const TIDINGS_VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
