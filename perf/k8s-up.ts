// perf/k8s-up: the local Kubernetes cluster of scripts/k8s.sh, timed end to end: the cold build of its
// binaries (only when the cache is empty, or with --rebuild, which deletes this build's cache first), a
// cached `up`, the node's Ready latency after the kubelet starts, the import of benchrouter/base:bookworm,
// the start-to-Succeeded latency of N pods of that image one after another (p50/p95) against `docker run`
// of the same image and command (the ratio of the p50s); then the per-job overhead: N one-job runs of a no-op
// task through `br run` on a worker set to the kubernetes engine, against `kubectl run` of the same image and
// command (the ratio of the p50s, and where a job's time goes); and `down`.
// Refuses to run while the cluster is up (it would time nothing and then take the cluster down).
//
//   npm run perf:k8s -- [pods] [--rebuild]

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { imageTagFor } from '../activities/ensure-image.js';
import { POLL_MS } from '../activities/engines/kubernetes/kubernetes-task-engine.js';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { brRunNoop, makeNoopBenchmark, NOOP_COMMAND } from './noop-tasks.js';
import { repoRoot, startStack } from './perf-support.js';

const args = process.argv.slice(2);
const REBUILD = args.includes('--rebuild');
const PODS = Number(args.find((a) => /^\d+$/.test(a)) ?? 10);
const IMAGE = 'benchrouter/base:bookworm';
const k8s = path.join(repoRoot, 'scripts', 'k8s.sh');

