// Contacts' names for the conversations listed (a conversation carries its contact's id and phone,
// not the name; a customer without a number is named by username): each contact read once (GET /contacts/{id}) and kept for the page's life.
import type { Tidings } from '@tidings/sdk';
import { useEffect, useRef, useState } from 'react';
import { customerLabel } from '../../components/format.ts';

export function useContactNames(api: Tidings, ids: string[]): Record<string, string> {
  const [names, setNames] = useState<Record<string, string>>({});
  const asked = useRef(new Set<string>());
  const key = [...new Set(ids)].sort().join(',');
  useEffect(() => {
    for (const id of key ? key.split(',') : []) {
      if (asked.current.has(id)) continue;
      asked.current.add(id);
      api.contacts.get(id).then(
        // A name, or for a customer without a number their username (or user id).
        (c) => (c.name || !c.phone) && setNames((n) => ({ ...n, [id]: customerLabel(c) })),
        // A contact deleted since: the list shows its phone instead.
        () => {},
      );
    }
  }, [api, key]);
  return names;
}
