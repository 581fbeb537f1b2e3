// The DinD image store: tasks' own daemons start from a prepared copy of their preloaded images,
// one copy on disk for every task, each task with its own containers and its own deletions. Real dev
// server, real Docker (inner daemons included), a real 1 GiB image.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIG_FILE_BYTES, ensureBigImage } from './support/big-image.js';
import { br, fixturesDir, startHarness, type Harness } from './support/harness.js';

const SERVICE_IMAGE = 'benchrouter-test/inner-service:1';
const MIB = 1024 ** 2;

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-dind-store-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A benchmark of `docker: true` tasks: name -> [preloaded images, command]. */
function benchmark(name: string, tasks: Record<string, [string[], string]>): string {
  const dir = path.join(scratch, name);
  mkdirSync(path.join(dir, 'environments', 'dind'), { recursive: true });
  writeFileSync(path.join(dir, 'environments', 'dind', 'Dockerfile'), 'FROM benchrouter/dind:bookworm\n');
  writeFileSync(
    path.join(dir, 'benchmark.yaml'),
    `name: ${name}\ntasks:\n${Object.keys(tasks)
      .map((task) => `  - {name: ${task}, environment: dind}\n`)
      .join('')}`,
  );
  for (const [task, [images, command]] of Object.entries(tasks)) {
    mkdirSync(path.join(dir, 'tasks', task), { recursive: true });
    writeFileSync(
      path.join(dir, 'tasks', task, 'task.yaml'),
      `name: ${task}\ndocker: true\ndocker_images: ${JSON.stringify(images)}\ntimeout: 900\ncommand: |\n${command
        .trim()
        .split('\n')
        .map((line) => `  ${line}`)
        .join('\n')}\nresult_mapping: {overall: overall, containers: containers, images: images, size: size}\n`,
    );
  }
  return dir;
}

