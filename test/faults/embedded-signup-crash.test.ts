// Embedded Signup cut short by SIGKILL at its most delicate moment: the server is killed while
// Meta is registering the number (the fake holds the register call, then takes it once the
// server is gone, so Meta registered the number and nobody heard). Its successor, on the same
// database, finishes the onboarding by itself (the resume job, once the lease is out) without a
// second registration, and the number is the account's channel. Real server processes: on
// PostgreSQL when TEST_DATABASE_URL is set, else on the embedded database in a DATA_DIR.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  exited,
  type ServerProcess,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';

describe('Embedded Signup and a crash mid-registration', () => {
  // A short Graph timeout: the onboarding's lease (two timeouts and two seconds) runs out soon.
  const store = useDurableStore('signup-crash', { TIDINGS_PROVIDER_TIMEOUT_MS: '1000' });
  let fake: FakeWhatsAppCloud;

  beforeAll(async () => {
    fake = await FakeWhatsAppCloud.start();
  });
  afterAll(async () => {
    await fake?.close();
  });

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess({ ...store.settings, TIDINGS_WHATSAPP_GRAPH_URL: fake.graphUrl });
    store.servers.push(server);
    return server;
  }

  it('resumes in the next process and never registers the number twice', async () => {
    const first = await start();
    const partnerKey = await bootstrapOnProcess(first);
    const metaApp = fake.onboarding.createApp();
    const put = await api(first, 'PUT', '/partner/whatsapp-app', partnerKey, {
      appId: metaApp.appId,
      appSecret: metaApp.appSecret,
      verifyToken: 'a-verify-token',
      configurationId: metaApp.configurationId,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const { apiKey } = await accountOnProcess(first, partnerKey, 'signup-crash');
    const signup = fake.onboarding.signup(metaApp);

    // Meta takes the register call only once the server that sent it is dead.
    const registerPath = `/${signup.phoneNumberId}/register`;
    let releaseRegister!: () => void;
    const registerHeld = new Promise<void>((resolve) => {
      releaseRegister = resolve;
    });
    fake.hold = (req) => (req.path.endsWith(registerPath) ? registerHeld : undefined);
    const request = api(first, 'POST', '/account/channel/embedded-signup', apiKey, {
      code: signup.code,
      wabaId: signup.wabaId,
      phoneNumberId: signup.phoneNumberId,
    }).catch(() => null);
    await until(
      () => fake.requests.some((r) => r.path.endsWith(registerPath)),
      20_000,
      () => 'the register call never reached Meta',
    );
    first.child.kill('SIGKILL');
    expect((await exited(first.child, 10_000)).signal).toBe('SIGKILL');
    await request;
    fake.hold = undefined;
    releaseRegister();
    await until(
      () => fake.onboarding.registrations.some((r) => r.phoneNumberId === signup.phoneNumberId),
      10_000,
      () => 'Meta never took the registration',
    );

    // The successor finishes it by itself.
    const second = await start();
    let channel: any = null;
    await until(
      async () => {
        channel = (await api(second, 'GET', '/account/channel', apiKey)).body;
        return channel?.state === 'connected';
      },
      60_000,
      () => `the onboarding was not resumed: ${JSON.stringify(channel)}`,
    );
    expect(channel.whatsapp).toMatchObject({
      phoneNumberId: signup.phoneNumberId,
      onboarding: { via: 'embedded_signup', mode: 'cloud_api' },
    });
    expect(
      fake.onboarding.registrations.filter((r) => r.phoneNumberId === signup.phoneNumberId),
    ).toHaveLength(1);
    expect(fake.requests.filter((r) => r.path.endsWith(registerPath))).toHaveLength(1);
    const exchanges = fake.requests.filter((r) => r.path.includes('/oauth/access_token'));
    expect(exchanges).toHaveLength(1);
  }, 150_000);
});
