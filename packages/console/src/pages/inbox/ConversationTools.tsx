// The conversation's team-inbox state beside its assignee: its labels (POST|DELETE
// /conversations/{id}/labels), its team (POST /conversations/{id}/assign {teamId}: to the team's
// queue), snooze (POST /conversations/{id}/snooze) and, once closed, the satisfaction survey's answer.
import type { Tidings } from '@tidings/sdk';
import { useId, useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { dateTime } from '../../components/format.ts';
import type { Conversation, Member, Team } from './types.ts';

interface Props {
  api: Tidings;
  c: Conversation;
  teams: Team[];
  members: Member[];
  busy: string | null;
  act: (what: string, run: () => Promise<Conversation>) => Promise<boolean>;
}

export function Labels({ api, c, busy, act }: Props) {
  const [label, setLabel] = useState('');
  const labelsId = useId();
  return (
    <div className="labels">
      <span id={labelsId} className="visually-hidden">
        Labels
      </span>
      <ul aria-labelledby={labelsId} className="tag-list">
        {c.labels.map((l) => (
          <li key={l} className="tag">
            {l}
            <button
              type="button"
              aria-label={`Remove label ${l}`}
              disabled={busy !== null}
              onClick={() => act(`unlabel:${l}`, () => api.conversations.removeLabel(c.id, l))}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <form
        className="toolbar"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!label.trim()) return;
          if (await act('label', () => api.conversations.addLabels(c.id, { labels: [label.trim()] })))
            setLabel('');
        }}
      >
        <div className="field">
          <label htmlFor={`${labelsId}-new`}>New label</label>
          <input
            id={`${labelsId}-new`}
            className="input"
            maxLength={50}
            value={label}
            onChange={(e) => setLabel(e.target.value)}
          />
        </div>
        <Button type="submit" busy={busy === 'label'}>
          Add label
        </Button>
      </form>
    </div>
  );
}

export function TeamPicker({ api, c, teams, busy, act }: Props) {
  const teamId = useId();
  if (teams.length === 0 && !c.teamId) return null;
  return (
    <div className="field">
      <label htmlFor={teamId}>Team</label>
      <select
        id={teamId}
        className="input"
        value={c.teamId ?? ''}
        disabled={busy !== null}
        onChange={(e) =>
          act('team', () => api.conversations.assign(c.id, { teamId: e.target.value || null }))
        }
      >
        <option value="">No team</option>
        {c.teamId && !teams.some((t) => t.id === c.teamId) ? (
          <option value={c.teamId}>{c.teamId}</option>
        ) : null}
        {teams.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Tomorrow at 9:00, the browser's time. */
function tomorrowMorning(): Date {
  const d = new Date();
  d.setDate(d.getDate() + 1);
  d.setHours(9, 0, 0, 0);
  return d;
}

export function Snooze({ api, c, busy, act }: Props) {
  const [at, setAt] = useState('');
  const atId = useId();
  if (c.status !== 'open') return null;
  const snooze = (what: string, until: Date | null) =>
    act(what, () => api.conversations.snooze(c.id, { until: until ? until.toISOString() : null }));
  if (c.snoozedUntil && Date.parse(c.snoozedUntil) > Date.now())
    return (
      <div className="toolbar snooze">
        <p className="snoozed">Snoozed until {dateTime(c.snoozedUntil)}.</p>
        <Button busy={busy === 'unsnooze'} onClick={() => snooze('unsnooze', null)}>
          Unsnooze
        </Button>
      </div>
    );
  return (
    <details className="snooze">
      <summary>Snooze</summary>
      <div className="toolbar">
        <Button busy={busy === 'hour'} onClick={() => snooze('hour', new Date(Date.now() + 3600_000))}>
          For an hour
        </Button>
        <Button busy={busy === 'tomorrow'} onClick={() => snooze('tomorrow', tomorrowMorning())}>
          Until tomorrow 9:00
        </Button>
        <form
          className="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            if (at) void snooze('at', new Date(at));
          }}
        >
          <div className="field">
            <label htmlFor={atId}>Until</label>
            <input
              id={atId}
              className="input"
              type="datetime-local"
              required
              value={at}
              onChange={(e) => setAt(e.target.value)}
            />
          </div>
          <Button type="submit" busy={busy === 'at'}>
            Snooze until then
          </Button>
        </form>
      </div>
    </details>
  );
}

const FACES: Record<number, string> = { 1: '😞', 3: '😐', 5: '😊' };

export function Csat({ c, members }: Pick<Props, 'c' | 'members'>) {
  if (!c.csat) return null;
  const { score, comment, agentId, sentAt, answeredAt } = c.csat;
  const who = (id: string | null) => (id ? (members.find((m) => m.id === id)?.name ?? id) : null);
  const closer = who(c.closedBy);
  return (
    <section className="panel csat" aria-label="Satisfaction survey">
      <h3>Satisfaction survey</h3>
      {score === null || answeredAt === null ? (
        <p className="muted">Sent {dateTime(sentAt)}; no answer yet.</p>
      ) : (
        <p>
          <strong>Score: {score} of 5</strong>{' '}
          {FACES[score] ? <span aria-hidden="true">{FACES[score]}</span> : null}{' '}
          <span className="muted">(answered {dateTime(answeredAt)})</span>
        </p>
      )}
      {comment ? <blockquote className="csat-comment">“{comment}”</blockquote> : null}
      <p className="muted">
        {closer ? `Closed by ${closer}` : 'Closed through the API or a rule'}
        {agentId && agentId !== c.closedBy ? `; about ${who(agentId)}` : ''}.
      </p>
    </section>
  );
}
