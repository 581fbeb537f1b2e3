// The model gateway: an OpenAI-compatible proxy on each worker host. Every job's container talks to
// the model through it with a per-job token, so BenchRouter sees every call of an opaque benchmark:
// it meters usage, keeps the real API key out of containers (and forwards only the model routes of
// its allow-list), limits and retries calls toward the upstream, caches answers, applies the run's
// generation settings and prompt truncation, meters per instance where the harness tags its calls,
// notes (or, asked to, strips) reasoning models' thinking, records each job's transcript, and refuses
// calls once a budget is spent.

import { setTimeout as sleep } from 'node:timers/promises';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { GenerationSettings, TruncationSettings } from '../runs/generation.js';
import { addSpend, exhaustedBy, NO_SPEND, refusalMessage, spendOf, type Budget, type Spend } from '../runs/budgets.js';
import { emptyCounters, noteConcurrency, record, unansweredSample, type UsageCounters, type UsageSample } from '../runs/usage.js';
import { answerVerdict, callTarget, preparedBody, relayStream, relayWhole, transcriptLine, type Refusal, type Relayed } from './gateway-stages.js';
import { addToInstance, INSTANCE_HEADER, instanceOf, instanceTable, type InstanceUsage } from './instance-usage.js';
import { costOf, type PriceTable } from './price-table.js';
import { loadTokenizerFile, TokenizerFileError, truncator, type LoadedTokenizer, type Truncate } from './prompt-truncation.js';
import { cacheKey, ResponseCache } from './response-cache.js';
import { RunLimiter } from './run-limiter.js';
import { TranscriptWriter, transcriptBody, type TranscriptLimits } from './transcript.js';

/** One job's (or one job's judge's) access to one upstream. */
export interface GatewayRoute {
  jobId: string;
  runId: string;
  /** "model" or "judge": a job may hold one token for each. */
  role: string;
  upstream: { baseUrl: string; apiKey: string };
  generation: GenerationSettings;
  prices: PriceTable;
  /** Stored answers: written to `writeDir`, read from it and `readDirs` (a retry's ancestors); keyed by the job's repeat, so repeats never share one. */
  cache?: { writeDir: string; readDirs: string[]; repeat: number };
  limits: { concurrency: number; ratePerSecond?: number; maxRetries: number };
  /** The job's own budget and the run's (docs/gateway.md#budgets): a call once either is spent gets 429 `budget_exhausted`. */
  budget?: { job?: Budget; run?: Budget };
  /** Where the route's counters are saved, so a restarted worker carries on counting. */
  usageFile: string;
  /** Record every call in this job's transcript (gateway/transcript.ts). */
  transcript?: TranscriptLimits & { file: string; /** More secrets to redact than this route's key and token (the judge's). */ redact?: string[] };
}

