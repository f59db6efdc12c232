// report.js - the HTML audit report's behaviour (embedded in the page by graft-html):
// the filters, a firing's details opened on click, and the optimized graph's view.
'use strict';
const $ = (id) => document.getElementById(id);
const audit = JSON.parse($('audit').textContent);
const graph = $('graphdata') ? JSON.parse($('graphdata').textContent) : null;
let drawings = null; // the neighbourhood drawings, parsed when a firing is first opened
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const createdBy = {}; // node name -> index of the firing that created it
audit.firings.forEach((f, i) => f.created.forEach((c) => { createdBy[c.node] = i; }));

// ---- filters by rule and level
function addOptions(select, values) {
  for (const v of [...new Set(values)].sort()) select.add(new Option(v, v));
}
addOptions($('rule'), audit.firings.map((f) => f.rule));
addOptions($('level'), audit.firings.map((f) => f.level));
function filter() {
  const rule = $('rule').value, level = $('level').value;
  let shown = 0;
  for (const row of document.querySelectorAll('tr.firing')) {
    const show = (!rule || row.dataset.rule === rule) && (!level || row.dataset.level === level);
    row.hidden = !show;
    if (row.nextElementSibling && row.nextElementSibling.classList.contains('detail')) row.nextElementSibling.hidden = !show;
    shown += show;
  }
  $('shown').textContent = shown + ' of ' + audit.firings.length + ' firings shown';
}
$('rule').onchange = filter;
$('level').onchange = filter;

// ---- a firing's details
function valueList(names, types) {
  return names.filter((v) => v).map((v) => esc(v) + ' <span class="type">' + esc(types[v] || '') + '</span>').join('<br>');
}
function nodeTable(names, provenance) {
  if (!names.length) return '<p class="note">none</p>';
  let h = '<table><tr><th>node</th><th>op</th><th>inputs</th><th>outputs</th>' + (provenance ? '<th>stands for</th>' : '') + '</tr>';
  names.forEach((name, k) => {
    const n = audit.nodes[name] || { op: '?', inputs: [], outputs: [] };
    h += '<tr class="node"><td>' + esc(name) + '</td><td>' + esc(n.op) + '</td><td>' + valueList(n.inputs, audit.values) +
      '</td><td>' + valueList(n.outputs, audit.values) + '</td>' + (provenance ? '<td>' + esc(provenance[k].join(', ')) + '</td>' : '') + '</tr>';
  });
  return h + '</table>';
}
function details(i) {
  const f = audit.firings[i], rule = audit.rules ? audit.rules[f.rule] : null;
  let h = '';
  if (rule) h += '<p>' + esc(rule.doc || '') + ' <span class="type">' + esc(rule.source) + '</span></p>' + (rule.text ? '<pre class="rule">' + esc(rule.text) + '</pre>' : '');
  else h += '<p>the built-in pass ' + esc(f.rule) + '</p>';
  if (!drawings) drawings = JSON.parse($('drawings').textContent);
  const d = drawings[i];
  if (d) h += '<div class="pair"><figure><figcaption>before: matched</figcaption>' + (d[0] || '<p class="note">not recorded</p>') +
    '</figure><figure><figcaption>after: created</figcaption>' + (d[1] || '<p class="note">no node: the consumers read one of the values before</p>') + '</figure></div>';
  else h += '<p class="note">Not drawn: past the first drawings of this rule.</p>';
  h += '<h4>matched</h4>' + nodeTable(f.matched);
  h += '<h4>created</h4>' + nodeTable(f.created.map((c) => c.node), f.created.map((c) => c.provenance));
  if (f.removed.length) h += '<h4>removed</h4><p>' + esc(f.removed.join(', ')) + '</p>';
  return h;
}
function toggle(row, open) {
  const next = row.nextElementSibling;
  const isOpen = next && next.classList.contains('detail');
  if (isOpen && open !== true) { next.remove(); row.classList.remove('open'); return; }
  if (isOpen) return;
  const tr = document.createElement('tr');
  tr.className = 'detail';
  tr.innerHTML = '<td class="detail" colspan="6">' + details(+row.id.slice(1)) + '</td>';
  row.after(tr);
  row.classList.add('open');
}
$('firings').onclick = (e) => {
  const row = e.target.closest('tr.firing');
  if (row) toggle(row);
};
function openHash() {
  const row = /^#f\d+$/.test(location.hash) && document.querySelector(location.hash);
  if (row) { toggle(row, true); row.scrollIntoView({ block: 'center' }); }
}
window.addEventListener('hashchange', openHash);

// ---- the optimized graph: zoom, find, a node's provenance on click
const box = $('graphsvg');
if (box && graph) {
  const svg = box.querySelector('svg');
  const w0 = svg.width.baseVal.value, h0 = svg.height.baseVal.value;
  let scale = Math.min(1, (box.clientWidth - 20) / w0);
  const zoom = (k) => { scale *= k; svg.setAttribute('width', w0 * scale); svg.setAttribute('height', h0 * scale); };
  zoom(1);
  $('zin').onclick = () => zoom(1.25);
  $('zout').onclick = () => zoom(0.8);
  const byName = {};
  graph.nodes.forEach((n, k) => { byName[n.name] = k; });
  const names = document.createElement('datalist');
  names.id = 'names';
  names.innerHTML = graph.nodes.map((n) => '<option value="' + esc(n.name) + '">').join('');
  document.body.append(names);
  function show(g) {
    for (const s of box.querySelectorAll('g.sel')) s.classList.remove('sel');
    g.classList.add('sel');
    const k = /^g\d+$/.test(g.id) ? +g.id.slice(1) : -1;
    if (k < 0) { $('info').innerHTML = '<p>' + esc(g.querySelector('title').textContent) + ': a graph input or output</p>'; return; }
    const n = graph.nodes[k], i = createdBy[n.name];
    let h = '<h3>' + esc(n.name) + '</h3><p>' + esc(n.op) + '</p><h4>inputs</h4><p>' + valueList(n.inputs, graph.types) +
      '</p><h4>outputs</h4><p>' + valueList(n.outputs, graph.types) + '</p>';
    if (i === undefined) h += '<p>From the input model.</p>';
    else {
      const c = audit.firings[i].created.find((x) => x.node === n.name);
      h += '<p>Created by <a href="#f' + i + '">firing ' + i + ' (' + esc(audit.firings[i].rule) + ')</a>; stands for the input nodes: ' +
        esc(c.provenance.join(', ')) + '</p>';
    }
    $('info').innerHTML = h;
  }
  box.onclick = (e) => { const g = e.target.closest('g.node'); if (g) show(g); };
  $('find').onchange = () => {
    const g = $('g' + byName[$('find').value]);
    if (g) { show(g); g.scrollIntoView({ block: 'center', inline: 'center' }); }
  };
}
filter();
openHash();
// the firings past the first 500, added a chunk at a time once the page is usable
const chunks = [...document.querySelectorAll('script.rows')];
function addRows() {
  const chunk = chunks.shift();
  if (chunk) {
    $('firings').tBodies[0].insertAdjacentHTML('beforeend', chunk.textContent);
    chunk.remove();
    filter();
  }
  if (chunks.length) return setTimeout(addRows, 0);
  if (chunk) openHash();
  document.body.dataset.complete = Math.round(performance.now()); // every firing listed
}
setTimeout(addRows, 0);
// how long the page took to be usable, in real (not virtual) milliseconds since navigation:
// parsed, scripts run, laid out (offsetHeight forces the layout); for make bench-html
document.body.dataset.scripted = Math.round(document.body.offsetHeight * 0 + performance.now());
