// `br transcripts`: what the model was asked and answered, call by call, for each job of a run (its
// transcript.jsonl, written by the gateway with keys and tokens redacted), read on this host or from
// the host that ran the job, through Temporal. As text, each call shows what is new in its request
// (the messages after the last assistant turn) and the answer, tool calls included; --json prints the
// transcript's lines as they are.

import type { Command } from 'commander';
import type { TranscriptLine } from '../../gateway/transcript.js';
import { JOB_FILES } from '../../runs/job-artifacts.js';
import { answerMessages, linesOfInstance, newMessages, parseTranscript, textOf, type Message } from '../../gateway/transcript-chat.js';
import { writeStdout } from '../cli-deps.js';
import { example } from '../help-example.js';
import { locateJobs, readJobFile, shortJobId, whereIs, type ArtifactCommandDeps } from '../run-artifacts.js';

const FOLD = 600;

export function registerTranscriptsCommand(program: Command, deps: ArtifactCommandDeps): Command {
  const stdout = deps.stdout ?? writeStdout;
  return program
    .command('transcripts')
    .description("print every model call of a run's jobs: what was asked, what was answered, tool calls, usage (keys and tokens redacted)")
    .argument('<run>', 'run id')
    .argument('[job]', 'only this job: its id, the part after "<run>.", or its task name')
    .option('--instance <id>', 'only the calls the harness tagged with this instance (X-BenchRouter-Instance)')
    .option('--json', 'the transcript lines as JSON Lines, each with its "job"')
    .option('--full', 'do not fold long texts')
    .addHelpText(
      'after',
      `${example('$ br transcripts br-20261129-120000-a1b2c3 addition --instance 7', "$ br transcripts br-20261129-120000-a1b2c3 --json | jq -c 'select(.status != 200)'")}
The gateway writes each job's calls to transcript.jsonl as they end (--no-transcripts turns it off;
--transcript-max-calls caps it). Calls a harness tags with X-BenchRouter-Instance carry the instance.
`,
    )
    .action(async (runId: string, jobArg: string | undefined, flags: { instance?: string; json?: boolean; full?: boolean }) => {
      const jobs = await locateJobs(deps, runId, jobArg);
      for (const job of jobs) {
        const bytes = await readJobFile(deps, job, 'transcript');
        const name = shortJobId(runId, job.jobId);
        if (!bytes) {
          if (!flags.json)
            await stdout(`== ${name}: no ${JOB_FILES.transcript} on ${whereIs(job)} (transcripts off, no calls yet, or a run from before them)\n`);
          continue;
        }
        const { lines, unreadable } = parseTranscript(bytes.toString('utf8'));
        if (unreadable) process.stderr.write(`${name}: ${unreadable} unreadable transcript line${unreadable === 1 ? '' : 's'} skipped\n`);
        const shown = linesOfInstance(lines, flags.instance);
        if (flags.json) {
          for (const line of shown) await stdout(`${JSON.stringify({ job: job.jobId, ...line })}\n`);
          continue;
        }
        await stdout(`== ${name}: ${shown.filter((l) => 'seq' in l).length} calls${flags.instance !== undefined ? ` of instance ${flags.instance}` : ''}\n`);
        for (const line of shown) await stdout(callText(line, flags.full ? Infinity : FOLD));
      }
    });
}

/** One transcript line for people. */
export function callText(line: TranscriptLine, fold: number): string {
  if ('capped' in line) return `-- ${line.capped.note}\n`;
  const usage = line.usage ? `  ${line.usage.prompt_tokens} in / ${line.usage.completion_tokens} out tokens` : '';
  const head = `#${line.seq}${line.instance !== undefined ? `  instance ${line.instance}` : ''}  ${line.path}  ${line.status}${line.cache ? ' (cache)' : ''}  ${line.latency_ms.toFixed(0)} ms${usage}`;
  const out = [head];
  for (const message of newMessages(line.request)) out.push(...messageLines(message, fold));
  for (const message of answerMessages(line.response)) out.push(...messageLines(message, fold));
  if (line.error) out.push(`  error: ${line.error}`);
  return `${out.join('\n')}\n\n`;
}

function messageLines(message: Message, fold: number): string[] {
  const role = typeof message.role === 'string' ? message.role : 'message';
  const who = role === 'tool' && typeof message.tool_call_id === 'string' ? `tool (${message.tool_call_id})` : role;
  const lines: string[] = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content) lines.push(`  ${who} (thinking): ${folded(message.reasoning_content, fold)}`);
  const content = textOf(message.content);
  if (content) lines.push(`  ${who}: ${folded(content, fold)}`);
  if (Array.isArray(message.tool_calls))
    for (const call of message.tool_calls as Array<{ id?: string; function?: { name?: string; arguments?: string } } | null>)
      if (call) lines.push(`  ${who} → ${call.function?.name ?? '?'}(${folded(call.function?.arguments ?? '', fold)})${call.id ? ` [${call.id}]` : ''}`);
  return lines;
}

function folded(text: string, fold: number): string {
  const oneLine = text.replace(/\n/g, '\n    ');
  return oneLine.length > fold ? `${oneLine.slice(0, fold)}… (${text.length} characters; --full shows all)` : oneLine;
}
