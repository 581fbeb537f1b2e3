// Network namespaces for Simple-mode tasks, made once and lent out one task at a time.
//
// A container that gets a network namespace of its own on a bridge costs Docker ~100 ms of serialized
// setup (namespace, veth pair, address, embedded-DNS rules) and as much again to tear down: measured,
// 100 no-op tasks at concurrency 8 took 17.5 s on the task network and 7.6 s on the host's network,
// more than everything else BenchRouter does per job. So each worker keeps a few holder containers on
// the task network, each asleep in a namespace of its own, and a task container joins a free holder's
// namespace (`--network container:<holder>`, about what `--network host` costs). A holder serves one
// task at a time: two tasks running at once never share a namespace, and what a task leaves behind
// there is nothing another can use (it has no CAP_NET_ADMIN for routes or firewall rules, its sockets
// die with its processes). The namespace's /etc/hosts and /etc/resolv.conf, which Docker would share
// writable with every task that joins, are copies mounted read-only, so one task cannot redirect the
// next one's model endpoint.
//
// The pool's state is Docker's: holders carry a label, a task container names its holder in its
// NetworkMode, and a restarted worker adopts the holders tasks still run in (adoptExisting); the free
// ones it finds are removed, not adopted, since only the process that made a free holder may lend it
// (a second worker started with the same host id would otherwise lend the same one). A holder that
// stopped (a daemon restart without live-restore) is dropped when a task fails to join it, and the task
// starts in a fresh one.

import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-fs';
import { HOST_ALIAS, LABELS } from './container-spec.js';
import type { DockerEngine } from './docker-engine.js';
import { ensureTaskNetwork, TASK_NETWORK } from './task-network.js';

/** Label of a holder container: the host whose pool it belongs to. */
export const NETNS_HOLDER_LABEL = 'benchrouter.netns-holder';
/** Label of a holder container: the folder of its /etc copies (gone with its worker's home, so is the holder's use). */
export const NETNS_FILES_LABEL = 'benchrouter.netns-files';

/** The files Docker writes for a namespace, which a joining container would otherwise share writable. */
const NAMESPACE_FILES = ['/etc/hosts', '/etc/resolv.conf', '/etc/hostname'] as const;

interface Holder {
  name: string;
  id: string;
}

/** What a task container's create body needs to join a lent namespace. */
export interface NetnsLease {
  networkMode: string;
  mounts: Array<{ Type: 'bind'; Source: string; Target: string; ReadOnly: true }>;
}

export class NetnsPool {
  private readonly free: Holder[] = [];
  /** Holder lent to each task container, by the container's name. */
  private readonly lent = new Map<string, Holder>();
  private nextIndex = 0;

  constructor(
    private readonly docker: DockerEngine,
    private readonly hostId: string,
    /** Host folder for the namespace files (a path the daemon can bind, as the results folders). */
    private readonly dir: string,
    /** Image the holders sleep in; every worker host has BenchRouter's base image. */
    private readonly image: string,
  ) {}

  /**
   * At worker start, before any task: this host's holders that a task container joined are kept, lent
   * to it (a task outliving the worker's restart keeps its network, and the holder comes to this pool
   * when the task ends); the others are removed (lazily replaced, ~0.3 s each once). A holder Docker
   * will not remove now is left for the next start and named in the problems returned: it must not
   * keep the worker from starting.
   */
  async adoptExisting(): Promise<string[]> {
    const problems: string[] = [];
    const holders = await this.docker.listContainers([`${NETNS_HOLDER_LABEL}=${this.hostId}`]);
    const tasks = await this.docker.listContainers([`${LABELS.managed}=true`, `${LABELS.host}=${this.hostId}`]);
    const taskByHolderId = new Map(
      tasks.flatMap((task) => (task.networkMode?.startsWith('container:') ? [[task.networkMode.slice(10), task.name] as const] : [])),
    );
    for (const found of holders) {
      this.nextIndex = Math.max(this.nextIndex, holderIndex(found.name) + 1);
      const holder = { name: found.name, id: found.id };
      const task = taskByHolderId.get(found.id);
      // Its /etc copies were made with it, in this host's folder, and are there still.
      if (found.state === 'running' && task) this.lent.set(task, holder);
      else
        await this.remove(holder).catch((error: unknown) => {
          problems.push(
            `could not remove the unused namespace holder ${holder.name} (the next start tries again): ${error instanceof Error ? error.message : String(error)}`,
          );
        });
    }
    return problems;
  }

