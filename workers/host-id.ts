// The stable id of this evaluation machine. It names the host's task queue, so it must survive a
// worker restart: BENCHROUTER_HOST_ID when set, else the id saved under the BenchRouter home,
// made once from the hostname.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function resolveHostId(home: string, env: Record<string, string | undefined> = process.env): string {
  if (env.BENCHROUTER_HOST_ID) return sanitize(env.BENCHROUTER_HOST_ID);
  const file = path.join(home, 'host-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const id = sanitize(os.hostname() || 'host');
  mkdirSync(home, { recursive: true });
  writeFileSync(file, `${id}\n`);
  return id;
}

function sanitize(id: string): string {
  return id.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}
