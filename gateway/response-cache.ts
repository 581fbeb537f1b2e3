// The gateway's response cache (opt-in with --cache): answers keyed by the job's repeat, the upstream
// model, the endpoint path and the request body, stored with the run's artifacts. A retry or rerun reads
// its ancestors' caches too, so a request answered once is never paid for again; distinct repeats of a
// task never share an answer, so a score's spread over repeats is a real one. Streams are stored as the
// exact bytes the client received and replayed as they were.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface CachedResponse {
  status: number;
  contentType: string;
  /** The bytes the client received, base64. */
  body: string;
  promptTokens: number;
  completionTokens: number;
  /** What the call cost when it was made (a hit costs nothing). */
  cost: number;
}

/**
 * Keyed by the job's repeat (repeats resample: the same request in two repeats is two draws), the exact bytes
 * sent upstream, and whether the client's stream keeps its usage event.
 */
export function cacheKey(repeat: number, model: string, endpoint: string, upstreamBody: Buffer, stripsUsageEvent: boolean): string {
  return createHash('sha256')
    .update(JSON.stringify([model, endpoint, stripsUsageEvent, repeat]))
    .update('\0')
    .update(upstreamBody)
    .digest('hex');
}

export class ResponseCache {
  constructor(
    private readonly writeDir: string,
    private readonly readDirs: string[] = [],
  ) {}

  get(key: string): CachedResponse | undefined {
    for (const dir of [this.writeDir, ...this.readDirs]) {
      const file = path.join(dir, `${key}.json`);
      if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as CachedResponse;
    }
    return undefined;
  }

  put(key: string, response: CachedResponse): void {
    mkdirSync(this.writeDir, { recursive: true });
    const file = path.join(this.writeDir, `${key}.json`);
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, JSON.stringify(response));
    renameSync(partial, file);
  }
}
