// The dashboard's per-instance pages: a run's instances (one server-rendered page of rows at a time,
// filtered to the failures or by a search), a job's transcript read as a chat: system, user,
// assistant, tool calls and their results, long texts folded; and the files a job's task wrote (an
// instance's folder its record names), listed and each shown: JSON pretty-printed, text as it is.

import type { TranscriptLine } from '../gateway/transcript.js';
import type { InstanceRow } from '../runs/instance-list.js';
import type { JobResult } from '../runs/run-spec.js';
import { callTurns, isCall, type ChatTurn } from '../gateway/transcript-chat.js';
import { page, pager, score, table } from './dashboard-pages.js';
import { html, type SafeHtml } from './html-text.js';
import { isText } from './result-files.js';

/** Texts longer than this are folded behind their first lines. */
export const FOLD_CHARS = 600;

export interface InstancesQuery {
  job?: string;
  failed: boolean;
  q?: string;
  offset: number;
  limit: number;
}

const runPath = (runId: string) => `/ui/runs/${encodeURIComponent(runId)}`;

export function transcriptLink(runId: string, jobId: string, instance?: string): string {
  return `${runPath(runId)}/jobs/${encodeURIComponent(jobId)}/transcript${instance !== undefined ? `?instance=${encodeURIComponent(instance)}` : ''}`;
}

const jobPath = (runId: string, jobId: string) => `${runPath(runId)}/jobs/${encodeURIComponent(jobId)}`;

/** The page listing a job's files under `prefix` (a record's `artifacts`), or all of its results. */
export function filesLink(runId: string, jobId: string, prefix = ''): string {
  return `${jobPath(runId, jobId)}/files${prefix ? `?prefix=${encodeURIComponent(prefix)}` : ''}`;
}

/** The page showing one of a job's files. */
export function fileLink(runId: string, jobId: string, file: string): string {
  return `${jobPath(runId, jobId)}/file?path=${encodeURIComponent(file)}`;
}

/** The file as it is, from the API (GET /runs/{id}/jobs/{job}/file). */
export function rawFileLink(runId: string, jobId: string, file: string): string {
  return `/runs/${encodeURIComponent(runId)}/jobs/${encodeURIComponent(jobId)}/file?path=${encodeURIComponent(file)}`;
}

function instancesHref(runId: string, query: InstancesQuery, offset: number): string {
  const params = new URLSearchParams();
  if (query.job) params.set('job', query.job);
  if (query.failed) params.set('failed', 'true');
  if (query.q) params.set('q', query.q);
  if (offset) params.set('offset', String(offset));
  if (query.limit !== 50) params.set('limit', String(query.limit));
  const text = params.toString();
  return `${runPath(runId)}/instances${text ? `?${text}` : ''}`;
}

const tokens = (row: InstanceRow) =>
  row.promptTokens === null && row.completionTokens === null ? '–' : `${row.promptTokens ?? '–'} / ${row.completionTokens ?? '–'}`;

export function instancesPage(
  runId: string,
  jobs: JobResult[],
  query: InstancesQuery,
  result: { rows: InstanceRow[]; total: number; nextOffset?: number },
): string {
  const rows = result.rows.map((row) => [
    html`<span class="instance-id">${row.id}</span>`,
    row.task + (row.repeat ? ` #${row.repeat}` : ''),
    html`<span class="score ${row.score >= 1 ? 'pass' : 'fail'}">${score(row.score)}</span>`,
    tokens(row),
    row.cost === null ? '–' : `$${row.cost.toFixed(6)}`,
    row.calls ?? '–',
    row.latencyMs === null ? '–' : `${Math.round(row.latencyMs)} ms`,
    html`<span class="shard">${row.shard ?? '–'}</span>`,
    row.host ?? '–',
    html`<span class="evaluated">${row.carriedFrom ? `carried over from ${row.carriedFrom}` : 'here'}</span>`,
    html`<a class="transcript" href="${transcriptLink(runId, row.jobId, row.id)}">calls</a>`,
    row.artifacts ? html`<a class="files" href="${filesLink(runId, row.jobId, row.artifacts)}" title="${row.artifacts}">files</a>` : '–',
  ]);
  return page(
    `Instances of ${runId}`,
    html`<p><a href="${runPath(runId)}">← run</a></p>
      <form method="get" action="${runPath(runId)}/instances" class="filters" id="instance-filter">
        <label
          >Job
          <select name="job">
            <option value="">all</option>
            ${jobs.map(
              (j) =>
                html`<option value="${j.jobId}" ${j.jobId === query.job ? ' selected' : ''}>
                  ${j.task}${j.shard && j.shard.count > 1 ? ` shard ${j.shard.index + 1}/${j.shard.count}` : ''}${j.repeat ? ` #${j.repeat}` : ''}
                </option>`,
            )}
          </select></label
        ><label><input type="checkbox" name="failed" value="true" ${query.failed ? ' checked' : ''} /> only failures (score &lt; 1)</label
        ><label>Search <input name="q" value="${query.q ?? ''}" placeholder="id or text" /></label><button type="submit">Show</button>
      </form>
      ${pager(query, result.rows.length, result.total, result.nextOffset, (offset) => instancesHref(runId, query, offset))}
      ${table(['Instance', 'Task', 'Score', 'Tokens (in / out)', 'Cost', 'Calls', 'Latency', 'Shard', 'Host', 'Evaluated', 'Transcript', 'Files'], rows, 'instances')}`,
  );
}

