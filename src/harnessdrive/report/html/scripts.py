"""The page's one inline script: exact filters, sorting, anchors that open their trial, and
the trial view drawn on demand from each trial's embedded, deflated record. Every recorded
text reaches the page through ``textContent``, never as markup."""

from __future__ import annotations

PAGE_CHARS = 6000
"""A longer text is shown a page at a time (every page reachable), never cut."""

SCRIPT = (
    """
(function () {
  'use strict';
  var PAGE = """
    + str(PAGE_CHARS)
    + """;
  function byId(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function paged(text, cls) {
    var box = el('div', 'paged');
    var pre = el('pre', cls || '');
    box.appendChild(pre);
    text = String(text);
    var pages = Math.max(1, Math.ceil(text.length / PAGE));
    var at = 0;
    if (pages === 1) { pre.textContent = text; return box; }
    var nav = el('div', 'pager');
    var back = el('button', '', 'previous'), next = el('button', '', 'next');
    var all = el('button', '', 'show all'), where = el('span', '');
    back.type = next.type = all.type = 'button';
    function show() {
      pre.textContent = text.slice(at * PAGE, (at + 1) * PAGE);
      where.textContent = ' page ' + (at + 1) + ' of ' + pages + ' (' + text.length +
        ' characters) ';
      back.disabled = at === 0; next.disabled = at === pages - 1;
    }
    back.onclick = function () { at -= 1; show(); };
    next.onclick = function () { at += 1; show(); };
    all.onclick = function () {
      pre.textContent = text; where.textContent = ' all ' + text.length + ' characters ';
    };
    nav.appendChild(back); nav.appendChild(where); nav.appendChild(next); nav.appendChild(all);
    box.appendChild(nav);
    show();
    return box;
  }
  function diffView(text) {
    var box = el('div', 'paged');
    var pre = el('pre', 'diff');
    String(text).split('\\n').forEach(function (line) {
      var cls = '';
      if (/^(\\+\\+\\+|---|diff --git|index )/.test(line)) { cls = 'dh'; }
      else if (line.charAt(0) === '+') { cls = 'da'; }
      else if (line.charAt(0) === '-') { cls = 'dd'; }
      else if (line.slice(0, 2) === '@@') { cls = 'dc'; }
      pre.appendChild(el('span', cls, line + '\\n'));
    });
    box.appendChild(pre);
    return box;
  }
  var MAIN = ['file_path', 'path', 'command', 'cmd', 'pattern', 'url', 'query', 'description'];
  function headline(input) {
    if (!input || typeof input !== 'object') { return input ? String(input) : ''; }
    for (var i = 0; i < MAIN.length; i += 1) {
      var v = input[MAIN[i]];
      if (v !== undefined && v !== null) {
        return Array.isArray(v) ? v.join(' ') : String(v);
      }
    }
    return '';
  }
  function inputView(input, into) {
    if (input === undefined || input === null) { return; }
    if (typeof input !== 'object') { into.appendChild(paged(String(input), 'input')); return; }
    Object.keys(input).forEach(function (key) {
      var value = input[key];
      var text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
      var row = el('div', 'arg');
      row.appendChild(el('b', '', key + ': '));
      if (/patch|diff/i.test(key) && typeof value === 'string') {
        row.appendChild(diffView(value));
      } else if (text.indexOf('\\n') === -1 && text.length < 160) {
        row.appendChild(el('code', '', text));
      } else {
        row.appendChild(paged(text, 'input'));
      }
      into.appendChild(row);
    });
  }
  function resultText(event) {
    var data = event.data || {};
    var out = data.output;
    if (out === undefined || out === null) { out = event.text || ''; }
    return typeof out === 'string' ? out : JSON.stringify(out, null, 2);
  }
  function step(summaryText, cls) {
    var box = el('details', 'step ' + cls);
    box.open = true;
    box.appendChild(el('summary', '', summaryText));
    return box;
  }
  function transcriptView(events) {
    var box = el('div', 'transcript');
    var byCall = {}, used = {};
    events.forEach(function (e, i) {
      var id = e.data && e.data.id;
      if (e.kind === 'tool_result' && id !== undefined && byCall[id] === undefined) {
        byCall[id] = i;
      }
    });
    events.forEach(function (e, i) {
      if (used[i]) { return; }
      var data = e.data || {};
      if (e.kind === 'message') {
        var msg = el('div', 'msg');
        msg.appendChild(el('b', '', 'model: '));
        msg.appendChild(paged(e.text, 'text'));
        box.appendChild(msg);
      } else if (e.kind === 'tool_call') {
        var call = step(e.text + ' ' + headline(data.input), 'call');
        inputView(data.input, call);
        var r = data.id !== undefined ? byCall[data.id] : undefined;
        if (r === undefined && events[i + 1] && events[i + 1].kind === 'tool_result' &&
            !(events[i + 1].data && events[i + 1].data.id !== undefined)) { r = i + 1; }
        if (r !== undefined) {
          used[r] = true;
          var res = events[r];
          call.appendChild(el('div', 'label', (res.data && res.data.error) ? 'result (error)' :
            'result'));
          call.appendChild(paged(resultText(res), 'result'));
        }
        box.appendChild(call);
      } else if (e.kind === 'tool_result' || e.kind === 'command') {
        var title = e.kind === 'command' ? '$ ' + e.text : 'result of ' + e.text;
        if (data.exit_code !== undefined && data.exit_code !== null) {
          title += '  (exit ' + data.exit_code + ')';
        }
        var cmd = step(title, e.kind === 'command' ? 'call' : 'result');
        if (data.output) { cmd.appendChild(paged(resultText(e), 'result')); }
        box.appendChild(cmd);
      } else if (e.kind === 'file_change') {
        box.appendChild(el('div', 'change', 'changed ' + e.text +
          (data.change ? ' (' + data.change + ')' : '')));
        if (data.diff || data.patch) { box.appendChild(diffView(data.diff || data.patch)); }
      } else {
        box.appendChild(el('div', 'event ' + e.kind, e.kind + ': ' + e.text));
      }
    });
    return box;
  }
  var FAILING = /^(FAILED|ERROR)\\b|^E\\s|AssertionError|^\\s*assert /;
  function testsView(record, into) {
    var lines = String(record.tests).split('\\n');
    var planted = record.planted || [];
    function isPlanted(line) {
      return planted.some(function (p) {
        var last = p.split('::').pop();
        return last && line.indexOf(last) !== -1;
      });
    }
    if (planted.length) {
      into.appendChild(el('p', 'planted', 'The grader planted ' + planted.length +
        ' check(s) of its own that must fail (' + planted.join(', ') + '), to prove the ' +
        'tests really ran; their failures below are expected and are not the agent\\'s.'));
    }
    // pytest heads each failure '____ name ____': a planted check's section is left out whole.
    var section = '';
    var failing = lines.filter(function (l) {
      var head = /^_{3,} (.+?) _{3,}$/.exec(l);
      if (head) { section = head[1]; return false; }
      if (/^={3,}/.test(l)) { section = ''; }
      return FAILING.test(l) && !isPlanted(l) && !(section && isPlanted(section));
    });
    if (failing.length) {
      into.appendChild(el('h4', '', 'Failing assertions'));
      into.appendChild(paged(failing.join('\\n'), 'failing'));
    } else if (record.passed) {
      into.appendChild(el('p', 'ok', 'Every test of the agent\\'s change passed.'));
    }
    into.appendChild(el('h4', '', 'Test output'));
    into.appendChild(paged(record.tests, 'tests'));
  }
  function inflate(text) {
    var raw = atob(text.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i += 1) { bytes[i] = raw.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).text().then(JSON.parse);
  }
  function draw(trial) {
    if (trial.dataset.drawn) { return Promise.resolve(); }
    trial.dataset.drawn = 'pending';
    var source = trial.querySelector('script.record');
    var view = trial.querySelector('.record-view');
    if (!source || !view) { trial.dataset.drawn = 'none'; return Promise.resolve(); }
    return inflate(source.textContent).then(function (record) {
      if (record.prompt) {
        var prompt = el('details', 'prompt');
        prompt.appendChild(el('summary', '', 'Prompt'));
        prompt.appendChild(paged(record.prompt, 'text'));
        view.appendChild(prompt);
      }
      if (record.diff) {
        view.appendChild(el('h4', '', 'Diff'));
        view.appendChild(diffView(record.diff));
      }
      if (record.tests) { testsView(record, view); }
      view.appendChild(el('h4', '', 'Transcript (' + record.events.length + ' events)'));
      view.appendChild(transcriptView(record.events));
      trial.dataset.drawn = 'yes';
    }).catch(function (err) {
      view.appendChild(el('p', 'finding', 'This record could not be read: ' + err));
      trial.dataset.drawn = 'failed';
    });
  }
  var list = byId('trial-list');
  if (!list) { return; }
  var trials = Array.prototype.slice.call(list.querySelectorAll('details.trial'));
  var selects = Array.prototype.slice.call(document.querySelectorAll('select[data-filter]'));
  var failures = byId('only-failures'), unreviewed = byId('only-unreviewed');
  var sort = byId('sort'), shown = byId('shown'), expand = byId('expand');
  function apply() {
    var count = 0;
    trials.forEach(function (t) {
      var keep = selects.every(function (s) {
        return !s.value || t.dataset[s.dataset.filter] === s.value;
      });
      if (failures.checked && t.dataset.outcome === 'pass') { keep = false; }
      if (unreviewed.checked && !(t.dataset.outcome === 'pass' && t.dataset.reviewed === 'no')) {
        keep = false;
      }
      t.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = count + ' of ' + trials.length + ' trials';
  }
  var NUMERIC = { order: 1, cost: 1, seconds: 1, tokens: 1 };
  function reorder() {
    var key = sort.value;
    var sorted = trials.slice().sort(function (a, b) {
      var x = a.dataset[key], y = b.dataset[key];
      var by = NUMERIC[key] ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);
      return by || Number(a.dataset.order) - Number(b.dataset.order);
    });
    sorted.forEach(function (t) { list.appendChild(t); });
  }
  selects.forEach(function (s) { s.addEventListener('change', apply); });
  failures.addEventListener('change', apply);
  unreviewed.addEventListener('change', apply);
  sort.addEventListener('change', reorder);
  trials.forEach(function (t) {
    t.addEventListener('toggle', function () { if (t.open) { draw(t); } });
  });
  expand.addEventListener('click', function () {
    var open = expand.textContent === 'Expand all';
    trials.forEach(function (t) { if (!t.hidden) { t.open = open; } });
    expand.textContent = open ? 'Collapse all' : 'Expand all';
  });
  function choose(filter, value) {
    selects.forEach(function (s) { s.value = ''; });
    failures.checked = false; unreviewed.checked = false;
    var s = byId('filter-' + filter);
    if (s) { s.value = value; }
    apply();
  }
  document.addEventListener('click', function (event) {
    var link = event.target.closest ? event.target.closest('a[data-arm]') : null;
    if (link) { choose('arm', link.dataset.arm); }
  });
  function follow() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && target.classList.contains('trial')) {
      if (target.hidden) { choose('arm', ''); }
      target.open = true;
      target.scrollIntoView();
    }
  }
  window.addEventListener('hashchange', follow);
  follow();
  document.documentElement.setAttribute('data-ready', String(trials.length));
}());
"""
)