interface LiveRoute extends GatewayRoute {
  token: string;
  counters: UsageCounters;
  /** The figures of calls tagged with an instance (X-BenchRouter-Instance), by instance. */
  instances: Record<string, InstanceUsage>;
  cacheStore?: ResponseCache;
  /** The run's prompt truncation, with its tokenizer loaded. */
  truncate?: Truncate;
  /** Requests counted when the usage file was last written: every call counts one, so equal means unchanged. */
  savedRequests: number;
  transcriptWriter?: TranscriptWriter;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const SNAPSHOT_MS = 2000;
/** Longer than a heartbeat timeout plus a retried activity's start: by then every running job re-registered. */
const RESTORE_GRACE_MS = 120_000;
const JOB_TOKEN = /^brj-[0-9a-f]{40}$/;

export class ModelGateway {
  private readonly routes = new Map<string, LiveRoute>();
  private readonly limiters = new Map<string, RunLimiter>();
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256 });
  private server?: http.Server;
  private snapshots?: NodeJS.Timeout;
  /** Tokens this gateway expired itself: those get 401 even while routes are being restored. */
  private readonly ended = new Set<string>();
  private listeningSince = 0;
  /** Tokenizers by path and SHA-256: a run's jobs share one load (a model's tokenizer.json is megabytes). */
  private readonly tokenizers = new Map<string, LoadedTokenizer>();
  /** Per job: what its run spent apart from it, as the run workflow last said (activities/budget-reports.ts). */
  private readonly spentElsewhere = new Map<string, Spend>();
  /** Per run: why its budget is spent, once a job of it on this host learnt so. */
  private readonly runsSpent = new Map<string, string>();

  /**
   * `secret` makes tokens deterministic per job, so a restarted worker re-issues the same ones.
   * `restoreGraceMs`: after a restart, a running container may call before its job's activity has
   * re-registered the route (up to a heartbeat timeout later); for that long an unknown job token gets a
   * retryable 503, not a 401 that clients such as EvalScope treat as fatal.
   */
  constructor(
    private readonly secret: string,
    private readonly restoreGraceMs = RESTORE_GRACE_MS,
  ) {}

  async listen(port: number, host: string): Promise<number> {
    this.server = http.createServer({ keepAlive: true }, (req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        // The detail goes to the worker's log, not to a container that may be probing the gateway.
        console.error(`model gateway: ${req.method} ${req.url}: ${(error as Error).stack ?? String(error)}`);
        sendError(res, 500, 'the model gateway failed on this request (the detail is in the worker log)', 'gateway_error');
      });
    });
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => resolve());
    });
    this.listeningSince = Date.now();
    this.snapshots = setInterval(() => this.saveAll(), SNAPSHOT_MS);
    this.snapshots.unref();
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    clearInterval(this.snapshots);
    this.saveAll();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  tokenFor(jobId: string, role: string): string {
    // JOB_TOKEN below matches this shape.
    return `brj-${createHmac('sha256', this.secret).update(`${jobId}\0${role}`).digest('hex').slice(0, 40)}`;
  }

  /**
   * The run's truncation with its tokenizer loaded from this host's file, which must be the file the run
   * was submitted with (same SHA-256). Throws a TokenizerFileError naming the file otherwise.
   */
  truncatorFor(settings: TruncationSettings): Truncate {
    const key = `${settings.tokenizer}\0${settings.sha256}`;
    let loaded = this.tokenizers.get(key);
    if (!loaded) {
      loaded = loadTokenizerFile(settings.tokenizer);
      if (loaded.sha256 !== settings.sha256)
        throw new TokenizerFileError(
          settings.tokenizer,
          `this host's file has SHA-256 ${loaded.sha256}, but the run was submitted with ${settings.sha256}: every worker host needs the same tokenizer at this path`,
        );
      this.tokenizers.set(key, loaded);
    }
    return truncator(loaded, settings);
  }

  /** Issues (or, after a restart, re-issues) the route's token; counters resume from its usage file. */
  register(route: GatewayRoute): string {
    const token = this.tokenFor(route.jobId, route.role);
    const truncate = route.generation.truncation ? this.truncatorFor(route.generation.truncation) : undefined;
    const saved = existsSync(route.usageFile) ? savedUsage(route.usageFile) : { counters: emptyCounters(), instances: instanceTable() };
    // A later attempt registers the same token again: its transcript carries on in the same file.
    void this.routes.get(token)?.transcriptWriter?.close();
    const transcriptWriter = route.transcript
      ? new TranscriptWriter(route.transcript.file, route.transcript, [route.upstream.apiKey, token, ...(route.transcript.redact ?? [])])
      : undefined;
    this.routes.set(token, {
      ...(transcriptWriter ? { transcriptWriter } : {}),
      ...route,
      token,
      ...saved,
      savedRequests: -1,
      cacheStore: route.cache ? new ResponseCache(route.cache.writeDir, route.cache.readDirs) : undefined,
      ...(truncate ? { truncate } : {}),
    });
    if (!this.limiters.has(route.runId)) this.limiters.set(route.runId, new RunLimiter(route.limits.concurrency, route.limits.ratePerSecond));
    return token;
  }

  /** Expires the token (later calls get 401) and returns the route's final counters. */
  unregister(jobId: string, role: string): UsageCounters | undefined {
    const token = this.tokenFor(jobId, role);
    const route = this.routes.get(token);
    if (!route) return undefined;
    this.save(route);
    void route.transcriptWriter?.close();
    this.routes.delete(token);
    this.ended.add(token);
    if (![...this.routes.values()].some((r) => r.jobId === jobId)) this.spentElsewhere.delete(jobId);
    if (![...this.routes.values()].some((r) => r.runId === route.runId)) {
      this.limiters.delete(route.runId);
      this.runsSpent.delete(route.runId);
    }
    return route.counters;
  }

  /** What the job spent upstream so far, model and judge: tokens not replayed from the cache, and cost. */
  jobSpend(jobId: string): Spend {
    return [...this.routes.values()].filter((r) => r.jobId === jobId).reduce((sum, r) => addSpend(sum, spendOf(r.counters)), NO_SPEND);
  }

  /**
   * What the job's run spent apart from the job (finished jobs and the others' last reports), and, when the
   * run workflow found its budget spent, why: from then on every job of the run on this host is refused.
   */
  noteRunSpend(jobId: string, runId: string, elsewhere: Spend, exhausted?: string): void {
    if (![...this.routes.values()].some((r) => r.jobId === jobId)) return;
    this.spentElsewhere.set(jobId, elsewhere);
    if (exhausted) this.runsSpent.set(runId, exhausted);
  }

  /** Why the route's next call is refused (a budget is spent), or undefined. */
  private budgetRefusal(route: LiveRoute): string | undefined {
    if (!route.budget) return undefined;
    const own = this.jobSpend(route.jobId);
    const jobSpent = route.budget.job && exhaustedBy(route.budget.job, own);
    if (jobSpent) return refusalMessage('job', jobSpent);
    if (!route.budget.run) return undefined;
    const known = this.runsSpent.get(route.runId);
    if (known) return refusalMessage('run', known);
    const runSpent = exhaustedBy(route.budget.run, addSpend(own, this.spentElsewhere.get(route.jobId) ?? NO_SPEND));
    if (!runSpent) return undefined;
    this.runsSpent.set(route.runId, runSpent);
    return refusalMessage('run', runSpent);
  }

  /**
   * Periodic snapshots write only routes that took calls since their last one. A snapshot that cannot
   * be written (a full disk, a job directory removed) is said and skipped: thrown from the timer it
   * would end the worker and every task it watches; a route's final save (unregister) still throws.
   */
  private saveAll(): void {
    for (const route of this.routes.values()) {
      if (route.counters.requests === route.savedRequests) continue;
      try {
        this.save(route);
      } catch (error) {
        console.error(`model gateway: cannot save the usage of job ${route.jobId} (${route.role}) to ${route.usageFile}: ${(error as Error).message}`);
      }
    }
  }

  private save(route: LiveRoute): void {
    route.savedRequests = route.counters.requests;
    mkdirSync(path.dirname(route.usageFile), { recursive: true });
    // Write then rename: a reader (a restarted worker) never sees half a file.
    const partial = `${route.usageFile}.${process.pid}.partial`;
    writeFileSync(partial, JSON.stringify({ role: route.role, counters: route.counters, instances: route.instances }));
    renameSync(partial, route.usageFile);
  }

  /**
   * One call: the job's token names its route; the call is checked and prepared (gateway-stages.ts), answered
   * from the cache, refused once a budget is spent, or sent upstream within the run's limit and retried; the
   * answer is relayed as it comes and the call metered, per instance too, and written to the transcript.
   */
  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const route = this.routeOf(req, res);
    if (!route) return;
    const arrived = performance.now();
    const method = req.method ?? 'GET';
    const call: Parameters<typeof transcriptLine>[0] = { seq: 0, at: new Date(), instance: instanceOf(req.headers[INSTANCE_HEADER]), path: req.url ?? '/' };
    /** Counts a call that ended, per instance too, and records it in the transcript with what was answered. */
    const meter = (sample: UsageSample, exchange: { response?: unknown; error?: string } = {}) => {
      record(route.counters, sample);
      if (call.instance !== undefined) addToInstance(route.instances, call.instance, sample);
      route.transcriptWriter?.write(transcriptLine({ ...call, seq: route.counters.requests, at: new Date() }, sample, exchange));
    };
    // A refused call is still metered: a job whose harness only spoke to refused routes shows them as errors, not as silence.
    const refuse = ({ status, message, type }: Refusal, budgetRefused = false) => {
      meter(unansweredSample(status, performance.now() - arrived, budgetRefused ? { budgetRefused: true } : {}), { error: message });
      sendError(res, status, message, type);
    };
    const target = callTarget(method, call.path);
    if (!target.ok) return refuse(target);
    const body = preparedBody(method, target.endpoint, await readBody(req), {
      generation: route.generation,
      truncate: route.truncate,
      maxBodyBytes: MAX_BODY_BYTES,
    });
    if (!body.ok) return refuse(body);
    const { request } = body;
    call.sent = request?.payload;
    if (request?.truncated) route.counters.truncated = (route.counters.truncated ?? 0) + 1;
    const model = request?.model ?? '';
    // Latency and TTFT count from here: the client's upload of its body is not the model's time.
    const started = performance.now();

    const key = route.cacheStore && request ? cacheKey(route.cache!.repeat, model, target.endpoint, request.payload, request.stripUsageEvent) : undefined;
    if (key && this.answerFromCache(route, key, res, started, meter)) return;

    // Past the cache (a replayed answer spends nothing): a model call once a budget is spent is refused,
    // with no Retry-After, since waiting will not help.
    const budgetRefusal = (): Refusal | undefined => {
      const spent = request ? this.budgetRefusal(route) : undefined;
      return spent ? { status: 429, message: spent, type: 'budget_exhausted' } : undefined;
    };
    const spent = budgetRefusal();
    if (spent) return refuse(spent, true);

    const limiter = this.limiters.get(route.runId)!;
    const slot = await limiter.acquire();
    const { release, queued } = slot;
    try {
      // Again once it got its slot: a call that waited behind the one that spent the budget is not sent either.
      const spentMeanwhile = budgetRefusal();
      if (spentMeanwhile) return refuse(spentMeanwhile, true);
      noteConcurrency(route.counters, slot.limit, route.limits.concurrency);
      const sentUpstream = await this.sendWithRetries(route, method, target.pathAndQuery, request?.payload, slot, limiter);
      const { retries, throttled } = sentUpstream;
      if (!('answer' in sentUpstream)) {
        const message = `upstream did not answer: ${sentUpstream.error.message}`;
        meter(unansweredSample(0, performance.now() - started, { retries, throttled, queued, cache: key ? 'miss' : undefined }), { error: message });
        return sendError(res, 502, message, 'upstream_unreachable');
      }
      const { answer } = sentUpstream;
      const contentType = answer.headers['content-type'] ?? 'application/json';
      const streamed = answer.status === 200 && (request?.stream === true || contentType.startsWith('text/event-stream'));
      res.writeHead(answer.status, { 'content-type': contentType, ...(streamed ? { 'cache-control': 'no-cache' } : {}) });
      const stripThinking = route.generation.stripThinking === true;
      const relayed = streamed
        ? await relayStream(
            answer.response,
            res,
            started,
            { dropUsageEvent: request?.stripUsageEvent === true, stripThinking },
            route.transcriptWriter !== undefined,
          )
        : await relayWholeAnswer(answer, res, stripThinking);
      const promptTokens = relayed.usage?.promptTokens ?? 0;
      const completionTokens = relayed.usage?.completionTokens ?? 0;
      const cost = relayed.usage ? costOf(route.prices, model, promptTokens, completionTokens, relayed.usage.cost) : 0;
      meter(
        {
          status: answer.status,
          retries,
          throttled,
          queued,
          cache: key ? 'miss' : undefined,
          latencyMs: performance.now() - started,
          ttftMs: relayed.ttftMs,
          promptTokens,
          completionTokens,
          cost,
          ...(relayed.usage?.reasoningTokens !== undefined ? { reasoningTokens: relayed.usage.reasoningTokens } : {}),
          ...(relayed.endedInThinking ? { endedInThinking: relayed.endedInThinking } : {}),
        },
        { response: route.transcriptWriter ? relayed.answer() : undefined },
      );
      if (key && answer.status === 200)
        route.cacheStore!.put(key, { status: 200, contentType, body: relayed.forwarded.toString('base64'), promptTokens, completionTokens, cost });
      return;
    } finally {
      release();
    }
  }

  /**
   * Sends the call upstream within the run's limit, retrying an unanswered call, a 429 or a 5xx (after its
   * Retry-After, or the backoff) while retries are left; the limit backs off when the upstream asks for less.
   */
  private async sendWithRetries(
    route: LiveRoute,
    method: string,
    pathAndQuery: string,
    payload: Buffer | undefined,
    slot: Awaited<ReturnType<RunLimiter['acquire']>>,
    limiter: RunLimiter,
  ): Promise<{ retries: number; throttled: number } & ({ answer: UpstreamAnswer } | { error: Error })> {
    let retries = 0;
    let throttled = 0;
    for (;;) {
      let answer: UpstreamAnswer;
      try {
        answer = await this.callUpstream(route, method, pathAndQuery, payload);
      } catch (error) {
        if (retries < route.limits.maxRetries) {
          retries += 1;
          await sleep(backoffMs(retries));
          continue;
        }
        return { retries, throttled, error: error as Error };
      }
      const verdict = answerVerdict(answer.status, answer.headers['retry-after'], retries, route.limits.maxRetries);
      if (verdict.throttled) throttled += 1;
      // The upstream asks for less: the run's limit on this host backs off (AIMD, gateway/run-limiter.ts).
      if (verdict.throttle) {
        slot.throttled();
        noteConcurrency(route.counters, limiter.currentLimit, route.limits.concurrency);
      } else if (verdict.succeeded) slot.succeeded();
      if (!verdict.retry) return { retries, throttled, answer };
      answer.response.resume(); // drain: the connection goes back to the pool
      retries += 1;
      await sleep(retryAfterMs(answer.headers['retry-after']) ?? backoffMs(retries));
    }
  }

  /** The route the call's token names; without one, the call is answered here (401, or 503 while a restarted worker restores routes). */
  private routeOf(req: http.IncomingMessage, res: http.ServerResponse): LiveRoute | undefined {
    const presented = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    const route = this.routes.get(presented);
    if (route) return route;
    if (JOB_TOKEN.test(presented) && !this.ended.has(presented) && Date.now() - this.listeningSince < this.restoreGraceMs) {
      res.setHeader('retry-after', '5');
      sendError(res, 503, "the worker restarted and has not restored this job's route yet: retry in a few seconds", 'gateway_restoring');
    } else sendError(res, 401, 'unknown or expired BenchRouter job token', 'invalid_api_key');
    return undefined;
  }

  /** Answers the call from the route's stored answers when it has one for `key`; whether it did. */
  private answerFromCache(
    route: LiveRoute,
    key: string,
    res: http.ServerResponse,
    started: number,
    meter: (sample: UsageSample, exchange?: { response?: unknown }) => void,
  ): boolean {
    const hit = route.cacheStore!.get(key);
    if (!hit) return false;
    res.writeHead(hit.status, { 'content-type': hit.contentType });
    const body = Buffer.from(hit.body, 'base64');
    res.end(body);
    meter(
      {
        status: hit.status,
        latencyMs: performance.now() - started,
        promptTokens: hit.promptTokens,
        completionTokens: hit.completionTokens,
        cost: 0,
        retries: 0,
        throttled: 0,
        queued: false,
        cache: 'hit',
      },
      { response: route.transcriptWriter ? transcriptBody(body) : undefined },
    );
    return true;
  }

  private callUpstream(route: LiveRoute, method: string, pathAndQuery: string, body?: Buffer): Promise<UpstreamAnswer> {
    const target = new URL(route.upstream.baseUrl.replace(/\/$/, '') + pathAndQuery);
    const client = target.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const upstream = client.request(
        target,
        {
          method,
          agent: target.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
          headers: {
            ...(body ? { 'content-type': 'application/json' } : {}),
            accept: 'application/json, text/event-stream',
            ...(route.upstream.apiKey ? { authorization: `Bearer ${route.upstream.apiKey}` } : {}),
            ...(body ? { 'content-length': body.length } : {}),
          },
        },
        (response) => resolve({ status: response.statusCode ?? 502, headers: response.headers as Record<string, string | undefined>, response }),
      );
      upstream.on('error', reject);
      upstream.end(body);
    });
  }
}

