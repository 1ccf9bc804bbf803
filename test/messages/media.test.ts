// Media (docs/messaging.md § Media), through HTTP on the sandbox and on the fake WhatsApp Cloud API:
// uploads of every kind (kept in the database, byte for byte, and given to Meta on a live channel),
// the type, size and missing-file refusals; sends by `med_…` id (Meta receives its own id, uploaded
// again when its copy is too old); another account's id refused; a customer's file fetched from
// Meta by a job and streamed by GET /messages/{id}/media without the test holding the token; a file
// Meta no longer has (410); and retention.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { API_PREFIX } from '../../src/app.ts';
import { type FakeWhatsAppCloud, inboundMessages } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey, type Reply } from '../helpers/client.ts';
import {
  credit,
  customerWrote,
  eventually,
  type MessagingTenant,
  messageWhen,
  sandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

// Retries a second apart: a send whose upload at hand-over failed comes back soon.
const env = useMessagingApp({ config: { dispatchRetryDelaySeconds: 1 } });

type Tenant = MessagingTenant & { business: ReturnType<FakeWhatsAppCloud['createBusiness']> };

interface Part {
  name: string;
  value?: string;
  file?: { bytes: Buffer; type: string; filename?: string };
}

/** A multipart/form-data body of these parts. */
function multipart(parts: Part[]): { payload: Buffer; contentType: string } {
  const boundary = `----test${randomBytes(8).toString('hex')}`;
  const pieces: Buffer[] = [];
  for (const p of parts) {
    if (p.file) {
      pieces.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.file.filename ?? 'upload.bin'}"\r\nContent-Type: ${p.file.type}\r\n\r\n`,
        ),
        p.file.bytes,
        Buffer.from('\r\n'),
      );
    } else {
      pieces.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`,
        ),
      );
    }
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function upload(key: string, parts: Part[]): Promise<Reply> {
  const { payload, contentType } = multipart(parts);
  const raw = await env.app.inject({
    method: 'POST',
    url: `${API_PREFIX}/media`,
    headers: { 'x-api-key': key, 'content-type': contentType },
    payload,
  });
  const body = (raw.headers['content-type'] ?? '').toString().includes('json') ? raw.json() : raw.body;
  return { status: raw.statusCode, body, headers: raw.headers, raw };
}

const file = (bytes: Buffer, type: string, filename?: string): Part[] => [
  { name: 'file', file: { bytes, type, ...(filename ? { filename } : {}) } },
];

/** `size` bytes of a file that starts with `head`. */
const bytesOf = (size: number, head = Buffer.alloc(0)) =>
  Buffer.concat([head, randomBytes(size - head.length)]);

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A WebP whose VP8X flags say animated (or not). */
function webp(size: number, animated: boolean): Buffer {
  const head = Buffer.alloc(21);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(size - 8, 4);
  head.write('WEBPVP8X', 8, 'latin1');
  head.writeUInt32LE(10, 16);
  head[20] = animated ? 0x02 : 0x00;
  return bytesOf(size, head);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let base: string | null = null;
/** The app on a real port (once per file): for Meta's callbacks, and uploads over HTTP. */
async function listening(): Promise<string> {
  if (!base) {
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
  }
  return base;
}

async function content(key: string, path: string) {
  const raw = await env.app.inject({
    method: 'GET',
    url: `${API_PREFIX}${path}`,
    headers: { 'x-api-key': key },
  });
  return raw;
}

async function liveTenant(): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, '10.00');
  return t;
}

const uploadsTo = (t: Tenant) =>
  env.fake.requests.filter(
    (r) => r.method === 'POST' && r.path.endsWith(`/${t.business.phoneNumberId}/media`),
  );

describe('uploads on the sandbox', () => {
  it('keeps each kind byte for byte, answers it, and streams it back', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const cases = [
      { kind: 'image', type: 'image/png', bytes: bytesOf(3000, PNG), filename: 'logo.png' },
      { kind: 'video', type: 'video/mp4', bytes: bytesOf(300_000), filename: 'clip.mp4' },
      { kind: 'audio', type: 'audio/ogg', bytes: bytesOf(20_000), filename: 'note.ogg' },
      // Over two chunks (256 KiB each), with a name outside ASCII.
      { kind: 'document', type: 'application/pdf', bytes: bytesOf(600_000), filename: 'Rechnung März.pdf' },
      { kind: 'sticker', type: 'image/webp', bytes: webp(50_000, false), filename: 'smile.webp' },
    ];
    for (const c of cases) {
      const res = await upload(t.apiKey, file(c.bytes, c.type, c.filename));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^med_[0-9a-z]{26}$/),
        kind: c.kind,
        mimeType: c.type,
        sizeBytes: c.bytes.length,
        sha256: sha256(c.bytes),
        filename: c.filename,
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
      });
      const days = (Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)) / 86_400_000;
      expect(days).toBe(30);

      const got = await call(env.app, 'GET', `/media/${res.body.id}`, { key: t.apiKey });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);

      const raw = await content(t.apiKey, `/media/${res.body.id}/content`);
      expect(raw.statusCode, raw.body.slice(0, 500)).toBe(200);
      expect(raw.headers['content-type']).toBe(c.type);
      expect(raw.headers['content-length']).toBe(String(c.bytes.length));
      expect(String(raw.headers['content-disposition'])).toContain(
        `filename*=UTF-8''${encodeURIComponent(c.filename)}`,
      );
      expect(sha256(raw.rawPayload)).toBe(sha256(c.bytes));
    }
    // Nothing went to Meta.
    expect(env.fake.requests.filter((r) => r.path.endsWith('/media'))).toEqual([]);
  });

  it('takes the kind when it agrees with the type, and names a file that came without a name', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    // An empty filename: the upload is named after its id.
    const res = await upload(t.apiKey, [
      { name: 'kind', value: 'image' },
      { name: 'file', file: { bytes: bytesOf(100, PNG), type: 'image/png', filename: '' } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.kind).toBe('image');
    expect(res.body.filename).toBe(`${res.body.id}.png`);

    // A file sent as application/octet-stream takes its type from its extension.
    const octet = await upload(t.apiKey, file(bytesOf(300), 'application/octet-stream', 'minutes.docx'));
    expect(octet.status, JSON.stringify(octet.body)).toBe(201);
    expect(octet.body).toMatchObject({
      kind: 'document',
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    const unknown = await upload(t.apiKey, file(bytesOf(300), 'application/octet-stream', 'archive.zip'));
    expectError(unknown, 400, 'INVALID_REQUEST');
  });

  it('replays an upload for its Idempotency-Key, and refuses the key for another file', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const send = async (bytes: Buffer) => {
      const { payload, contentType } = multipart(file(bytes, 'image/png', 'same.png'));
      const raw = await env.app.inject({
        method: 'POST',
        url: `${API_PREFIX}/media`,
        headers: { 'x-api-key': t.apiKey, 'content-type': contentType, 'idempotency-key': 'upload-1' },
        payload,
      });
      return { status: raw.statusCode, body: raw.json(), headers: raw.headers, raw } as Reply;
    };
    const bytes = bytesOf(1000, PNG);
    const first = await send(bytes);
    expect(first.status).toBe(201);
    const again = await send(bytes);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expectError(await send(bytesOf(2000, PNG)), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('refuses a type the kind does not take, a missing file, a bad kind and a JSON body', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const gif = await upload(t.apiKey, file(bytesOf(100), 'image/gif'));
    expectError(gif, 400, 'INVALID_REQUEST');
    expect(gif.body.error.details).toEqual([{ field: 'file', issue: expect.stringContaining('image/gif') }]);

    const mismatch = await upload(t.apiKey, [
      { name: 'kind', value: 'video' },
      ...file(bytesOf(100, PNG), 'image/png'),
    ]);
    expectError(mismatch, 400, 'INVALID_REQUEST');
    expect(mismatch.body.error.details).toEqual([
      { field: 'file', issue: expect.stringContaining('video/mp4') },
    ]);

    // The kind after the file is checked too.
    const after = await upload(t.apiKey, [
      ...file(bytesOf(100, PNG), 'image/png'),
      { name: 'kind', value: 'sticker' },
    ]);
    expectError(after, 400, 'INVALID_REQUEST');
    expect(after.body.error.details[0].field).toBe('file');

    const missing = await upload(t.apiKey, [{ name: 'kind', value: 'image' }]);
    expectError(missing, 400, 'INVALID_REQUEST');
    expect(missing.body.error.details).toEqual([{ field: 'file', issue: 'is required' }]);

    const badKind = await upload(t.apiKey, [
      { name: 'kind', value: 'gif' },
      ...file(bytesOf(100, PNG), 'image/png'),
    ]);
    expectError(badKind, 400, 'INVALID_REQUEST');
    expect(badKind.body.error.details[0].field).toBe('kind');

    const empty = await upload(t.apiKey, file(Buffer.alloc(0), 'image/png'));
    expectError(empty, 400, 'INVALID_REQUEST');
    expect(empty.body.error.details).toEqual([{ field: 'file', issue: 'is empty' }]);

    const json = await call(env.app, 'POST', '/media', { key: t.apiKey, body: { file: 'x' } });
    expectError(json, 415, 'UNSUPPORTED_MEDIA_TYPE');

    const count = await env.tdb.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM media WHERE account_id = $1',
      [t.accountId],
    );
    expect(count.rows[0]!.n).toBe(0);
  });

  it('answers 413 naming file over the kind’s limit (a static sticker 100 KB, an animated one 500 KB, an image 5 MB)', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const big = await upload(t.apiKey, file(webp(100 * 1024 + 1, false), 'image/webp'));
    expectError(big, 413, 'PAYLOAD_TOO_LARGE');
    expect(big.body.error.details).toEqual([{ field: 'file', issue: expect.stringContaining('100 KB') }]);

    const animated = await upload(t.apiKey, file(webp(300 * 1024, true), 'image/webp'));
    expect(animated.status, JSON.stringify(animated.body)).toBe(201);
    const tooAnimated = await upload(t.apiKey, file(webp(500 * 1024 + 1, true), 'image/webp'));
    expectError(tooAnimated, 413, 'PAYLOAD_TOO_LARGE');

    const image = await upload(t.apiKey, file(bytesOf(5 * 1024 * 1024 + 1, PNG), 'image/png'));
    expectError(image, 413, 'PAYLOAD_TOO_LARGE');
    expect(image.body.error.details).toEqual([{ field: 'file', issue: expect.stringContaining('5 MB') }]);
  });

  it('sends an image by its id, and shows the id on the message', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const phone = '+14155552101';
    await customerWrote(env.tdb.db, t.accountId, phone, new Date());
    const up = await upload(t.apiKey, file(bytesOf(2000, PNG), 'image/png', 'a.png'));
    const estimated = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: { to: phone, type: 'media', media: { kind: 'image', id: up.body.id } },
    });
    expect(estimated.status, JSON.stringify(estimated.body)).toBe(200);
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'media', media: { kind: 'image', id: up.body.id, caption: 'Look' } },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body.media).toEqual({ kind: 'image', id: up.body.id, caption: 'Look' });
    await messageWhen(env.app, t.apiKey, sent.body.id, 'read');
    // The file a message went with is its media.
    const raw = await content(t.apiKey, `/messages/${sent.body.id}/media`);
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toBe('image/png');
    expect(raw.headers['content-length']).toBe('2000');
  });
});

describe('uploads over a real connection', () => {
  it('streams a 12 MB document in, and answers a 6 MB image its 413 instead of dropping the connection', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const url = `${await listening()}${API_PREFIX}/media`;
    const post = async (bytes: Buffer, type: string, name: string) => {
      const form = new FormData();
      form.append('file', new Blob([bytes], { type }), name);
      const res = await fetch(url, { method: 'POST', headers: { 'x-api-key': t.apiKey }, body: form });
      return { status: res.status, body: (await res.json()) as any };
    };
    const doc = bytesOf(12 * 1024 * 1024);
    const up = await post(
      doc,
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'big.docx',
    );
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    expect(up.body).toMatchObject({ kind: 'document', sizeBytes: doc.length, sha256: sha256(doc) });
    const back = await fetch(`${url}/${up.body.id}/content`, { headers: { 'x-api-key': t.apiKey } });
    expect(sha256(Buffer.from(await back.arrayBuffer()))).toBe(sha256(doc));

    const image = await post(bytesOf(6 * 1024 * 1024, PNG), 'image/png', 'big.png');
    expect(image.status).toBe(413);
    expect(image.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: [{ field: 'file' }] });
  });
});

describe('sends naming media', () => {
  it('refuses both or neither of url and id, a kind other than the upload’s, and another account’s id', async () => {
    const a = await sandboxTenant(env.app, env.partner.partnerKey);
    const b = await sandboxTenant(env.app, env.partner.partnerKey);
    const phone = '+14155552102';
    await customerWrote(env.tdb.db, a.accountId, phone, new Date());
    const mine = await upload(a.apiKey, file(bytesOf(500, PNG), 'image/png'));
    const theirs = await upload(b.apiKey, file(bytesOf(500, PNG), 'image/png'));
    const send = (media: Record<string, unknown>) =>
      call(env.app, 'POST', '/messages', { key: a.apiKey, body: { to: phone, type: 'media', media } });
    const field = async (media: Record<string, unknown>) => {
      const res = await send(media);
      expectError(res, 400, 'INVALID_REQUEST');
      return res.body.error.details.map((d: { field: string }) => d.field);
    };
    expect(await field({ kind: 'image', id: mine.body.id, url: 'https://example.com/a.png' })).toEqual([
      'media.id',
    ]);
    expect(await field({ kind: 'image' })).toEqual(['media.url']);
    expect(await field({ kind: 'image', id: 'med_nope' })).toEqual(['media.id']);
    expect(await field({ kind: 'video', id: mine.body.id })).toEqual(['media.kind']);
    expect(await field({ kind: 'image', id: theirs.body.id })).toEqual(['media.id']);

    // Bulk sends take links only.
    const bulk = await call(env.app, 'POST', '/bulk/messages', {
      key: a.apiKey,
      body: { type: 'media', media: { kind: 'image', id: mine.body.id }, recipients: [{ to: phone }] },
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(202);
    expect(bulk.body.results[0]).toMatchObject({
      status: 'refused',
      error: {
        code: 'INVALID_REQUEST',
        details: [{ field: 'media.id', issue: 'is not taken here: give media.url' }],
      },
    });

    // Their media is not found by another account at all.
    expectError(
      await call(env.app, 'GET', `/media/${theirs.body.id}`, { key: a.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/media/${theirs.body.id}`, { key: a.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect((await content(a.apiKey, `/media/${theirs.body.id}/content`)).statusCode).toBe(404);

    // A deleted upload can no longer be sent.
    expect((await call(env.app, 'DELETE', `/media/${mine.body.id}`, { key: a.apiKey })).status).toBe(204);
    expectError(
      await call(env.app, 'GET', `/media/${mine.body.id}`, { key: a.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect(await field({ kind: 'image', id: mine.body.id })).toEqual(['media.id']);
  });
});

describe('uploads on the WhatsApp Cloud API', () => {
  it('gives the file to Meta, sends by Meta’s id, and deletes Meta’s copy with its own', async () => {
    const t = await liveTenant();
    const bytes = bytesOf(4000, PNG);
    const up = await upload(t.apiKey, file(bytes, 'image/png', 'photo.png'));
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const uploads = uploadsTo(t);
    expect(uploads).toHaveLength(1);
    expect(uploads[0]!.headers.authorization).toBe(`Bearer ${t.business.accessToken}`);
    const held = [...env.fake.media.values()].find((m) => m.phoneNumberId === t.business.phoneNumberId)!;
    expect(held.bytes.equals(bytes)).toBe(true);
    expect(held.mimeType).toBe('image/png');

    const phone = '+14155552103';
    await customerWrote(env.tdb.db, t.accountId, phone, new Date());
    const before = env.fake.sent.length;
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'media', media: { kind: 'image', id: up.body.id, caption: 'Here' } },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const [got] = (await env.fake.waitForSends(before + 1)).slice(before);
    expect(got!.body.type).toBe('image');
    expect(got!.body.image).toEqual({ id: held.id, caption: 'Here' });
    await messageWhen(env.app, t.apiKey, sent.body.id, 'sent');
    // Sent while Meta's copy is fresh: not uploaded again.
    expect(uploadsTo(t)).toHaveLength(1);

    expect((await call(env.app, 'DELETE', `/media/${up.body.id}`, { key: t.apiKey })).status).toBe(204);
    expect(env.fake.media.has(held.id)).toBe(false);
  });

  it('uploads again at the send when Meta’s copy is 29 days old, or there is none (a sandbox key’s upload)', async () => {
    const t = await liveTenant();
    const phone = '+14155552104';
    await customerWrote(env.tdb.db, t.accountId, phone, new Date());
    const up = await upload(t.apiKey, file(bytesOf(3000), 'application/pdf', 'terms.pdf'));
    expect(up.status).toBe(201);
    await env.tdb.db.query(
      `UPDATE media SET provider_uploaded_at = now() - interval '29 days 1 hour' WHERE id = $1`,
      [up.body.id],
    );
    const before = env.fake.sent.length;
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'media', media: { kind: 'document', id: up.body.id } },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const [got] = (await env.fake.waitForSends(before + 1)).slice(before);
    const uploads = uploadsTo(t);
    expect(uploads).toHaveLength(2);
    const fresh = [...env.fake.media.values()].filter((m) => m.phoneNumberId === t.business.phoneNumberId);
    const newest = fresh[fresh.length - 1]!;
    // The document goes by the new id, with the upload's filename.
    expect(got!.body.document).toEqual({ id: newest.id, filename: 'terms.pdf' });

    // A sandbox key's upload stays here; a live send gives it to Meta first.
    const sandbox = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    const local = await upload(sandbox.apiKey, file(bytesOf(900, PNG), 'image/png'));
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    expect(uploadsTo(t)).toHaveLength(2);
    const second = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'media', media: { kind: 'image', id: local.body.id } },
    });
    expect(second.status, JSON.stringify(second.body)).toBe(202);
    const [again] = (await env.fake.waitForSends(before + 2)).slice(before + 1);
    expect(uploadsTo(t)).toHaveLength(3);
    expect(again!.body.image.id).toMatch(/^\d+$/);
    expect(env.fake.media.get(again!.body.image.id)!.bytes.length).toBe(900);
  });

  it('retries a send whose upload at hand-over failed, and fails it when the upload is deleted meanwhile', async () => {
    const t = await liveTenant();
    const phone = '+14155552107';
    await customerWrote(env.tdb.db, t.accountId, phone, new Date());
    const sandbox = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    const local = await upload(sandbox.apiKey, file(bytesOf(800, PNG), 'image/png'));
    expect(local.status).toBe(201);
    const isUpload = (r: { method: string; path: string }) =>
      r.method === 'POST' && r.path.endsWith(`/${t.business.phoneNumberId}/media`);
    env.fake.respond = (r) =>
      isUpload(r)
        ? { status: 503, body: { error: { message: '(#131016) Service unavailable', code: 131016 } } }
        : undefined;
    try {
      const sent = await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: { to: phone, type: 'media', media: { kind: 'image', id: local.body.id } },
      });
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      await eventually(
        async () => env.fake.requests.filter(isUpload).length,
        (n) => n >= 1,
      );
      // Deleted while the message waits for its retry: it can no longer go.
      expect((await call(env.app, 'DELETE', `/media/${local.body.id}`, { key: t.apiKey })).status).toBe(204);
      const failed = await messageWhen(env.app, t.apiKey, sent.body.id, 'failed');
      expect(failed.error).toMatchObject({ code: 'MEDIA_NOT_AVAILABLE' });

      // Meta refusing the file fails the send with Meta's reason.
      env.fake.respond = (r) =>
        isUpload(r)
          ? { status: 400, body: { error: { message: '(#131053) Media upload error', code: 131053 } } }
          : undefined;
      const other = await upload(sandbox.apiKey, file(bytesOf(800, PNG), 'image/png'));
      const refused = await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: { to: phone, type: 'media', media: { kind: 'image', id: other.body.id } },
      });
      const gone = await messageWhen(env.app, t.apiKey, refused.body.id, 'failed');
      expect(gone.error.message).toContain('Media upload error');
    } finally {
      env.fake.respond = undefined;
    }
  });

  it('stores nothing when Meta cannot take the file (503) or refuses it (409)', async () => {
    const t = await liveTenant();
    const isUpload = (r: { method: string; path: string }) =>
      r.method === 'POST' && r.path.endsWith('/media');
    env.fake.respond = (r) =>
      isUpload(r)
        ? { status: 500, body: { error: { message: '(#131016) Service unavailable', code: 131016 } } }
        : undefined;
    try {
      const down = await upload(t.apiKey, file(bytesOf(100, PNG), 'image/png'));
      expectError(down, 503, 'SERVICE_UNAVAILABLE');
      env.fake.respond = (r) =>
        isUpload(r)
          ? { status: 400, body: { error: { message: '(#131053) Media upload error', code: 131053 } } }
          : undefined;
      const refused = await upload(t.apiKey, file(bytesOf(100, PNG), 'image/png'));
      expectError(refused, 409, 'CONFLICT');
      expect(refused.body.error.details[0].field).toBe('file');
    } finally {
      env.fake.respond = undefined;
    }
    const count = await env.tdb.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM media WHERE account_id = $1',
      [t.accountId],
    );
    expect(count.rows[0]!.n).toBe(0);
  });
});

