// A reply outside the customer service window: an approved template, its parameters, and a
// preview of the message the customer will get.
import type { Tidings } from '@tidings/sdk';
import { useId, useState } from 'react';
import { type ShownError, shownError } from '../../api.ts';
import { Bubble } from '../../components/Bubble.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { usePaged } from '../../components/usePaged.ts';
import { parametersOf, renderTemplate, slotsOf, type Template } from '../templates/template-text.ts';
import type { Message } from './types.ts';

export function TemplateReply({
  api,
  id,
  onSent,
}: {
  api: Tidings;
  id: string;
  onSent: (m: Message) => void;
}) {
  const templates = usePaged<Template>(() => api.templates.list({ status: 'APPROVED', limit: 100 }), [api]);
  const [picked, setPicked] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const pickId = useId();
  const template = templates.items?.find((t) => t.id === picked) ?? null;
  const slots = template ? slotsOf(template) : [];
  const shown = template ? renderTemplate(template, values) : null;

  return (
    <form
      className="composer"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!template) return;
        setBusy(true);
        setError(null);
        try {
          onSent(
            await api.conversations.reply(id, {
              templateName: template.name,
              templateLanguage: template.language,
              ...(slots.length > 0 ? { parameters: parametersOf(template, values) } : {}),
            }),
          );
          setValues({});
        } catch (err) {
          setError(shownError(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="field">
        <label htmlFor={pickId}>Template</label>
        <select
          id={pickId}
          className="input"
          value={picked}
          onChange={(e) => {
            setPicked(e.target.value);
            setValues({});
          }}
        >
          <option value="">{templates.items === null ? 'Loading…' : 'Pick an approved template'}</option>
          {(templates.items ?? []).map((t) => (
            <option key={t.id} value={t.id}>
              {t.name} ({t.language})
            </option>
          ))}
        </select>
      </div>
      <ErrorMessage error={templates.error} />
      {templates.items && templates.items.length === 0 ? (
        <p className="muted">The account has no approved template yet (see Templates).</p>
      ) : null}
      {slots.map((s) => (
        <Field
          key={s.key}
          label={s.label}
          required
          maxLength={1024}
          value={values[s.key] ?? ''}
          onChange={(e) => setValues((v) => ({ ...v, [s.key]: e.target.value }))}
        />
      ))}
      {shown ? (
        <figure className="chat preview">
          <figcaption className="visually-hidden">Preview</figcaption>
          <Bubble direction="outbound" header={shown.header} footer={shown.footer} buttons={shown.buttons}>
            {shown.body}
          </Bubble>
        </figure>
      ) : null}
      <ErrorMessage error={error} />
      <Button type="submit" variant="primary" busy={busy} disabled={!template}>
        Send template
      </Button>
    </form>
  );
}
