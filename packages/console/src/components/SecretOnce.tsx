// A secret the API shows once (an API key, a webhook's signing secret): the text itself, a copy
// button (navigator.clipboard) that says when it copied, and the warning that it will not be shown
// again. The text stays selectable for when the clipboard is refused.
import { useId, useState } from 'react';
import { Button } from './Button.tsx';
import './pieces.css';

interface Props {
  /** What it is, e.g. "API key". */
  label: string;
  secret: string;
}

export function SecretOnce({ label, secret }: Props) {
  const id = useId();
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  return (
    <div className="secret-once">
      <p className="warning">
        <strong>Copy it now.</strong> This {label.toLowerCase()} will not be shown again.
      </p>
      <p className="secret-label" id={`${id}-label`}>
        {label}
      </p>
      <code className="secret-text" data-testid="secret">
        {secret}
      </code>
      <div className="secret-actions">
        <Button
          variant="primary"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(secret);
              setCopied('yes');
            } catch {
              setCopied('failed');
            }
          }}
        >
          {copied === 'yes' ? 'Copied' : `Copy the ${label.toLowerCase()}`}
        </Button>
        <span role="status" className={copied === 'failed' ? 'field-error' : 'muted'}>
          {copied === 'yes'
            ? 'Copied to the clipboard.'
            : copied === 'failed'
              ? 'The browser refused the clipboard: select the text and copy it.'
              : ''}
        </span>
      </div>
    </div>
  );
}
