// A run's provenance: what its score was measured with, so two scores are ranked side by side only when
// they were measured alike. Part is pinned at submit (benchmark digest, generation settings, judge, seeds,
// BenchRouter's version), part harvested from the jobs (each task's Docker image id, the hosts' dataset
// digests). Pure and free of Node built-ins: the run workflow computes it from its spec and tally.
// No secret enters it: API keys and tokens never reach the run's spec or its jobs' results, and a
// generation field named like a credential is shown redacted (docs/results.md#provenance).

import { generationOf } from './generation.js';
import type { JobResult, RunSpec } from './run-spec.js';

/** BenchRouter's own version, pinned at submit: package.json's, and the checkout's git commit where known. */
export interface BenchRouterVersion {
  version: string;
  commit?: string;
}

/** A host's dataset directory (BENCHROUTER_DATASET_DIR) as a job saw it. */
export interface DatasetDigest {
  dir: string;
  /** sha256 over the directory's listing: each file's relative path, size and modification time. */
  digest: string;
}

/** The generation settings the gateway applied, without the tokenizer's path (its hash says which file). */
export interface ProvenanceGeneration {
  set: Record<string, unknown>;
  maxTokens?: number;
  maxTokensAdd?: number;
  maxTokensScale?: number;
  thinking?: boolean;
  truncation?: { maxTokens: number; tokenizerSha256: string };
  /** --strip-thinking: answers reached the benchmark without their thinking. */
  stripThinking?: true;
}

export interface Provenance {
  /** BenchRouter's version at submit (absent for a run submitted before versions were pinned). */
  benchrouter?: BenchRouterVersion;
  benchmark: { name: string; digest: string };
  /** Per task, the Docker image ids (`sha256:...`) its jobs ran in, sorted; two when hosts built differing images. */
  images: Record<string, string[]>;
  /** The dataset directories the jobs mounted, distinct, sorted (absent when no host had one). */
  datasets?: DatasetDigest[];
  /** False with --no-gateway: the model was called directly, and no generation setting was applied. */
  gateway: boolean;
  /** What the gateway applied to every model call (absent without the gateway). */
  generation?: ProvenanceGeneration;
  judge?: { model: string };
  /** A user simulator of its own (--user-model); absent when the benchmark's simulated user was the model under test. */
  user?: { model: string };
  /** The seed of each repeat (BENCHROUTER_SEED), in repeat order; empty when the run passed none. */
  seeds: number[];
}

/** What the jobs report for provenance, gathered as the run's tally gathers scores. */
export interface HarvestedProvenance {
  images: Record<string, string[]>;
  datasets: DatasetDigest[];
}

export function emptyHarvest(): HarvestedProvenance {
  return { images: {}, datasets: [] };
}

/** Adds what these jobs report (their image ids and dataset digests), each value once, sorted. */
export function harvestProvenance(harvest: HarvestedProvenance, jobs: ReadonlyArray<Pick<JobResult, 'task' | 'imageId' | 'dataset'>>): HarvestedProvenance {
  const images: Record<string, string[]> = Object.fromEntries(Object.entries(harvest.images).map(([task, ids]) => [task, [...ids]]));
  const datasets = [...harvest.datasets];
  for (const job of jobs) {
    if (job.imageId) {
      const ids = (images[job.task] ??= []);
      if (!ids.includes(job.imageId)) {
        ids.push(job.imageId);
        ids.sort();
      }
    }
    if (job.dataset && !datasets.some((d) => d.dir === job.dataset!.dir && d.digest === job.dataset!.digest)) datasets.push({ ...job.dataset });
  }
  datasets.sort((a, b) => (a.dir === b.dir ? compare(a.digest, b.digest) : compare(a.dir, b.dir)));
  return { images, datasets };
}

/** Request-body fields whose values may be credentials: shown as REDACTED. */
// Field names that hold credentials: `api_key`, `x-api-key`, `access_token`, `token`, `client_secret`... but
// not settings that merely mention tokens (`max_tokens`, `budget_tokens`), which provenance must show.
const SECRET_FIELD = /(api[_-]?key|secret|password|passwd|authorization|credentials?|access[_-]?token|auth[_-]?token|(^|[_-])(key|token))$/i;
export const REDACTED = '(redacted)';

