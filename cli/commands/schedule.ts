// `br schedule`: evaluate checkpoints on a schedule. Each firing reads the model id the endpoint
// serves (`GET /v1/models`) and runs the benchmark or suite against it once per checkpoint, naming the
// run by it; a checkpoint the schedule has evaluated already starts nothing.

import type { Command } from 'commander';
import {
  checkScheduleName,
  createSchedule,
  deleteSchedule,
  describeSchedule,
  formatEvery,
  listSchedules,
  parseEvery,
  pauseSchedule,
  runTemplate,
  scheduleBoard,
  triggerSchedule,
  unpauseSchedule,
  type ScheduleView,
} from '../../client/schedules.js';
import { InputError } from '../../contract/problems.js';
import { CHECKPOINT_PLACEHOLDER, type ScheduleTarget } from '../../runs/schedule-spec.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { addSuiteFlags, specFromFlags, suiteRunsFromFlags, type SuiteFlags } from '../run-definition.js';
import { addRunOptionFlags, type ParsedFlags } from '../run-option-flags.js';
import { connectTemporal } from '../temporal-access.js';

type CreateFlags = ParsedFlags & SuiteFlags & { endpoint: string; apiKeyEnv?: string; json?: boolean; every?: string; paused?: boolean };

function scheduleTable(views: ScheduleView[]) {
  return {
    name: 'schedules',
    columns: ['SCHEDULE', 'TARGET', 'ENDPOINT', 'EVERY', 'STATE', 'NEXT', 'LAST FIRED'],
    rows: views.map((v) => [
      v.name,
      v.target,
      v.endpoint,
      v.everySeconds === null ? 'on trigger' : formatEvery(v.everySeconds),
      v.paused ? 'paused' : 'active',
      v.nextFiring ?? '',
      v.recentFirings.at(-1) ?? '',
    ]),
  };
}

export function registerScheduleCommand(program: Command, deps: CliDeps): Command {
  const schedule = program.command('schedule').description('evaluate the checkpoints an endpoint serves, on a schedule or when triggered');

  addSuiteFlags(
    addRunOptionFlags(
      schedule
        .command('create')
        .description("create a schedule: each firing runs the benchmark (or suite) against the endpoint's current checkpoint, once per checkpoint")
        .argument('<name>', 'the schedule\'s name: lowercase letters, digits, "-" and "_"')
        .argument('[benchmark]', 'benchmark directory, or the name of a built-in benchmark'),
      // The model is the checkpoint the endpoint serves when the schedule fires.
      ['model'],
    ),
    'evaluate',
  )
    .option('--json', 'print the schedule as JSON')
    .option('--every <interval>', 'fire every interval: 30s, 15m, 2h, 1d, or a number of minutes (default: only when triggered)')
    .option('--paused', 'create it paused')
    .addHelpText(
      'after',
      example(
        '$ br schedule create nightly arith --endpoint http://trainer:8000/v1 --every 30m --limit 50',
        '$ br schedule create rl --suite lite --endpoint http://trainer:8000/v1 --api-key-env TRAINER_KEY --every 15m',
      ),
    )
    .action(async (name: string, arg: string | undefined, flags: CreateFlags) => {
      checkScheduleName(name, '<name>');
      const everySeconds = flags.every === undefined ? undefined : parseEvery(flags.every, '--every');
      if (flags.suite && arg)
        throw new InputError([{ file: '--suite', field: '', message: `give a benchmark or --suite, not both (got "${arg}" and --suite ${flags.suite})` }]);
      if (!flags.suite && !arg)
        throw new InputError([{ file: 'br schedule create', field: '', message: 'expected a benchmark (a directory or a built-in name) or --suite <name>' }]);
      const runFlags = { ...flags, model: CHECKPOINT_PLACEHOLDER };
      let target: ScheduleTarget;
      if (flags.suite) {
        const { suite, runs } = suiteRunsFromFlags(runFlags, deps.settings());
        target = {
          kind: 'suite',
          suite: { suiteId: '', suite, model: CHECKPOINT_PLACEHOLDER, runs: runs.map(runTemplate), parallel: flags.suiteParallel },
        };
      } else target = { kind: 'run', run: runTemplate(specFromFlags(arg!, runFlags)) };
      const view = await createSchedule(await connectTemporal(deps, true), deps.settings(), {
        spec: { name, endpoint: flags.endpoint, ...(flags.apiKeyEnv ? { apiKeyEnv: flags.apiKeyEnv } : {}), target },
        ...(everySeconds ? { everySeconds } : {}),
        paused: flags.paused === true,
      });
      if (flags.json) await deps.stdout(`${JSON.stringify(view, null, 2)}\n`);
      else
        deps.say(
          `schedule ${name}: ${view.target} against the checkpoint ${flags.endpoint} serves, ${view.everySeconds ? `every ${formatEvery(view.everySeconds)}` : 'when triggered'}${view.paused ? ' (paused)' : ''}`,
        );
    });

  addOutputFlags(schedule.command('list').description('list the evaluation schedules'), 'schedules')
    .addHelpText('after', example('$ br schedule list', '$ br schedule list --json'))
    .action(async (flags: OutputFlags) => {
      const views = await listSchedules(await connectTemporal(deps, false));
      await emitOutput({ tables: [scheduleTable(views)], json: views }, flags, 'schedules', deps);
    });

  addOutputFlags(schedule.command('show').description("a schedule's checkpoints, oldest first, with each run and its score").argument('<name>'), 'schedule')
    .addHelpText('after', example('$ br schedule show nightly', '$ br schedule show nightly --format csv --out scores.csv'))
    .action(async (name: string, flags: OutputFlags) => {
      const client = await connectTemporal(deps, false);
      const view = await describeSchedule(client, name);
      const board = await scheduleBoard(client, name);
      const table = {
        name: 'checkpoints',
        columns: ['CHECKPOINT', 'FOUND', ...board.benchmarks.flatMap((b) => [b, `${b} RUN`])],
        rows: board.rows.map((row) => [
          row.checkpoint,
          row.foundAt,
          ...board.benchmarks.flatMap((b) => {
            const cell = row.cells[b];
            return [cell?.score ?? (cell ? cell.status : null), cell?.runId ?? null];
          }),
        ]),
      };
      await emitOutput({ tables: [table], json: { schedule: view, ...board } }, flags, name, deps);
    });

  const simple = (verb: string, description: string, act: (name: string) => Promise<string>) =>
    schedule
      .command(verb)
      .description(description)
      .argument('<name>')
      .addHelpText('after', example(`$ br schedule ${verb} nightly`))
      .action(async (name: string) => deps.say(await act(name)));
  simple('pause', 'stop firing until unpaused (a running evaluation goes on)', async (name) => {
    await pauseSchedule(await connectTemporal(deps, false), name);
    return `schedule ${name} paused`;
  });
  simple('unpause', 'fire on its interval again', async (name) => {
    const view = await unpauseSchedule(await connectTemporal(deps, false), name);
    return `schedule ${name} active${view.nextFiring ? `; next firing ${view.nextFiring}` : ''}`;
  });
  simple('trigger', "fire now: evaluate the endpoint's current checkpoint unless this schedule has already", async (name) => {
    await triggerSchedule(await connectTemporal(deps, true), name);
    return `schedule ${name} triggered`;
  });
  simple('delete', 'delete the schedule; its runs stay', async (name) => {
    await deleteSchedule(await connectTemporal(deps, false), name);
    return `schedule ${name} deleted`;
  });
  return schedule;
}
