// perf/gateway: what the model gateway adds to a call, against the reference model on loopback, in
// one run: added latency p50/p99 per call (direct and gateway calls interleaved), and the most
// requests per second through the gateway next to the same load sent direct. The reference model,
// the gateway and this load generator are three processes. Targets: <= 1 ms added p50, >= 2,000 req/s.
// Then the same with every call recorded in a transcript (a second gateway process, calls interleaved
// with the first): targets <= 0.5 ms added p50 over transcripts off, >= 90% of its throughput.
//
//   npm run perf:gateway -- [calls] [seconds]

import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { freePort, repoRoot } from './perf-support.js';

const CALLS = Number(process.argv[2] ?? 3000);
const SECONDS = Number(process.argv[3] ?? 5);
const CONNECTIONS = 32;
const BODY = JSON.stringify({ model: 'reference', messages: [{ role: 'user', content: 'What is 12 + 30?' }], max_tokens: 16 });
const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });

function startProcess(args: string[], ready: RegExp): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => ready.test(l));
      if (line) resolve({ child, line });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)));
  });
}

function call(port: number, token: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/chat/completions',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'content-length': Buffer.byteLength(BODY) },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(BODY);
  });
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

async function latencies(port: number, token: string, gatewayPort: number, gatewayToken: string, recordingPort: number, recordingToken: string) {
  const direct: number[] = [];
  const through: number[] = [];
  const recorded: number[] = [];
  for (let i = 0; i < 200; i++) await call(port, token); // warm-up: connections, JIT
  for (let i = 0; i < 200; i++) await call(gatewayPort, gatewayToken);
  for (let i = 0; i < 200; i++) await call(recordingPort, recordingToken);
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    await call(port, token);
    direct.push(performance.now() - t);
    t = performance.now();
    await call(gatewayPort, gatewayToken);
    through.push(performance.now() - t);
    t = performance.now();
    await call(recordingPort, recordingToken);
    recorded.push(performance.now() - t);
  }
  const sorted = (values: number[]) => values.sort((a, b) => a - b);
  return { direct: sorted(direct), through: sorted(through), recorded: sorted(recorded) };
}

async function throughput(port: number, token: string): Promise<number> {
  const deadline = performance.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        await call(port, token);
        done += 1;
      }
    }),
  );
  return done / SECONDS;
}

async function main(): Promise<void> {
  const modelPort = await freePort();
  const model = await startProcess([path.join(repoRoot, 'cli', 'bin.ts'), 'reference-model', '--port', String(modelPort)], /listening/);
  const gateway = await startProcess([path.join(repoRoot, 'perf', 'gateway-server.ts'), `http://127.0.0.1:${modelPort}/v1`], /^\d+ brj-/);
  const recording = await startProcess([path.join(repoRoot, 'perf', 'gateway-server.ts'), `http://127.0.0.1:${modelPort}/v1`, 'transcripts'], /^\d+ brj-/);
  const [gatewayPort, gatewayToken] = gateway.line.trim().split(' ');
  const [recordingPort, recordingToken] = recording.line.trim().split(' ');
  try {
    const { direct, through, recorded } = await latencies(modelPort, 'EMPTY', Number(gatewayPort), gatewayToken!, Number(recordingPort), recordingToken!);
    const directRps = await throughput(modelPort, 'EMPTY');
    const gatewayRps = await throughput(Number(gatewayPort), gatewayToken!);
    const recordingRps = await throughput(Number(recordingPort), recordingToken!);
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    const p50 = (values: number[]) => percentile(values, 0.5);
    console.log(`sequential calls: ${CALLS} direct, ${CALLS} through the gateway and ${CALLS} through one recording transcripts, interleaved`);
    console.log(`direct                p50 ${ms(p50(direct))}  p99 ${ms(percentile(direct, 0.99))}`);
    console.log(`gateway               p50 ${ms(p50(through))}  p99 ${ms(percentile(through, 0.99))}`);
    console.log(`gateway, transcripts  p50 ${ms(p50(recorded))}  p99 ${ms(percentile(recorded, 0.99))}`);
    console.log(`added    p50 ${ms(p50(through) - p50(direct))} (target <= 1 ms)  p99 ${ms(percentile(through, 0.99) - percentile(direct, 0.99))}`);
    console.log(`transcripts add p50 ${ms(p50(recorded) - p50(through))} over off (target <= 0.5 ms)`);
    console.log(
      `throughput, ${CONNECTIONS} keep-alive connections for ${SECONDS} s: direct ${directRps.toFixed(0)} req/s, through the gateway ${gatewayRps.toFixed(0)} req/s (target >= 2000), with transcripts ${recordingRps.toFixed(0)} req/s = ${((100 * recordingRps) / gatewayRps).toFixed(1)}% of off (target >= 90%)`,
    );
  } finally {
    agent.destroy();
    model.child.kill();
    gateway.child.kill();
    recording.child.kill();
  }
}

await main();
