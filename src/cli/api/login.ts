// `tidings login` checks a key against the server and saves it as a profile; `tidings logout`
// forgets one. The key is shown only by its first characters, here and everywhere.
import { Command } from 'commander';
import { ApiCallError, type ApiTarget, apiJson, checkBaseUrl } from '../api-client.ts';
import {
  checkProfileName,
  configPath,
  DEFAULT_PROFILE,
  keyPrefix,
  type Profile,
  removeProfile,
  saveProfile,
} from '../profiles.ts';
import { reportFailure } from './command.ts';

interface Account {
  accountId: string;
  accountName: string;
  status: string;
  keyScope: string;
  channel: { provider: string };
}

interface KeyInfo {
  id: string;
  name: string;
  lastFour: string;
}

/** Who the key is: an account (its own key, or a partner key with --account), or a partner. */
async function identify(target: ApiTarget): Promise<{ scope: string; label: string; said: string }> {
  try {
    const account = await apiJson<Account>(target, 'GET', '/account');
    const acting = account.keyScope === 'partner' ? 'partner key acting on ' : `${account.keyScope} key of `;
    return {
      scope: account.keyScope,
      label: account.accountName,
      said: `${acting}account ${account.accountId} (${account.accountName}, ${account.channel.provider} channel)`,
    };
  } catch (err) {
    // A partner key without --account is refused for naming no account: it is still a good key.
    const partnerWithoutAccount =
      err instanceof ApiCallError &&
      err.code === 'INVALID_REQUEST' &&
      err.details?.some((d) => d.field === 'X-Account-Id');
    if (!partnerWithoutAccount) throw err;
  }
  const keys = await apiJson<{ data: KeyInfo[] }>(target, 'GET', '/partner/keys', { query: { limit: 100 } });
  const own = keys.data.find((k) => target.apiKey.endsWith(k.lastFour));
  return {
    scope: 'partner',
    label: own?.name ?? 'partner key',
    said: `partner key${own ? ` ${own.id} (${own.name})` : ''}, acting on no account: pass --account acc_… to commands, or log in again with --account`,
  };
}

interface LoginOptions {
  url: string;
  key: string;
  account?: string;
  profile?: string;
}

export function loginCommand(): Command {
  return new Command('login')
    .description('check an API key against a server and save both as a profile')
    .requiredOption('--key <key>', "an account's API key, or a partner key")
    .option('--url <base>', 'the server', 'http://localhost:3000')
    .option('--account <accountId>', 'with a partner key: the account the profile acts on')
    .option('--profile <name>', 'the profile to save (default: TIDINGS_PROFILE, or "default")')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (opts: LoginOptions) => {
      try {
        const name = checkProfileName(opts.profile ?? (process.env.TIDINGS_PROFILE || DEFAULT_PROFILE));
        const target = { baseUrl: checkBaseUrl(opts.url), apiKey: opts.key, accountId: opts.account };
        const who = await identify(target);
        const profile: Profile = {
          url: target.baseUrl,
          apiKey: opts.key,
          scope: who.scope,
          label: who.label,
        };
        if (opts.account) profile.accountId = opts.account;
        const path = configPath();
        saveProfile(path, name, profile);
        process.stdout.write(
          [
            `Logged in to ${target.baseUrl} with ${keyPrefix(opts.key)}: ${who.said}.`,
            `Saved as profile "${name}" in ${path} (readable by you only).`,
            '',
          ].join('\n'),
        );
      } catch (err) {
        process.exitCode = reportFailure('tidings login', err);
      }
    });
}

export function logoutCommand(): Command {
  return new Command('logout')
    .description('forget a saved profile (its key stays valid: revoke it on the server if it leaked)')
    .option('--profile <name>', 'the profile to forget (default: TIDINGS_PROFILE, or "default")')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action((opts: { profile?: string }) => {
      try {
        const name = checkProfileName(opts.profile ?? (process.env.TIDINGS_PROFILE || DEFAULT_PROFILE));
        const path = configPath();
        process.stdout.write(
          removeProfile(path, name)
            ? `Removed profile "${name}" from ${path}.\n`
            : `No profile "${name}" in ${path}: nothing to do.\n`,
        );
      } catch (err) {
        process.exitCode = reportFailure('tidings logout', err);
      }
    });
}
