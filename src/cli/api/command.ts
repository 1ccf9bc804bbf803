// What the CLI's API commands share: the connection options (--profile, --url, --key, --account),
// and how a failure ends the command: a usage problem exits 2, a refusal by the API prints
// `CODE: message (request id)` and exits 1.
import { Command } from 'commander';
import { ApiCallError } from '../api-client.ts';
import { type Connection, type ConnectionFlags, resolveConnection } from '../profiles.ts';
import { UsageError } from '../usage-error.ts';

/** Adds the connection options to a command. */
export function withConnectionOptions(command: Command): Command {
  return command
    .option('--profile <name>', 'the saved profile to use (default: TIDINGS_PROFILE, or "default")')
    .option(
      '--url <base>',
      'the server, e.g. https://api.example.com (default: TIDINGS_URL, or the profile’s)',
    )
    .option('--key <key>', 'the API key (default: TIDINGS_API_KEY, or the profile’s)')
    .option(
      '--account <accountId>',
      'with a partner key: the account to act on (default: TIDINGS_ACCOUNT_ID)',
    );
}

/** A command of the API client: its connection options, and usage errors exiting 2. */
export function apiCommand(name: string, description: string): Command {
  return withConnectionOptions(
    new Command(name)
      .description(description)
      .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2)),
  );
}

/** Runs a command's work with its connection; prints what stopped it and sets the exit code. */
export async function runWithConnection(
  label: string,
  flags: ConnectionFlags,
  work: (connection: Connection) => Promise<void>,
): Promise<void> {
  try {
    await work(resolveConnection(flags));
  } catch (err) {
    process.exitCode = reportFailure(label, err);
  }
}

/** Prints a failure; answers the exit code (2: how the command was called, 1: the API's refusal). */
export function reportFailure(label: string, err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`${label}: ${err.message}\n`);
    return 2;
  }
  if (err instanceof ApiCallError) {
    process.stderr.write(`${err.describe()}\n`);
    return 1;
  }
  throw err;
}

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
