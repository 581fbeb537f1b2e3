// Ids that sort by the time they were made and are unique by a random tail: runs, suites and artifact
// reads (`br-20261129-120000-a1b2c3`, to the second) and saved analyses (to the millisecond, since one
// person can make two in a second and the newest must list first).

import { randomBytes } from 'node:crypto';

/** `<prefix>-20261129-120000-a1b2c3`, or with `millis`, `<prefix>-20261129-120000123-a1b2c3`. */
export function sortableId(prefix: string, now = new Date(), { millis = false }: { millis?: boolean } = {}): string {
  // 2026-11-29T12:00:00.123Z → 20261129-120000123
  const stamp = now
    .toISOString()
    .replace(/[-:.]/g, '')
    .replace('T', '-')
    .slice(0, millis ? 18 : 15);
  return `${prefix}-${stamp}-${randomBytes(3).toString('hex')}`;
}
