// The task engines' registry (activities/engines/registry.ts) and what docs/architecture.md says of it:
// every engine folder is registered and every registered engine has its folder and its mention in the
// docs' "Task engines" section, which names the files adding one takes; a host's setting picks one.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE, settingsFrom } from '../../config/settings.js';
import { dockerEngine } from '../../activities/engines/docker/docker-task-engine.js';
import { kubernetesEngine } from '../../activities/engines/kubernetes/kubernetes-task-engine.js';
import { checkEngineName, ENGINES, engineNamed } from '../../activities/engines/registry.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const enginesDir = path.join(repoRoot, 'activities', 'engines');

/** The "Task engines" section of docs/architecture.md, to the next section. */
function docsSection(): string {
  const page = readFileSync(path.join(repoRoot, 'docs', 'architecture.md'), 'utf8');
  const start = page.indexOf('\n## Task engines\n');
  expect(start, 'docs/architecture.md has a "Task engines" section').toBeGreaterThan(0);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

describe('the task engine registry', () => {
  it("opens a host's engine by the name its setting gives, docker by default", async () => {
    expect(await engineNamed('docker')).toBe(dockerEngine);
    expect(settingsFrom({}, '/home/u').engine).toBe(DEFAULT_ENGINE);
    expect(await engineNamed(settingsFrom({}, '/home/u').engine)).toBe(dockerEngine);
    expect(settingsFrom({ BENCHROUTER_ENGINE: 'kubernetes' }, '/home/u').engine).toBe('kubernetes');
  });

  it('opens kubernetes, and refuses an unknown name by the names it knows', async () => {
    expect(await engineNamed('kubernetes')).toBe(kubernetesEngine);
    await expect(engineNamed('podman')).rejects.toThrow('unknown task engine "podman": expected one of docker, kubernetes');
    expect(() => checkEngineName('toString')).toThrow('unknown task engine "toString"');
  });

  it('stops a worker set to an engine it does not have before it connects to anything', async () => {
    const { startWorker } = await import('../../workers/start-worker.js');
    // Nothing listens there: a worker that went on to connect would wait for it, patiently, past the test's time.
    const settings = { ...settingsFrom({ TEMPORAL_ADDRESS: '127.0.0.1:1' }, '/nonexistent'), engine: 'podman' };
    await expect(startWorker({ settings, hostId: 'host-engine' })).rejects.toThrow('unknown task engine "podman"');
  });

  it('has one folder per registered engine beside it, and no folder it does not register', async () => {
    const folders = readdirSync(enginesDir).filter((entry) => statSync(path.join(enginesDir, entry)).isDirectory());
    expect(folders.sort()).toEqual(Object.keys(ENGINES).sort());
    for (const [name, load] of Object.entries(ENGINES)) expect((await load()).name).toBe(name);
  });

  it('agrees with docs/architecture.md, which names every engine folder and the files adding one takes', () => {
    const section = docsSection();
    for (const name of Object.keys(ENGINES)) expect(section).toContain(`[\`activities/engines/${name}/\`](../activities/engines/${name}/)`);
    // Adding an engine: its folder, and its entry in ENGINES; nothing else.
    expect(section).toContain('`activities/engines/<name>/`');
    expect(section).toMatch(
      /its entry `<name>: <loader>` in `ENGINES` in\s+\[`activities\/engines\/registry\.ts`\]\(\.\.\/activities\/engines\/registry\.ts\)/,
    );
  });
});
