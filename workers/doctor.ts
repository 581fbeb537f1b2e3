// `br doctor`: checks each piece BenchRouter needs and says, for each, what it found and what to
// do. The probes are handed in, so the checks read the same against a real machine and in tests.

import type { Client } from '@temporalio/client';
import { statfsSync } from 'node:fs';
import type { Settings } from '../config/settings.js';
import { hostQueueName } from '../runs/host-queues.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { BASE_IMAGE, CA_DIGEST_LABEL } from './host-ca-trust.js';
import { lastWorkflowTaskWorker, queueState } from '../client/run-health.js';

export type CheckLevel = 'ok' | 'info' | 'warn' | 'fail';

export interface Check {
  name: string;
  level: CheckLevel;
  detail: string;
  /** What to do about it, for warn and fail. */
  fix?: string;
}

export interface DockerProbe {
  /** Server version, API version and the root of its storage. */
  info(): Promise<{ version: string; apiVersion: string; rootDir: string; storageDriver: string }>;
  /** An image's labels; undefined when the engine has no such image. */
  imageLabels(image: string): Promise<Record<string, string> | undefined>;
}

export interface DoctorDeps {
  settings: Settings;
  hostId: string;
  docker: DockerProbe;
  /** undefined when Temporal cannot be reached (the check says so). */
  connect(): Promise<Client | undefined>;
  /** Whether something accepts connections on the gateway port on this machine. */
  gatewayListening(): Promise<boolean>;
  /** The embedded background worker's pid when its pid file names a live process. */
  backgroundWorkerPid(): number | undefined;
  requiredImages: string[];
  /** Extra CA certificates the host trusts (a TLS-intercepting proxy's); image builds must trust them too. */
  extraCaFiles: string[];
  /** caTrustDigest() of extraCaFiles, compared with the base image's CA_DIGEST_LABEL. */
  hostCaDigest: string;
  now?: number;
}

const GiB = 1024 ** 3;
const DISK_WARN_BYTES = 5 * GiB;
const DISK_FAIL_BYTES = 1 * GiB;

