// The per-host store of preloaded images that DinD tasks' own daemons start from. Loading a task's
// archives into a fresh inner daemon costs every task the full `docker load` (20-30 MB/s here, over a
// minute for a 2 GB image) and a copy on disk of its own. Instead, once per host and image set (the
// content hash of the archives and of the DinD runtime), an inner daemon loads them into a directory
// of the store (a locked step, like image builds), and each task gets a private copy-on-write clone of
// it (docker-root-clone.ts, on a filesystem with reflinks: reflink-fs.ts) as its /var/lib/docker: its
// own containers and layers on top, its own copy of every file it writes, the shared blocks on disk
// once. The store itself is never written by a task. `docker load` stays the fallback: store off, no
// reflink filesystem, preparation failed, clone failed. Least recently used image sets go when the
// store passes its size cap. Each image set keeps one clone made ahead (a spare) for its next task, so that
// a task's clone is a rename, not a copy of thousands of files, while the task waits.

import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { CONTAINER_PRELOAD_DIR, DIND_ENTRYPOINT, DIND_IMAGE_LABEL, TASK_LOG_CONFIG, type PreloadPath } from './container-spec.js';
import { cloneDockerRoot } from './docker-root-clone.js';
import { directoryBytes } from './disk-watchdog.js';
import type { DockerEngine } from './docker-engine.js';
import { processGone, withHostLock } from './host-lock.js';
import { ensureReflinkFilesystem } from './reflink-fs.js';

export interface DindStoreDeps {
  docker: DockerEngine;
  locksDir: string;
  dindStoreDir: string;
  /** 0: the store is off. */
  dindStoreMaxBytes: number;
}

export interface DindStorageRequest {
  /** The task's image (a DinD image): its daemon prepares the store, so the on-disk format is its own. */
  image: string;
  archives: string[];
  /** The task's /var/lib/docker on the host: a directory, or a link to its clone in the store. */
  storageDir: string;
  /** HostConfig fields of the detected DinD runtime. */
  runtimeHostConfig: Record<string, unknown>;
  log: (line: string) => void;
  /** Aborts a preparation under way (the job was cancelled): its container goes, nothing is left. */
  signal?: AbortSignal;
}

export interface DindStorage {
  /** Absent when the task preloads nothing. */
  preload?: PreloadPath;
  /** The archives the task's daemon still has to `docker load` (none when its storage is a clone). */
  archives: string[];
  /** The directory to mount as the task's /var/lib/docker: `storageDir`, or its clone that it links to. */
  mountDir: string;
}

/** Resources of the container that prepares an image set: `docker load` needs little memory. */
const PREPARE_LIMITS = { Memory: 2 * 1024 ** 3, MemorySwap: 2 * 1024 ** 3, NanoCpus: 2e9, PidsLimit: 1024 };
/** The preparing daemon must leave images only: no container, whose layers would be shared writable. */
const PREPARE_CHECK = `test -z "$(docker ps -aq)" || { echo "[dind-store] containers left in the prepared daemon" >&2; exit 1; }; docker images --no-trunc --format '{{.Repository}}:{{.Tag}} {{.ID}}'`;
/** After a failed preparation, tasks of that image set load their archives for this long before it is tried again. */
const RETRY_PREPARE_MS = 10 * 60_000;
const KEY = /^[0-9a-f]{64}$/;
const MANIFEST = 'manifest.json';
const LAST_USED = 'last-used';
/** Tasks' clones, in the store's filesystem (reflinks do not cross filesystems): `.tasks/<name>/docker`. */
const TASKS = '.tasks';

/** The folder of the store's task clones, one `<container name>/` each. */
export function taskClonesDir(storeDir: string): string {
  return path.join(storeDir, TASKS);
}
/** Beside a clone: its mtime is when the clone was complete; what changed after it is the task's. */
const CLONED_AT = 'cloned-at';
/**
 * Each image set's clone made ahead for its next task, `.spares/<key>/docker`, beside (not in) the entry, which
 * stays as prepared; one being made is `.spares/.<key>-<pid>-<ms>`.
 */
const SPARES = '.spares';
const SPARE_PARTIAL = /^\.([0-9a-f]{64})-(\d+)-\d+$/;
/** The spares this process is making, by entry: one at a time each. */
const refilling = new Map<string, Promise<void>>();

/**
 * Resolves once this process makes no spare clone and removes no storage in the background: a stopping
 * worker waits for its `cp` and `rm`, so that the store's filesystem can be unmounted.
 */
export async function dindStoreSettled(): Promise<void> {
  await Promise.allSettled([...refilling.values(), ...discarding]);
}