/** Runs a command, its stderr passed through and also returned; throws on a non-zero exit. Seconds of wall time. */
function timed(command: string, commandArgs: string[]): { seconds: number; stdout: string; stderr: string } {
  const started = performance.now();
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(result.stderr);
  if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')} exited ${result.status}`);
  return { seconds, stdout: result.stdout, stderr: result.stderr };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** How often the kubernetes engine reads a running pod's status (kubernetes-task-engine.ts POLL_MS). */
const POLL_SECONDS = POLL_MS / 1000;
const p50p95 = (values: number[]) => `p50 ${percentile(values, 50).toFixed(2)} s, p95 ${percentile(values, 95).toFixed(2)} s`;

/**
 * PODS one-job runs of a no-op task through `br run` (the CLI, the run and job workflows, the worker's attempt
 * on the kubernetes engine: the image checked and its import found, a NetworkPolicy and a pod created, the pod
 * followed to its end, its results copied out through the API, the pod deleted), one after another, against
 * `kubectl run` + `kubectl wait` of the same image and command. `kube` runs the cluster's kubectl.
 */
async function perJobOverhead(kube: (args: string[]) => unknown, kubectl: string): Promise<string[]> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-k8s-'));
  const dir = path.join(scratch, 'perf-noop');
  makeNoopBenchmark(dir, 1);
  const k8sDir = process.env.BENCHROUTER_K8S_DIR || path.join(process.env.BENCHROUTER_HOME || path.join(os.homedir(), '.benchrouter'), 'k8s');
  const stack = await startStack('k8s', { BENCHROUTER_ENGINE: 'kubernetes', BENCHROUTER_K8S_DIR: k8sDir, BENCHROUTER_K8S_NAMESPACE: 'benchrouter-perf' });
  try {
    // Warm-up: builds the image and imports it into the cluster, which later jobs find done.
    const warm = await brRunNoop(stack.env, dir, 1, 1);
    const wall: number[] = [];
    for (let i = 0; i < PODS; i++) {
      const { seconds: runSeconds, jobs } = await brRunNoop(stack.env, dir, 1, 1);
      if (jobs[0]?.runtime !== 'kubernetes') throw new Error(`the job ran on ${jobs[0]?.runtime}, not kubernetes`);
      wall.push(runSeconds);
    }
    // What each side's command line costs alone: `br` (Node and its bundle) and kubectl (a Go binary).
    const startOf = (command: string, args: string[]) => Array.from({ length: 5 }, () => timed(command, args).seconds);
    const brStart = startOf(path.join(repoRoot, 'br'), ['help']);

    const image = imageTagFor('perf-noop', 'noop', directoryDigest(path.join(dir, 'environments', 'noop')));
    const kubectlSeconds: number[] = [];
    for (let i = 0; i <= PODS; i++) {
      const name = `perf-job-${i}`;
      const started = performance.now();
      kube([
        'run',
        name,
        `--image=${image}`,
        '--image-pull-policy=Never',
        '--restart=Never',
        '--env=BENCHROUTER_OUTPUT_DIR=/tmp',
        '--command',
        '--',
        'sh',
        '-c',
        NOOP_COMMAND,
      ]);
      kube(['wait', '--for=jsonpath={.status.phase}=Succeeded', `pod/${name}`, '--timeout=120s']);
      if (i > 0) kubectlSeconds.push((performance.now() - started) / 1000);
    }
    kube(['delete', 'pods', '--all', '--wait=false']);
    const kubectlStart = startOf(kubectl, ['version', '--client']);
    return [
      `per job: ${PODS} one-job runs of a no-op task (br run, kubernetes engine) one after another, against as many kubectl run + wait of its image`,
      `  first run (image built and imported): ${warm.seconds.toFixed(1)} s`,
      `  br run, one job (p50/p95):  ${p50p95(wall)}`,
      `  kubectl run + wait (p50/p95): ${p50p95(kubectlSeconds)}`,
      `  ratio of the p50s:          ${(percentile(wall, 50) / percentile(kubectlSeconds, 50)).toFixed(2)}`,
      `  of which the command lines (p50): br ${percentile(brStart, 50).toFixed(2)} s once; kubectl ${percentile(kubectlStart, 50).toFixed(2)} s, twice`,
      `  br's job ends when its task container has ended (the pod's container status, polled every ${POLL_SECONDS} s) and its results are copied out;`,
      `  kubectl wait waits for the pod's phase, which the kubelet sets after its next status sync`,
    ];
  } finally {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (spawnSync(k8s, ['status'], { stdio: 'ignore' }).status === 0) {
    throw new Error('the cluster is up: run scripts/k8s.sh down first (this script times up and down)');
  }
  const lines: string[] = [];
  const build = path.join(repoRoot, 'scripts', 'k8s', 'build.sh');
  const cached = spawnSync(build, ['--cached'], { encoding: 'utf8' });
  if (cached.status === 0 && REBUILD) {
    const dir = cached.stdout.trim();
    if (existsSync(path.join(dir, 'complete'))) rmSync(dir, { recursive: true, force: true });
  }
  if (cached.status !== 0 || REBUILD) {
    const built = timed(k8s, ['build']);
    lines.push(`cold build:                 ${built.seconds.toFixed(0)} s`);
  } else {
    lines.push(`cold build:                 skipped (cache filled: ${cached.stdout.trim()}; --rebuild to measure)`);
  }

  const up = timed(k8s, ['up']);
  const ready = /node \S+ Ready ([\d.]+) s after the kubelet started/.exec(up.stderr);
  lines.push(`up (binaries cached):       ${up.seconds.toFixed(1)} s`);
  lines.push(`node Ready latency:         ${ready ? `${ready[1]} s after the kubelet started` : 'not reported'}`);
  try {
    const imported = timed(k8s, ['import', IMAGE]);
    lines.push(`import (docker save | ctr):  ${imported.seconds.toFixed(1)} s`);
    // The cluster's kubectl itself (not through scripts/k8s.sh), as `docker run` is timed through the docker CLI alone.
    const kubeconfig = execFileSync(k8s, ['kubeconfig'], { encoding: 'utf8' }).trim();
    const kubectl = path.join(execFileSync(build, ['--cached'], { encoding: 'utf8' }).trim(), 'bin', 'kubectl');
    const kube = (kubeArgs: string[]) => timed(kubectl, ['--kubeconfig', kubeconfig, ...kubeArgs]);

    // Warm-up (the first pod pays for the image's first snapshot use), then N pods one after another.
    const podSeconds: number[] = [];
    for (let i = 0; i <= PODS; i++) {
      const name = `perf-${i}`;
      const started = performance.now();
      kube(['run', name, `--image=${IMAGE}`, '--restart=Never', '--command', '--', 'echo', 'hi']);
      kube(['wait', '--for=jsonpath={.status.phase}=Succeeded', `pod/${name}`, '--timeout=120s']);
      const seconds = (performance.now() - started) / 1000;
      if (i > 0) podSeconds.push(seconds);
    }
    const logs = kube(['logs', `perf-${PODS}`]).stdout.trim();
    if (logs !== 'hi') throw new Error(`the last pod's log is ${JSON.stringify(logs)}, not "hi"`);
    kube(['delete', 'pods', '--all', '--wait=false']);

    const dockerSeconds: number[] = [];
    for (let i = 0; i <= PODS; i++) {
      const run = timed('docker', ['run', '--rm', IMAGE, 'echo', 'hi']);
      if (i > 0) dockerSeconds.push(run.seconds);
    }
    const [p50, p95, d50, d95] = [percentile(podSeconds, 50), percentile(podSeconds, 95), percentile(dockerSeconds, 50), percentile(dockerSeconds, 95)];
    lines.push(`pods: ${PODS} one after another (kubectl run + kubectl wait), against as many \`docker run --rm\``);
    lines.push(`pod to Succeeded (p50/p95):  p50 ${p50.toFixed(2)} s, p95 ${p95.toFixed(2)} s`);
    lines.push(`docker run --rm (p50/p95):   p50 ${d50.toFixed(2)} s, p95 ${d95.toFixed(2)} s`);
    lines.push(`ratio of the p50s:           ${(p50 / d50).toFixed(2)}`);
    lines.push(...(await perJobOverhead(kube, kubectl)));
  } finally {
    const down = timed(k8s, ['down']);
    lines.push(`down:                        ${down.seconds.toFixed(1)} s`);
    console.log(lines.join('\n'));
  }
}

await main();
