// One contact: its fields, its tags (add, remove) and its attributes (set, remove), each change
// sent at once (POST/DELETE /contacts/{id}/tags, PATCH /contacts/{id}) and the answer shown.
import { useId, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { customerLabel, dateTime } from '../../components/format.ts';
import { KeyValues } from '../../components/KeyValues.tsx';
import { useOne } from '../../components/usePaged.ts';
import type { Contact } from './ContactsPage.tsx';

export function ContactDetail() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const contact = useOne(() => api.contacts.get(id), [api, id]);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [tag, setTag] = useState('');
  const [attrName, setAttrName] = useState('');
  const [attrValue, setAttrValue] = useState('');
  const tagsId = useId();
  const c = contact.value;

  const change = async (what: string, run: () => Promise<Contact | undefined | null>) => {
    setBusy(what);
    setError(null);
    try {
      const updated = await run();
      if (updated) contact.setValue(updated);
      else contact.reload();
      return true;
    } catch (err) {
      setError(shownError(err));
      return false;
    } finally {
      setBusy(null);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <p>
        <Link to="/contacts">← All contacts</Link>
      </p>
      <ErrorMessage error={contact.error} />
      {!c ? (
        contact.error ? null : (
          <p className="muted" role="status">
            Loading…
          </p>
        )
      ) : (
        <>
          <h1 id="page-title">{customerLabel(c)}</h1>
          <KeyValues
            rows={[
              ['Phone', c.phone ?? 'Not shared'],
              ['WhatsApp username', c.whatsappUsername ? `@${c.whatsappUsername}` : null],
              ['WhatsApp user id', c.whatsappUserId],
              ['Email', c.email],
              ['Opted in', c.optedIn ? 'Yes' : 'No'],
              ['Marketing opt-out', c.marketingOptOut ? 'Yes' : 'No'],
              ['Last wrote', dateTime(c.lastInboundAt)],
              ['Created', dateTime(c.createdAt)],
            ]}
          />
          <ErrorMessage error={error} />
          <div className="panel">
            <h2 id={tagsId}>Tags</h2>
            <ul aria-labelledby={tagsId} className="tag-list">
              {c.tags.length === 0 ? <li className="muted">No tags.</li> : null}
              {c.tags.map((t) => (
                <li key={t} className="tag">
                  {t}
                  <button
                    type="button"
                    aria-label={`Remove tag ${t}`}
                    disabled={busy !== null}
                    onClick={() =>
                      change(`untag:${t}`, async () => {
                        await api.contacts.untag(c.id, t);
                        return null;
                      })
                    }
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
                if (await change('tag', () => api.contacts.tag(c.id, { tags: [tag] }))) setTag('');
              }}
            >
              <Field
                label="New tag"
                required
                maxLength={64}
                value={tag}
                onChange={(e) => setTag(e.target.value)}
              />
              <Button type="submit" busy={busy === 'tag'}>
                Add tag
              </Button>
            </form>
          </div>
          <div className="panel">
            <h2>Attributes</h2>
            {Object.keys(c.attributes).length === 0 ? <p className="muted">No attributes.</p> : null}
            <dl className="key-values">
              {Object.entries(c.attributes).map(([k, v]) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd>
                    {String(v)}{' '}
                    <Button
                      variant="quiet"
                      aria-label={`Remove attribute ${k}`}
                      disabled={busy !== null}
                      onClick={() =>
                        change(`attr:${k}`, () => api.contacts.update(c.id, { attributes: { [k]: null } }))
                      }
                    >
                      Remove
                    </Button>
                  </dd>
                </div>
              ))}
            </dl>
            <form
              className="toolbar"
              onSubmit={async (e) => {
                e.preventDefault();
                const ok = await change('attr', () =>
                  api.contacts.update(c.id, { attributes: { [attrName.trim()]: attrValue } }),
                );
                if (ok) {
                  setAttrName('');
                  setAttrValue('');
                }
              }}
            >
              <Field
                label="Attribute name"
                required
                maxLength={40}
                value={attrName}
                onChange={(e) => setAttrName(e.target.value)}
              />
              <Field
                label="Value"
                maxLength={500}
                value={attrValue}
                onChange={(e) => setAttrValue(e.target.value)}
              />
              <Button type="submit" busy={busy === 'attr'}>
                Set attribute
              </Button>
            </form>
          </div>
        </>
      )}
    </section>
  );
}