/** Bytes on disk under a directory (du): a tree of copy-on-write clones would count each clone whole. */
function diskBytes(dir: string): number {
  return Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/** Blocks in use on the filesystem holding `dir`: what blocks shared by reflinks really cost. */
function usedBytes(dir: string): number {
  const fs = statfsSync(dir);
  return (fs.blocks - fs.bfree) * fs.bsize;
}

/** Every file of a store entry but its last-used mark: content hash, size, mode, owner and mtime. Equal before and after: nothing wrote to it. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(root, rel))) {
      const relative = rel ? `${rel}/${name}` : name;
      const full = path.join(root, relative);
      const stat = lstatSync(full);
      if (relative === 'last-used') continue;
      if (stat.isDirectory()) walk(relative);
      const content = stat.isFile() ? createHash('sha256').update(readFileSync(full)).digest('hex') : '';
      out[relative] = `${stat.mode.toString(8)} ${stat.uid}:${stat.gid} ${stat.size} ${stat.mtimeMs} ${content}`;
    }
  };
  walk('');
  return out;
}

const running = (pattern: string) =>
  execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .some((line) => line.trim() === pattern);

async function until(what: string, check: () => boolean, seconds: number): Promise<void> {
  for (let waited = 0; !check(); waited += 0.25) {
    if (waited > seconds) throw new Error(`gave up after ${seconds} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function storeKeys(h: Harness): string[] {
  return existsSync(h.settings.dindStoreDir) ? readdirSync(h.settings.dindStoreDir).filter((name) => /^[0-9a-f]{64}$/.test(name)) : [];
}

describe('two DinD tasks preloading a 1 GiB image', () => {
  let h: Harness;
  let signals: string;
  let big: string;
  beforeAll(async () => {
    big = ensureBigImage();
    signals = path.join(scratch, 'signals');
    mkdirSync(signals);
    h = await startHarness('dindstore', { modelHost: '0.0.0.0', env: { BENCHROUTER_DATASET_DIR: signals } });
  }, 600_000);
  afterAll(async () => {
    await h?.close();
  });

  it('share one copy on disk, see only their own containers, and one deleting the image leaves the other and the store alone', async () => {
    // Each task starts a container of the image in its own daemon, holds until the test says go, then
    // reports what its daemon has. `own-a` then removes the image; `own-b` starts a new container of it after that.
    const hold = (n: string) => `
set -e
docker run -d --name own-${n} ${big} sleep 360${n === 'a' ? 1 : 2} >/dev/null
test "$(docker exec own-${n} stat -c %s /big.bin)" = ${BIG_FILE_BYTES}
while [ ! -e "$BENCHROUTER_DATASET_DIR/go-${n}" ]; do sleep 0.2; done
containers=$(docker ps -a --format '{{.Names}}' | sort | paste -sd, -)`;
    const dir = benchmark('store-big', {
      'own-a': [
        [big],
        `${hold('a')}
docker rm -f own-a >/dev/null
docker rmi ${big} >/dev/null
echo "{\\"overall\\": 1, \\"containers\\": \\"$containers\\", \\"images\\": \\"$(docker images -q | wc -l)\\", \\"size\\": 0}" > "$BENCHROUTER_OUTPUT_DIR/result.json"`,
      ],
      'own-b': [
        [big],
        `${hold('b')}
size=$(docker run --rm ${big} stat -c %s /big.bin)
images=$(docker images --format '{{.Repository}}:{{.Tag}}' | paste -sd, -)
echo "{\\"overall\\": 1, \\"containers\\": \\"$containers\\", \\"images\\": \\"$images\\", \\"size\\": $size}" > "$BENCHROUTER_OUTPUT_DIR/result.json"`,
      ],
    });
    const result = h.run(dir, { concurrency: 2 });
    result.catch(() => undefined);

    await until('both tasks to run a container of the 1 GiB image', () => running('sleep 3601') && running('sleep 3602'), 600);
    // The two tasks at once: one prepared image set, two clones of it, the image's file on disk once.
    const [key] = storeKeys(h);
    expect(storeKeys(h)).toEqual([key]);
    const entry = path.join(h.settings.dindStoreDir, key!);
    const layers = path.join(entry, 'docker', 'overlay2');
    const bigFile = readdirSync(layers)
      .map((layer) => path.join(layers, layer, 'diff', 'big.bin'))
      .find((file) => existsSync(file))!;
    expect(statSync(bigFile).size).toBe(BIG_FILE_BYTES);
    // Each task's storage links to its own clone, whose files are inodes of their own (copy on write).
    const clones = readdirSync(h.settings.dindStorageRoot).map((name) => realpathSync(path.join(h.settings.dindStorageRoot, name)));
    expect(clones).toHaveLength(2);
    for (const clone of clones) {
      expect(clone.startsWith(path.join(h.settings.dindStoreDir, '.tasks'))).toBe(true);
      const copy = path.join(clone, path.relative(path.join(entry, 'docker'), bigFile));
      expect(statSync(copy).size).toBe(BIG_FILE_BYTES);
      expect(statSync(copy).ino).not.toBe(statSync(bigFile).ino);
      expect(diskBytes(clone)).toBeGreaterThan(BIG_FILE_BYTES); // du sees a whole copy; the filesystem does not
    }
    const oneCopy = diskBytes(entry);
    expect(oneCopy).toBeGreaterThan(BIG_FILE_BYTES);
    const withClones = usedBytes(h.settings.dindStoreDir);
    const before = snapshot(entry);

    writeFileSync(path.join(signals, 'go-a'), '');
    await until(
      'own-a to finish',
      () =>
        !running('sleep 3601') &&
        !execFileSync('docker', ['ps', '-aq', '--filter', 'label=benchrouter.task=own-a', '--filter', 'label=benchrouter.host=host-dindstore'], {
          encoding: 'utf8',
        }).trim(),
      300,
    );
    writeFileSync(path.join(signals, 'go-b'), '');
    const run = await result;

    const job = (task: string) => run.jobs.find((j) => j.task === task)!;
    expect(run.status).toBe('COMPLETED');
    expect(job('own-a')).toMatchObject({ status: 'SUCCEEDED', preload: 'store', result: { raw_metrics: { containers: 'own-a', images: '0' } } });
    expect(job('own-b')).toMatchObject({
      status: 'SUCCEEDED',
      preload: 'store',
      result: { raw_metrics: { containers: 'own-b', images: big, size: BIG_FILE_BYTES } },
    });
    expect(job('own-a').runtime).toMatch(/^dind:(sysbox|privileged|capabilities)$/);
    // Nothing either daemon did reached the store's files, and the clones are gone with their tasks.
    expect(snapshot(entry)).toEqual(before);
    expect(readdirSync(h.settings.dindStorageRoot)).toEqual([]);
    // A clone leaves its name with its task and its files in the background (.tasks/.discarded-*), soon after.
    await until('the clones to be removed', () => readdirSync(path.join(h.settings.dindStoreDir, '.tasks')).length === 0, 60);
    // What the two running tasks added to the store's filesystem: their inner containers' layers and
    // the blocks their daemons rewrote, not the image (the filesystem without them holds the store alone).
    const added = withClones - usedBytes(h.settings.dindStoreDir);
    console.log(`store ${oneCopy} bytes; 2 running clones added ${added} bytes (${((oneCopy + added) / oneCopy).toFixed(3)}x one image)`);
    expect(added).toBeLessThan(64 * MIB);
  }, 1_200_000);

  // On the image set the test above prepared: the store's entry is used again, as a later run's would be.
  it('under a disk limit, charge neither the 1 GiB image they did not write, nor let a file they wrote hide behind a link', async () => {
    const dir = path.join(scratch, 'store-disk');
    mkdirSync(path.join(dir, 'environments', 'dind'), { recursive: true });
    writeFileSync(path.join(dir, 'environments', 'dind', 'Dockerfile'), 'FROM benchrouter/dind:bookworm\n');
    writeFileSync(
      path.join(dir, 'benchmark.yaml'),
      'name: store-disk\ntasks:\n  - {name: uses-image, environment: dind}\n  - {name: links-its-file, environment: dind}\n',
    );
    // Under a 256 MB limit. The image's user holds 12 s, past two of the watchdog's 5 s measures; the
    // linker holds until the watchdog kills it, however long a measure of its clone takes on a loaded host.
    const task = (name: string, command: string) => {
      mkdirSync(path.join(dir, 'tasks', name), { recursive: true });
      writeFileSync(
        path.join(dir, 'tasks', name, 'task.yaml'),
        `name: ${name}\ndocker: true\ndocker_images: ["${big}"]\ntimeout: 600\nresources:\n  disk: 256m\ncommand: |\n  ${command}\nresult_mapping: {overall: overall}\n`,
      );
    };
    const done = `echo '{"overall": 1}' > "$BENCHROUTER_OUTPUT_DIR/result.json"`;
    task('uses-image', `docker run --rm ${big} stat -c %s /big.bin && sleep 12 && ${done}`);
    task(
      'links-its-file',
      `head -c 300000000 /dev/zero > /var/lib/docker/mine.bin && ln /var/lib/docker/mine.bin /var/lib/docker/mine-link.bin && sleep 500 && ${done}`,
    );
    const run = await h.run(dir, { concurrency: 2 });
    const job = (name: string) => run.jobs.find((j) => j.task === name)!;
    expect(job('uses-image')).toMatchObject({ status: 'SUCCEEDED', preload: 'store' });
    expect(job('links-its-file')).toMatchObject({ status: 'FAILED', reason: 'DISK_LIMIT', preload: 'store' });
  }, 1_200_000);
});

describe('the store with small images', () => {
  const hasImage = (image: string) =>
    `docker image inspect ${image} >/dev/null && echo '{"overall": 1, "containers": "", "images": "${image}", "size": 0}' > "$BENCHROUTER_OUTPUT_DIR/result.json"`;
  const other = 'benchrouter-test/inner-service:store-lru';
  beforeAll(() => {
    execFileSync('docker', ['build', '--quiet', '--tag', SERVICE_IMAGE, path.join(fixturesDir, 'images', 'inner-service')], {
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
    });
    execFileSync('docker', ['tag', SERVICE_IMAGE, other]);
  });
  afterAll(() => {
    execFileSync('docker', ['rmi', other], { stdio: 'ignore' });
  });

  it('keeps the most recently used image sets under its size cap', async () => {
    // 1 KiB holds no image set: each new one pushes out every other, and stays itself.
    const h = await startHarness('dindstore-lru', { modelHost: '0.0.0.0', env: { BENCHROUTER_DIND_STORE_MAX: '1k' } });
    try {
      const dir = benchmark('store-lru', { first: [[SERVICE_IMAGE], hasImage(SERVICE_IMAGE)], second: [[SERVICE_IMAGE, other], hasImage(other)] });
      const first = await h.run(dir, { tasks: ['first'] });
      expect(first.jobs[0]).toMatchObject({ status: 'SUCCEEDED', preload: 'store' });
      const [firstKey] = storeKeys(h);
      expect(storeKeys(h)).toEqual([firstKey]);
      const second = await h.run(dir, { tasks: ['second'] });
      expect(second.jobs[0]).toMatchObject({ status: 'SUCCEEDED', preload: 'store' });
      expect(storeKeys(h)).toHaveLength(1);
      expect(storeKeys(h)).not.toContain(firstKey);
      const manifest = JSON.parse(readFileSync(path.join(h.settings.dindStoreDir, storeKeys(h)[0]!, 'manifest.json'), 'utf8')) as { images: string[] };
      expect(manifest.images.sort()).toEqual([SERVICE_IMAGE, other]);
    } finally {
      await h.close();
    }
  }, 600_000);

  it("keeps a task that writes to its image's files away from the store and from the next task", async () => {
    // A task's command is root next to its daemon's /var/lib/docker: it appends to the image's files
    // there, directly and through a bind mount into a container of its daemon, and changes a mode.
    // Whatever it reaches must be its own copy: the store's files and the next task's image stay as built.
    const h = await startHarness('dindstore-tamper', { modelHost: '0.0.0.0' });
    try {
      const files = '/serve.sh /bin/busybox';
      const built = execFileSync('docker', ['run', '--rm', '--entrypoint', '/bin/sha256sum', SERVICE_IMAGE, ...files.split(' ')], { encoding: 'utf8' });
      const digests = `docker run --rm --entrypoint /bin/sh ${SERVICE_IMAGE} -c 'sha256sum ${files}; stat -c %a /bin/busybox' | tr '\\n' ' '`;
      const dir = benchmark('store-tamper', {
        tamper: [
          [SERVICE_IMAGE],
          `set -e
before=$(${digests})
for f in /var/lib/docker/overlay2/*/diff/serve.sh /var/lib/docker/overlay2/*/diff/bin/busybox; do
  if [ -f "$f" ]; then echo tampered >> "$f"; chmod 777 "$f"; fi
done
docker run --rm -v /var/lib/docker/overlay2:/layers --entrypoint /bin/sh ${SERVICE_IMAGE} -c 'for f in /layers/*/diff/serve.sh; do echo tampered-in-container >> "$f"; done'
after=$(${digests})
test "$before" != "$after"
echo "{\\"overall\\": 1, \\"containers\\": \\"\\", \\"images\\": \\"$after\\", \\"size\\": 0}" > "$BENCHROUTER_OUTPUT_DIR/result.json"`,
        ],
        next: [
          [SERVICE_IMAGE],
          `echo "{\\"overall\\": 1, \\"containers\\": \\"\\", \\"images\\": \\"$(${digests})\\", \\"size\\": 0}" > "$BENCHROUTER_OUTPUT_DIR/result.json"`,
        ],
      });
      // The image set is prepared by the first run; the tampering task runs on a clone of it.
      const first = await h.run(dir, { tasks: ['next'] });
      expect(first.jobs[0]).toMatchObject({ status: 'SUCCEEDED', preload: 'store' });
      const [key] = storeKeys(h);
      const entry = path.join(h.settings.dindStoreDir, key!);
      const before = snapshot(entry);
      const tampered = await h.run(dir, { tasks: ['tamper'] });
      expect(tampered.jobs[0]).toMatchObject({ status: 'SUCCEEDED', preload: 'store' });
      // The tampering reached the task's own image: the test above would have failed otherwise.
      expect(String(tampered.jobs[0]!.result?.raw_metrics?.images)).toContain('777');
      expect(snapshot(entry)).toEqual(before);
      const next = await h.run(dir, { tasks: ['next'] });
      expect(next.jobs[0]).toMatchObject({ status: 'SUCCEEDED', preload: 'store' });
      const seen = String(next.jobs[0]!.result?.raw_metrics?.images);
      for (const line of built.trim().split('\n')) expect(seen).toContain(line.trim());
      expect(seen.trim().split(' ').at(-1)).toBe('755');
    } finally {
      await h.close();
    }
  }, 600_000);

  it('is skipped when its cap is 0: the task loads its archives, and says so', async () => {
    const h = await startHarness('dindstore-off', { modelHost: '0.0.0.0', env: { BENCHROUTER_DIND_STORE_MAX: '0' } });
    try {
      const dir = benchmark('store-off', { load: [[SERVICE_IMAGE], hasImage(SERVICE_IMAGE)] });
      const run = await h.run(dir);
      expect(run.jobs[0]).toMatchObject({ status: 'SUCCEEDED', preload: 'load', result: { overall: 1, raw_metrics: { images: SERVICE_IMAGE } } });
      expect(storeKeys(h)).toEqual([]);
    } finally {
      await h.close();
    }
  }, 600_000);
});

describe('a job cancelled while its image set is being prepared', () => {
  it('stops the preparation, leaves nothing half made nor locked, and the next task prepares it again', async () => {
    const big = ensureBigImage();
    const h = await startHarness('dindstore-cancel', { modelHost: '0.0.0.0' });
    try {
      const has = `docker image inspect ${big} >/dev/null && echo '{"overall": 1, "containers": "", "images": "${big}", "size": 0}' > "$BENCHROUTER_OUTPUT_DIR/result.json"`;
      const dir = benchmark('store-cancel', { prep: [[big], has] });
      const submitted = await br(['submit', dir, '--model', 'm', '--endpoint', h.model.url], h.env);
      expect(submitted.code).toBe(0);
      const runId = submitted.stdout.trim();
      // The 1 GiB archive takes seconds to load: cancelled while its preparing daemon loads it.
      const preparing = () => (existsSync(h.settings.dindStoreDir) ? readdirSync(h.settings.dindStoreDir).filter((n) => n.startsWith('.preparing-')) : []);
      const preparers = () =>
        execFileSync('docker', ['ps', '-aq', '--filter', 'label=benchrouter.dind-store', '--filter', 'name=br-dind-store-'], { encoding: 'utf8' }).trim();
      await until('the image set to be being prepared', () => preparing().length === 1 && preparers() !== '', 600);
      const cancelled = await br(['cancel', runId, '--json'], h.env);
      expect(cancelled.code).toBe(5);
      expect(JSON.parse(cancelled.stdout)).toMatchObject({ status: 'CANCELLED', jobs: [{ status: 'CANCELLED' }] });
      // Whatever finishes in the background after the cancel returned does so within seconds.
      await until('the preparation to be gone', () => preparing().length === 0 && preparers() === '', 60);
      expect(storeKeys(h)).toEqual([]);
      expect(readdirSync(h.settings.locksDir).filter((n) => n.startsWith('dind-store-'))).toEqual([]);
      expect(existsSync(h.settings.dindStorageRoot) ? readdirSync(h.settings.dindStorageRoot) : []).toEqual([]);

      const again = await h.run(dir);
      expect(again.jobs[0]).toMatchObject({ status: 'SUCCEEDED', preload: 'store', result: { raw_metrics: { images: big } } });
      expect(storeKeys(h)).toHaveLength(1);
    } finally {
      await h.close();
    }
  }, 1_200_000);
});
