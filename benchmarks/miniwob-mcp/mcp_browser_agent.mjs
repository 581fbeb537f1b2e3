// MiniWoB++ through Playwright's MCP server, the way MCPMark's Playwright tasks are run: for each episode the
// MiniWoB page (served over loopback HTTP inside the task) is opened and started in the server's browser
// exactly as BrowserGym starts it (browsergym_setup.py), the model acts only through the server's browser
// tools, called as OpenAI tool calls through the official MCP client SDK, and the score is MiniWoB's own
// reward read from the page, by BrowserGym's rule (raw reward > 0).
//
//   node /app/benchmark/mcp_browser_agent.mjs --episodes episodes.jsonl
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const MAX_TURNS = 10;
// The MCP server and its browser are the benchmark's own machinery: on a loaded host a browser start or a page may
// take longer than the SDK's 60 s default, which would fail the episode for the host's sake, not the model's.
const MCP_REQUEST = { timeout: 300_000 };
// A fixed port: the page's URL is in the server's tool results, which replayed runs must see unchanged.
const PAGES = 'http://127.0.0.1:47831/miniwob/';
const HTML_DIR = '/opt/miniwob/lib/python3.11/site-packages/miniwob/html';
// The page's own interactions only: tools that run script in the page (browser_evaluate, browser_run_code_unsafe)
// could write the reward itself, and navigation, tabs or files would leave the episode.
const MODEL_TOOLS = new Set(['browser_snapshot', 'browser_click', 'browser_type', 'browser_fill_form', 'browser_select_option', 'browser_press_key', 'browser_hover', 'browser_drag', 'browser_handle_dialog', 'browser_wait_for']);
// Debian's Chromium, BrowserGym's viewport; no snapshot appended to action results and only error-level console
// events: both are written to files named by the time, which would make every replayed step a new request.
const SERVER = ['/app/node_modules/@playwright/mcp/cli.js', '--headless', '--isolated', '--no-sandbox', '--browser', 'chromium', '--executable-path', '/usr/bin/chromium', '--viewport-size', '500x320', '--snapshot-mode', 'none', '--console-level', 'error'];
const env = process.env;
const episodesFile = process.argv[process.argv.indexOf('--episodes') + 1];
const out = env.BENCHROUTER_OUTPUT_DIR;
const fail = (message) => { console.error(`mcp_browser_agent.mjs: ${message}`); process.exit(1); };

