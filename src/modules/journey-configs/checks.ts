// What a journey config's schema cannot check, every fault at once with its field (`config.…`):
// durations (their form, and what the journey they make allows: a wait at most P30D, a wait for a
// reply at most P7D, a run at most P30D), where the appointment's time is read, reminders that fall
// at the same time, two buttons with one label. A PATCH's config is first checked against its type's
// schema here too (the body does not repeat the type). What the journey checks find in the compiled
// journey (a message's content, Liquid, tags, attribute names) is mapped back by compile.ts.
import type { Duration } from 'luxon';
import { validationIssues } from '../../kernel/http/error-handler.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import { boundedValidators, type CheckFunction } from '../../kernel/http/validator.ts';
import { durationMs, durationProblem } from '../automation/index.ts';
import { MAX_REPLY_TIMEOUT, MAX_RUN_DURATION, MAX_WAIT } from '../journeys/index.ts';
import { CONFIG_SCHEMAS, type ConfigType, type TypedConfig } from './schemas.ts';

/** Where an appointment's time may be read: a contact attribute, or the trigger's data. */
const APPOINTMENT_AT =
  /^(contact\.attributes\.[A-Za-z_][A-Za-z0-9_]{0,39}|trigger\.data\.[A-Za-z0-9_][A-Za-z0-9_.-]{0,99})$/;

const compile = boundedValidators({ strict: false, coerceTypes: false }, { eager: true });
const validators = Object.fromEntries(
  Object.entries(CONFIG_SCHEMAS).map(([type, schema]) => [type, compile(schema)]),
) as Record<ConfigType, CheckFunction>;

/** The faults of a config against its type's schema, at `config.…`. */
export function shapeProblems(type: ConfigType, config: unknown): FieldIssue[] {
  const validate = validators[type];
  if (validate(config)) return [];
  return validationIssues(validate.errors as never, 'body').map((f) => ({
    field: f.field === 'body' ? 'config' : `config.${f.field}`,
    issue: f.issue,
  }));
}

function duration(issues: FieldIssue[], field: string, value: string, max?: Duration): boolean {
  const problem = durationProblem(value, max);
  if (problem) issues.push({ field, issue: problem });
  return problem === null;
}

/** Every fault of a config (of the right shape) that its schema cannot see. */
export function configProblems(t: TypedConfig): FieldIssue[] {
  const issues: FieldIssue[] = [];
  switch (t.type) {
    case 'appointment_reminder': {
      const c = t.config;
      if (!APPOINTMENT_AT.test(c.appointmentAt)) {
        issues.push({
          field: 'config.appointmentAt',
          issue: 'must be contact.attributes.<key> or trigger.data.<key>',
        });
      }
      const seen = new Map<number, number>();
      c.remindBefore.forEach((d, i) => {
        const field = `config.remindBefore[${i}]`;
        if (!duration(issues, field, d, MAX_WAIT)) return;
        const same = seen.get(durationMs(d));
        if (same !== undefined) issues.push({ field, issue: `falls at the time of remindBefore[${same}]` });
        else seen.set(durationMs(d), i);
      });
      const buttons = c.confirm?.buttons;
      if (buttons && buttons.confirm.trim().toLowerCase() === buttons.cancel.trim().toLowerCase()) {
        issues.push({ field: 'config.confirm.buttons.cancel', issue: 'must differ from buttons.confirm' });
      }
      return issues;
    }
    case 'welcome_message':
      if (t.config.delay !== undefined) duration(issues, 'config.delay', t.config.delay, MAX_WAIT);
      return issues;
    case 're_engagement': {
      const c = t.config;
      duration(issues, 'config.inactiveFor', c.inactiveFor);
      const max = c.exitOnReply ? MAX_REPLY_TIMEOUT : MAX_WAIT;
      if (duration(issues, 'config.spacing', c.spacing, max)) {
        // With exitOnReply the last send is followed by a wait too.
        const waits = c.exitOnReply ? c.maxAttempts : c.maxAttempts - 1;
        if (waits * durationMs(c.spacing) > MAX_RUN_DURATION.toMillis()) {
          issues.push({
            field: 'config.spacing',
            issue: `× ${waits} (the waits of ${c.maxAttempts} attempts) must fit in P30D, the longest a run lives`,
          });
        }
      }
      return issues;
    }
  }
}
