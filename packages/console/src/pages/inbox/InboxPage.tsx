// The inbox: the account's conversations (open, snoozed or closed; everyone's, mine or
// unassigned; by team, so a team's queue is its unassigned ones; by label; by recent activity or,
// open ones, the soonest SLA due first, each row with its SLA badge) beside the open
// conversation, with the member's availability and their mentions. Live: the account's message.*,
// conversation.* and csat.* events (GET /events/stream) refresh the list and reach the open
// conversation, without reloading. Below 640 px the list and the conversation take the whole width
// in turn.
import type { WebhookEvent } from '@tidings/sdk';
import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { Link, Route, Routes, useParams } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { LoadMore } from '../../components/LoadMore.tsx';
import { type Mention, Mentions, mentionOf, withMention } from '../../components/Mentions.tsx';
import { useLiveEvents } from '../../components/useLiveEvents.ts';
import { usePaged } from '../../components/usePaged.ts';
import { useSession } from '../../session.tsx';
import { AvailabilityToggle } from './Availability.tsx';
import { CannedResponsesPage } from './CannedResponsesPage.tsx';
import { ConversationRow } from './ConversationRow.tsx';
import { ConversationView } from './ConversationView.tsx';
import { SlaPoliciesPage } from './SlaPoliciesPage.tsx';
import type { Conversation, Member, Team } from './types.ts';
import { useContactNames } from './useContactNames.ts';
import '../../components/components.css';
import './inbox.css';

export default function InboxPage() {
  return (
    <Routes>
      <Route path="canned-responses" element={<CannedResponsesPage />} />
      <Route path="sla-policies" element={<SlaPoliciesPage />} />
      <Route path=":id?" element={<Inbox />} />
    </Routes>
  );
}

type Who = 'all' | 'mine' | 'unassigned';
type Status = 'open' | 'snoozed' | 'closed' | 'all';
/** Recent activity, or the soonest SLA due time first (the API's `order=sla_due`: open ones only). */
type Sort = 'recent' | 'sla_due';

const STATUS_QUERY = {
  open: { status: 'open' },
  snoozed: { status: 'open', snoozed: true },
  closed: { status: 'closed' },
  all: {},
} as const;
export type EventListener = (event: WebhookEvent) => void;

