// A problem with how a command was called (a missing option, no profile, a bad URL): the command
// prints it and exits with code 2, having done nothing.
export class UsageError extends Error {
  override name = 'UsageError';
}