const failedAt = new Map<string, number>();

/**
 * Readies `storageDir` as a DinD task's /var/lib/docker: a clone of the prepared image set when the
 * store can give one, else an empty directory and the archives to load. Never throws for the store's
 * sake: any failure of it falls back to `docker load`, and says why in `log`.
 */
export async function provideDindStorage(deps: DindStoreDeps, request: DindStorageRequest): Promise<DindStorage> {
  const { storageDir, archives } = request;
  const empty = (): string => {
    removeDindStorage(storageDir);
    mkdirSync(storageDir, { recursive: true });
    return storageDir;
  };
  if (archives.length === 0) return { archives: [], mountDir: empty() };
  if (deps.dindStoreMaxBytes <= 0) return { preload: 'load', archives, mountDir: empty() };
  let key: string | undefined;
  try {
    const started = Date.now();
    const filesystem = await ensureReflinkFilesystem(deps.dindStoreDir, deps.locksDir);
    if (filesystem.how === 'none') throw new Error(filesystem.reason);
    const labels = (await deps.docker.inspectImage(request.image))?.labels ?? {};
    const digests = await Promise.all(archives.map(archiveDigest));
    key = imageSetKey(labels[DIND_IMAGE_LABEL] ?? request.image, digests);
    const since = failedAt.get(key);
    if (since !== undefined && Date.now() - since < RETRY_PREPARE_MS) return { preload: 'load', archives, mountDir: empty() };
    const entry = await ensurePrepared(deps, key, request, digests);
    const cloneStarted = Date.now();
    const { clone: mountDir, spare } = await cloneForTask(deps.dindStoreDir, entry, storageDir);
    touch(path.join(entry, LAST_USED));
    request.log(
      `DinD storage cloned (copy on write) from image set ${key.slice(0, 12)} in ${((Date.now() - cloneStarted) / 1000).toFixed(2)} s${spare ? ' (the clone made ahead)' : ''}; ${((Date.now() - started) / 1000).toFixed(2)} s in the store`,
    );
    // The next task's clone, made while this one runs.
    refillSpare(deps.dindStoreDir, key, request.log);
    return { preload: 'store', archives: [], mountDir };
  } catch (error) {
    if (request.signal?.aborted) {
      removeDindStorage(storageDir);
      throw error;
    }
    if (key) failedAt.set(key, Date.now());
    request.log(`DinD image store unavailable, loading the archives instead: ${error instanceof Error ? error.message : String(error)}`);
    return { preload: 'load', archives, mountDir: empty() };
  }
}

/**
 * Gives the task at `storageDir` (made a link to it) a clone of the entry: the image set's spare when it has
 * one (a rename), else a clone made now. The spare's files were cloned before the task's `cloned-at`, so
 * the disk watchdog charges the task for what it changes, as with a clone of its own.
 */
async function cloneForTask(storeDir: string, entry: string, storageDir: string): Promise<{ clone: string; spare: boolean }> {
  removeDindStorage(storageDir);
  const home = path.join(taskClonesDir(storeDir), path.basename(storageDir));
  rmSync(home, { recursive: true, force: true }); // a crashed attempt's clone, never linked
  mkdirSync(path.dirname(home), { recursive: true });
  let spare = true;
  try {
    renameSync(path.join(storeDir, SPARES, path.basename(entry)), home);
  } catch {
    spare = false; // none (yet), or another task took it
    mkdirSync(home, { recursive: true });
    await cloneDockerRoot(path.join(entry, 'docker'), path.join(home, 'docker'));
  }
  const clone = path.join(home, 'docker');
  const done = new Date();
  writeFileSync(path.join(home, CLONED_AT), '');
  utimesSync(path.join(home, CLONED_AT), done, done);
  mkdirSync(path.dirname(storageDir), { recursive: true });
  symlinkSync(clone, storageDir);
  return { clone, spare };
}

/**
 * Makes the image set's spare clone in the background, unless it has one or this process is making it; a
 * failure only costs the next task a clone of its own. What a crashed maker left (a partial of a process
 * gone) goes first. A spare whose entry was evicted meanwhile goes too (and evictBeyondCap removes the
 * spares of the entries it evicts).
 */
