// A conversation's SLA (its policy's due times, GET /conversations/{id} `sla`) in words, never in
// colour alone: "First response due in 12 min", "First response met", "First response missed", and
// the same for the resolution. The list's rows carry the most pressing of them as a short badge.
import { useEffect, useState } from 'react';
import { dateTime, shortWhen } from '../../components/format.ts';
import type { Conversation } from './types.ts';

export type Sla = NonNullable<Conversation['sla']>;
type Tone = 'due' | 'soon' | 'missed' | 'met';
export interface SlaLine {
  target: 'First response' | 'Resolution';
  text: string;
  tone: Tone;
  /** When it was met, missed or is due: shown in full on hover and to screen readers. */
  title: string;
}

/** "in 12 min", "in 3 h 5 min", "in 2 days", or "overdue" once passed. */
export function dueIn(iso: string, now = Date.now()): string {
  const minutes = Math.ceil((Date.parse(iso) - now) / 60_000);
  if (minutes <= 0) return 'overdue';
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `in ${Math.round(hours / 24)} days`;
}

function line(
  target: SlaLine['target'],
  due: string | null,
  met: string | null,
  missed: string | null,
  now: number,
): SlaLine | null {
  if (missed) return { target, text: `${target} missed`, tone: 'missed', title: `Was due ${dateTime(due)}` };
  if (met)
    return { target, text: `${target} met at ${shortWhen(met)}`, tone: 'met', title: `Due ${dateTime(due)}` };
  if (!due) return null;
  const left = Date.parse(due) - now;
  return {
    target,
    text: left <= 0 ? `${target} overdue` : `${target} due ${dueIn(due, now)}`,
    tone: left <= 15 * 60_000 ? 'soon' : 'due',
    title: `Due ${dateTime(due)}`,
  };
}

export function slaLines(c: Pick<Conversation, 'sla' | 'status'>, now = Date.now()): SlaLine[] {
  const s = c.sla;
  if (!s) return [];
  const lines = [
    line('First response', s.firstResponseDueAt, s.firstResponseAt, s.firstResponseBreachedAt, now),
    line('Resolution', s.resolutionDueAt, null, s.resolutionBreachedAt, now),
  ];
  // A closed conversation has nothing more asked of it: only what was met or missed stays.
  return lines.filter(
    (l): l is SlaLine => l !== null && (c.status === 'open' || l.tone === 'missed' || l.tone === 'met'),
  );
}

/** The row's badge: a missed target, else the next due one while open; null when nothing is asked. */
export function slaBadge(c: Pick<Conversation, 'sla' | 'status'>, now = Date.now()): SlaLine | null {
  const lines = slaLines(c, now);
  return (
    lines.find((l) => l.tone === 'missed') ??
    (c.status === 'open' ? lines.find((l) => l.tone === 'due' || l.tone === 'soon') : undefined) ??
    null
  );
}

/** The open conversation's due times, one line each. */
export function SlaSummary({ c }: { c: Pick<Conversation, 'sla' | 'status'> }) {
  const now = useNow();
  const lines = slaLines(c, now);
  if (lines.length === 0) return null;
  return (
    <ul className="sla" aria-label="Service level">
      {lines.map((l) => (
        <li key={l.target} className={`sla-item sla-${l.tone}`} title={l.title}>
          {l.text}
          <span className="visually-hidden"> ({l.title})</span>
        </li>
      ))}
    </ul>
  );
}

/** The time, again every half minute (the "due in" texts count down). */
export function useNow(every = 30_000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), every);
    return () => clearInterval(timer);
  }, [every]);
  return now;
}