/** A text shown whole when short, else its start with the rest behind a fold. */
export function foldedText(text: string, className: string): SafeHtml {
  if (text.length <= FOLD_CHARS) return html`<pre class="${className}">${text}</pre>`;
  return html`<details class="fold">
    <summary><pre class="${className}">${text.slice(0, FOLD_CHARS)}…</pre><span class="more">${text.length} characters: show all</span></summary>
    <pre class="${className}">${text}</pre>
  </details>`;
}

function turnHtml(turn: ChatTurn): SafeHtml {
  const who = turn.role === 'tool' && turn.toolCallId ? html`tool result <code>${turn.toolCallId}</code>` : turn.role;
  return html`<div class="turn turn-${turn.role.replace(/[^a-z_-]/gi, '')}">
    <div class="who">${who}</div>
    ${turn.reasoning ? html`<div class="thinking">${foldedText(turn.reasoning, 'text')}</div>` : ''} ${turn.text ? foldedText(turn.text, 'text') : ''}
    ${turn.toolCalls.map(
      (call) =>
        html`<div class="tool-call">
          <span class="tool-name">→ ${call.name}</span>${call.id ? html` <code>${call.id}</code>` : ''} ${foldedText(call.arguments, 'arguments')}
        </div>`,
    )}
  </div>`;
}

function callHtml(line: TranscriptLine): SafeHtml {
  if (!isCall(line)) return html`<p class="warning">${line.capped.note}</p>`;
  const { asked, answered } = callTurns(line);
  const usage = line.usage ? ` · ${line.usage.prompt_tokens} in / ${line.usage.completion_tokens} out tokens` : '';
  return html`<section class="call" data-seq="${line.seq}">
    <h3>
      #${line.seq}${line.instance !== undefined ? ` · instance ${line.instance}` : ''} · ${line.path} · ${line.status}${line.cache ? ' (cache)' : ''} ·
      ${Math.round(line.latency_ms)} ms${usage}
    </h3>
    ${asked.map(turnHtml)} ${answered.map(turnHtml)} ${line.error ? html`<p class="error">${line.error}</p>` : ''}
  </section>`;
}

export function transcriptPage(runId: string, job: JobResult, instance: string | undefined, lines: TranscriptLine[] | undefined, unreadable: number): string {
  const calls = lines?.filter(isCall).length ?? 0;
  return page(
    `Transcript of ${job.task}${instance !== undefined ? `, instance ${instance}` : ''}`,
    html`<p>
        <a href="${runPath(runId)}">← run</a> · <a href="${runPath(runId)}/instances?job=${encodeURIComponent(job.jobId)}">instances</a>
        ${instance !== undefined ? html` · <a href="${transcriptLink(runId, job.jobId)}">every call of the job</a>` : ''} ·
        <a href="/runs/${encodeURIComponent(runId)}/jobs/${encodeURIComponent(job.jobId)}/transcript${instance !== undefined ? `?instance=${encodeURIComponent(instance)}` : ''}"
          >JSON</a
        >
      </p>
      <p class="run-id">${job.jobId}</p>
      ${jobPlace(job)}
      ${
        lines === undefined
          ? html`<p>This job has no transcript: transcripts were off, or the run is from before them.</p>`
          : html`<p id="call-count">${calls} call${calls === 1 ? '' : 's'}${unreadable ? `, ${unreadable} unreadable lines skipped` : ''}</p>
              <div class="chat">${lines.map(callHtml)}</div>`
      }`,
  );
}

