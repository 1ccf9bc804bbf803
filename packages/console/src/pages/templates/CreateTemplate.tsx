// A new template: name, language, category, an optional text header, the body with its {{1}}
// placeholders (or named ones, {{first_name}}), an optional footer and quick-reply buttons, each
// placeholder with the sample value the review needs. The preview bubble shows the message with
// the samples filled in as they are typed. Created as DRAFT; submitted from the list.
import type { Tidings } from '@tidings/sdk';
import { useId, useState } from 'react';
import { type ShownError, shownError } from '../../api.ts';
import { Bubble } from '../../components/Bubble.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { fill, placeholdersIn, type Template } from './template-text.ts';

type Create = Parameters<Tidings['templates']['create']>[0];
type Components = Create['components'];

export function CreateTemplate({ api, onCreated }: { api: Tidings; onCreated: (t: Template) => void }) {
  const [name, setName] = useState('');
  const [language, setLanguage] = useState('en_US');
  const [category, setCategory] = useState<Create['category']>('UTILITY');
  const [header, setHeader] = useState('');
  const [body, setBody] = useState('');
  const [footer, setFooter] = useState('');
  const [buttons, setButtons] = useState('');
  const [samples, setSamples] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [made, setMade] = useState<string | null>(null);
  const ids = { category: useId(), body: useId(), buttons: useId() };

  const headerSlots = placeholdersIn(header);
  const bodySlots = placeholdersIn(body);
  const named = [...headerSlots, ...bodySlots].some((p) => !/^\d+$/.test(p));
  const sample = (part: 'h' | 'b', p: string) => samples[`${part}:${p}`] ?? '';
  const valuesFor = (part: 'h' | 'b', slots: string[]) =>
    Object.fromEntries(slots.map((p) => [p, sample(part, p)]));
  const quickReplies = buttons
    .split('\n')
    .map((b) => b.trim())
    .filter(Boolean);

  const components = (): Components => {
    const out: Components = [];
    if (header.trim()) {
      const h = headerSlots[0];
      out.push({
        type: 'HEADER',
        format: 'TEXT',
        text: header,
        ...(h
          ? {
              example: named
                ? { header_text_named_params: [{ param_name: h, example: sample('h', h) }] }
                : { header_text: [sample('h', h)] },
            }
          : {}),
      });
    }
    out.push({
      type: 'BODY',
      text: body,
      ...(bodySlots.length > 0
        ? {
            example: named
              ? { body_text_named_params: bodySlots.map((p) => ({ param_name: p, example: sample('b', p) })) }
              : { body_text: [bodySlots.map((p) => sample('b', p))] },
          }
        : {}),
    });
    if (footer.trim()) out.push({ type: 'FOOTER', text: footer });
    if (quickReplies.length > 0)
      out.push({
        type: 'BUTTONS',
        buttons: quickReplies.map((text) => ({ type: 'QUICK_REPLY' as const, text })),
      });
    return out;
  };

  const sampleField = (part: 'h' | 'b', p: string) => (
    <Field
      key={`${part}:${p}`}
      label={`Sample for ${part === 'h' ? 'the header’s ' : ''}{{${p}}}`}
      required
      maxLength={1024}
      value={sample(part, p)}
      onChange={(e) => setSamples((s) => ({ ...s, [`${part}:${p}`]: e.target.value }))}
    />
  );

  return (
    <div className="panel create-template">
      <h2>New template</h2>
      <div className="create-grid">
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            setBusy(true);
            setError(null);
            setMade(null);
            try {
              const t = await api.templates.create({
                name,
                language,
                category,
                ...(named ? { parameterFormat: 'NAMED' as const } : {}),
                components: components(),
              });
              onCreated(t);
              setMade(`${t.name} was created as a draft: submit it for review in the list below.`);
            } catch (err) {
              setError(shownError(err));
            } finally {
              setBusy(false);
            }
          }}
        >
          <Field
            label="Name"
            required
            maxLength={512}
            pattern="[a-z0-9_]+"
            hint="Lowercase letters, digits and underscores."
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <Field
            label="Language"
            required
            maxLength={10}
            hint="Meta’s code: en, en_US, pt_BR, …"
            value={language}
            onChange={(e) => setLanguage(e.target.value)}
          />
          <div className="field">
            <label htmlFor={ids.category}>Category</label>
            <select
              id={ids.category}
              className="input"
              value={category}
              onChange={(e) => setCategory(e.target.value as Create['category'])}
            >
              <option value="UTILITY">Utility</option>
              <option value="MARKETING">Marketing</option>
              <option value="AUTHENTICATION">Authentication</option>
            </select>
          </div>
          <Field
            label="Header (optional)"
            maxLength={60}
            hint="One line of text; at most one placeholder, {{1}}."
            value={header}
            onChange={(e) => setHeader(e.target.value)}
          />
          {headerSlots.slice(0, 1).map((p) => sampleField('h', p))}
          <div className="field">
            <label htmlFor={ids.body}>Body</label>
            <p className="field-hint" id={`${ids.body}-hint`}>
              Placeholders {'{{1}}'}, {'{{2}}'}, … in order (not at the very start or end).
            </p>
            <textarea
              id={ids.body}
              aria-describedby={`${ids.body}-hint`}
              className="input"
              required
              maxLength={1024}
              value={body}
              onChange={(e) => setBody(e.target.value)}
            />
          </div>
          {bodySlots.map((p) => sampleField('b', p))}
          <Field
            label="Footer (optional)"
            maxLength={60}
            value={footer}
            onChange={(e) => setFooter(e.target.value)}
          />
          <div className="field">
            <label htmlFor={ids.buttons}>Quick reply buttons (optional)</label>
            <p className="field-hint" id={`${ids.buttons}-hint`}>
              One label per line, up to 25 characters each.
            </p>
            <textarea
              id={ids.buttons}
              aria-describedby={`${ids.buttons}-hint`}
              className="input"
              rows={2}
              value={buttons}
              onChange={(e) => setButtons(e.target.value)}
            />
          </div>
          <ErrorMessage error={error} />
          {made ? (
            <p className="notice" role="status">
              {made}
            </p>
          ) : null}
          <Button type="submit" variant="primary" busy={busy}>
            Create template
          </Button>
        </form>
        <div className="template-preview">
          <h3>Preview</h3>
          <figure className="chat">
            <figcaption className="visually-hidden">Preview of the message</figcaption>
            <Bubble
              direction="outbound"
              header={header.trim() ? fill(header, valuesFor('h', headerSlots)) : null}
              footer={footer.trim() || null}
              buttons={quickReplies}
            >
              {body ? (
                fill(body, valuesFor('b', bodySlots))
              ) : (
                <span className="muted">The body appears here.</span>
              )}
            </Bubble>
          </figure>
        </div>
      </div>
    </div>
  );
}