export function freeBytes(dir: string): number | undefined {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

function diskCheck(name: string, dir: string): Check {
  const free = freeBytes(dir);
  if (free === undefined) return { name, level: 'info', detail: `${dir} does not exist yet` };
  const shown = `${(free / GiB).toFixed(1)} GiB free under ${dir}`;
  if (free < DISK_FAIL_BYTES) return { name, level: 'fail', detail: shown, fix: 'free disk space: images, DinD storage and artifacts need room' };
  if (free < DISK_WARN_BYTES) return { name, level: 'warn', detail: shown, fix: 'free disk space before large runs (`docker image prune`, old artifacts)' };
  return { name, level: 'ok', detail: shown };
}

async function temporalChecks(deps: DoctorDeps, client: Client): Promise<Check[]> {
  const { settings, hostId } = deps;
  const namespace = settings.temporalNamespace;
  const now = deps.now ?? Date.now();
  const checks: Check[] = [];
  try {
    await client.workflowService.describeNamespace({ namespace });
    checks.push({ name: 'namespace', level: 'ok', detail: namespace });
  } catch (error) {
    checks.push({
      name: 'namespace',
      level: 'fail',
      detail: `${namespace}: ${(error as Error).message}`,
      fix: 'create it (`temporal operator namespace create`) or set TEMPORAL_NAMESPACE',
    });
    return checks;
  }
  const { customAttributes } = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(SEARCH_ATTRIBUTES).filter((key) => !(key.name in (customAttributes ?? {})));
  checks.push(
    missing.length === 0
      ? {
          name: 'search attributes',
          level: 'ok',
          detail: Object.values(SEARCH_ATTRIBUTES)
            .map((k) => k.name)
            .join(', '),
        }
      : {
          name: 'search attributes',
          level: 'fail',
          detail: `missing ${missing.map((k) => `${k.name} (${k.type})`).join(', ')}`,
          fix: 'register them: `br up` does on the embedded server; see docs/operations.md for a cluster',
        },
  );

  const queues: Array<{ label: string; queue: string; type: 'workflow' | 'activity' }> = [
    { label: 'shared queue (workflows)', queue: settings.sharedQueue, type: 'workflow' },
    { label: 'shared queue (host claims)', queue: settings.sharedQueue, type: 'activity' },
    { label: `host queue of ${hostId}`, queue: hostQueueName(settings.sharedQueue, hostId), type: 'activity' },
  ];
  for (const { label, queue, type } of queues) {
    const state = await queueState(client, namespace, queue, type, now);
    const pollers = state.pollers.map((p) => `${p.identity}${p.workerVersionCapabilities?.buildId ? ` (build ${p.workerVersionCapabilities.buildId})` : ''}`);
    const name = `workers: ${label}`;
    if (state.backlogCount > 0 && state.backlogAgeMs > 10_000) {
      const who = pollers.length ? `polled by ${pollers.join(', ')} but none takes tasks: that worker is wedged` : 'no worker polls it';
      checks.push({
        name,
        level: 'fail',
        detail: `${queue}: ${state.backlogCount} task(s) waiting for ${Math.round(state.backlogAgeMs / 1000)} s; ${who}`,
        fix: settings.embedded ? '`br down` then `br up` restarts the embedded worker' : 'restart the worker (`br worker`) on that host',
      });
    } else if (pollers.length === 0) {
      checks.push({
        name,
        level: 'warn',
        detail: `${queue}: no worker polling`,
        fix: settings.embedded ? '`br up` starts the embedded worker' : 'start `br worker` on an evaluation host',
      });
    } else {
      checks.push({ name, level: 'ok', detail: `${queue}: ${pollers.join(', ')}` });
    }
  }
  checks.push(...(await stuckRuns(client, namespace, settings.sharedQueue)));
  return checks;
}

/**
 * Open runs and jobs on this deployment's shared queue whose workflow task keeps failing or timing
 * out, naming the worker that last took it. Other deployments sharing the namespace are not ours to judge.
 */
async function stuckRuns(client: Client, namespace: string, sharedQueue: string): Promise<Check[]> {
  const checks: Check[] = [];
  let looked = 0;
  const query = `ExecutionStatus = 'Running' AND TaskQueue = '${sharedQueue.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  for await (const execution of client.workflow.list({ query })) {
    if (++looked > 50) break;
    const described = await client.workflow
      .getHandle(execution.workflowId, execution.runId)
      .describe()
      .catch(() => undefined); // closed since it was listed
    if (!described) continue;
    const attempt = described.raw.pendingWorkflowTask?.attempt ?? 0;
    if (attempt < 2) continue;
    const who = await lastWorkflowTaskWorker(client, namespace, execution.workflowId, execution.runId);
    checks.push({
      name: `workflow ${execution.workflowId}`,
      level: 'fail',
      detail: `its workflow task failed or timed out ${attempt - 1} time(s)${who ? `; last taken by ${who}` : ''}`,
      fix: who ? `restart the worker ${who} (\`br down\`/\`br up\` for the embedded one)` : 'restart the workers polling the shared queue',
    });
  }
  return checks;
}

