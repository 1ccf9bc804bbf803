// Mentions outside the inbox: on every other page, a signed-in team member's console listens for
// conversation.mentioned (GET /events/stream) and shows theirs at the top of the page, linking to
// the conversation. The inbox tells them on its own stream (it listens for conversation.* anyway).
import { useCallback, useState } from 'react';
import { useLocation } from 'react-router-dom';
import { useAccount } from '../account.tsx';
import { type Mention, Mentions, mentionOf, withMention } from './Mentions.tsx';
import { useLiveEvents } from './useLiveEvents.ts';

export function MentionWatcher({ memberId }: { memberId: string | null }) {
  const { pathname } = useLocation();
  // The inbox's list and conversations (not its canned responses' page) tell them themselves.
  const inInbox = /^\/inbox(\/(?!canned-responses$)[^/]+)?\/?$/.test(pathname);
  if (!memberId || inInbox) return null;
  return <Watch memberId={memberId} />;
}

function Watch({ memberId }: { memberId: string }) {
  const { api } = useAccount();
  const [mentions, setMentions] = useState<Mention[]>([]);
  const onEvent = useCallback(
    (event: Parameters<typeof mentionOf>[0]) => {
      const mention = mentionOf(event, memberId, () => undefined);
      if (!mention) return;
      setMentions((all) => withMention(all, mention));
      // The author's name, once known.
      const authorId = (event.data as { note?: { authorId?: string | null } }).note?.authorId;
      if (authorId)
        api.team.get(authorId).then(
          (m) => setMentions((all) => all.map((x) => (x.key === mention.key ? { ...x, author: m.name } : x))),
          () => {},
        );
    },
    [api, memberId],
  );
  useLiveEvents(api, 'conversation.mentioned', onEvent);
  return (
    <Mentions
      mentions={mentions}
      onDismiss={(key) => setMentions((all) => all.filter((m) => m.key !== key))}
    />
  );
}