describe("customers' files", () => {
  async function inbound(t: Tenant, message: Record<string, unknown>) {
    const payload = env.fake.inboundPayload(t.business, { from: '+14155552105', message });
    const res = await env.fake.postCallback(
      `${await listening()}/api/v1/callbacks/whatsapp/${t.accountId}`,
      t.business,
      payload,
    );
    expect(res.status, res.body).toBe(200);
    const wamid = (payload.entry[0]!.changes[0]!.value as any).messages[0].id as string;
    const stored = await eventually(
      () =>
        env.tdb.db.query<{ id: string }>(
          'SELECT id FROM messages WHERE account_id = $1 AND provider_message_id = $2',
          [t.accountId, wamid],
        ),
      (r) => r.rows.length === 1,
    );
    return stored.rows[0]!.id;
  }

  it('fetches the file as it arrives and streams it exactly, with its type and name', async () => {
    const t = await liveTenant();
    const bytes = bytesOf(700_000);
    const held = env.fake.addMedia(t.business, bytes, 'application/pdf', 'contract.pdf');
    const id = await inbound(t, inboundMessages.document({ id: held.id, filename: 'contract.pdf' }));
    // The job fetched it, without anyone asking.
    const row = await eventually(
      () =>
        env.tdb.db.query<{ status: string; size_bytes: number }>(
          'SELECT status, size_bytes FROM media WHERE message_id = $1',
          [id],
        ),
      (r) => r.rows[0]?.status === 'ready',
    );
    expect(row.rows[0]).toEqual({ status: 'ready', size_bytes: bytes.length });
    const downloads = env.fake.requests.filter((r) => r.path.startsWith('/whatsapp_business/attachments/'));
    expect(downloads.at(-1)!.headers.authorization).toBe(`Bearer ${t.business.accessToken}`);

    const raw = await content(t.apiKey, `/messages/${id}/media`);
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toBe('application/pdf');
    expect(raw.headers['content-length']).toBe(String(bytes.length));
    expect(String(raw.headers['content-disposition'])).toContain('filename="contract.pdf"');
    expect(sha256(raw.rawPayload)).toBe(sha256(bytes));

    // Another account does not find the message.
    const other = await liveTenant();
    expect((await content(other.apiKey, `/messages/${id}/media`)).statusCode).toBe(404);
  });

  it('streams a file on demand (fetching it when the job has not), refuses bytes that fail Meta’s hash, answers 410 for one Meta no longer has', async () => {
    const t = await liveTenant();
    const bytes = bytesOf(5000);
    const held = env.fake.addMedia(t.business, bytes, 'image/jpeg');
    const id = await inbound(t, inboundMessages.image({ id: held.id, mimeType: 'image/jpeg' }));
    const raw = await content(t.apiKey, `/messages/${id}/media`);
    expect(raw.statusCode).toBe(200);
    expect(sha256(raw.rawPayload)).toBe(sha256(bytes));
    expect(String(raw.headers['content-disposition'])).toContain(`filename="`);

    const lost = env.fake.addMedia(t.business, bytesOf(100), 'audio/ogg');
    env.fake.media.delete(lost.id);
    const lostId = await inbound(t, inboundMessages.audio({ id: lost.id, voice: true }));
    const gone = await call(env.app, 'GET', `/messages/${lostId}/media`, { key: t.apiKey });
    expectError(gone, 410, 'MEDIA_GONE');

    // Bytes that do not match Meta's hash are not kept (503 now; the job tries again).
    const bent = env.fake.addMedia(t.business, bytesOf(300), 'image/png');
    env.fake.respond = (r) =>
      r.path.startsWith('/whatsapp_business/attachments/') && r.path.includes(bent.id)
        ? { status: 200, bytes: bytesOf(300), headers: { 'content-type': 'image/png' } }
        : undefined;
    try {
      const bentId = await inbound(t, inboundMessages.image({ id: bent.id, mimeType: 'image/png' }));
      expectError(
        await call(env.app, 'GET', `/messages/${bentId}/media`, { key: t.apiKey }),
        503,
        'SERVICE_UNAVAILABLE',
      );
      env.fake.respond = undefined;
      const fixed = await content(t.apiKey, `/messages/${bentId}/media`);
      expect(fixed.statusCode).toBe(200);
      expect(fixed.rawPayload.equals(bent.bytes)).toBe(true);
    } finally {
      env.fake.respond = undefined;
    }

    const textId = await inbound(t, inboundMessages.text({ body: 'no file' }));
    const none = await call(env.app, 'GET', `/messages/${textId}/media`, { key: t.apiKey });
    expectError(none, 404, 'RESOURCE_NOT_FOUND');
    expect(none.body.error.message).toContain('carries no file');
  });
});