  /** A namespace for the task container `containerName`: the one it already holds, or a free one, or a new one. */
  async lease(containerName: string): Promise<NetnsLease> {
    const holder = this.lent.get(containerName) ?? this.free.pop() ?? (await this.create());
    this.lent.set(containerName, holder);
    return {
      networkMode: `container:${holder.id}`,
      mounts: NAMESPACE_FILES.map((file) => ({
        Type: 'bind',
        Source: path.join(this.filesDirOf(holder.name), path.basename(file)),
        Target: file,
        ReadOnly: true,
      })),
    };
  }

  /** The task container is gone: its holder is free for the next task. */
  release(containerName: string): void {
    const holder = this.lent.get(containerName);
    if (!holder) return;
    this.lent.delete(containerName);
    this.free.push(holder);
  }

  /** The task container could not join its holder: the holder is removed, so the next lease makes a fresh one. */
  async discard(containerName: string): Promise<void> {
    const holder = this.lent.get(containerName);
    if (!holder) return;
    this.lent.delete(containerName);
    await this.remove(holder);
  }

  /** At worker shutdown: free holders go; lent ones stay with the tasks that run on in them. */
  async close(): Promise<void> {
    for (const holder of this.free.splice(0)) await this.remove(holder).catch(() => undefined);
  }

  private async create(): Promise<Holder> {
    const { gateway } = await ensureTaskNetwork(this.docker);
    for (;;) {
      const name = `brnetns-${this.hostId}-${this.nextIndex++}`.replace(/[^A-Za-z0-9_.-]/g, '-');
      const started = await this.docker.createAndStart(name, {
        Image: this.image,
        Entrypoint: ['sleep'],
        Cmd: ['infinity'],
        Env: [],
        Labels: { [NETNS_HOLDER_LABEL]: this.hostId, [NETNS_FILES_LABEL]: this.dir },
        WorkingDir: '/',
        HostConfig: {
          NetworkMode: TASK_NETWORK,
          ExtraHosts: [`${HOST_ALIAS}:${gateway ?? 'host-gateway'}`],
          // It only sleeps: no capability, no writes, a few MiB.
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          ReadonlyRootfs: true,
          Memory: 16 * 1024 ** 2,
          MemorySwap: 16 * 1024 ** 2,
          PidsLimit: 4,
          LogConfig: { Type: 'none', Config: {} },
        },
      });
      if (started === 'conflict') continue; // a name left by an earlier worker of this host, not adopted: skip it
      const holder = { name, id: started.id };
      try {
        await this.copyNamespaceFiles(holder);
      } catch (error) {
        await this.remove(holder).catch(() => undefined);
        throw error;
      }
      return holder;
    }
  }

  private async copyNamespaceFiles(holder: Holder): Promise<void> {
    const dir = this.filesDirOf(holder.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const file of NAMESPACE_FILES) await pipeline(await this.docker.archive(holder.id, file), tar.extract(dir));
  }

  private async remove(holder: Holder): Promise<void> {
    await this.docker.remove(holder.id);
    rmSync(this.filesDirOf(holder.name), { recursive: true, force: true });
  }

  private filesDirOf(name: string): string {
    return path.join(this.dir, name);
  }
}

function holderIndex(name: string): number {
  const index = Number(/-(\d+)$/.exec(name)?.[1]);
  return Number.isFinite(index) ? index : -1;
}
