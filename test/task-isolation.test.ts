// Network isolation of task containers: on the BenchRouter task network a task reaches the model
// through the worker's gateway, and neither the Temporal frontend nor any other port of the worker
// host; `network: host` is the explicit opt-out. Real dev server, real worker, real Docker, real iptables.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectedArithScore } from '../reference-model/expected-score.js';
import { repoRoot, startHarness, type Harness } from './support/harness.js';
import { PY_MODEL_ANSWERS } from './support/model-probe.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');

/** Tries each address from inside the container; reports which answered, and whether the model did. */
const PROBE = `import json, os, socket, urllib.request

def reaches(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        return True
    except OSError:
        return False

temporal_port = os.environ["TEMPORAL_ADDRESS"].rsplit(":", 1)[1]
reached = {
    "temporal_frontend": reaches(os.environ["TEMPORAL_ADDRESS"].rsplit(":", 1)[0], temporal_port),
    "temporal_frontend_via_host": reaches("host.docker.internal", temporal_port),
    "host_only_port": reaches("host.docker.internal", os.environ["HOST_ONLY_PORT"]),
    "host_only_port_via_host_ip": reaches(os.environ["HOST_IP"], os.environ["HOST_ONLY_PORT"]),
}
${PY_MODEL_ANSWERS}
with open(os.path.join(os.environ["BENCHROUTER_OUTPUT_DIR"], "result.json"), "w") as f:
    json.dump({"overall": 1 if model else 0, "reached": reached, "model": model}, f)
`;

/** This host's first non-loopback IPv4 address: a host port is also reachable there, not only via the alias. */
function hostIp(): string {
  const address = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal && !a.address.startsWith('172.'));
  if (!address) throw new Error('this host has no non-loopback IPv4 address to probe');
  return address.address;
}

/** A benchmark with one probe task per network mode. */
function writeProbeBenchmark(dir: string, env: Record<string, string>): string {
  const root = path.join(dir, 'isolation-probe');
  mkdirSync(path.join(root, 'environments', 'shell'), { recursive: true });
  writeFileSync(path.join(root, 'environments', 'shell', 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  writeFileSync(path.join(root, 'probe.py'), PROBE);
  writeFileSync(
    path.join(root, 'benchmark.yaml'),
    'name: isolation-probe\ntasks:\n  - {name: isolated, environment: shell}\n  - {name: on-host-network, environment: shell}\n',
  );
  const extraEnv = Object.entries(env)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join('\n');
  for (const [task, network] of [
    ['isolated', undefined],
    ['on-host-network', 'host'],
  ] as const) {
    mkdirSync(path.join(root, 'tasks', task), { recursive: true });
    const yaml = `name: ${task}\ncommand: python3 /app/benchmark/probe.py\ntimeout: 120\n${network ? `network: ${network}\n` : ''}result_mapping:\n  overall: overall\n  reached: reached\n  model: model\nextra_env:\n${extraEnv}\n`;
    writeFileSync(path.join(root, 'tasks', task, 'task.yaml'), yaml);
  }
  return root;
}

let h: Harness;
let scratch: string;
let hostOnly: net.Server;
let hostOnlyConnections = 0;
beforeAll(async () => {
  h = await startHarness('isolation');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-isolation-'));
  // A service of the worker host that tasks have no business reaching, listening on every interface.
  hostOnly = net.createServer((socket) => {
    hostOnlyConnections += 1;
    socket.end();
  });
  await new Promise<void>((resolve) => hostOnly.listen(0, '0.0.0.0', resolve));
});
afterAll(async () => {
  hostOnly?.close();
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('a task on the default (isolated) network', () => {
  it('reaches neither the Temporal frontend nor a host-only port, while a job beside it scores through the gateway', async () => {
    const env = { TEMPORAL_ADDRESS: inject('temporalAddress'), HOST_ONLY_PORT: String((hostOnly.address() as net.AddressInfo).port), HOST_IP: hostIp() };
    const benchmark = writeProbeBenchmark(scratch, env);
    const expected = expectedArithScore(arithDir, 'reference-acc80');
    const [probe, arith] = await Promise.all([h.run(benchmark, { tasks: ['isolated'] }), h.run(arithDir, { model: 'reference-acc80' })]);

    const job = probe.jobs[0]!;
    expect(job.status).toBe('SUCCEEDED');
    expect(job.result?.raw_metrics.reached).toEqual({
      temporal_frontend: false,
      temporal_frontend_via_host: false,
      host_only_port: false,
      host_only_port_via_host_ip: false,
    });
    // The model through the gateway, on the same worker, at the same time.
    expect(job.result?.raw_metrics.model).toBe(true);
    expect(hostOnlyConnections).toBe(0);

    expect(arith.status).toBe('COMPLETED');
    expect(arith.overall).toBe(expected.overall);
    for (const j of arith.jobs) expect(j.result?.overall).toBe(expected.perTask[j.task]);
  });
});

describe('a task with network: host', () => {
  it('reaches the host-only port and the Temporal frontend: the opt-out is real, and the probe can tell', async () => {
    const env = { TEMPORAL_ADDRESS: inject('temporalAddress'), HOST_ONLY_PORT: String((hostOnly.address() as net.AddressInfo).port), HOST_IP: hostIp() };
    const benchmark = writeProbeBenchmark(path.join(scratch, 'host'), env);
    const run = await h.run(benchmark, { tasks: ['on-host-network'] });
    const job = run.jobs[0]!;
    expect(job.status).toBe('SUCCEEDED');
    expect(job.result?.raw_metrics.reached).toMatchObject({ temporal_frontend: true, host_only_port_via_host_ip: true });
    expect(job.result?.raw_metrics.model).toBe(true);
    expect(hostOnlyConnections).toBeGreaterThan(0);
  });
});