function Inbox() {
  const { id } = useParams();
  const { api } = useAccount();
  const { state } = useSession();
  const user = state.status === 'signed-in' ? state.user : null;
  const memberId = user?.memberId ?? null;
  const admin = user !== null && user.role !== 'agent';
  const [status, setStatus] = useState<Status>('open');
  const [sort, setSort] = useState<Sort>('recent');
  const [who, setWho] = useState<Who>('all');
  const [teamId, setTeamId] = useState('');
  const [labelTyped, setLabelTyped] = useState('');
  const [label, setLabel] = useState('');
  const [mentions, setMentions] = useState<Mention[]>([]);
  const statusId = useId();
  const sortId = useId();
  const whoId = useId();
  const teamFilterId = useId();
  const labelId = useId();
  // The label filter follows the typing, a moment after it stops.
  useEffect(() => {
    const timer = setTimeout(() => setLabel(labelTyped.trim().toLowerCase()), 300);
    return () => clearTimeout(timer);
  }, [labelTyped]);

  const list = usePaged<Conversation>(
    (cursor) =>
      api.conversations.list({
        ...STATUS_QUERY[status],
        ...(sort === 'sla_due' && status === 'open' ? { order: 'sla_due' as const } : {}),
        limit: 50,
        cursor,
        ...(who === 'mine' && memberId ? { assigneeId: memberId } : {}),
        ...(who === 'unassigned' ? { unassigned: true } : {}),
        ...(teamId ? { teamId } : {}),
        ...(label ? { label } : {}),
      }),
    [api, status, sort, who, memberId, teamId, label],
  );
  const members = usePaged<Member>(() => api.team.list({ limit: 100 }), [api]);
  const teams = usePaged<Team>(() => api.teams.list({ limit: 100 }), [api]);
  const memberName = (mid: string | null) => members.items?.find((m) => m.id === mid)?.name;
  const names = useContactNames(
    api,
    (list.items ?? []).map((c) => c.contactId),
  );

  // Events reach the open conversation through these listeners; the list reads its first page
  // again (a burst of events makes one read).
  const listeners = useRef(new Set<EventListener>());
  const refresh = useRef<ReturnType<typeof setTimeout> | null>(null);
  const reloadList = list.reload;
  const membersRef = useRef<Member[]>([]);
  membersRef.current = members.items ?? [];
  const onEvent = useCallback(
    (event: WebhookEvent) => {
      for (const l of listeners.current) l(event);
      const mention = mentionOf(event, memberId, (a) => membersRef.current.find((m) => m.id === a)?.name);
      if (mention) setMentions((all) => withMention(all, mention));
      if (refresh.current) clearTimeout(refresh.current);
      refresh.current = setTimeout(reloadList, 250);
    },
    [reloadList, memberId],
  );
  useEffect(() => () => void (refresh.current && clearTimeout(refresh.current)), []);
  const live = useLiveEvents(api, 'message.*,conversation.*,csat.*', onEvent);
  const subscribe = useMemo(
    () => (l: EventListener) => {
      listeners.current.add(l);
      return () => void listeners.current.delete(l);
    },
    [],
  );

  return (
    <div className={`inbox${id ? ' has-detail' : ''}`}>
      <section className="inbox-list" aria-labelledby="page-title">
        <div className="page-head">
          <h1 id="page-title">Inbox</h1>
          <span className={`live live-${live.state}`} role="status">
            {live.state === 'live' ? 'Live' : live.state === 'connecting' ? 'Connecting…' : 'Not live'}
          </span>
        </div>
        <ErrorMessage error={live.error} />
        <p className="inbox-links">
          <Link to="/inbox/canned-responses">Canned responses</Link>
          {admin ? <Link to="/inbox/sla-policies">SLA policies</Link> : null}
        </p>
        <Mentions
          mentions={mentions}
          onDismiss={(key) => setMentions((all) => all.filter((m) => m.key !== key))}
        />
        <AvailabilityToggle
          api={api}
          member={members.items?.find((m) => m.id === memberId)}
          onChanged={(m) => members.setItems((all) => all.map((x) => (x.id === m.id ? m : x)))}
        />
        <div className="toolbar">
          <div className="field">
            <label htmlFor={statusId}>Status</label>
            <select
              id={statusId}
              className="input"
              value={status}
              onChange={(e) => {
                const next = e.target.value as Status;
                setStatus(next);
                // SLA due first lists open conversations only.
                if (next !== 'open') setSort('recent');
              }}
            >
              <option value="open">Open</option>
              <option value="snoozed">Snoozed</option>
              <option value="closed">Closed</option>
              <option value="all">All</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor={sortId}>Sort</label>
            <select
              id={sortId}
              className="input"
              value={sort}
              onChange={(e) => setSort(e.target.value as Sort)}
            >
              <option value="recent">Recent activity</option>
              <option value="sla_due" disabled={status !== 'open'}>
                SLA due first{status === 'open' ? '' : ' (open only)'}
              </option>
            </select>
          </div>
          <div className="field">
            <label htmlFor={whoId}>Assigned</label>
            <select id={whoId} className="input" value={who} onChange={(e) => setWho(e.target.value as Who)}>
              <option value="all">Everyone’s</option>
              <option value="mine" disabled={!memberId}>
                Mine
              </option>
              <option value="unassigned">Unassigned</option>
            </select>
          </div>
          {(teams.items ?? []).length > 0 ? (
            <div className="field">
              <label htmlFor={teamFilterId}>Team</label>
              <select
                id={teamFilterId}
                className="input"
                value={teamId}
                onChange={(e) => setTeamId(e.target.value)}
              >
                <option value="">Any team</option>
                {(teams.items ?? []).map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          <div className="field">
            <label htmlFor={labelId}>Label</label>
            <input
              id={labelId}
              className="input label-filter"
              type="search"
              maxLength={50}
              value={labelTyped}
              onChange={(e) => setLabelTyped(e.target.value)}
            />
          </div>
        </div>
        {list.items && list.items.length === 0 ? <p className="muted">No conversations here.</p> : null}
        <ul className="conversation-list" aria-label="Conversations">
          {(list.items ?? []).map((c) => (
            <li key={c.id}>
              <ConversationRow
                c={c}
                current={c.id === id}
                name={names[c.contactId] || c.phone || 'WhatsApp customer'}
                team={teams.items?.find((t) => t.id === c.teamId)?.name ?? (c.teamId ? 'A team' : null)}
                assignee={c.assigneeId ? (memberName(c.assigneeId) ?? 'A colleague') : null}
              />
            </li>
          ))}
        </ul>
        <LoadMore list={list} />
      </section>
      {id ? (
        <ConversationView
          key={id}
          id={id}
          api={api}
          memberId={memberId}
          members={members.items ?? []}
          teams={teams.items ?? []}
          membersError={members.error ?? teams.error}
          name={(contactId) => names[contactId]}
          subscribe={subscribe}
          onChanged={list.reload}
        />
      ) : (
        <section className="inbox-empty" aria-label="Conversation">
          <p className="muted">Pick a conversation to read it and reply.</p>
        </section>
      )}
    </div>
  );
}
