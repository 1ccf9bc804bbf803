// `tidings doctor`: checks the configuration, DATA_DIR's file modes, the database (version,
// extensions, migrations, pg-boss, the secrets key against what is sealed), Redis, the public URL and
// the egress settings, and prints one line per finding with what to do. Exit 1 when anything failed,
// 0 otherwise.
import { type Config, ConfigError, loadConfig } from '../../config.ts';
import { serverRunning } from '../server-pid.ts';
import { checkEmbedded, checkPostgres } from './database.ts';
import { checkFileModes } from './files.ts';
import { exitCodeOf, type Finding, fail, formatFinding, ok, reason, warn } from './findings.ts';
import { checkEgress, checkPublicUrl, checkRedis } from './network.ts';

export async function runDoctor(env: NodeJS.ProcessEnv): Promise<Finding[]> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Nothing else can be checked without a configuration.
    return [fail('config', err.message.replace(/\n\s*/g, '; '))];
  }
  const findings: Finding[] = [
    ok('config', 'every setting reads (TIDINGS_* names included)'),
    checkFileModes(config),
  ];
  if (config.databaseUrl) {
    findings.push(...(await checkPostgres({ ...config, databaseUrl: config.databaseUrl })));
  } else {
    findings.push(...(await checkRunningOrEmbedded(config)));
  }
  findings.push(await checkRedis(config));
  findings.push(...(await checkPublicUrl(config)));
  findings.push(...(await checkEgress(config)));
  return findings;
}

/** A running server owns the embedded database: ask it whether it is ready instead of opening it. */
async function checkRunningOrEmbedded(config: Config): Promise<Finding[]> {
  const pid = serverRunning(config);
  if (!pid) return checkEmbedded(config);
  const readyz = `http://127.0.0.1:${config.port}/readyz`;
  try {
    const res = await fetch(readyz, { signal: AbortSignal.timeout(3000) });
    return res.status === 200
      ? [ok('database', `embedded, open in the running server (pid ${pid}), which answers ready`)]
      : [fail('database', `the running server (pid ${pid}) answers ${res.status} at ${readyz}: see its log`)];
  } catch (err) {
    return [
      warn(
        'database',
        `a server (pid ${pid}) has the embedded database open but ${readyz} does not answer (${reason(err)}); stop it to let the doctor open the database`,
      ),
    ];
  }
}

export async function doctorCommand(out: { write(text: string): unknown }): Promise<number> {
  const findings = await runDoctor(process.env);
  for (const f of findings) out.write(`${formatFinding(f)}\n`);
  const failed = findings.filter((f) => f.level === 'fail').length;
  const warned = findings.filter((f) => f.level === 'warn').length;
  out.write(
    failed > 0
      ? `\n${failed} to fix${warned ? `, ${warned} to look at` : ''}.\n`
      : `\nNothing to fix${warned ? ` (${warned} to look at)` : ''}.\n`,
  );
  return exitCodeOf(findings);
}