/** Where a job ran, for its transcript page: its shard of the task, its host and the hosts it left, what it carried over. */
function jobPlace(job: JobResult): SafeHtml | string {
  const parts: string[] = [];
  if (job.shard && job.shard.count > 1) parts.push(`shard ${job.shard.index + 1} of ${job.shard.count} of task ${job.task} (${job.shard.instances} instances)`);
  if (job.host) parts.push(`on ${job.host}${job.hostsTried && job.hostsTried.length > 1 ? ` (after ${job.hostsTried.slice(0, -1).join(', ')})` : ''}`);
  if (job.shard?.carried)
    parts.push(
      `${job.shard.carried} of its instances carried over from an earlier attempt or run, not evaluated again (their calls are in that one's transcript)`,
    );
  return parts.length ? html`<p class="job-place">${parts.join('; ')}</p>` : '';
}

/** The links above a job's files pages: its run, its instances, and the folder a file is in. */
function filesNav(runId: string, job: JobResult, folder?: string): SafeHtml {
  return html`<p>
    <a href="${runPath(runId)}">← run</a> · <a href="${runPath(runId)}/instances?job=${encodeURIComponent(job.jobId)}">instances</a> ·
    <a href="${filesLink(runId, job.jobId)}">every file of the job</a>${folder ? html` · <a class="folder" href="${filesLink(runId, job.jobId, folder)}">${folder}/</a>` : ''}
  </p>`;
}

const size = (bytes: number) => `${bytes.toLocaleString('en')} byte${bytes === 1 ? '' : 's'}`;

/** A job's files under `prefix` (paths relative to its results/), each linked to its page and to the file as it is. */
export function filesPage(runId: string, job: JobResult, prefix: string, files: Array<{ file: string; bytes: number }>): string {
  const rows = files.map((f) => [
    html`<a class="file" href="${fileLink(runId, job.jobId, f.file)}">${f.file}</a>`,
    html`<span class="bytes" data-bytes="${f.bytes}">${size(f.bytes)}</span>`,
    html`<a class="raw" href="${rawFileLink(runId, job.jobId, f.file)}">raw</a>`,
  ]);
  return page(
    `Files of ${job.task}${prefix ? `: ${prefix}` : ''}`,
    html`${filesNav(runId, job)}
      <p class="run-id">${job.jobId}</p>
      ${jobPlace(job)}
      <p id="file-count">
        ${files.length} file${files.length === 1 ? '' : 's'} ${prefix ? html`under <code>${prefix}</code> of` : 'in'} the job's results
      </p>
      ${files.length ? table(['File', 'Size', 'As it is'], rows, 'files') : ''}`,
  );
}

/** How one file is shown: JSON pretty-printed, other text as it is, bytes not at all. */
export type FileView =
  { kind: 'json'; text: string } | { kind: 'text'; text: string; note?: string } | { kind: 'binary'; bytes: number } | { kind: 'too large'; note: string };

export function fileView(file: string, bytes: Buffer): FileView {
  if (!isText(bytes)) return { kind: 'binary', bytes: bytes.length };
  const content = bytes.toString('utf8');
  if (!/\.json$/i.test(file)) return { kind: 'text', text: content };
  try {
    return { kind: 'json', text: JSON.stringify(JSON.parse(content), null, 2) };
  } catch (error) {
    return { kind: 'text', text: content, note: `not valid JSON (${(error as Error).message}): shown as it is` };
  }
}

export function filePage(runId: string, job: JobResult, file: string, view: FileView): string {
  const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : undefined;
  const raw = rawFileLink(runId, job.jobId, file);
  let body: SafeHtml;
  if (view.kind === 'json' || view.kind === 'text')
    body = html`${view.kind === 'text' && view.note ? html`<p class="warning">${view.note}</p>` : ''}
      <div class="file-content" data-kind="${view.kind}">${foldedText(view.text, 'text')}</div>`;
  else if (view.kind === 'binary') body = html`<p class="file-content" data-kind="binary">${size(view.bytes)}, not text: <a href="${raw}">download</a></p>`;
  else body = html`<p class="file-content" data-kind="too-large">${view.note}: <a href="${raw}">download</a></p>`;
  return page(
    file,
    html`${filesNav(runId, job, folder)}
      <p class="run-id">${job.jobId} · <a class="raw" href="${raw}">as it is</a></p>
      ${body}`,
  );
}
