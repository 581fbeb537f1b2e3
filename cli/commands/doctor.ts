// `br doctor`: checks each piece BenchRouter needs on this machine (Docker, images, disk, Temporal,
// workers, the gateway port, CA trust) and says what to do about each; exits 0 only when all is well.

import type { Command } from 'commander';
import { doctorExitCode, runDoctor, type Check } from '../../workers/doctor.js';
import { backgroundWorkerPid, isReachable } from '../../embedded/embedded-services.js';
import { BASE_IMAGE, caTrustDigest, DEFAULT_EXTRA_CA_DIR, DIND_IMAGE, extraCaFiles } from '../../workers/host-ca-trust.js';
import { connectClient } from '../../client/runs.js';
import { resolveHostId } from '../../workers/host-id.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { textTable } from '../table-export.js';

const LEVEL_SHOWN: Record<Check['level'], string> = { ok: 'ok', info: 'info', warn: 'WARN', fail: 'FAIL' };

export function renderChecks(checks: Check[]): string {
  const verdict =
    doctorExitCode(checks) === 0
      ? 'all is well'
      : `${checks.filter((c) => c.level === 'fail').length} failed, ${checks.filter((c) => c.level === 'warn').length} warning(s)`;
  return `${textTable(
    ['CHECK', 'STATUS', 'DETAIL', 'FIX'],
    checks.map((c) => [c.name, LEVEL_SHOWN[c.level], c.detail, c.fix ?? '']),
  )}\n\n${verdict}\n`;
}

export function registerDoctorCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(
    program.command('doctor').description('check Docker, the images, disk, Temporal, the workers, the gateway port and CA trust; exit 0 only when all is well'),
    'doctor',
  )
    .addHelpText('after', example('$ br doctor', '$ br doctor --json'))
    .action(async (flags: OutputFlags) => {
      const settings = deps.settings();
      const caDir = deps.env.BENCHROUTER_EXTRA_CA_DIR || DEFAULT_EXTRA_CA_DIR;
      const cas = extraCaFiles(caDir);
      const checks = await runDoctor({
        settings,
        hostId: resolveHostId(settings.home, deps.env),
        // dockerode loads here: no other command pays for it.
        docker: (await import('../docker-probe.js')).dockerProbe(),
        connect: async () => ((await isReachable(settings.temporalAddress)) ? connectClient(settings) : undefined),
        gatewayListening: () => isReachable(`127.0.0.1:${settings.gatewayPort}`),
        backgroundWorkerPid: () => backgroundWorkerPid(settings),
        requiredImages: [BASE_IMAGE, DIND_IMAGE],
        extraCaFiles: cas,
        hostCaDigest: caTrustDigest(cas, caDir),
      });
      const table = { name: 'doctor', columns: ['check', 'status', 'detail', 'fix'], rows: checks.map((c) => [c.name, c.level, c.detail, c.fix ?? null]) };
      await emitOutput({ tables: [table], json: { ok: doctorExitCode(checks) === 0, checks }, text: renderChecks(checks) }, flags, 'doctor', deps);
      deps.setExitCode(doctorExitCode(checks));
    });
}