describe("a sandbox customer's file", () => {
  it('is one of the account’s uploads, streamed as the message’s media', async () => {
    const t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    const bytes = bytesOf(270_000);
    const up = await upload(t.sandboxKey, file(bytes, 'video/mp4', 'clip.mp4'));
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const wrote = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155552106', media: { kind: 'video', id: up.body.id, caption: 'see' } },
    });
    expect(wrote.status, JSON.stringify(wrote.body)).toBe(201);
    expect(wrote.body.media).toMatchObject({ kind: 'video', id: up.body.id, mimeType: 'video/mp4' });
    const raw = await content(t.apiKey, `/messages/${wrote.body.id}/media`);
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toBe('video/mp4');
    expect(sha256(raw.rawPayload)).toBe(sha256(bytes));
    // The customer's copy outlives the upload.
    expect((await call(env.app, 'DELETE', `/media/${up.body.id}`, { key: t.apiKey })).status).toBe(204);
    expect((await content(t.apiKey, `/messages/${wrote.body.id}/media`)).statusCode).toBe(200);

    const wrongKind = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155552106', media: { kind: 'image', id: up.body.id } },
    });
    expectError(wrongKind, 400, 'INVALID_REQUEST');

    // Deleting the conversation deletes the customer's file with its message.
    const deleted = await call(env.app, 'DELETE', `/conversations/${wrote.body.conversationId}`, {
      key: t.apiKey,
    });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
    const left = await env.tdb.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM media WHERE message_id = $1',
      [wrote.body.id],
    );
    expect(left.rows[0]!.n).toBe(0);

    // Without an upload, no file exists.
    const bare = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155552106', media: { kind: 'image' } },
    });
    expect(bare.status).toBe(201);
    expectError(
      await call(env.app, 'GET', `/messages/${bare.body.id}/media`, { key: t.apiKey }),
      410,
      'MEDIA_GONE',
    );
  });
});

describe('retention', () => {
  it('prunes media past its time, with its chunks', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const old = await upload(t.apiKey, file(bytesOf(600_000), 'application/pdf'));
    const kept = await upload(t.apiKey, file(bytesOf(1000, PNG), 'image/png'));
    await env.tdb.db.query(`UPDATE media SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      old.body.id,
    ]);
    // Expired is gone at once, before the prune.
    expectError(
      await call(env.app, 'GET', `/media/${old.body.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect(await env.app.ctx.media.prune()).toBeGreaterThanOrEqual(1);
    const chunks = await env.tdb.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM media_chunks WHERE media_id = $1',
      [old.body.id],
    );
    expect(chunks.rows[0]!.n).toBe(0);
    expect((await call(env.app, 'GET', `/media/${kept.body.id}`, { key: t.apiKey })).status).toBe(200);
  });
});
