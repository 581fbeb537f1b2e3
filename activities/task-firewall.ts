// The host firewall around the task network: traffic from its bridge to the worker host itself is
// dropped except for the model gateway's port (and replies to connections the host opened), both
// to ports the host listens on (INPUT) and to ports Docker publishes on it (DNAT, seen in FORWARD).
// Traffic to the outside is untouched. Rules are added idempotently: several workers share a host; a
// worker starting removes the openings of workers killed before they could close them.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** Traffic from the task bridge addressed to the host itself. */
const INPUT_CHAIN = 'BENCHROUTER-TASKS-IN';
/** Traffic from the task bridge to a port Docker publishes on the host (DNAT to another container). */
const PUBLISHED_CHAIN = 'BENCHROUTER-TASKS-PUB';

export interface TaskFirewall {
  /** False where iptables is missing or refused us: then tasks can reach every host port. */
  active: boolean;
  /** Why it is not active. */
  problem?: string;
  /** Lets tasks reach one more TCP port of the host (a model endpoint on it named with --no-gateway). */
  allowHostPort(port: number): Promise<void>;
  /** Removes the ports this worker opened; the drop rules stay, for tasks that outlive it. */
  close(): Promise<void>;
}

type Iptables = (args: string[]) => Promise<{ ok: boolean; output: string }>;

const iptables: Iptables = (args) =>
  new Promise((resolve) => {
    // -w: wait for the xtables lock rather than fail while dockerd or another worker holds it.
    execFile('iptables', ['-w', ...args], { timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ ok: !error, output: `${stdout}${stderr}`.trim() || (error?.message ?? '') }),
    );
  });

async function run(cmd: Iptables, args: string[]): Promise<void> {
  const result = await cmd(args);
  if (!result.ok) throw new Error(`iptables ${args.join(' ')}: ${result.output}`);
}

/** Adds a rule unless the same rule is already there; `first` puts it at the top of its chain. */
async function ensureRule(cmd: Iptables, chain: string, rule: string[], where: 'first' | 'last'): Promise<void> {
  if ((await cmd(['-C', chain, ...rule])).ok) return;
  await run(cmd, where === 'first' ? ['-I', chain, '1', ...rule] : ['-A', chain, ...rule]);
}

async function ensureChain(cmd: Iptables, chain: string): Promise<void> {
  const created = await cmd(['-N', chain]);
  if (!created.ok && !/exists/i.test(created.output)) throw new Error(`iptables -N ${chain}: ${created.output}`);
}

/** Each opening names the worker process that made it, so that a later worker can tell a dead one's. */
const OWNER_PREFIX = 'benchrouter-worker-';

const acceptPort = (port: number, owner: number) => {
  const comment = ['-m', 'comment', '--comment', `${OWNER_PREFIX}${owner}`];
  return {
    input: ['-p', 'tcp', '--dport', String(port), ...comment, '-j', 'ACCEPT'],
    published: ['-p', 'tcp', '-m', 'conntrack', '--ctorigdstport', String(port), ...comment, '-j', 'RETURN'],
  };
};

/** What the pruning of stale openings asks of this host. */
export interface HostProcesses {
  /** Whether the process `pid` still runs. */
  alive(pid: number): boolean;
  /** The TCP ports something listens on (IPv4 or IPv6). */
  listeningPorts(): Set<number>;
}

/** TCP ports something listens on, from /proc/net/tcp{,6} (state 0A is LISTEN). */
function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '0A' && local) ports.add(parseInt(local.split(':').pop()!, 16));
    }
  }
  return ports;
}

const thisHost: HostProcesses = { alive: (pid) => existsSync(`/proc/${pid}`), listeningPorts };

/**
 * Removes the openings of workers gone without closing them (killed): a port one opened must not stay
 * open to tasks for whatever listens on it next. An opening names its worker process; one made before
 * openings did (no name) goes when nothing listens on its port.
 */
async function pruneStaleOpenings(cmd: Iptables, host: HostProcesses): Promise<void> {
  const listening = host.listeningPorts();
  for (const chain of [INPUT_CHAIN, PUBLISHED_CHAIN]) {
    const listed = await cmd(['-S', chain]);
    if (!listed.ok) continue;
    const prefix = `-A ${chain} `;
    for (const line of listed.output.split('\n')) {
      const port = /--(?:dport|ctorigdstport) (\d+)/.exec(line)?.[1];
      if (!port || !line.startsWith(prefix)) continue;
      const owner = new RegExp(`--comment "?${OWNER_PREFIX}(\\d+)`).exec(line)?.[1];
      const stale = owner !== undefined ? !host.alive(Number(owner)) : !listening.has(Number(port));
      if (stale) await cmd(['-D', chain, ...line.slice(prefix.length).split(' ')]);
    }
  }
}

/**
 * Installs the rules for `bridgeInterface`, opening `gatewayPort`. Never throws: a host without
 * iptables (or a worker without the right to change it) still runs tasks, and says so.
 */
export async function installTaskFirewall(
  bridgeInterface: string,
  gatewayPort: number,
  cmd: Iptables = iptables,
  host: HostProcesses = thisHost,
): Promise<TaskFirewall> {
  const opened = new Set<number>();
  const allow = async (port: number) => {
    if (opened.has(port)) return;
    const rules = acceptPort(port, process.pid);
    await ensureRule(cmd, INPUT_CHAIN, rules.input, 'first');
    await ensureRule(cmd, PUBLISHED_CHAIN, rules.published, 'first');
    opened.add(port);
  };
  try {
    const probe = await cmd(['-S', 'INPUT']);
    if (!probe.ok) throw new Error(probe.output);
    for (const chain of [INPUT_CHAIN, PUBLISHED_CHAIN]) {
      await ensureChain(cmd, chain);
      await ensureRule(cmd, chain, ['-j', 'DROP'], 'last');
    }
    await pruneStaleOpenings(cmd, host);
    await ensureRule(cmd, INPUT_CHAIN, ['-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'ACCEPT'], 'first');
    await allow(gatewayPort);
    await ensureRule(cmd, 'INPUT', ['-i', bridgeInterface, '-j', INPUT_CHAIN], 'first');
    // DOCKER-USER is Docker's hook into FORWARD that it never rewrites; only DNATed (published-port) traffic is sent on.
    const dockerUser = await cmd(['-S', 'DOCKER-USER']);
    if (dockerUser.ok) await ensureRule(cmd, 'DOCKER-USER', ['-i', bridgeInterface, '-m', 'conntrack', '--ctstate', 'DNAT', '-j', PUBLISHED_CHAIN], 'first');
  } catch (error) {
    const problem = `iptables is not usable (${(error as Error).message.split('\n')[0]})`;
    return { active: false, problem, allowHostPort: async () => undefined, close: async () => undefined };
  }
  return {
    active: true,
    allowHostPort: allow,
    async close() {
      for (const port of opened) {
        const rules = acceptPort(port, process.pid);
        await cmd(['-D', INPUT_CHAIN, ...rules.input]);
        await cmd(['-D', PUBLISHED_CHAIN, ...rules.published]);
      }
      opened.clear();
    },
  };
}
