// A change to a contact checked as PATCH /contacts checks its body (its schema: a name of at most
// 200 characters, an email that is one, attribute values of at most 500), whoever makes it. The API
// checks the body before it reaches the service; automation builds its change from rendered Liquid
// (update_contact's name and email, set_attribute's value), which no route schema has seen.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { validationIssues } from '../../kernel/http/error-handler.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import type { ContactFields } from './fields.ts';
import { UpdateContactBody } from './schemas.ts';

const validateChange = addFormats
  .default(new Ajv({ allErrors: true, strict: false, coerceTypes: false }))
  .compile(UpdateContactBody);

/** What PATCH /contacts would refuse in this change (its schema's faults), by field. */
export function changeIssues(change: ContactFields): FieldIssue[] {
  if (validateChange(change)) return [];
  return validationIssues(validateChange.errors ?? [], 'body');
}
