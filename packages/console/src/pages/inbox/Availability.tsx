// The signed-in member's availability (PATCH /team/members/{id} on their own member): online takes
// new conversations from their teams, away keeps what they have, offline takes none.
import type { Tidings } from '@tidings/sdk';
import { useId, useState } from 'react';
import { type ShownError, shownError } from '../../api.ts';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import type { Member } from './types.ts';

type Availability = Member['availability'];

export function AvailabilityToggle({
  api,
  member,
  onChanged,
}: {
  api: Tidings;
  member: Member | undefined;
  onChanged: (m: Member) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const id = useId();
  if (!member) return null;
  return (
    <div className="field availability">
      <label htmlFor={id}>My availability</label>
      <select
        id={id}
        className={`input availability-${member.availability}`}
        value={member.availability}
        disabled={busy}
        onChange={async (e) => {
          setBusy(true);
          setError(null);
          try {
            onChanged(await api.team.update(member.id, { availability: e.target.value as Availability }));
          } catch (err) {
            setError(shownError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <option value="online">Online</option>
        <option value="away">Away</option>
        <option value="offline">Offline</option>
      </select>
      <ErrorMessage error={error} />
    </div>
  );
}