/** The value with every field named like a credential, at any depth, replaced by REDACTED. */
function redacted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redacted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([field, inner]) => [field, SECRET_FIELD.test(field) ? REDACTED : redacted(inner)]));
}

/** The run's provenance from its pinned spec and what its jobs reported. */
export function provenanceOf(
  spec: Pick<RunSpec, 'benchmark' | 'options' | 'resolved' | 'benchrouter'>,
  harvest: HarvestedProvenance = emptyHarvest(),
): Provenance {
  const { options } = spec;
  const seeded = options.seed !== undefined || options.repeats > 1;
  let generation: ProvenanceGeneration | undefined;
  if (options.gateway) {
    const { set, truncation, ...rest } = generationOf(options, spec.resolved);
    generation = {
      set: redacted(set) as Record<string, unknown>,
      ...rest,
      ...(truncation ? { truncation: { maxTokens: truncation.maxTokens, tokenizerSha256: truncation.sha256 } } : {}),
    };
  }
  return {
    ...(spec.benchrouter ? { benchrouter: { ...spec.benchrouter } } : {}),
    benchmark: { name: spec.benchmark.name, digest: spec.benchmark.digest },
    images: Object.fromEntries(
      Object.keys(harvest.images)
        .sort()
        .map((task) => [task, [...harvest.images[task]!]]),
    ),
    ...(harvest.datasets.length ? { datasets: harvest.datasets.map((d) => ({ ...d })) } : {}),
    gateway: options.gateway,
    ...(generation ? { generation } : {}),
    ...(options.judgeModel ? { judge: { model: options.judgeModel } } : {}),
    ...(options.userModel ? { user: { model: options.userModel } } : {}),
    seeds: seeded ? Array.from({ length: options.repeats }, (_, repeat) => (options.seed ?? 0) + repeat) : [],
  };
}

/**
 * What makes two runs' scores comparable: the benchmark's digest, every task's images, the datasets'
 * digests, the gateway and its generation settings, the judge, the user simulator. Not the seeds (another sample of the same
 * measurement) nor BenchRouter's version.
 */
function comparable(p: Provenance): unknown {
  return {
    benchmark: p.benchmark.digest,
    images: p.images,
    datasets: (p.datasets ?? []).map((d) => d.digest),
    gateway: p.gateway,
    generation: p.generation ?? null,
    judge: p.judge?.model ?? null,
    // Left out (undefined) when the model under test simulated the user, so earlier runs' hashes hold.
    user: p.user?.model,
  };
}

/**
 * A 16-hex-digit hash of the comparable part of a provenance (two 32-bit FNV-1a hashes of its canonical
 * JSON): the leaderboard marks cells whose runs' hashes differ. Not cryptographic: it tells setups apart.
 */
export function provenanceHash(p: Provenance): string {
  const text = canonicalJson(comparable(p));
  const fnv = (seed: number) => {
    let h = seed >>> 0;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h.toString(16).padStart(8, '0');
  };
  return fnv(0x811c9dc5) + fnv(0x050c5d1f);
}

/** JSON with object keys sorted at every depth, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

const shown = (value: unknown) => (value === undefined ? 'unset' : typeof value === 'string' ? value : JSON.stringify(value));
const short = (id: string) => (id.length > 19 ? `${id.slice(0, 19)}…` : id);

/**
 * Each way two runs' provenance differs, one line each, in the comparable fields and then the others
 * (seeds, version): "image of task addition differs: sha256:aa… vs sha256:bb…".
 */
