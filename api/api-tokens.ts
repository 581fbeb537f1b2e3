// Bearer tokens of the HTTP API: a JSON file of named tokens kept as sha256 hashes (a token itself is
// shown once, when made), each full or read-only. `br tokens` manages the file; `br serve` reads it.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { fieldPath, InputError } from '../contract/problems.js';

export const TokenEntrySchema = z.strictObject({
  name: z.string().min(1),
  /** Hex sha256 of the token: tokens are 192 random bits, so a fast hash is enough (no password stretching needed). */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 hex digits'),
  readOnly: z.boolean(),
  createdAt: z.string(),
});

export type TokenEntry = z.infer<typeof TokenEntrySchema>;

const TokensFileSchema = z.strictObject({ tokens: z.array(TokenEntrySchema) });

export function defaultTokensFile(home: string): string {
  return path.join(home, 'api-tokens.json');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The file's tokens; a missing file has none. */
export function loadTokens(file: string): TokenEntry[] {
  if (!existsSync(file)) return [];
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InputError([{ file, field: '', message: `expected a JSON tokens file: ${(error as Error).message}` }]);
  }
  const parsed = TokensFileSchema.safeParse(data);
  if (!parsed.success) throw new InputError(parsed.error.issues.map((i) => ({ file, field: fieldPath(i.path), message: i.message })));
  return parsed.data.tokens;
}

function saveTokens(file: string, tokens: TokenEntry[]): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ tokens }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
}

/** Makes a token named `name`, stores its hash and returns the token (the only time it is seen). */
export function addToken(file: string, name: string, readOnly: boolean): string {
  const tokens = loadTokens(file);
  if (tokens.some((t) => t.name === name))
    throw new InputError([{ file, field: 'tokens', message: `a token named "${name}" exists already: remove it first or pick another name` }]);
  const token = `br_${randomBytes(24).toString('base64url')}`;
  saveTokens(file, [...tokens, { name, sha256: hashToken(token), readOnly, createdAt: new Date().toISOString() }]);
  return token;
}

export function removeToken(file: string, name: string): boolean {
  const tokens = loadTokens(file);
  const kept = tokens.filter((t) => t.name !== name);
  if (kept.length === tokens.length) return false;
  saveTokens(file, kept);
  return true;
}

/** Looks tokens up in the file, re-reading it when it changes, so `br tokens add` and `remove` need no server restart. */
export function tokenVerifier(file: string): (token: string) => TokenEntry | undefined {
  let cached: { mtimeMs: number; size: number; byHash: Map<string, TokenEntry> } | undefined;
  let checkedAt = 0;
  const current = () => {
    // A stat per second at most: a revoked token stops working within a second, and reads stay cheap.
    const now = Date.now();
    if (cached && now - checkedAt < 1000) return cached.byHash;
    checkedAt = now;
    const stat = existsSync(file) ? statSync(file) : undefined;
    if (!stat) return new Map<string, TokenEntry>();
    if (!cached || cached.mtimeMs !== stat.mtimeMs || cached.size !== stat.size)
      cached = { mtimeMs: stat.mtimeMs, size: stat.size, byHash: new Map(loadTokens(file).map((t) => [t.sha256, t])) };
    return cached.byHash;
  };
  return (token) => {
    const hash = hashToken(token);
    for (const [known, entry] of current()) {
      if (timingSafeEqual(Buffer.from(known, 'hex'), Buffer.from(hash, 'hex'))) return entry;
    }
    return undefined;
  };
}

/** The token `br up` makes for the local user, kept readable only by them under the BenchRouter home. */
export function ensureLocalToken(home: string, tokensFile = defaultTokensFile(home)): { file: string; created: boolean } {
  const file = path.join(home, 'api-token');
  if (existsSync(file) && loadTokens(tokensFile).some((t) => t.sha256 === hashToken(readFileSync(file, 'utf8').trim()))) return { file, created: false };
  if (loadTokens(tokensFile).some((t) => t.name === 'local')) removeToken(tokensFile, 'local');
  const token = addToken(tokensFile, 'local', false);
  mkdirSync(home, { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { file, created: true };
}
