// The console's sections and who sees them. Hiding is a courtesy: the API's access policy refuses
// what a role may not do, whatever the page shows.
import type { Role } from './api.ts';

export interface Section {
  path: string;
  label: string;
  roles: Role[];
  /** Acts on one account (a partner admin must pick one first). */
  account: boolean;
}

const ADMINS: Role[] = ['partner_admin', 'account_admin'];
const EVERYONE: Role[] = ['partner_admin', 'account_admin', 'agent'];

export const SECTIONS: Section[] = [
  { path: 'partner', label: 'Partner admin', roles: ['partner_admin'], account: false },
  { path: 'portal', label: 'Developer portal', roles: ADMINS, account: true },
  { path: 'inbox', label: 'Inbox', roles: EVERYONE, account: true },
  { path: 'contacts', label: 'Contacts', roles: EVERYONE, account: true },
  { path: 'templates', label: 'Templates', roles: EVERYONE, account: true },
  { path: 'automation', label: 'Automation', roles: ADMINS, account: true },
  { path: 'voice', label: 'Voice', roles: ADMINS, account: true },
];

export function sectionsFor(role: Role): Section[] {
  return SECTIONS.filter((s) => s.roles.includes(role));
}

export const ROLE_NAMES: Record<Role, string> = {
  partner_admin: 'Partner admin',
  account_admin: 'Account admin',
  agent: 'Agent',
};
