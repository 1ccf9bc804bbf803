// Contacts' names for the conversations listed (a conversation carries its contact's id and phone,
// not the name): each contact read once (GET /contacts/{id}) and kept for the page's life.
import type { Tidings } from '@tidings/sdk';
import { useEffect, useRef, useState } from 'react';

export function useContactNames(api: Tidings, ids: string[]): Record<string, string> {
  const [names, setNames] = useState<Record<string, string>>({});
  const asked = useRef(new Set<string>());
  const key = [...new Set(ids)].sort().join(',');
  useEffect(() => {
    for (const id of key ? key.split(',') : []) {
      if (asked.current.has(id)) continue;
      asked.current.add(id);
      api.contacts.get(id).then(
        (c) => c.name && setNames((n) => ({ ...n, [id]: c.name! })),
        // A contact deleted since: the list shows its phone instead.
        () => {},
      );
    }
  }, [api, key]);
  return names;
}