interface UpstreamAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  response: http.IncomingMessage;
}

/** A host secret for job tokens, made once and kept (0600) in the BenchRouter home. */
export function gatewaySecret(home: string): string {
  const file = path.join(home, 'gateway-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(home, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Reads a whole (not streamed) answer, then relays it as relayWhole makes it. */
async function relayWholeAnswer(answer: UpstreamAnswer, res: http.ServerResponse, stripThinking: boolean): Promise<Relayed> {
  const chunks: Buffer[] = [];
  for await (const chunk of answer.response) chunks.push(chunk as Buffer);
  const relayed = relayWhole(answer.status, Buffer.concat(chunks), stripThinking);
  res.end(relayed.forwarded);
  return relayed;
}

/** Retry-After in seconds or as an HTTP date; capped at a minute. */
export function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 60_000) : undefined;
}

/** Exponential backoff with jitter: ~0.5 s, 1 s, 2 s ... capped at 20 s. */
export function backoffMs(attempt: number): number {
  const base = Math.min(500 * 2 ** (attempt - 1), 20_000);
  return base / 2 + Math.random() * (base / 2);
}

function sendError(res: http.ServerResponse, status: number, message: string, type: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type, code: null } }));
}

/** The counters (and per-instance figures) a route's usage file holds: a restarted worker resumes from them; errors name the file. */
function savedUsage(usageFile: string): { counters: UsageCounters; instances: Record<string, InstanceUsage> } {
  let saved: { counters?: UsageCounters; instances?: Record<string, InstanceUsage> } | null;
  try {
    saved = JSON.parse(readFileSync(usageFile, 'utf8')) as typeof saved;
  } catch (error) {
    throw new Error(`${usageFile}: expected the JSON usage snapshot the gateway writes (${(error as Error).message})`, { cause: error });
  }
  if (typeof saved?.counters !== 'object' || saved.counters === null)
    throw new Error(`${usageFile}: counters: expected an object, got ${JSON.stringify(saved?.counters)}`);
  return { counters: saved.counters, instances: instanceTable(saved.instances ?? {}) };
}