export function provenanceDifferences(a: Provenance, b: Provenance): string[] {
  const lines: string[] = [];
  if (a.benchmark.digest !== b.benchmark.digest) lines.push(`benchmark digest differs: ${short(a.benchmark.digest)} vs ${short(b.benchmark.digest)}`);
  for (const task of [...new Set([...Object.keys(a.images), ...Object.keys(b.images)])].sort()) {
    const [x, y] = [a.images[task] ?? [], b.images[task] ?? []];
    if (x.join() !== y.join()) lines.push(`image of task ${task} differs: ${x.map(short).join(', ') || 'none'} vs ${y.map(short).join(', ') || 'none'}`);
  }
  const datasets = (p: Provenance) => (p.datasets ?? []).map((d) => `${d.dir} ${short(d.digest)}`).join(', ') || 'none';
  if (datasets(a) !== datasets(b)) lines.push(`dataset differs: ${datasets(a)} vs ${datasets(b)}`);
  if (a.gateway !== b.gateway) lines.push(`gateway differs: ${a.gateway ? 'on' : 'off'} vs ${b.gateway ? 'on' : 'off'}`);
  const [ga, gb] = [generationFields(a.generation), generationFields(b.generation)];
  for (const field of [...new Set([...Object.keys(ga), ...Object.keys(gb)])].sort()) {
    if (canonicalJson(ga[field]) !== canonicalJson(gb[field])) lines.push(`generation differs: ${field} ${shown(ga[field])} vs ${shown(gb[field])}`);
  }
  if (a.judge?.model !== b.judge?.model) lines.push(`judge differs: ${a.judge?.model ?? 'none'} vs ${b.judge?.model ?? 'none'}`);
  if (a.user?.model !== b.user?.model)
    lines.push(`user simulator differs: ${a.user?.model ?? 'the model under test'} vs ${b.user?.model ?? 'the model under test'}`);
  if (a.seeds.join() !== b.seeds.join()) lines.push(`seeds differ: ${a.seeds.join(', ') || 'none'} vs ${b.seeds.join(', ') || 'none'}`);
  const version = (p: Provenance) =>
    p.benchrouter ? `${p.benchrouter.version}${p.benchrouter.commit ? ` (${p.benchrouter.commit.slice(0, 12)})` : ''}` : 'unknown';
  if (version(a) !== version(b)) lines.push(`BenchRouter version differs: ${version(a)} vs ${version(b)}`);
  return lines;
}

/** A generation's settings as flat fields: request fields by name, the rest as `max_tokens (--max-tokens)` etc. */
export function generationFields(g: ProvenanceGeneration | undefined): Record<string, unknown> {
  if (!g) return {};
  return {
    ...g.set,
    ...(g.maxTokens !== undefined ? { maxTokens: g.maxTokens } : {}),
    ...(g.maxTokensAdd !== undefined ? { maxTokensAdd: g.maxTokensAdd } : {}),
    ...(g.maxTokensScale !== undefined ? { maxTokensScale: g.maxTokensScale } : {}),
    ...(g.thinking !== undefined ? { thinking: g.thinking } : {}),
    ...(g.stripThinking ? { stripThinking: true } : {}),
    ...(g.truncation ? { truncationTokens: g.truncation.maxTokens, tokenizerSha256: g.truncation.tokenizerSha256 } : {}),
  };
}

/** The provenance as label and value pairs, for `br results` and the dashboard's run page. */
export function provenanceEntries(p: Provenance): Array<[label: string, value: string]> {
  const generation = generationFields(p.generation);
  return [
    ['benchmark', `${p.benchmark.name} ${p.benchmark.digest}`],
    ...Object.entries(p.images).map(([task, ids]): [string, string] => [`image ${task}`, ids.join(', ')]),
    ...(p.datasets ?? []).map((d): [string, string] => ['dataset', `${d.dir} ${d.digest}`]),
    ['gateway', p.gateway ? 'on' : 'off (no generation settings applied)'],
    ...(p.gateway
      ? [
          [
            'generation',
            Object.keys(generation).length
              ? Object.entries(generation)
                  .map(([field, value]) => `${field}=${shown(value)}`)
                  .join(' ')
              : 'none (the benchmark’s own requests)',
          ] as [string, string],
        ]
      : []),
    ['judge', p.judge?.model ?? 'none'],
    ...(p.user ? [['user simulator', p.user.model] as [string, string]] : []),
    ['seeds', p.seeds.join(', ') || 'none'],
    ['benchrouter', p.benchrouter ? `${p.benchrouter.version}${p.benchrouter.commit ? ` (${p.benchrouter.commit})` : ''}` : 'unknown'],
  ];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
