// MCP tool use scored on end state: for each instance, a fresh workspace is served by the official MCP
// filesystem server; the model works through the server's tools (official MCP client SDK) until it
// stops calling them, and a verifier checks the files left behind, not the transcript.
//
//   node /app/benchmark/mcp_agent.mjs --tasks tasks.jsonl
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';

const MAX_STEPS = 12;
// The MCP server is the benchmark's own machinery: on a loaded host its start and its answers may take longer than the
// SDK's 60 s default, which would fail the instance for the host's sake, not the model's.
const MCP_REQUEST = { timeout: 300_000 };
const WORKSPACE = '/tmp/workspace';
const env = process.env;
const tasksFile = process.argv[process.argv.indexOf('--tasks') + 1];
const out = env.BENCHROUTER_OUTPUT_DIR;
const fail = (message) => { console.error(`mcp_agent.mjs: ${message}`); process.exit(1); };

let instances = readFileSync(tasksFile, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
if (env.BENCHROUTER_INSTANCES) {
  const wanted = new Set(env.BENCHROUTER_INSTANCES.split(','));
  const unknown = [...wanted].filter((id) => !instances.some((t) => t.index === id));
  if (unknown.length) fail(`BENCHROUTER_INSTANCES: no instance ${JSON.stringify(unknown)} in ${tasksFile}`);
  instances = instances.filter((t) => wanted.has(t.index));
}
if (env.BENCHROUTER_LIMIT) instances = instances.slice(0, Number(env.BENCHROUTER_LIMIT));

async function chat(messages, tools, instance) {
  const url = `${env.BENCHROUTER_MODEL_ENDPOINT.replace(/\/+$/, '')}/chat/completions`;
  let response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.BENCHROUTER_API_KEY}`, 'x-benchrouter-instance': String(instance) }, body: JSON.stringify({ model: env.BENCHROUTER_MODEL_NAME, messages, tools, temperature: 0 }), signal: AbortSignal.timeout(120_000) });
  } catch (error) { fail(`POST ${url} failed: ${error.cause?.message ?? error.message}`); }
  if (!response.ok) fail(`POST ${url} failed with HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`);
  return response.json();
}

/** Each check names a path in the workspace and the state it must be in. */
function verify(checks) {
  return checks.map((check) => {
    const target = path.join(WORKSPACE, check.file ?? check.absent ?? check.directory);
    if (check.absent) return !existsSync(target);
    if (check.directory) return existsSync(target) && statSync(target).isDirectory();
    return existsSync(target) && statSync(target).isFile() && readFileSync(target, 'utf8') === check.equals;
  });
}

async function runInstance(task) {
  rmSync(WORKSPACE, { recursive: true, force: true });
  mkdirSync(WORKSPACE, { recursive: true });
  for (const [file, content] of Object.entries(task.files)) { mkdirSync(path.dirname(path.join(WORKSPACE, file)), { recursive: true }); writeFileSync(path.join(WORKSPACE, file), content); }
  const client = new Client({ name: 'benchrouter-mcp-agent', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: 'node', args: ['/app/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', WORKSPACE], stderr: 'ignore' }), MCP_REQUEST);
  const { tools } = await client.listTools(undefined, MCP_REQUEST);
  const openaiTools = tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema } }));
  const messages = [{ role: 'system', content: `You operate on files through tools. The workspace is ${WORKSPACE}; use absolute paths inside it. When the task is done, reply without calling a tool.` }, { role: 'user', content: task.instruction }];
  const usage = { prompt_tokens: 0, completion_tokens: 0 };
  for (let step = 0; step < MAX_STEPS; step += 1) {
    const response = await chat(messages, openaiTools, task.index);
    usage.prompt_tokens += response.usage?.prompt_tokens ?? 0;
    usage.completion_tokens += response.usage?.completion_tokens ?? 0;
    const message = response.choices[0].message;
    messages.push({ role: 'assistant', content: message.content ?? null, ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}) });
    if (!message.tool_calls?.length) break;
    for (const call of message.tool_calls) {
      let text;
      try {
        const result = await client.callTool({ name: call.function.name, arguments: JSON.parse(call.function.arguments || '{}') }, undefined, MCP_REQUEST);
        text = result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
      } catch (error) { text = `error: ${error.message}`; }
      messages.push({ role: 'tool', tool_call_id: call.id, content: text });
    }
  }
  await client.close();
  const checks = verify(task.checks);
  return { score: checks.every(Boolean) ? 1 : 0, checks, messages, usage };
}

let passed = 0;
writeFileSync(path.join(out, 'records.jsonl'), '');
for (const task of instances) {
  const { score, checks, messages, usage } = await runInstance(task);
  passed += score;
  appendFileSync(path.join(out, 'records.jsonl'), `${JSON.stringify({ index: task.index, origin_query: task.instruction, prompt: messages.slice(0, 2), prediction: messages.slice(2), ground_truth: task.checks, score, ...usage, cost: 0, raw_output: checks })}\n`);
  console.log(`mcp_agent: ${task.index}: ${score ? 'end state reached' : `end state not reached (checks ${JSON.stringify(checks)})`}`);
}
const total = instances.length;
writeFileSync(path.join(out, 'result.json'), `${JSON.stringify({ success_rate: total ? passed / total : 0, passed, total })}\n`);
console.log(`mcp_agent: success rate ${total ? passed / total : 0} (${passed}/${total})`);
