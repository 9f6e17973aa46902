/* tenure-report --html: draws the charts and tables of the report from the JSON in
 * <script id="tenure-data"> (the --json report of each trace). Embedded into the tool and
 * inlined into every report after chart.js; loads nothing from elsewhere.
 *
 * When done it sets <p id="status" data-state="ready"> (or "error") and writes a self-check into
 * a hidden <pre> (id tenure-selfcheck): the charts' canvas sizes, whether they hold drawn pixels, the GC
 * rows of each table and the errors seen (tests/report/check_report.py html reads it). */
(function () {
  'use strict';
  var GEN_NAMES = ['gen0', 'gen1', 'gen2', 'LOH', 'POH'];
  var GEN_COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f'];
  /* GCGlobalHeapHistory_V4's phase times, in the .NET runtime's order (7 values: the 7th is sweep) */
  var PHASES = ['mark sizedref', 'mark roots', 'mark short weak', 'mark finalization', 'mark long weak', 'plan',
    'relocate (sweep)', 'compact'];
  var status = document.getElementById('status');
  var app = document.getElementById('app');
  var charts = [];
  var tables = [];

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmt(v, digits) {
    if (v === null || v === undefined || (typeof v === 'number' && !isFinite(v))) return '-';
    if (typeof v !== 'number') return String(v);
    return digits === undefined ? String(v) : v.toFixed(digits);
  }
  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
  }

  /* a table whose columns sort on a click of their header */
  function table(columns, rows, cls) {
    var t = el('table', cls ? { 'class': cls } : null);
    var thead = el('thead'), tr = el('tr');
    columns.forEach(function (c, i) {
      var th = el('th', c.text ? { 'class': 'text' } : null, c.title);
      if (c.tip) th.title = c.tip;
      th.addEventListener('click', function () { sortBy(t, i, c.text); });
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    t.appendChild(thead);
    var tbody = el('tbody');
    rows.forEach(function (r) {
      var row = el('tr', r.attrs || null);
      columns.forEach(function (c) {
        var v = c.get(r.data);
        var td = el('td', c.text ? { 'class': 'text' } : null, fmt(v, c.digits));
        if (typeof v === 'number') td.dataset.v = v;
        row.appendChild(td);
      });
      tbody.appendChild(row);
    });
    t.appendChild(tbody);
    return t;
  }
  function sortBy(t, col, text) {
    var tbody = t.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var dir = t.dataset.sortCol == col && t.dataset.sortDir === 'asc' ? -1 : 1;
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col];
      if (!text && x.dataset.v !== undefined && y.dataset.v !== undefined)
        return dir * (Number(x.dataset.v) - Number(y.dataset.v));
      return dir * x.textContent.localeCompare(y.textContent);
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
    t.dataset.sortCol = col;
    t.dataset.sortDir = dir > 0 ? 'asc' : 'desc';
  }

  function chartBox(parent, title, id) {
    var div = el('div', { 'class': 'chart' });
    div.appendChild(el('h3', null, title));
    var box = el('div', { 'class': 'box' });
    var canvas = el('canvas', { id: id, role: 'img', 'aria-label': title });
    box.appendChild(canvas);
    div.appendChild(box);
    parent.appendChild(div);
    return canvas;
  }
  function makeChart(canvas, config) {
    config.options = config.options || {};
    config.options.animation = false; /* drawn at once: printable, and testable headless */
    config.options.responsive = true;
    config.options.maintainAspectRatio = false;
    var c = new Chart(canvas, config);
    charts.push(c);
    return c;
  }
  function linearX(title) {
    return { type: 'linear', title: { display: true, text: title } };
  }
  function yAxis(title, extra) {
    var a = { beginAtZero: true, title: { display: true, text: title } };
    if (extra) Object.keys(extra).forEach(function (k) { a[k] = extra[k]; });
    return a;
  }

  function heapChart(parent, t, id) {
    var gcs = t.gcs;
    var datasets = GEN_NAMES.map(function (name, k) {
      return {
        label: name + ' after GC', stack: 'after', fill: k === 0 ? 'origin' : '-1', pointRadius: 0,
        borderWidth: 1, borderColor: GEN_COLORS[k], backgroundColor: alpha(GEN_COLORS[k], 0.45),
        data: gcs.map(function (g) { return { x: g.end_ms, y: g.size_after_mb[k], gc: g.number }; })
      };
    });
    datasets.push({
      label: 'heap before GC (peak)', stack: 'peak', fill: false, pointRadius: 0, borderWidth: 1,
      borderDash: [4, 3], borderColor: '#444', backgroundColor: '#444',
      data: gcs.map(function (g) { return { x: g.start_ms, y: g.peak_mb, gc: g.number }; })
    });
    makeChart(chartBox(parent, 'Heap size by generation (MB, after each GC)', id), {
      type: 'line', data: { datasets: datasets },
      options: {
        interaction: { mode: 'nearest', intersect: false },
        scales: { x: linearX('ms since the trace began'), y: yAxis('MB', { stacked: true }) },
        plugins: { tooltip: { callbacks: { title: gcTitle } } }
      }
    });
  }
  function gcTitle(items) {
    return items.length && items[0].raw && items[0].raw.gc ? 'GC #' + items[0].raw.gc : '';
  }

  function pauseTimeline(parent, t, id) {
    var datasets = [0, 1, 2].map(function (gen) {
      return {
        label: 'gen' + gen, pointRadius: 3, borderColor: GEN_COLORS[gen], backgroundColor: alpha(GEN_COLORS[gen], 0.7),
        data: t.gcs.filter(function (g) { return g.gen === gen; })
          .map(function (g) { return { x: g.start_ms, y: g.pause_ms, gc: g.number, label: g.label, reason: g.reason_name }; })
      };
    });
    makeChart(chartBox(parent, 'GC pauses on the timeline (ms)', id), {
      type: 'scatter', data: { datasets: datasets },
      options: {
        scales: { x: linearX('ms since the trace began'), y: yAxis('pause ms') },
        plugins: {
          tooltip: {
            callbacks: {
              title: gcTitle,
              label: function (c) {
                return c.raw.label + ' ' + (c.raw.reason || '') + ': ' + fmt(c.raw.y, 3) + ' ms at ' + fmt(c.raw.x, 1) + ' ms';
              }
            }
          }
        }
      }
    });
  }

  function pauseHistogram(parent, t, id) {
    var pauses = t.gcs.map(function (g) { return g.pause_ms || 0; });
    var max = pauses.reduce(function (a, b) { return Math.max(a, b); }, 0);
    var nbins = Math.max(1, Math.min(40, Math.ceil(Math.sqrt(pauses.length))));
    var width = max > 0 ? max / nbins : 1;
    var labels = [];
    for (var b = 0; b < nbins; b++) labels.push(fmt(b * width, 2) + '-' + fmt((b + 1) * width, 2));
    var datasets = [0, 1, 2].map(function (gen) {
      var counts = new Array(nbins).fill(0);
      t.gcs.forEach(function (g) {
        if (g.gen !== gen) return;
        var i = Math.min(nbins - 1, Math.floor((g.pause_ms || 0) / width));
        counts[i]++;
      });
      return { label: 'gen' + gen, data: counts, backgroundColor: alpha(GEN_COLORS[gen], 0.8), stack: 'gcs' };
    });
    makeChart(chartBox(parent, 'Pause time histogram (GCs per pause range, ms)', id), {
      type: 'bar', data: { labels: labels, datasets: datasets },
      options: {
        scales: {
          x: { stacked: true, title: { display: true, text: 'pause ms' } },
          y: yAxis('GCs', { stacked: true, ticks: { precision: 0 } })
        }
      }
    });
  }

  function promotionChart(parent, t, id) {
    var gcs = t.gcs;
    makeChart(chartBox(parent, 'Promotion (MB) and survival rate (%) by GC', id), {
      type: 'bar',
      data: {
        labels: gcs.map(function (g) { return g.number; }),
        datasets: [
          {
            type: 'line', label: 'survival % (condemned generations)', yAxisID: 'pct', borderColor: '#e15759',
            backgroundColor: '#e15759', pointRadius: 0, borderWidth: 1.5, spanGaps: true,
            data: gcs.map(function (g) { return g.condemned_survival_pct; })
          },
          {
            label: 'promoted MB', yAxisID: 'y', backgroundColor: alpha(GEN_COLORS[0], 0.7),
            data: gcs.map(function (g) { return g.promoted_mb; })
          }
        ]
      },
      options: {
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { title: { display: true, text: 'GC #' } },
          y: yAxis('promoted MB', { position: 'left' }),
          pct: yAxis('%', { position: 'right', grid: { drawOnChartArea: false } })
        }
      }
    });
  }

  function summaryTable(t) {
    var s = t.summary;
    var rows = [
      ['Trace duration', fmt(s.duration_ms, 3) + ' ms (' + s.events + ' events)'],
      ['Total allocated', s.total_allocated_mb === null ? '- (no allocation events)' :
        fmt(s.total_allocated_mb, 3) + ' MB (' + (s.alloc_source === 'ticks' ? 'from GCAllocationTick, sampled' :
          'gen0, LOH and POH object bytes at each GC, up to the last GC') + (s.allocated_estimated ? '; estimated' : '') + ')'],
      ['GCs', s.gc_count + ' (gen0 ' + s.gc_by_gen[0] + ', gen1 ' + s.gc_by_gen[1] + ', gen2 ' + s.gc_by_gen[2] +
        '), induced ' + s.induced],
      ['Total pause', fmt(s.total_pause_ms, 3) + ' ms (' + fmt(s.pause_pct, 2) +
        '% of the trace duration; each pause SuspendEEBegin..RestartEEEnd)'],
      ['Max heap size', fmt(s.max_heap_mb, 3) + ' MB']
    ];
    /* server GC only (the trace has GCJoin_V2 events) */
    if (s.total_join_wait_ms !== undefined) {
      rows.push(['Join wait', fmt(s.total_join_wait_ms, 3) + ' ms summed over GC threads (' +
        fmt(s.join_wait_pct_pause, 2) + '% of the GC pause time, ' + fmt(s.join_wait_pct_thread_time, 2) +
        '% of the GC threads\' time in pauses), up to ' + s.max_gc_threads + ' GC threads']);
    }
    var tb = el('table', { 'class': 'summary' });
    rows.forEach(function (r) {
      var tr = el('tr');
      tr.appendChild(el('td', null, r[0]));
      tr.appendChild(el('td', { 'class': 'text' }, r[1]));
      tb.appendChild(tr);
    });
    return tb;
  }

  function rollupTable(t) {
    var order = ['all', '0', '1', '2'];
    var by = {};
    t.generations.forEach(function (g) { by[g.gen] = g; });
    var cols = [
      { title: 'Gen', text: true, get: function (g) { return g.gen === 'all' ? 'ALL' : g.gen; } },
      { title: 'Count', get: function (g) { return g.count; } },
      { title: 'Max Pause ms', digits: 3, get: function (g) { return g.max_pause_ms; } },
      { title: 'Mean Pause ms', digits: 3, get: function (g) { return g.mean_pause_ms; } },
      { title: 'Total Pause ms', digits: 3, get: function (g) { return g.total_pause_ms; } },
      { title: 'Peak MB', digits: 3, get: function (g) { return g.peak_mb; } },
      { title: 'Alloc MB', digits: 3, get: function (g) { return g.allocated_mb; } },
      { title: 'Promoted MB', digits: 3, get: function (g) { return g.promoted_mb; } },
      { title: 'Induced', get: function (g) { return g.induced; } }
    ];
    return table(cols, order.filter(function (k) { return by[k]; }).map(function (k) { return { data: by[k] }; }), 'rollup');
  }

  function gcTable(t, k) {
    var cols = [
      { title: 'GC#', get: function (g) { return g.number; } },
      { title: 'Start ms', digits: 3, get: function (g) { return g.start_ms; } },
      { title: 'Reason', text: true, get: function (g) { return g.reason_name || 'Reason' + g.reason; } },
      { title: 'Gen', text: true, tip: 'N non-concurrent, B background, F foreground, I induced', get: function (g) { return g.label; } },
      { title: 'Suspend ms', digits: 3, get: function (g) { return g.suspend_ms; } },
      { title: 'Pause ms', digits: 3, get: function (g) { return g.pause_ms; } },
      { title: '%Pause', digits: 2, get: function (g) { return g.pause_pct; } },
      { title: 'Gen0 Alloc MB', digits: 3, get: function (g) { return g.gen0_allocated_mb; } },
      { title: 'Peak MB', digits: 3, get: function (g) { return g.peak_mb; } },
      { title: 'After MB', digits: 3, get: function (g) { return g.after_mb; } },
      { title: 'Promo MB', digits: 3, get: function (g) { return g.promoted_mb; } }
    ];
    GEN_NAMES.forEach(function (n, i) {
      cols.push({ title: (i < 3 ? 'Gen' + i : n) + ' MB', digits: 3, get: function (g) { return g.size_after_mb[i]; } });
    });
    cols.push({ title: 'Gen0Surv%', digits: 0, get: function (g) { return g.survival_pct; } });
    cols.push({ title: 'Gen0Frag%', digits: 2, get: function (g) { return g.fragmentation_pct; } });
    cols.push({ title: 'FinSurv MB', digits: 3, get: function (g) { return g.finalizable_surv_mb; } });
    cols.push({ title: 'Pinned', get: function (g) { return g.pinned_objects; } });
    if (t.summary.total_join_wait_ms !== undefined) { /* server GC: the trace has joins */
      cols.push({ title: 'GC Thr', tip: 'GC threads (heaps of its joins)', get: function (g) { return g.gc_threads; } });
      cols.push({
        title: 'Join ms', digits: 3, tip: 'time the GC threads waited at joins, summed over them',
        get: function (g) { return g.join_wait_ms; }
      });
      cols.push({
        title: 'Steal MB by heap', text: true, tip: 'GCMarkWithType Steal: bytes each GC thread marked from work taken from others',
        get: function (g) {
          return g.heaps && g.heaps.length ? g.heaps.map(function (h) { return fmt(h.steal_bytes / 1e6, 3); }).join(' / ') : '-';
        }
      });
    }
    cols.push({
      title: 'Phases us', text: true, tip: PHASES.join(', '),
      get: function (g) { return g.phases_us ? g.phases_us.join(' / ') : '-'; }
    });
    var tb = table(cols, t.gcs.map(function (g) { return { data: g, attrs: { 'class': 'gc-row', 'data-gc': g.number } }; }), 'gcs');
    tb.id = 'gcs-' + k;
    tables.push({ trace: k, rows: t.gcs.length, dom_rows: tb.tBodies[0].rows.length });
    return tb;
  }

  function renderTrace(t, k) {
    var sec = el('section', { 'class': 'trace', id: 'trace-' + k });
    sec.appendChild(el('h2', null, 'Trace: ' + t.path));
    if (t.status === 'unreadable') {
      sec.appendChild(el('p', { 'class': 'error' }, 'Unreadable: ' + (t.error || '')));
      app.appendChild(sec);
      return;
    }
    sec.appendChild(el('p', t.status === 'full' ? null : { 'class': 'note' },
      'Status: ' + (t.status === 'full' ? 'full' : 'partial report (GCs that completed only): ' + (t.error || ''))));
    var s = t.summary;
    if (s.incomplete_gcs) sec.appendChild(el('p', { 'class': 'note' }, s.incomplete_gcs + ' GC(s) started but did not complete (left out)'));
    if (s.discarded_events) sec.appendChild(el('p', { 'class': 'note' }, 'the tracer discarded ' + s.discarded_events + ' event(s)'));
    if (s.discarded_packets) sec.appendChild(el('p', { 'class': 'note' }, s.discarded_packets + ' packet(s) are missing from the trace'));
    sec.appendChild(el('h3', null, 'Summary'));
    sec.appendChild(summaryTable(t));
    var grid = el('div', { 'class': 'charts' });
    sec.appendChild(el('h3', null, 'Charts'));
    sec.appendChild(grid);
    app.appendChild(sec); /* in the document before the charts are made: they size to it */
    heapChart(grid, t, 'heap-' + k);
    pauseTimeline(grid, t, 'pauses-' + k);
    pauseHistogram(grid, t, 'histogram-' + k);
    promotionChart(grid, t, 'promotion-' + k);
    sec.appendChild(el('h3', null, 'GC rollup by generation'));
    sec.appendChild(rollupTable(t));
    sec.appendChild(el('h3', null, 'GC events (MB = 10^6 bytes; click a header to sort)'));
    var wrap = el('div', { 'class': 'scroll' });
    wrap.appendChild(gcTable(t, k));
    sec.appendChild(wrap);
  }

  /* has the canvas any pixel that is not transparent? */
  function drawn(canvas) {
    try {
      var ctx = canvas.getContext('2d');
      var d = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      for (var i = 3; i < d.length; i += 4 * 7) if (d[i] !== 0) return true;
    } catch (e) {
      window.tenureErrors.push('getImageData: ' + e.message);
    }
    return false;
  }

  function selfcheck() {
    var check = {
      traces: data ? data.traces.length : 0,
      charts: charts.map(function (c) {
        return { id: c.canvas.id, width: c.canvas.width, height: c.canvas.height, drawn: drawn(c.canvas) };
      }),
      tables: tables,
      errors: window.tenureErrors.slice()
    };
    var pre = el('pre', { id: 'tenure-selfcheck', hidden: 'hidden' }, JSON.stringify(check));
    document.body.appendChild(pre);
    return check;
  }

  var data = null;
  try {
    if (typeof Chart === 'undefined') throw new Error('the chart library did not load');
    data = JSON.parse(document.getElementById('tenure-data').textContent);
    Chart.defaults.font.size = 11;
    data.traces.forEach(renderTrace);
  } catch (e) {
    window.tenureErrors.push(String(e && e.stack || e));
  }
  var check = selfcheck();
  if (check.errors.length) {
    status.dataset.state = 'error';
    status.textContent = 'Error while drawing the report: ' + check.errors.join('; ');
  } else {
    status.dataset.state = 'ready';
    status.textContent = (data.traces.length === 1 ? '1 trace' : data.traces.length + ' traces') +
      ', written by tenure-report; charts by Chart.js ' + Chart.version + ' (hover for values, click a legend to hide a series)';
  }
})();
