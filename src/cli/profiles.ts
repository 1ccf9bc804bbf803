// Profiles: the servers and keys `tidings login` saved, in a JSON file only its owner can read
// (0600, in a 0700 folder): `TIDINGS_CONFIG`, else `$XDG_CONFIG_HOME/tidings/config.json`, else
// `~/.config/tidings/config.json`. A command's connection is resolved per setting, flags first,
// then the environment (TIDINGS_URL, TIDINGS_API_KEY, TIDINGS_ACCOUNT_ID), then the profile
// (`--profile`, TIDINGS_PROFILE, else `default`).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ApiTarget, checkBaseUrl } from './api-client.ts';
import { UsageError } from './usage-error.ts';

export interface Profile {
  url: string;
  apiKey: string;
  /** For a partner key: the account the profile acts on (X-Account-Id). */
  accountId?: string;
  /** live, sandbox or partner: what the server said when the key was checked. */
  scope?: string;
  /** Who the key is, as shown by login (an account's name, a partner key's name). */
  label?: string;
  /** The `whsec_` secret `webhooks listen` signs with, kept so a receiver's stays valid. */
  webhookSecret?: string;
}

export interface ProfileFile {
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

type Env = Record<string, string | undefined>;

export function configPath(env: Env = process.env): string {
  if (env.TIDINGS_CONFIG) return env.TIDINGS_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'tidings', 'config.json');
}

export function readProfiles(path: string): ProfileFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const file = JSON.parse(text) as ProfileFile;
    if (file && typeof file.profiles === 'object' && file.profiles !== null) return file;
  } catch {
    // reported below
  }
  throw new UsageError(`${path} is not a Tidings profile file: fix it or remove it and log in again`);
}

/**
 * Writes the file whole: a new file made 0600 from the start (never readable by others, even for
 * a moment), then renamed over the old one, so an interrupted write leaves the old file intact.
 */
export function writeProfiles(path: string, file: ProfileFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // The default folder is Tidings' own (…/tidings): kept 0700 even if something else made it.
  // A TIDINGS_CONFIG file's folder may be anyone's (/tmp): left as it is.
  if (path !== process.env.TIDINGS_CONFIG) chmodSync(dirname(path), 0o700);
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(
      `a profile name is letters, digits, "_", "." and "-" (up to 64), starting with a letter or digit (got ${JSON.stringify(name)})`,
    );
  }
  return name;
}

/** The first characters of a key, enough to recognise it: `tdg_live_AbC3…`. Never the key. */
export function keyPrefix(key: string): string {
  const scopeEnd = key.lastIndexOf('_');
  const shown = scopeEnd > 0 && scopeEnd < 24 ? scopeEnd + 5 : 8;
  return `${key.slice(0, Math.min(shown, Math.floor(key.length / 2)))}…`;
}

/** The connection flags every API command takes. */
export interface ConnectionFlags {
  url?: string;
  key?: string;
  account?: string;
  profile?: string;
}

export interface Connection extends ApiTarget {
  accountId: string | null;
  /** The profile read, when one gave any setting; null when flags and environment gave all. */
  profileName: string | null;
  profile: Profile | null;
  path: string;
}

/**
 * Flags, then the environment, then the profile, setting by setting. The profile's account goes
 * with its key only: a key given by flag or environment does not take another key's account.
 */
export function resolveConnection(
  flags: ConnectionFlags,
  env: Env = process.env,
  options: { defaultUrl?: string; keyFlag?: string } = {},
): Connection {
  const path = configPath(env);
  const named = flags.profile ?? (env.TIDINGS_PROFILE || undefined);
  const name = checkProfileName(named ?? DEFAULT_PROFILE);
  const keyFlag = options.keyFlag ?? '--key';
  const given = flags.key ?? (env.TIDINGS_API_KEY || undefined);
  // A profile named on purpose must exist; the default one is only read when something is missing.
  const needsProfile = named !== undefined || !given || !(flags.url ?? env.TIDINGS_URL);
  const profile = needsProfile ? (readProfiles(path).profiles[name] ?? null) : null;
  if (named !== undefined && !profile) {
    throw new UsageError(
      `no profile "${name}" in ${path}: run \`tidings login --profile ${name} --url … --key …\``,
    );
  }
  const apiKey = given ?? profile?.apiKey;
  if (!apiKey) {
    throw new UsageError(
      `no API key: run \`tidings login --url <server> --key <key>\` once, or pass ${keyFlag} or set TIDINGS_API_KEY`,
    );
  }
  const rawUrl =
    flags.url ??
    (env.TIDINGS_URL || undefined) ??
    profile?.url ??
    options.defaultUrl ??
    'http://localhost:3000';
  const accountId =
    flags.account ?? (env.TIDINGS_ACCOUNT_ID || undefined) ?? (given ? undefined : profile?.accountId);
  return {
    baseUrl: checkBaseUrl(rawUrl, flags.url ? '--url' : env.TIDINGS_URL ? 'TIDINGS_URL' : 'the URL'),
    apiKey,
    accountId: accountId ?? null,
    profileName: profile ? name : null,
    profile,
    path,
  };
}

/** Saves (or replaces) one profile, keeping the others. */
export function saveProfile(path: string, name: string, profile: Profile): void {
  const file = readProfiles(path);
  file.profiles[name] = profile;
  writeProfiles(path, file);
}

/** Removes one profile; answers whether it was there. */
export function removeProfile(path: string, name: string): boolean {
  const file = readProfiles(path);
  if (!(name in file.profiles)) return false;
  delete file.profiles[name];
  writeProfiles(path, file);
  return true;
}