function refillSpare(storeDir: string, key: string, log: (line: string) => void): void {
  const spares = path.join(storeDir, SPARES);
  const spare = path.join(spares, key);
  const entry = path.join(storeDir, key);
  if (refilling.has(key) || existsSync(spare)) return;
  const partial = path.join(spares, `.${key}-${process.pid}-${Date.now()}`);
  const work = (async () => {
    try {
      mkdirSync(spares, { recursive: true });
      for (const name of readdirSync(spares)) {
        const match = SPARE_PARTIAL.exec(name);
        if (match?.[1] === key && processGone(Number(match[2]))) rmSync(path.join(spares, name), { recursive: true, force: true });
      }
      mkdirSync(partial);
      await cloneDockerRoot(path.join(entry, 'docker'), path.join(partial, 'docker'));
      renameSync(partial, spare); // refused when another process's spare got there first
      if (!existsSync(path.join(entry, MANIFEST))) rmSync(spare, { recursive: true, force: true }); // evicted while cloned
    } catch (error) {
      if (existsSync(entry)) log(`DinD image store: no clone made ahead for image set ${key.slice(0, 12)}: ${(error as Error).message}`);
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
  })().finally(() => refilling.delete(key));
  refilling.set(key, work);
}

/**
 * A task's DinD storage on disk: its own directory, or a link and the task's clone in the store that the link
 * points to (`.tasks/<name>/docker`, whose parent goes with it); undefined when there is none.
 */
function taskStorage(storageDir: string): { link: boolean; dirs: string[] } | undefined {
  let target: string | undefined;
  try {
    if (lstatSync(storageDir).isSymbolicLink()) target = readlinkSync(storageDir);
  } catch {
    return undefined;
  }
  if (target === undefined) return { link: false, dirs: [storageDir] };
  const isTaskClone = path.basename(target) === 'docker' && path.basename(path.dirname(path.dirname(target))) === TASKS;
  return { link: true, dirs: isTaskClone ? [path.dirname(target)] : [] };
}

/** Removes a task's DinD storage: its directory, or the link and the clone in the store it points to. */
export function removeDindStorage(storageDir: string): void {
  const storage = taskStorage(storageDir);
  if (!storage) return;
  for (const dir of storage.dirs) rmSync(dir, { recursive: true, force: true });
  if (storage.link) rmSync(storageDir, { force: true });
}

/** Task storage this process is removing in the background. */
const discarding = new Set<Promise<void>>();

/**
 * Removes a task's DinD storage as removeDindStorage does, but waits only for renames: the link (or the
 * directory) and the clone leave their names at once, and their files, thousands of them once a task's
 * daemon has built images, go in the background, not while the job's result waits. A worker that stops
 * waits for them (dindStoreSettled); one that crashes leaves a `.discarded-` entry that the next start's
 * sweep removes, as any storage no container uses. A rename that fails removes in place.
 */
export function discardDindStorage(storageDir: string): void {
  const storage = taskStorage(storageDir);
  if (!storage) return;
  const doomed: string[] = [];
  try {
    for (const dir of storage.dirs) {
      const renamed = path.join(path.dirname(dir), `.discarded-${path.basename(dir)}-${process.pid}-${Date.now()}`);
      renameSync(dir, renamed);
      doomed.push(renamed);
    }
    if (storage.link) rmSync(storageDir, { force: true });
  } catch {
    removeDindStorage(storageDir);
  }
  if (doomed.length === 0) return;
  const work = Promise.all(doomed.map((dir) => rm(dir, { recursive: true, force: true }))).then(
    () => undefined,
    () => undefined,
  );
  discarding.add(work);
  void work.finally(() => discarding.delete(work));
}

/**
 * The disk a task's DinD storage holds for the task: all of a directory; of a clone, the files made or
 * changed since it was cloned (the rest are the store's blocks). Escaping by links is not possible: a
 * link moves its inode's ctime, and each inode counts once.
 */
export async function dindStorageBytes(storageDir: string): Promise<number> {
  let target: string | undefined;
  try {
    if (lstatSync(storageDir).isSymbolicLink()) target = readlinkSync(storageDir);
  } catch {
    return 0;
  }
  if (!target) return directoryBytes(storageDir);
  let changedAfterMs: number;
  try {
    changedAfterMs = statSync(path.join(path.dirname(target), CLONED_AT)).mtimeMs;
  } catch {
    changedAfterMs = 0; // no mark: every file counts
  }
  return directoryBytes(target, { changedAfterMs });
}

/** The store's name for an image set: the DinD runtime's digest and the archives' content, in load order. */
export function imageSetKey(dindDigest: string, archiveDigests: string[]): string {
  return createHash('sha256')
    .update(JSON.stringify({ format: 1, dind: dindDigest, archives: archiveDigests }))
    .digest('hex');
}

/**
 * What names an archive's content. One saved from a host image (preload-images.ts) has that image's id
 * beside it (`<archive>.id`, written after the archive): a content hash of the image's config and so of
 * its layers, which with the archive's name (the tag it carries) names the whole archive without reading
 * it; hashing a 1 GB archive costs a core for seconds. Any other archive (or one replaced after its `.id`)
 * is named by the sha256 of its bytes, kept beside it (`<archive>.sha256`) for as long as its size, mtime
 * and inode say it is the same file.
 */
export async function archiveDigest(archive: string): Promise<string> {
  const stat = statSync(archive);
  try {
    const idFile = `${archive}.id`;
    const id = readFileSync(idFile, 'utf8').trim();
    if (/^sha256:[0-9a-f]{64}$/.test(id) && statSync(idFile).mtimeMs >= stat.mtimeMs) {
      return createHash('sha256')
        .update(`docker save ${id} as ${path.basename(archive)}`)
        .digest('hex');
    }
  } catch {
    // no image id beside it: hashed below
  }
  const identity = { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino };
  const sidecar = `${archive}.sha256`;
  try {
    const kept = JSON.parse(readFileSync(sidecar, 'utf8')) as typeof identity & { sha256: string };
    if (kept.size === identity.size && kept.mtimeMs === identity.mtimeMs && kept.ino === identity.ino && KEY.test(kept.sha256)) return kept.sha256;
  } catch {
    // none yet, or unreadable: computed below
  }
  const hash = createHash('sha256');
  await pipeline(createReadStream(archive), hash);
  const sha256 = hash.digest('hex');
  const partial = `${sidecar}.${process.pid}.partial`;
  try {
    writeFileSync(partial, JSON.stringify({ ...identity, sha256 }));
    renameSync(partial, sidecar);
  } catch {
    rmSync(partial, { force: true }); // a read-only cache still works, at one hash per task
  }
  return sha256;
}

interface Manifest {
  key: string;
  archives: Array<{ name: string; sha256: string }>;
  bytes: number;
  preparedAt: string;
  seconds: number;
  images: string[];
}

/** The prepared entry's directory; prepares it first (once per host, under a lock) when needed. */
async function ensurePrepared(deps: DindStoreDeps, key: string, request: DindStorageRequest, digests: string[]): Promise<string> {
  const entry = path.join(deps.dindStoreDir, key);
  if (existsSync(path.join(entry, MANIFEST))) return entry;
  await withHostLock(deps.locksDir, `dind-store-${key}`, async () => {
    if (existsSync(path.join(entry, MANIFEST))) return;
    const started = Date.now();
    const partial = path.join(deps.dindStoreDir, `.preparing-${key}`);
    rmSync(partial, { recursive: true, force: true }); // a crashed preparation's leftovers
    mkdirSync(path.join(partial, 'docker'), { recursive: true });
    try {
      const images = await prepareInContainer(deps.docker, key, request, path.join(partial, 'docker'));
      if (request.signal?.aborted) throw new Error('cancelled');
      const manifest: Manifest = {
        key,
        archives: request.archives.map((a, i) => ({ name: path.basename(a), sha256: digests[i]! })),
        // The archives' size stands for the set's: a tar of the layers, a few KB of headers apart. Walking
        // the prepared tree for it cost the first task seconds for a 2 GB image.
        bytes: request.archives.reduce((sum, a) => sum + statSync(a).size, 0),
        preparedAt: new Date().toISOString(),
        seconds: (Date.now() - started) / 1000,
        images,
      };
      writeFileSync(path.join(partial, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
      writeFileSync(path.join(partial, LAST_USED), '');
      renameSync(partial, entry);
      request.log(
        `DinD image store: prepared image set ${key.slice(0, 12)} (${images.join(', ')}) in ${manifest.seconds.toFixed(1)} s, ${manifest.bytes} bytes`,
      );
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      throw error;
    }
  });
  await evictBeyondCap(deps, key, request.log);
  return entry;
}

/** Runs the DinD image's own entrypoint on the entry's directory: it loads the archives, checks, stops. */
async function prepareInContainer(docker: DockerEngine, key: string, request: DindStorageRequest, dockerRoot: string): Promise<string[]> {
  const name = `br-dind-store-${key.slice(0, 16)}`;
  await docker.remove(name); // a crashed preparation's container
  const bind = (Source: string, Target: string, ReadOnly = false) => ({ Type: 'bind', Source, Target, ReadOnly });
  const started = await docker.createAndStart(name, {
    Image: request.image,
    Entrypoint: [DIND_ENTRYPOINT],
    Cmd: ['sh', '-c', PREPARE_CHECK],
    // overlay2 or nothing: a vfs store would be a full copy per layer, and no use to an overlay2 daemon.
    Env: ['BENCHROUTER_DIND_STORAGE_DRIVER=overlay2'],
    Labels: { 'benchrouter.dind-store': key },
    WorkingDir: '/',
    HostConfig: {
      ...request.runtimeHostConfig,
      ...PREPARE_LIMITS,
      NetworkMode: 'none',
      LogConfig: TASK_LOG_CONFIG,
      Mounts: [bind(dockerRoot, '/var/lib/docker'), ...request.archives.map((a) => bind(a, `${CONTAINER_PRELOAD_DIR}/${path.basename(a)}`, true))],
    },
  });
  if (started === 'conflict') throw new Error(`container ${name} is in use by another preparation`);
  // A cancelled job's preparation stops now: removing the container ends its wait.
  const stop = () => void docker.remove(started.id).catch(() => undefined);
  request.signal?.addEventListener('abort', stop, { once: true });
  try {
    if (request.signal?.aborted) stop();
    const exitCode = await docker.wait(started.id);
    if (request.signal?.aborted) throw new Error(`preparing image set ${key.slice(0, 12)} stopped: the job was cancelled`);
    const output = (await docker.logTail(started.id, 40)).toString('utf8');
    if (exitCode !== 0) throw new Error(`preparing image set ${key.slice(0, 12)} exited with ${exitCode}:\n${output.trim().split('\n').slice(-10).join('\n')}`);
    // Lines of `docker images` are "<repo>:<tag> sha256:..." after the log's timestamp.
    return output
      .split('\n')
      .map((line) => line.replace(/^\S+\s/, '').trim())
      .filter((line) => /^\S+:\S+ sha256:[0-9a-f]+$/.test(line))
      .map((line) => line.split(' ')[0]!);
  } finally {
    request.signal?.removeEventListener('abort', stop);
    await docker.remove(started.id);
  }
}

export interface StoreEntry {
  key: string;
  bytes: number;
  lastUsedMs: number;
}

/** Keys to remove, least recently used first, until the rest fit in `maxBytes`; never `keep`. Pure. */
export function entriesToEvict(entries: StoreEntry[], maxBytes: number, keep: string): string[] {
  let total = entries.reduce((sum, e) => sum + e.bytes, 0);
  const evicted: string[] = [];
  for (const entry of [...entries].sort((a, b) => a.lastUsedMs - b.lastUsedMs || a.key.localeCompare(b.key))) {
    if (total <= maxBytes) break;
    if (entry.key === keep) continue;
    evicted.push(entry.key);
    total -= entry.bytes;
  }
  return evicted;
}

/** The prepared entries of the store, with their size and last use. */
export function storeEntries(storeDir: string): StoreEntry[] {
  if (!existsSync(storeDir)) return [];
  const entries: StoreEntry[] = [];
  for (const key of readdirSync(storeDir)) {
    if (!KEY.test(key)) continue;
    try {
      const manifest = JSON.parse(readFileSync(path.join(storeDir, key, MANIFEST), 'utf8')) as Manifest;
      entries.push({ key, bytes: manifest.bytes, lastUsedMs: statSync(path.join(storeDir, key, LAST_USED)).mtimeMs });
    } catch {
      // being prepared or removed right now
    }
  }
  return entries;
}

/**
 * Removes least recently used entries past the cap. A task's clone does not need its entry: its
 * layer files are links of their own, so they stay until the task's storage goes.
 */
async function evictBeyondCap(deps: DindStoreDeps, keep: string, log: (line: string) => void): Promise<void> {
  // What a crash left half removed is garbage whoever renamed it: nothing clones from a `.evicted-` name.
  for (const name of readdirSync(deps.dindStoreDir)) {
    if (name.startsWith('.evicted-')) rmSync(path.join(deps.dindStoreDir, name), { recursive: true, force: true });
  }
  for (const key of entriesToEvict(storeEntries(deps.dindStoreDir), deps.dindStoreMaxBytes, keep)) {
    await withHostLock(deps.locksDir, `dind-store-${key}`, async () => {
      const entry = path.join(deps.dindStoreDir, key);
      if (!existsSync(entry)) return;
      // Renamed first: a task never clones from a half-removed entry.
      const doomed = path.join(deps.dindStoreDir, `.evicted-${key}-${process.pid}`);
      renameSync(entry, doomed);
      rmSync(path.join(deps.dindStoreDir, SPARES, key), { recursive: true, force: true });
      rmSync(doomed, { recursive: true, force: true });
      log(`DinD image store: removed image set ${key.slice(0, 12)}, least recently used, to stay under ${deps.dindStoreMaxBytes} bytes`);
    });
  }
}

function touch(file: string): void {
  const now = new Date();
  try {
    utimesSync(file, now, now);
  } catch {
    writeFileSync(file, '');
  }
}