let episodes = readFileSync(episodesFile, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
if (env.BENCHROUTER_INSTANCES) {
  const wanted = new Set(env.BENCHROUTER_INSTANCES.split(','));
  const unknown = [...wanted].filter((id) => !episodes.some((e) => e.index === id));
  if (unknown.length) fail(`BENCHROUTER_INSTANCES: no episode ${JSON.stringify(unknown)}: expected ids such as click-test-2/0 (environment/seed)`);
  episodes = episodes.filter((e) => wanted.has(e.index));
}
if (env.BENCHROUTER_LIMIT) episodes = episodes.slice(0, Number(env.BENCHROUTER_LIMIT));

async function chat(messages, tools, instance) {
  const url = `${env.BENCHROUTER_MODEL_ENDPOINT.replace(/\/+$/, '')}/chat/completions`;
  let response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.BENCHROUTER_API_KEY}`, 'x-benchrouter-instance': String(instance) }, body: JSON.stringify({ model: env.BENCHROUTER_MODEL_NAME, messages, tools, temperature: 0 }), signal: AbortSignal.timeout(300_000) });
  } catch (error) { fail(`POST ${url} failed: ${error.cause?.message ?? error.message}`); }
  if (!response.ok) fail(`POST ${url} failed with HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`);
  return response.json();
}

const textOf = (result) => result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
/** The agent's own calls (setup, reading the reward); a failure is the episode's, never the model's. */
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, MCP_REQUEST);
  if (result.isError) throw new Error(`${name}: ${textOf(result)}`);
  return textOf(result);
}
const evaluate = async (client, fn) => JSON.parse(/### Result\n([\s\S]*?)\n###/.exec(await call(client, 'browser_evaluate', { function: fn }))[1]);

async function runEpisode(episode) {
  const setup = JSON.parse(execFileSync('python3', ['/app/benchmark/browsergym_setup.py', episode.env, String(episode.seed)], { encoding: 'utf8' }));
  const client = new Client({ name: 'benchrouter-miniwob-mcp-agent', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: 'node', args: SERVER, cwd: '/tmp', stderr: 'ignore' }), MCP_REQUEST);
  try {
    await call(client, 'browser_navigate', { url: PAGES + setup.page });
    for (const script of setup.scripts) {
      if (typeof script === 'string') await evaluate(client, `() => { ${script}\n return null; }`);
      else for (let waited = 0; !(await evaluate(client, script.wait_for)); waited += 1) { if (waited > 50) throw new Error('the MiniWoB task never became ready'); await sleep(100); }
    }
    const goal = await evaluate(client, '() => core.getUtterance()');
    const snapshot = /### Snapshot\n([\s\S]*)$/.exec(await call(client, 'browser_snapshot', {}))[1].trim();
    const { tools } = await client.listTools(undefined, MCP_REQUEST);
    const openaiTools = tools.filter((t) => MODEL_TOOLS.has(t.name)).map((t) => ({ type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema } }));
    const goalText = typeof goal === 'string' ? goal : goal.utterance;
    const messages = [
      { role: 'system', content: 'You act in a web browser through tools to reach a goal on the open page. Elements are named by the ref in the page snapshot. When the goal is reached, reply without calling a tool.' },
      { role: 'user', content: `# Goal\n${goalText}\n\n# Page\n${snapshot}` },
    ];
    const usage = { prompt_tokens: 0, completion_tokens: 0 };
    let steps = 0;
    let state = [0, 0, false];
    for (let turn = 0; turn < MAX_TURNS && !state[2]; turn += 1) {
      const response = await chat(messages, openaiTools, episode.index);
      usage.prompt_tokens += response.usage?.prompt_tokens ?? 0;
      usage.completion_tokens += response.usage?.completion_tokens ?? 0;
      const message = response.choices[0].message;
      messages.push({ role: 'assistant', content: message.content ?? null, ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}) });
      if (!message.tool_calls?.length) break;
      for (const toolCall of message.tool_calls) {
        let text;
        if (!MODEL_TOOLS.has(toolCall.function.name)) text = `error: no tool ${toolCall.function.name}`;
        else {
          try {
            text = textOf(await client.callTool({ name: toolCall.function.name, arguments: JSON.parse(toolCall.function.arguments || '{}') }, undefined, MCP_REQUEST));
            steps += 1;
          } catch (error) { text = `error: ${error.message}`; }
        }
        messages.push({ role: 'tool', tool_call_id: toolCall.id, content: text });
      }
      state = await evaluate(client, '() => [WOB_RAW_REWARD_GLOBAL, WOB_REWARD_REASON, WOB_DONE_GLOBAL]');
    }
    // BrowserGym's reward (AbstractMiniwobTask.validate): 1 when MiniWoB's raw reward is positive, else 0.
    return { reward: state[0] > 0 ? 1 : 0, steps, done: state[2], rawReward: state[0], reason: state[1], goal: goalText, messages, usage };
  } finally {
    await client.close();
  }
}

const pages = spawn('python3', ['-m', 'http.server', '47831', '--bind', '127.0.0.1', '--directory', HTML_DIR], { stdio: 'ignore' });
for (let tries = 0; ; tries += 1) {
  try { await fetch(PAGES); break; } catch { if (tries > 100) fail(`the MiniWoB pages are not served at ${PAGES}`); await sleep(100); }
}
const started = performance.now();
let solved = 0;
writeFileSync(path.join(out, 'records.jsonl'), '');
for (const episode of episodes) {
  const r = await runEpisode(episode);
  solved += r.reward;
  appendFileSync(path.join(out, 'records.jsonl'), `${JSON.stringify({ index: episode.index, origin_query: r.goal, prompt: r.messages.slice(0, 2), prediction: r.messages.slice(2), score: r.reward, steps: r.steps, ...r.usage, cost: 0, raw_output: { done: r.done, raw_reward: r.rawReward, reason: r.reason } })}\n`);
  console.log(`mcp_browser_agent: ${episode.index}: reward ${r.reward} in ${r.steps} steps`);
}
pages.kill();
const total = episodes.length;
writeFileSync(path.join(out, 'result.json'), `${JSON.stringify({ success_rate: total ? solved / total : 0, solved, total })}\n`);
console.log(`mcp_browser_agent: success rate ${total ? solved / total : 0} (${solved}/${total}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
