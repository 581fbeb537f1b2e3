// perf/k8s-up: the local Kubernetes cluster of scripts/k8s.sh, timed end to end: the cold build of its
// binaries (only when the cache is empty, or with --rebuild, which deletes this build's cache first), a
// cached `up`, the node's Ready latency after the kubelet starts, the import of benchrouter/base:bookworm,
// the start-to-Succeeded latency of N pods of that image one after another (p50/p95) against `docker run`
// of the same image and command (the ratio of the p50s), and `down`.
// Refuses to run while the cluster is up (it would time nothing and then take the cluster down).
//
//   npm run perf:k8s -- [pods] [--rebuild]

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './perf-support.js';

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

function main(): void {
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
  } finally {
    const down = timed(k8s, ['down']);
    lines.push(`down:                        ${down.seconds.toFixed(1)} s`);
    console.log(lines.join('\n'));
  }
}

main();
