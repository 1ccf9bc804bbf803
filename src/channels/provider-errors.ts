// How an adapter turns a provider's failed answer into Tidings' error vocabulary: a table of rules
// over the provider's own error code and the HTTP status, read top to bottom, the first match
// winning. Providers ask integrators to decide on their code before the status (most refusals are
// a plain 400, some codes come with more than one status), so an adapter's table lists its codes
// first and falls back to the status; the last row (`anything`) takes what no other row knew.
// The mechanism is here once; each adapter's errors.ts holds only its codes, rules and names.

/** A failed call as a table reads it: no status means no answer came. */
export interface ProviderFailure {
  status: number | null;
  /** The provider's error code, when its answer held one. */
  code: number | null;
  /** A finer code some providers add (Meta's error_subcode). */
  subcode?: number | null;
  /** With no answer: whether the request may still have reached the provider. */
  mayHaveArrived?: boolean;
}

export type Match = (failure: ProviderFailure) => boolean;

/** One of the provider's codes. */
export const coded =
  (...codes: readonly number[]): Match =>
  (f) =>
    f.code !== null && codes.includes(f.code);
/** The provider's codes from `from` to `to`, both included. */
export const codedRange =
  (from: number, to: number): Match =>
  (f) =>
    f.code !== null && f.code >= from && f.code <= to;
/** The provider's code with its subcode. */
export const codedSub =
  (code: number, subcode: number): Match =>
  (f) =>
    f.code === code && f.subcode === subcode;
/** One of these HTTP statuses. */
export const http =
  (...statuses: readonly number[]): Match =>
  (f) =>
    f.status !== null && statuses.includes(f.status);
/** An HTTP status from `from` to `to`, both included. */
export const httpRange =
  (from: number, to: number): Match =>
  (f) =>
    f.status !== null && f.status >= from && f.status <= to;
/** No answer came, whatever became of the request. */
export const noAnswer: Match = (f) => f.status === null;
/** No answer came, and the request cannot have reached the provider (refused, DNS, connect timeout). */
export const notSent: Match = (f) => f.status === null && !f.mayHaveArrived;
/** No answer came after the request may have reached the provider (a timeout waiting, a reset). */
export const lostAnswer: Match = (f) => f.status === null && f.mayHaveArrived === true;
/** The last row: an answer no other row knew. */
export const anything: Match = () => true;

/** A row of a table: when it matches, and the outcome it gives (a Tidings code and what to do). */
export type Rule<O extends { code: string }> = O & { match: Match };

export class ProviderErrors<O extends { code: string }> {
  private readonly rules: readonly Rule<O>[];

  /** `rules` must end with an `anything` row, so that every failure finds one. */
  constructor(rules: readonly Rule<O>[]) {
    this.rules = rules;
  }

  private ruleFor(failure: ProviderFailure): Rule<O> {
    return this.rules.find((r) => r.match(failure))!;
  }

  classify(failure: ProviderFailure): O {
    const { match: _, ...outcome } = this.ruleFor(failure);
    return outcome as unknown as O;
  }

  /**
   * The Tidings code for one of the provider's codes on its own (a status callback reports a code
   * with no HTTP status); null for a code the table does not know.
   */
  codeOf(code: number): O['code'] | null {
    // Status 0: no HTTP row matches, so only the provider's code decides.
    const rule = this.ruleFor({ status: 0, code });
    return rule.match === anything ? null : rule.code;
  }
}
