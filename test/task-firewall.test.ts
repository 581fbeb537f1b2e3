// The host firewall's rule set for the task network, against an iptables that keeps its chains in
// memory the way the real one does (-N, -C, -I, -A, -D, -S): the order that makes the gateway
// reachable and the rest dropped, idempotence across workers sharing a host, and a host without
// iptables. (test/task-isolation.test.ts proves the real rules against real packets.)

import { describe, expect, it } from 'vitest';
import { installTaskFirewall, type HostProcesses } from '../activities/task-firewall.js';

/** The rules that open `port` to tasks, as this worker process writes them. */
const opening = (port: number, owner = process.pid) => `-p tcp --dport ${port} -m comment --comment benchrouter-worker-${owner} -j ACCEPT`;
const published = (port: number, owner = process.pid) =>
  `-p tcp -m conntrack --ctorigdstport ${port} -m comment --comment benchrouter-worker-${owner} -j RETURN`;

/** A minimal iptables: chains of rules as strings, with the answers the real command gives. */
function fakeIptables(builtin = ['INPUT', 'DOCKER-USER']) {
  const chains = new Map<string, string[]>(builtin.map((c) => [c, []]));
  const calls: string[][] = [];
  const cmd = async (args: string[]) => {
    calls.push(args);
    const [op, chain = '', ...rest] = args;
    const rules = chains.get(chain);
    const rule = rest.join(' ');
    if (op === '-N') {
      if (rules) return { ok: false, output: 'iptables: Chain already exists.' };
      chains.set(chain, []);
      return { ok: true, output: '' };
    }
    if (!rules) return { ok: false, output: `iptables: No chain/target/match by that name (${chain}).` };
    if (op === '-S') return { ok: true, output: [`-N ${chain}`, ...rules.map((r) => `-A ${chain} ${r}`)].join('\n') };
    if (op === '-C') return { ok: rules.includes(rule), output: '' };
    if (op === '-A') return (rules.push(rule), { ok: true, output: '' });
    if (op === '-I') return (rules.splice(Number(rest[0]) - 1, 0, rest.slice(1).join(' ')), { ok: true, output: '' });
    if (op === '-D') {
      const at = rules.indexOf(rule);
      if (at < 0) return { ok: false, output: 'iptables: Bad rule.' };
      rules.splice(at, 1);
      return { ok: true, output: '' };
    }
    return { ok: false, output: `unknown ${op}` };
  };
  return { cmd, chains, calls };
}

describe('the task firewall', () => {
  it('sends the bridge to its chains, accepts replies and the gateway port, and drops the rest after them', async () => {
    const { cmd, chains } = fakeIptables();
    const firewall = await installTaskFirewall('br-benchrouter', 8390, cmd);
    expect(firewall.active).toBe(true);
    expect(chains.get('INPUT')).toEqual(['-i br-benchrouter -j BENCHROUTER-TASKS-IN']);
    expect(chains.get('BENCHROUTER-TASKS-IN')).toEqual([opening(8390), '-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT', '-j DROP']);
    expect(chains.get('DOCKER-USER')).toEqual(['-i br-benchrouter -m conntrack --ctstate DNAT -j BENCHROUTER-TASKS-PUB']);
    expect(chains.get('BENCHROUTER-TASKS-PUB')).toEqual([published(8390), '-j DROP']);
  });

  it('adds nothing twice when a second worker on the host installs it, and keeps both gateway ports open', async () => {
    const { cmd, chains } = fakeIptables();
    await installTaskFirewall('br-benchrouter', 8390, cmd);
    await installTaskFirewall('br-benchrouter', 8391, cmd);
    await installTaskFirewall('br-benchrouter', 8390, cmd);
    expect(chains.get('INPUT')).toEqual(['-i br-benchrouter -j BENCHROUTER-TASKS-IN']);
    expect(chains.get('BENCHROUTER-TASKS-IN')).toEqual([opening(8391), opening(8390), '-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT', '-j DROP']);
  });

  it('opens a loopback model port on request and closes only the ports this worker opened', async () => {
    const { cmd, chains } = fakeIptables();
    const other = await installTaskFirewall('br-benchrouter', 8391, cmd);
    const firewall = await installTaskFirewall('br-benchrouter', 8390, cmd);
    await firewall.allowHostPort(18080);
    expect(chains.get('BENCHROUTER-TASKS-IN')!.slice(0, 3)).toEqual([opening(18080), opening(8390), opening(8391)]);
    await firewall.close();
    expect(chains.get('BENCHROUTER-TASKS-IN')).toEqual([opening(8391), '-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT', '-j DROP']);
    expect(chains.get('BENCHROUTER-TASKS-PUB')).toEqual([published(8391), '-j DROP']);
    await other.close();
    expect(chains.get('BENCHROUTER-TASKS-IN')).toEqual(['-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT', '-j DROP']);
  });

  it("removes the openings of workers killed before they closed them, and keeps live workers' and listened-on ones", async () => {
    const { cmd, chains } = fakeIptables();
    const dead = 999_999;
    const host: HostProcesses = { alive: (pid) => pid !== dead, listeningPorts: () => new Set([7000]) };
    await installTaskFirewall('br-benchrouter', 8391, cmd, host);
    // Left behind: a killed worker's gateway port, and two openings from before they named their worker.
    chains.get('BENCHROUTER-TASKS-IN')!.unshift(opening(40001, dead), '-p tcp --dport 7000 -j ACCEPT', '-p tcp --dport 40002 -j ACCEPT');
    chains.get('BENCHROUTER-TASKS-PUB')!.unshift(published(40001, dead));
    await installTaskFirewall('br-benchrouter', 8390, cmd, host);
    expect(chains.get('BENCHROUTER-TASKS-IN')).toEqual([
      opening(8390),
      '-p tcp --dport 7000 -j ACCEPT',
      opening(8391),
      '-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-j DROP',
    ]);
    expect(chains.get('BENCHROUTER-TASKS-PUB')).toEqual([published(8390), published(8391), '-j DROP']);
  });

  it('skips the published-port rule where Docker has no DOCKER-USER chain', async () => {
    const { cmd, chains } = fakeIptables(['INPUT']);
    expect((await installTaskFirewall('br-benchrouter', 8390, cmd)).active).toBe(true);
    expect(chains.has('DOCKER-USER')).toBe(false);
  });

  it('is inactive, and says why, where iptables cannot be run', async () => {
    const missing = async () => ({ ok: false, output: 'spawn iptables ENOENT' });
    const firewall = await installTaskFirewall('br-benchrouter', 8390, missing);
    expect(firewall.active).toBe(false);
    expect(firewall.problem).toBe('iptables is not usable (spawn iptables ENOENT)');
    await expect(firewall.allowHostPort(1)).resolves.toBeUndefined();
  });
});
