// Configuration: embedded defaults, every bad setting named at once, and every setting documented.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTINGS } from '../../src/config.ts';

describe('loadConfig', () => {
  it('has embedded defaults: port 3000, ./data, tdg_ keys, the embedded database', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      dataDir: './data',
      keyPrefix: 'tdg_',
      databaseUrl: null,
      redisUrl: null,
      publicBaseUrl: 'http://localhost:3000',
      bodyLimitBytes: 1048576,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads the documented names', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/tidings',
      REDIS_URL: 'redis://cache:6379',
      KEY_PREFIX: 'acme_',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1, 10.0.0.0/8',
      PUBLIC_BASE_URL: 'https://api.example.com/',
    });
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toBe('postgres://u@db:5432/tidings');
    expect(config.keyPrefix).toBe('acme_');
    expect(config.webhookAllowedHosts).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(config.publicBaseUrl).toBe('https://api.example.com');
  });

  it('names every invalid or unknown setting in one error, without echoing secrets', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: '70000',
        DATABASE_URL: 'mysql://root:pw@db/x',
        LOG_LEVEL: 'loud',
        TIDINGS_WORKERZ: 'true',
        BOOTSTRAP_TOKEN: 'short',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'TIDINGS_WORKERZ', 'BOOTSTRAP_TOKEN']) {
      expect(message).toContain(name);
    }
    expect(message).not.toContain('pw@db');
    expect(message).not.toContain('short');
  });

  it('ignores environment variables that are not its own', () => {
    expect(() => loadConfig({ HOME: '/root', NODE_ENV: 'production' })).not.toThrow();
  });
});

describe('docs/configuration.md', () => {
  it('documents every setting', () => {
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const setting of SETTINGS) expect(page, setting.env).toContain(`\`${setting.env}\``);
  });
});
