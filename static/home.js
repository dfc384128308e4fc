// home.js - the latest runs and machines, from the read API. Text from the
// database goes into the page with textContent only.
'use strict';

function cell(tr, text) {
  const td = document.createElement('td');
  td.textContent = text == null ? '' : String(text);
  tr.appendChild(td);
}

async function load() {
  const runs = await (await fetch('/api/v1/runs?limit=50')).json();
  const tbody = document.querySelector('#runs tbody');
  for (const r of runs.items) {
    const tr = document.createElement('tr');
    cell(tr, r.run_id);
    cell(tr, r.machine);
    cell(tr, r.commit ? r.commit.slice(0, 12) : r.release);
    cell(tr, r.suite);
    cell(tr, r.started_at || r.received_at);
    tbody.appendChild(tr);
  }
  const machines = await (await fetch('/api/v1/machines')).json();
  const ul = document.querySelector('#machines');
  for (const m of machines.items) {
    const li = document.createElement('li');
    li.textContent = `${m.name}: ${m.cpu_model || '?'}, ${m.nr_cpus || '?'} CPUs, ${m.runs} runs`;
    ul.appendChild(li);
  }
}

load().catch((e) => { document.body.appendChild(document.createTextNode('failed to load: ' + e)); });
