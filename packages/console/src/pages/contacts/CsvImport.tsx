// CSV import: the file is read and parsed here (csv.ts), sent as POST /bulk/contacts jobs of at
// most 1000 rows (upsert: a phone the account has is updated), and each job read again every half
// second (GET /bulk/contacts/{jobId}) to move the progress bar, until every row has its outcome.
import type { Tidings } from '@tidings/sdk';
import { useId, useState } from 'react';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { contactsOf } from './csv.ts';

const JOB_SIZE = 1000;
const POLL_MS = 500;

interface Tally {
  total: number;
  processed: number;
  created: number;
  updated: number;
  failures: { line: number; message: string }[];
  done: boolean;
}

export function CsvImport({ api, onDone }: { api: Tidings; onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [tally, setTally] = useState<Tally | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const fileId = useId();
  const progressId = useId();

  const run = async () => {
    if (!file) return;
    setBusy(true);
    setError(null);
    setTally(null);
    try {
      const { contacts, lines } = contactsOf(await file.text());
      const t: Tally = {
        total: contacts.length,
        processed: 0,
        created: 0,
        updated: 0,
        failures: [],
        done: false,
      };
      setTally({ ...t });
      for (let start = 0; start < contacts.length; start += JOB_SIZE) {
        const chunk = contacts.slice(start, start + JOB_SIZE);
        let job = await api.bulk.importContacts({ contacts: chunk, mode: 'upsert' });
        const before = t.processed;
        while (job.status === 'queued' || job.status === 'processing') {
          setTally({ ...t, processed: before + job.processed });
          await new Promise((r) => setTimeout(r, POLL_MS));
          job = await api.bulk.getContactImport(job.jobId);
        }
        t.processed = before + chunk.length;
        for (const r of job.results) {
          if (r.outcome === 'created') t.created++;
          else if (r.outcome === 'updated') t.updated++;
          else t.failures.push({ line: lines[start + r.index]!, message: r.error?.message ?? 'failed' });
        }
        if (job.status === 'failed') {
          const reached = new Set(job.results.map((r) => r.index));
          chunk.forEach((_, i) => {
            if (!reached.has(i))
              t.failures.push({ line: lines[start + i]!, message: job.error?.message ?? 'The job failed.' });
          });
        }
        setTally({ ...t });
      }
      setTally({ ...t, done: true });
      onDone();
    } catch (err) {
      setError(shownError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="panel">
      <h2>Import a CSV</h2>
      <p className="muted">
        A header row naming the columns: <code>phone</code> (required), <code>name</code>, <code>email</code>,{' '}
        <code>tags</code> (separated by ; or |), <code>optedIn</code>; any other column becomes an attribute.
        A phone the account already has updates that contact.
      </p>
      <div className="toolbar">
        <div className="field">
          <label htmlFor={fileId}>CSV file</label>
          <input
            id={fileId}
            className="input"
            type="file"
            accept=".csv,text/csv"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          />
        </div>
        <Button variant="primary" onClick={run} busy={busy} disabled={!file}>
          Import
        </Button>
      </div>
      <ErrorMessage error={error} />
      {tally ? (
        <div>
          <label htmlFor={progressId}>Import progress</label>{' '}
          <progress id={progressId} max={tally.total} value={tally.processed}>
            {tally.processed} of {tally.total}
          </progress>
          <p role="status">
            {tally.done
              ? `Done: ${tally.created} created, ${tally.updated} updated, ${tally.failures.length} failed.`
              : `${tally.processed} of ${tally.total} rows…`}
          </p>
          {tally.failures.length > 0 ? (
            <ul className="import-failures">
              {tally.failures.map((f) => (
                <li key={f.line}>
                  Line {f.line}: {f.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
