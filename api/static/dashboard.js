// The dashboard's live parts, plain JavaScript with no build step: progress bars fed by each run's
// Server-Sent Events stream (the sign-in cookie authenticates it), and the submit form posting JSON.
'use strict';
/* global document, window, EventSource, FormData, fetch, CSS, setTimeout -- browser globals: this file runs in the page */

function showProgress(element, progress) {
  // Instances when the run knows them all (tasks that list them, run in shards), else jobs.
  const instances = progress.instances;
  const done = instances ? instances.done : progress.total - progress.pending - progress.running;
  const total = instances ? instances.total : progress.total;
  const percent = total ? Math.min(100, Math.round((100 * done) / total)) : 0;
  element.querySelector('.bar').style.width = percent + '%';
  element.querySelector('.label').textContent = percent + '% (' + done + '/' + total + (instances ? ' instances' : '') + ')';
  element.dataset.percent = String(percent);
  for (const job of progress.jobs) {
    const state = document.querySelector('.job-state[data-job="' + CSS.escape(job.jobId) + '"]');
    if (state) state.textContent = job.state;
  }
}

function duration(seconds) {
  if (seconds < 60) return seconds + ' s';
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? minutes + ' min ' + (seconds % 60) + ' s' : Math.floor(minutes / 60) + ' h ' + (minutes % 60) + ' min';
}

/** The run page's live figures: time left from finished jobs' durations, calls and tokens per second from the gateway. */
function showLive(figures) {
  const eta = document.getElementById('live-eta');
  if (!eta) return;
  if (figures.secondsLeft !== null) {
    eta.textContent = '~' + duration(figures.secondsLeft) + ' (from ' + figures.finishedJobs + ' finished job' + (figures.finishedJobs === 1 ? '' : 's') + ')';
    eta.dataset.seconds = String(figures.secondsLeft);
  }
  const calls = document.getElementById('live-calls');
  calls.textContent = String(figures.callsPerSecond);
  calls.dataset.value = String(figures.callsPerSecond);
  const tokens = document.getElementById('live-tokens');
  tokens.textContent = String(figures.tokensPerSecond);
  tokens.dataset.value = String(figures.tokensPerSecond);
}

function follow(element) {
  const runId = element.dataset.run;
  const events = new EventSource('/runs/' + encodeURIComponent(runId) + '/events');
  events.addEventListener('progress', (event) => showProgress(element, JSON.parse(event.data)));
  events.addEventListener('live', (event) => showLive(JSON.parse(event.data)));
  events.addEventListener('health', (event) => {
    const finding = JSON.parse(event.data);
    element.title = finding.message;
    // The findings `br run` prints, listed on the run page as they come.
    const list = document.getElementById('health-findings');
    if (list) {
      const item = document.createElement('li');
      item.textContent = finding.message;
      list.appendChild(item);
      list.hidden = false;
    }
  });
  const end = () => {
    events.close();
    element.dataset.ended = 'true';
    // The run page shows its results once the run has them; the finished bar stays a moment first.
    if (document.querySelector('[data-reload-on-result="' + CSS.escape(runId) + '"]')) setTimeout(() => window.location.reload(), 1000);
  };
  events.addEventListener('result', end);
  events.addEventListener('end', end);
}

// A browser keeps at most 6 connections per site over HTTP/1.1; streams beyond a few would stall the page's own requests.
const MAX_STREAMS = 4;
Array.from(document.querySelectorAll('.progress[data-run]')).slice(0, MAX_STREAMS).forEach(follow);

// A finished run whose transcripts are on other hosts: its page came with the jobs' timeline alone, and the
// timeline's route (which reads the calls from those hosts) draws it again with calls and tokens.
const timeline = document.querySelector('[data-calls-from]');
if (timeline) {
  const pending = document.getElementById('timeline-calls-pending');
  fetch(timeline.dataset.callsFrom)
    .then((response) => (response.ok ? response.text() : Promise.reject(new Error('HTTP ' + response.status))))
    .then((text) => {
      const holder = document.createElement('div');
      holder.innerHTML = text;
      const drawn = holder.querySelector('svg');
      if (drawn) timeline.querySelector('svg').replaceWith(drawn);
      pending.remove();
      timeline.dataset.complete = 'true';
    })
    .catch((error) => (pending.textContent = 'Calls and tokens per minute could not be read from the hosts: ' + error.message));
}

const form = document.getElementById('submit-form');
if (form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { benchmark: data.get('benchmark'), model: data.get('model'), endpoint: data.get('endpoint') };
    if (data.get('apiKeyEnv')) body.apiKeyEnv = data.get('apiKeyEnv');
    const tasks = String(data.get('tasks') || '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    if (tasks.length) body.tasks = tasks;
    for (const field of ['limit', 'repeats']) if (data.get(field)) body[field] = Number(data.get(field));
    const response = await fetch('/evals/submit', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) {
      document.getElementById('submit-error').textContent = answer.error.message;
      return;
    }
    window.location.href = '/ui/runs/' + encodeURIComponent(answer.runId);
  });
}
