// tau2 and agentdojo run inspect_evals through one bridge and one Inspect hook; each benchmark directory holds its
// own copy (a task sees only its own directory), and the copies must not drift apart.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const benchmarks = path.resolve(import.meta.dirname, '..', '..', 'benchmarks');

function files(dir: string, under = ''): string[] {
  return readdirSync(path.join(dir, under))
    .sort()
    .flatMap((name) => (statSync(path.join(dir, under, name)).isDirectory() ? files(dir, path.join(under, name)) : [path.join(under, name)]));
}

describe('the inspect_evals bridge', () => {
  it.each(['inspect_bridge.py', 'instance_header', path.join('environments', 'inspect')])('%s is the same in tau2 and agentdojo', (entry) => {
    const [tau2, agentdojo] = ['tau2', 'agentdojo'].map((b) => path.join(benchmarks, b, entry));
    const listing = statSync(tau2!).isDirectory() ? files(tau2!) : [''];
    expect(statSync(agentdojo!).isDirectory() ? files(agentdojo!) : ['']).toEqual(listing);
    for (const file of listing) expect(readFileSync(path.join(agentdojo!, file), 'utf8'), file).toBe(readFileSync(path.join(tau2!, file), 'utf8'));
  });
});