export async function runDoctor(deps: DoctorDeps): Promise<Check[]> {
  const { settings } = deps;
  const checks: Check[] = [];
  try {
    const info = await deps.docker.info();
    checks.push({ name: 'docker engine', level: 'ok', detail: `Docker ${info.version} (API ${info.apiVersion}), storage ${info.storageDriver}` });
    for (const image of deps.requiredImages) {
      const labels = await deps.docker.imageLabels(image);
      checks.push(
        labels
          ? { name: `image ${image}`, level: 'ok', detail: 'present' }
          : { name: `image ${image}`, level: 'fail', detail: 'missing', fix: 'run scripts/bootstrap.sh (builds the base images without a registry)' },
      );
      if (labels && image === BASE_IMAGE) checks.push(caTrustCheck(deps, labels[CA_DIGEST_LABEL]));
    }
    checks.push(diskCheck('disk: docker root', info.rootDir));
  } catch (error) {
    checks.push({
      name: 'docker engine',
      level: 'fail',
      detail: `not reachable: ${(error as Error).message}`,
      fix: 'start dockerd (scripts/bootstrap.sh does), or set DOCKER_HOST',
    });
  }
  checks.push(diskCheck('disk: BenchRouter home', settings.home));

  const client = await deps.connect().catch(() => undefined);
  if (!client) {
    checks.push({
      name: 'temporal',
      level: 'fail',
      detail: `not reachable at ${settings.temporalAddress}`,
      fix: settings.embedded ? '`br up` starts the embedded server' : 'check TEMPORAL_ADDRESS and the TLS settings',
    });
  } else {
    checks.push({ name: 'temporal', level: 'ok', detail: `${settings.temporalAddress}${settings.embedded ? ' (embedded dev server)' : ''}` });
    try {
      checks.push(...(await temporalChecks(deps, client)));
    } catch (error) {
      checks.push({
        name: 'temporal',
        level: 'fail',
        detail: `a check stopped halfway: ${(error as Error).message}`,
        fix: 'check the server log; on the embedded server, $BENCHROUTER_HOME/temporal.log',
      });
    } finally {
      await client.connection.close();
    }
  }

  const workerPid = deps.backgroundWorkerPid();
  const listening = await deps.gatewayListening();
  if (listening && settings.embedded && !workerPid) {
    // The issue that motivated this check: a wedged worker that outlived its pid file keeps the port.
    checks.push({
      name: 'model gateway',
      level: 'warn',
      detail: `port ${settings.gatewayPort} is taken, but not by the embedded worker (no live worker.pid): a leftover worker or another program holds it`,
      fix: `find it (\`ss -ltnp 'sport = :${settings.gatewayPort}'\`) and stop it, or set BENCHROUTER_GATEWAY_PORT; \`br up\` cannot start its worker meanwhile`,
    });
  } else if (listening)
    checks.push({
      name: 'model gateway',
      level: 'ok',
      detail: `listening on port ${settings.gatewayPort}${workerPid ? ` (embedded worker pid ${workerPid})` : ''}`,
    });
  else if (workerPid)
    checks.push({
      name: 'model gateway',
      level: 'fail',
      detail: `the embedded worker (pid ${workerPid}) runs but nothing listens on port ${settings.gatewayPort}`,
      fix: `see ${settings.home}/worker.log`,
    });
  else checks.push({ name: 'model gateway', level: 'info', detail: `port ${settings.gatewayPort} is free (no worker on this machine)` });

  return checks;
}

/** Builds start FROM the base image, so they trust what it was built trusting: the host's extra CAs at that time. */
function caTrustCheck(deps: DoctorDeps, imageDigest: string | undefined): Check {
  const name = 'CA trust for builds';
  const cas = deps.extraCaFiles.length ? `${deps.extraCaFiles.length} extra CA certificate(s) (${deps.extraCaFiles.join(', ')})` : 'no extra CA certificates';
  if (imageDigest === deps.hostCaDigest) return { name, level: 'ok', detail: `${BASE_IMAGE} trusts what this host trusts: ${cas}` };
  return {
    name,
    level: 'warn',
    detail: `${BASE_IMAGE} was built with other CA certificates than the host's ${cas}${imageDigest ? '' : ' (it carries no CA digest label)'}: builds behind a TLS-intercepting proxy may fail`,
    fix: 'rebuild it: scripts/build-base-image.sh (one small layer)',
  };
}

/** Exit status: 0 only when nothing is wrong (warnings count: a doctor that shrugs them off hides trouble). */
export function doctorExitCode(checks: Check[]): number {
  return checks.some((c) => c.level === 'fail' || c.level === 'warn') ? 1 : 0;
}
