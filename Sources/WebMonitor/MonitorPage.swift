/// The page `plumb-monitor --web` serves: one self-contained HTML document (its script and
/// style inline; no outside scripts, fonts or images), so it works on a bench with no internet.
///
/// What it shows and how it reads the event stream: Sources/WebMonitor/README.md ("The page").
/// Everything it keeps is bounded (a ring of 1024 points for the 30 s plots, 300 for the bias,
/// 20 lines per log), and it draws only in an animation frame when something changed, so it
/// can stay open for days. `tools/scripts/check_web.py` tests it in headless Chromium.
public enum MonitorPage {
  /// The document, UTF-8.
  public static let html: String = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="icon" href="data:,">
    <title>Plumb monitor</title>
    <style>
      :root {
        --bg: #f3f5f8; --panel: #fff; --ink: #1c2430; --muted: #66707c; --line: #dce1e8;
        --roll: #d0453a; --pitch: #2c6fd6; --yaw: #17925a;
        --live: #17925a; --stale: #858c96; --down: #c0392b;
      }
      * { box-sizing: border-box; }
      body {
        margin: 0; font: 14px/1.4 system-ui, sans-serif; background: var(--bg); color: var(--ink);
      }
      header {
        display: flex; flex-wrap: wrap; align-items: center; gap: 8px 14px;
        padding: 10px 16px; background: #1c2430; color: #fff;
      }
      header h1 { font-size: 18px; margin: 0; font-weight: 600; }
      header .source { color: #c5ccd6; font-size: 13px; }
      #state {
        padding: 2px 10px; border-radius: 10px; font-weight: 600; font-size: 13px;
        background: var(--down);
      }
      #state.live { background: var(--live); }
      #state.stale { background: var(--stale); }
      #state-text { color: #e4e8ee; font-size: 13px; }
      main {
        display: grid; gap: 12px; padding: 12px;
        grid-template-columns: repeat(auto-fit, minmax(420px, 1fr));
      }
      body.stale main, body.disconnected main { filter: grayscale(1); opacity: 0.55; }
      section {
        background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
        padding: 10px 12px;
      }
      h2 {
        font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted);
        margin: 0 0 8px; font-weight: 600;
      }
      canvas { display: block; width: 100%; }
      .num { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
      .angles {
        display: flex; flex-wrap: wrap; gap: 6px 22px; margin-top: 8px; align-items: baseline;
      }
      .angle .num { font-size: 26px; font-weight: 600; }
      .angle .label { font-size: 12px; color: var(--muted); display: block; }
      .angle.roll .num { color: var(--roll); }
      .angle.pitch .num { color: var(--pitch); }
      .angle.yaw .num { color: var(--yaw); }
      .small { font-size: 12px; color: var(--muted); }
      .flags { display: flex; flex-wrap: wrap; gap: 6px; }
      .flag {
        display: inline-flex; align-items: center; gap: 6px; padding: 3px 9px 3px 6px;
        border: 1px solid var(--line); border-radius: 12px; font-size: 12px; color: var(--muted);
      }
      .flag::before {
        content: ""; width: 10px; height: 10px; border-radius: 50%; background: #d3d8df;
      }
      .flag.on { color: var(--ink); border-color: #b9c1cc; }
      .flag.on::before { background: #e69b00; box-shadow: 0 0 6px #e69b00; }
      .flag.on.good::before { background: #17925a; box-shadow: 0 0 6px #17925a; }
      .flag.on.info::before { background: #2c6fd6; box-shadow: 0 0 6px #2c6fd6; }
      .flag.on.bad::before { background: #d0453a; box-shadow: 0 0 6px #d0453a; }
      .flag.unknown::before { background: none; border: 1px dashed #aab2bd; }
      .flag.big { font-size: 15px; font-weight: 600; padding: 5px 14px 5px 8px; }
      .flag.big::before { width: 16px; height: 16px; }
      table { border-collapse: collapse; width: 100%; }
      td { padding: 2px 0; vertical-align: baseline; }
      td:last-child { text-align: right; }
      .grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 0 24px; }
      .controls {
        display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 8px;
      }
      button, select, input { font: inherit; padding: 3px 10px; }
      input[type=number] { width: 6em; }
      ol.log {
        list-style: none; margin: 0; padding: 0; max-height: 14em; overflow-y: auto;
        font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px;
      }
      ol.log li { padding: 1px 0; border-bottom: 1px solid #eef1f4; }
      ol.log .ok { color: var(--live); }
      ol.log .err { color: var(--down); }
      ol.log time { color: var(--muted); margin-right: 8px; }
    </style>
    </head>
    <body class="disconnected">
    <header>
      <h1>Plumb</h1>
      <span id="state" class="disconnected">disconnected</span>
      <span id="state-text">connecting to the monitor…</span>
      <span class="source">input <span id="input">—</span> · <span id="version">—</span></span>
    </header>
    <noscript><p>This page needs JavaScript to show the monitor's data.</p></noscript>
    <main>
      <section>
        <h2>Attitude</h2>
        <canvas id="box" width="560" height="400"
          title="The board as a box, rotated by the frame's quaternion (body to reference)">
        </canvas>
        <div class="angles">
          <span class="angle roll">
            <span class="label">roll °</span><span id="roll" class="num">—</span></span>
          <span class="angle pitch">
            <span class="label">pitch °</span><span id="pitch" class="num">—</span></span>
          <span class="angle yaw">
            <span class="label">yaw °</span><span id="yaw" class="num">—</span></span>
          <span class="angle">
            <span class="label">frame</span><span id="seq" class="num">—</span></span>
          <span class="angle">
            <span class="label">t s</span><span id="t" class="num">—</span></span>
        </div>
        <p class="small">
          Box: the quaternion body → reference (reference x = the heading at start, z up); top
          blue, bottom tan, nose red, the arrow is the body's x (forward). Angles: aerospace
          yaw-pitch-roll as ground stations show them (roll right side down, pitch nose up, yaw
          clockwise seen from above, all positive). Without a magnetometer yaw is relative to the
          heading at start and drifts slowly; <code>tare</code> zeroes it.
        </p>
      </section>
      <section>
        <h2>Last 30 s</h2>
        <canvas id="plot" width="560" height="400"
          title="roll, pitch and yaw over the last 30 s of the board's clock"></canvas>
        <p class="small">
          Yaw is drawn unwrapped (no jump at ±180°), so its axis may pass 180°.
        </p>
      </section>
      <section>
        <h2>Flags</h2>
        <div id="flags" class="flags"></div>
        <p id="flags-note" class="small"></p>
        <div class="grid2">
          <table>
            <tr><td>temperature</td><td><span id="temperature" class="num">—</span></td></tr>
            <tr><td>latency (edge → write)</td>
              <td><span id="latency" class="num">—</span></td></tr>
            <tr><td>missed samples</td><td><span id="missed" class="num">—</span></td></tr>
            <tr><td>calibration id</td><td><span id="calibration" class="num">—</span></td></tr>
          </table>
          <table>
            <tr><td>gyro bias x</td><td><span id="bias-x" class="num">—</span></td></tr>
            <tr><td>gyro bias y</td><td><span id="bias-y" class="num">—</span></td></tr>
            <tr><td>gyro bias z</td><td><span id="bias-z" class="num">—</span></td></tr>
            <tr><td>σ of the bias</td>
              <td><span id="bias-sigma" class="num">—</span></td></tr>
            <tr><td>σ of roll, pitch / heading</td>
              <td><span id="attitude-sigma" class="num">—</span></td></tr>
          </table>
        </div>
        <canvas id="bias-plot" width="560" height="110"
          title="the gyro-bias estimate (body axes, °/s), a point every 2 s of the board's clock">
        </canvas>
        <p class="small" title="FORMATS.md, the flags table: headingUncertain">
          Bias: the board's estimate in body axes (°/s), up to the last 10 minutes above.
          <i>binary-imu</i> frames carry the estimator's uncertainties (1σ): the bias's per axis,
          the tilt's and the heading's (since the start or the last tare). Other binary frames
          carry only the <i>headingUncertain</i> flag: it is set while the bias about the
          vertical is not known to 0.1 °/s (1σ), and also for a while after a gap in the samples,
          so "&gt; 0.1 °/s" may mean a recent gap instead.
        </p>
      </section>
      <section>
        <h2>Link</h2>
        <div class="grid2">
          <table>
            <tr><td>format</td><td><span id="format" class="num">—</span></td></tr>
            <tr><td>frame rate</td><td><span id="rate" class="num">—</span></td></tr>
            <tr><td>frames</td><td><span id="frames" class="num">—</span></td></tr>
            <tr><td>lost</td><td><span id="lost" class="num">—</span></td></tr>
            <tr><td>CRC errors</td><td><span id="crc" class="num">—</span></td></tr>
            <tr><td>resyncs</td><td><span id="resyncs" class="num">—</span></td></tr>
            <tr><td>bytes skipped</td><td><span id="skipped" class="num">—</span></td></tr>
          </table>
          <table>
            <tr><td>latency mean</td><td><span id="mean" class="num">—</span></td></tr>
            <tr><td>latency p99</td><td><span id="p99" class="num">—</span></td></tr>
            <tr><td>disconnects</td><td><span id="disconnects" class="num">—</span></td></tr>
            <tr><td>page clients</td><td><span id="clients" class="num">—</span></td></tr>
            <tr><td>events dropped</td><td><span id="dropped" class="num">—</span></td></tr>
            <tr><td>events received</td><td><span id="received" class="num">0</span></td></tr>
          </table>
        </div>
        <h2 style="margin-top: 12px">Commands</h2>
        <div id="commands" hidden>
          <div class="controls">
            <button id="cmd-tare" type="button" title="zero the heading">tare</button>
            <button id="cmd-status" type="button">status</button>
            <select id="cmd-format" title="output format">
              <option>binary</option><option>text</option><option>mavlink</option>
            </select>
            <button id="cmd-format-send" type="button">set format</button>
            <input id="cmd-rate" type="number" min="1" max="1000" step="1" value="100"
              title="output rate, Hz">
            <button id="cmd-rate-send" type="button">set rate</button>
          </div>
        </div>
        <p id="commands-off" class="small">
          Commands are off: start plumb-monitor with <code>--web-commands</code> to send them from
          here.
        </p>
        <ol id="replies" class="log" aria-label="commands and replies"></ol>
        <h2 style="margin-top: 12px">Notices</h2>
        <ol id="notices" class="log" aria-label="notices from the monitor"></ol>
      </section>
    </main>
    <script>
    'use strict';
    (function () {
      // Bounds: everything this page keeps has a fixed size, so it can stay open for days.
      const HISTORY_SECONDS = 30;
      const HISTORY_STEP_SECONDS = 1 / 34; // at most 34 points a second of the board's clock ...
      const HISTORY_CAPACITY = 1024; // ... so 30 s fit in 1024
      const BIAS_STEP_SECONDS = 2;
      const BIAS_CAPACITY = 300; // 10 minutes
      const STALE_MS = 1000;
      const LOG_LIMIT = 20;

      // name, what it means (FORMATS.md §1, the flags table), how its light looks when on
      const FLAGS = [
        ['rest', 'the rest detector says still; the bias is being re-estimated', 'good big'],
        ['gap', 'samples were missed just before this frame', 'bad'],
        ['clipping', 'a raw reading at 98 % of full scale or more', 'bad'],
        ['accelerationRejected',
          'a sustained acceleration is being rejected: the gyro carries the tilt', ''],
        ['recovering', 'the filter is converging again after a gap, reset or fault', ''],
        ['degradedTiming', 'no data-ready edges: polling on a timer', ''],
        ['i2cRecovery', 'the driver is recovering the bus or the chip', 'bad'],
        ['calibrationLoaded', 'a calibration file is loaded', 'info'],
        ['initialising', 'warm-up and first convergence: the attitude is not yet trustworthy', ''],
        ['gimbalLockNear', 'pitch within 5° of ±90°: roll and yaw are ill-conditioned', ''],
        ['headingUncertain', 'the heading is not known as well as the gyro would know it', ''],
      ];

      const $ = (id) => document.getElementById(id);

      /** A fixed-size ring of samples: a time and a few named columns. */
      class Ring {
        constructor(capacity, names) {
          this.capacity = capacity;
          this.names = names;
          this.t = new Float64Array(capacity);
          this.columns = {};
          for (const name of names) this.columns[name] = new Float64Array(capacity);
          this.clear();
        }
        clear() { this.start = 0; this.count = 0; }
        index(k) { return (this.start + k) % this.capacity; }
        lastTime() { return this.count ? this.t[this.index(this.count - 1)] : null; }
        push(t, values) {
          const i = this.index(this.count);
          if (this.count < this.capacity) this.count++;
          else this.start = (this.start + 1) % this.capacity;
          this.t[i] = t;
          for (const name of this.names) this.columns[name][i] = values[name];
        }
      }

      const history = new Ring(HISTORY_CAPACITY, ['roll', 'pitch', 'yaw']);
      const biasHistory = new Ring(BIAS_CAPACITY, ['x', 'y', 'z']);
      let previousYaw = null; // the last frame's yaw, wrapped, and its unwrapped value
      let unwrappedYaw = 0;

      const page = {
        lastFrame: null, framesReceived: 0, state: 'disconnected', boxQuaternion: null,
        historyLength: 0, historyCapacity: HISTORY_CAPACITY, stats: null, hello: null,
        badEvents: 0, connects: 0,
      };
      window.plumbPage = page;

      let connected = false;
      let lastFrameWall = null; // performance.now() when a new frame last arrived
      let stateText = '';
      const dirty = { numbers: false, box: true, plot: true, stats: false, state: true };
      let drawPending = false;

      function schedule() {
        if (!drawPending) {
          drawPending = true;
          requestAnimationFrame(draw);
        }
      }

      // ---- formatting

      const finite = (v) => typeof v === 'number' && isFinite(v);
      function fixed(v, digits) {
        if (!finite(v)) return '—';
        const s = v.toFixed(digits);
        return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
      }
      const withUnit = (v, digits, unit) => (finite(v) ? fixed(v, digits) + ' ' + unit : '—');
      const count = (v) => (finite(v) ? String(v) : '—');
      const wrap180 = (d) => d - 360 * Math.floor((d + 180) / 360);
      function clock() {
        const d = new Date();
        return [d.getHours(), d.getMinutes(), d.getSeconds()]
          .map((n) => String(n).padStart(2, '0')).join(':');
      }
      function addLog(list, text, kind) {
        const item = document.createElement('li');
        const time = document.createElement('time');
        time.textContent = clock();
        item.appendChild(time);
        item.appendChild(document.createTextNode(text));
        if (kind) item.className = kind;
        list.insertBefore(item, list.firstChild);
        while (list.childElementCount > LOG_LIMIT) list.removeChild(list.lastElementChild);
      }

      // ---- the flag lights

      const flagLights = {};
      for (const [name, meaning, look] of FLAGS) {
        const light = document.createElement('span');
        light.className = ('flag ' + look).trim();
        light.dataset.flag = name;
        light.title = meaning;
        light.textContent = name;
        $('flags').appendChild(light);
        flagLights[name] = light;
      }

      // ---- events from the monitor

      function onHello(hello) {
        page.hello = hello;
        $('input').textContent = hello.input || '—';
        $('version').textContent = (hello.tool || 'plumb-monitor') + ' ' + (hello.version || '');
        const commands = hello.commands === true;
        $('commands').hidden = !commands;
        $('commands-off').hidden = commands;
      }

      function onFrame(frame) {
        const last = page.lastFrame;
        const isNew = !last || frame.seq !== last.seq || frame.t !== last.t;
        page.lastFrame = frame;
        page.framesReceived++;
        if (!isNew) return; // the latest frame again, sent to a page that just (re)connected
        lastFrameWall = performance.now();
        remember(frame);
        dirty.numbers = dirty.box = dirty.plot = true;
        updateState();
        schedule();
      }

      function remember(frame) {
        const t = frame.t;
        if (!finite(t)) return;
        const lastT = history.lastTime();
        if (lastT !== null && (t < lastT || t > lastT + 3600)) {
          history.clear(); // the board's clock restarted: a new run
          biasHistory.clear();
          previousYaw = null;
        }
        if (finite(frame.yaw)) {
          unwrappedYaw = previousYaw === null
            ? frame.yaw : unwrappedYaw + wrap180(frame.yaw - previousYaw);
          previousYaw = frame.yaw;
        }
        const since = history.lastTime();
        if (since === null || t - since >= HISTORY_STEP_SECONDS) {
          history.push(t, {
            roll: finite(frame.roll) ? frame.roll : NaN,
            pitch: finite(frame.pitch) ? frame.pitch : NaN,
            yaw: finite(frame.yaw) ? unwrappedYaw : NaN,
          });
          page.historyLength = history.count;
        }
        const bias = frame.biasDps;
        const biasSince = biasHistory.lastTime();
        if (Array.isArray(bias) && (biasSince === null || t - biasSince >= BIAS_STEP_SECONDS)) {
          biasHistory.push(t, { x: bias[0], y: bias[1], z: bias[2] });
        }
      }

      function onStats(stats) {
        page.stats = stats;
        dirty.stats = true;
        schedule();
      }

      function parse(event) {
        try {
          return JSON.parse(event.data);
        } catch (error) {
          page.badEvents++;
          return null;
        }
      }

      let source = null;
      function connect() {
        source = new EventSource('/events');
        source.onopen = () => {
          connected = true;
          page.connects++;
          updateState();
        };
        source.onerror = () => {
          connected = false;
          updateState();
          // The browser retries by itself while the stream is CONNECTING; a CLOSED one (an HTTP
          // error, the wrong type) it gives up on: start again.
          if (source.readyState === EventSource.CLOSED) {
            source.close();
            setTimeout(connect, 2000);
          }
        };
        const on = (name, handler) => source.addEventListener(name, (event) => {
          const data = parse(event);
          if (data && typeof data === 'object') handler(data);
        });
        on('hello', (data) => { connected = true; onHello(data); updateState(); });
        on('frame', onFrame);
        on('stats', onStats);
        on('reply', (data) => addLog($('replies'), data.text || data.status || '?',
          data.status === 'OK' ? 'ok' : 'err'));
        on('notice', (data) => addLog($('notices'), data.text || data.kind || 'notice'));
      }

      // ---- state: live, stale, disconnected

      function updateState() {
        let state;
        let text;
        const now = performance.now();
        if (!connected) {
          state = 'disconnected';
          text = page.connects ? 'monitor not reachable, retrying' : 'connecting to the monitor…';
        } else if (lastFrameWall === null) {
          state = 'stale';
          text = 'connected, waiting for frames';
        } else if (now - lastFrameWall > STALE_MS) {
          state = 'stale';
          text = 'no frames for ' + Math.floor((now - lastFrameWall) / 1000) + ' s';
        } else {
          state = 'live';
          text = 'live';
        }
        if (state !== page.state || text !== stateText) {
          page.state = state;
          stateText = text;
          dirty.state = true;
          schedule();
        }
      }
      setInterval(updateState, 250);

      // ---- commands

      async function send(command) {
        addLog($('replies'), '→ ' + command);
        try {
          const answer = await fetch('/command', {
            method: 'POST', cache: 'no-store', body: command,
            headers: { 'X-Plumb-Command': '1', 'Content-Type': 'text/plain' },
          });
          if (answer.status !== 202) {
            const why = (await answer.text()).trim().slice(0, 160);
            addLog($('replies'), command + ': refused, HTTP ' + answer.status + ' ' + why, 'err');
          }
        } catch (error) {
          addLog($('replies'), command + ': not sent (' + error.message + ')', 'err');
        }
      }
      $('cmd-tare').addEventListener('click', () => send('tare'));
      $('cmd-status').addEventListener('click', () => send('status'));
      $('cmd-format-send').addEventListener('click', () => send('format ' + $('cmd-format').value));
      $('cmd-rate-send').addEventListener('click', () => {
        const hz = Number($('cmd-rate').value);
        if (Number.isInteger(hz) && hz >= 1 && hz <= 1000) send('rate ' + hz);
        else addLog($('replies'), 'rate: give a whole number of Hz, 1 to 1000', 'err');
      });

      // ---- drawing (only in an animation frame, and only what changed)

      function draw() {
        drawPending = false;
        if (dirty.state) {
          dirty.state = false;
          $('state').textContent = page.state;
          $('state').className = page.state;
          document.body.className = page.state;
          $('state-text').textContent = stateText;
        }
        if (dirty.numbers) {
          dirty.numbers = false;
          drawNumbers(page.lastFrame);
        }
        if (dirty.stats) {
          dirty.stats = false;
          drawStats(page.stats);
        }
        if (dirty.box) {
          dirty.box = false;
          drawBox();
        }
        if (dirty.plot) {
          dirty.plot = false;
          drawPlot();
          drawBiasPlot();
        }
        $('received').textContent = String(page.framesReceived);
      }

      function drawNumbers(f) {
        if (!f) return;
        $('seq').textContent = count(f.seq);
        $('t').textContent = fixed(f.t, 2);
        $('roll').textContent = fixed(f.roll, 1);
        $('pitch').textContent = fixed(f.pitch, 1);
        $('yaw').textContent = fixed(f.yaw, 1);
        $('temperature').textContent = withUnit(f.temperature, 1, '°C');
        $('latency').textContent = withUnit(f.latencyMs, 2, 'ms');
        $('missed').textContent = count(f.missed);
        $('calibration').textContent = finite(f.calibrationId)
          ? (f.calibrationId === 0 ? 'none' : f.calibrationId.toString(16).padStart(8, '0'))
          : '—';
        const bias = Array.isArray(f.biasDps) ? f.biasDps : [null, null, null];
        ['x', 'y', 'z'].forEach((axis, i) => {
          $('bias-' + axis).textContent = withUnit(bias[i], 3, '°/s');
        });
        const flags = Array.isArray(f.flags) ? f.flags : null;
        for (const [name] of FLAGS) {
          const light = flagLights[name];
          light.classList.toggle('on', !!flags && flags.includes(name));
          light.classList.toggle('unknown', !flags);
        }
        $('flags-note').textContent = flags ? ''
          : 'Frames in the ' + (f.format || 'input')
            + ' format carry no flags, temperature or bias.';
        const sigma = f.sigma && typeof f.sigma === 'object' ? f.sigma : null;
        if (sigma && Array.isArray(sigma.biasDps)) {
          $('bias-sigma').textContent = sigma.biasDps
            .map((v) => (finite(v) ? v.toFixed(3) : '?')).join(' ') + ' °/s';
          $('attitude-sigma').textContent = withUnit(sigma.tiltDeg, 2, '°') + ' / '
            + withUnit(sigma.headingDeg, 1, '°');
        } else {
          $('bias-sigma').textContent = !flags ? '—'
            : flags.includes('headingUncertain') ? '> 0.1 °/s (heading uncertain)' : '≤ 0.1 °/s';
          $('attitude-sigma').textContent = '—';
        }
      }

      function drawStats(s) {
        if (!s) return;
        const server = s.server || {};
        $('format').textContent = s.format || '—';
        $('rate').textContent = withUnit(s.rateHz, 1, 'Hz');
        $('frames').textContent = count(s.frames);
        $('lost').textContent = count(s.lost);
        $('crc').textContent = count(s.crcErrors);
        $('resyncs').textContent = count(s.resyncs);
        $('skipped').textContent = count(s.bytesSkipped);
        $('mean').textContent = withUnit(s.latencyMeanMs, 2, 'ms');
        $('p99').textContent = withUnit(s.latencyP99Ms, 2, 'ms');
        $('disconnects').textContent = count(s.disconnects);
        $('clients').textContent = count(server.clients);
        $('dropped').textContent = count(server.eventsDropped);
      }

      /** Sizes a canvas's bitmap to its shown size; returns its context in CSS pixels. */
      function context2d(canvas, aspect) {
        const ratio = window.devicePixelRatio || 1;
        const width = canvas.clientWidth || canvas.width;
        const height = Math.round(width * aspect);
        const bitmapWidth = Math.round(width * ratio);
        const bitmapHeight = Math.round(height * ratio);
        if (canvas.width !== bitmapWidth || canvas.height !== bitmapHeight) {
          canvas.width = bitmapWidth;
          canvas.height = bitmapHeight;
          canvas.style.height = height + 'px';
        }
        const ctx = canvas.getContext('2d');
        ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
        ctx.clearRect(0, 0, width, height);
        return { ctx, width, height };
      }

      // ---- the box: a 2D projection of the reference frame (x = heading at start, y left, z up)

      const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
      const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0]];
      const normalised = (a) => {
        const n = Math.hypot(a[0], a[1], a[2]);
        return a.map((v) => v / n);
      };
      const minus = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
      const CAMERA = [-2.4, -4.2, 2.7]; // from behind the right side, above
      const TARGET = [0, 0, -0.6];
      const FORWARD = normalised(minus(TARGET, CAMERA));
      const RIGHT = normalised(cross(FORWARD, [0, 0, 1]));
      const UP = cross(RIGHT, FORWARD);
      const LIGHT = normalised([0.3, -0.6, 1]);
      const GROUND = -1.3;
      const BOARD = [1.9, 1.2, 0.18]; // length (x), width (y), thickness (z)
      const FACES = [ // body normal, vertex indices (bit 0: +x, bit 1: +y, bit 2: +z), colour
        [[1, 0, 0], [1, 3, 7, 5], [208, 69, 58]],
        [[-1, 0, 0], [0, 4, 6, 2], [150, 156, 165]],
        [[0, 1, 0], [2, 6, 7, 3], [196, 202, 210]],
        [[0, -1, 0], [0, 1, 5, 4], [176, 183, 192]],
        [[0, 0, 1], [4, 5, 7, 6], [64, 120, 205]],
        [[0, 0, -1], [0, 2, 3, 1], [196, 160, 110]],
      ];

      /** The rotation matrix of q = (w, x, y, z), body → reference. */
      function matrix(q) {
        const [w, x, y, z] = q;
        return [
          [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
          [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
          [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ];
      }
      const rotate = (m, v) => [dot(m[0], v), dot(m[1], v), dot(m[2], v)];

      function drawBox() {
        const { ctx, width, height } = context2d($('box'), 0.72);
        const focal = 1.02 * width;
        const project = (p) => {
          const d = minus(p, CAMERA);
          const scale = focal / dot(d, FORWARD);
          return [0.47 * width + scale * dot(d, RIGHT), 0.5 * height - scale * dot(d, UP)];
        };
        const line = (a, b, colour, lineWidth, dash) => {
          const p = project(a);
          const r = project(b);
          ctx.strokeStyle = colour;
          ctx.lineWidth = lineWidth;
          ctx.setLineDash(dash || []);
          ctx.beginPath();
          ctx.moveTo(p[0], p[1]);
          ctx.lineTo(r[0], r[1]);
          ctx.stroke();
          ctx.setLineDash([]);
        };
        const arrow = (a, b, colour, lineWidth, label, dash) => {
          line(a, b, colour, lineWidth, dash);
          const p = project(a);
          const r = project(b);
          const angle = Math.atan2(r[1] - p[1], r[0] - p[0]);
          const size = 5 + 2 * lineWidth;
          ctx.fillStyle = colour;
          ctx.beginPath();
          ctx.moveTo(r[0], r[1]);
          ctx.lineTo(r[0] - size * Math.cos(angle - 0.4), r[1] - size * Math.sin(angle - 0.4));
          ctx.lineTo(r[0] - size * Math.cos(angle + 0.4), r[1] - size * Math.sin(angle + 0.4));
          ctx.closePath();
          ctx.fill();
          if (label) {
            const x = r[0] + 6 * Math.cos(angle) + 3;
            const y = r[1] + 8 * Math.sin(angle) + 4;
            labels.push([label, colour, x, y]);
          }
        };
        const labels = []; // drawn last, over the board
        const polygon = (points, fill, stroke) => {
          ctx.beginPath();
          points.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
          ctx.closePath();
          ctx.fillStyle = fill;
          ctx.fill();
          if (stroke) {
            ctx.strokeStyle = stroke;
            ctx.lineWidth = 1;
            ctx.stroke();
          }
        };

        // the ground: the horizontal plane of the reference frame
        for (let k = -4; k <= 4; k++) {
          const c = k * 0.4;
          line([c, -1.6, GROUND], [c, 1.6, GROUND], '#dde2e8', 1);
          line([-1.6, c, GROUND], [1.6, c, GROUND], '#dde2e8', 1);
        }
        arrow([0, 0, GROUND], [2.0, 0, GROUND], '#8f2f27', 2, 'x: heading at start');
        arrow([0, 0, GROUND], [0, 1.8, GROUND], '#1f6e46', 2, 'y');
        arrow([-1.6, 1.6, GROUND], [-1.6, 1.6, GROUND + 1.5], '#2b4f8f', 2, 'up (z)');

        const frame = page.lastFrame;
        let q = frame && Array.isArray(frame.q) && frame.q.length === 4 && frame.q.every(finite)
          ? frame.q : null;
        const norm = q ? Math.hypot(q[0], q[1], q[2], q[3]) : 0;
        q = norm > 0.5 ? q.map((v) => v / norm) : null;
        page.boxQuaternion = q;
        const m = matrix(q || [1, 0, 0, 0]);
        const half = BOARD.map((v) => v / 2);
        const vertices = [];
        for (let i = 0; i < 8; i++) {
          vertices.push(rotate(m, [i & 1 ? half[0] : -half[0], i & 2 ? half[1] : -half[1],
            i & 4 ? half[2] : -half[2]]));
        }

        // its shadow on the ground, and where its nose points now
        const shadow = hull(vertices.map((v) => project([v[0], v[1], GROUND])));
        polygon(shadow, 'rgba(28, 36, 48, 0.10)');
        const nose = rotate(m, [1, 0, 0]);
        const level = Math.hypot(nose[0], nose[1]);
        if (level > 0.15) {
          const heading = [1.5 * nose[0] / level, 1.5 * nose[1] / level, GROUND];
          arrow([0, 0, GROUND], heading, '#555d69', 1.5, 'heading now', [5, 4]);
        }

        // the board: the faces that look at the camera (a box is convex), lit from above
        const visible = (normal, centre) => dot(normal, minus(CAMERA, centre)) > 0;
        const noseFace = rotate(m, [half[0], 0, 0]);
        const noseVisible = visible(nose, noseFace);
        const noseTip = rotate(m, [half[0] + 0.55, 0, 0]);
        if (!noseVisible) arrow(noseFace, noseTip, '#8f2f27', 3);
        for (const [bodyNormal, indices, colour] of FACES) {
          const normal = rotate(m, bodyNormal);
          const centre = rotate(m, bodyNormal.map((v, i) => v * half[i]));
          if (!visible(normal, centre)) continue;
          const shade = 0.62 + 0.38 * Math.max(0, dot(normal, LIGHT));
          const rgb = colour.map((c) => Math.round(c * shade));
          const corners = indices.map((i) => project(vertices[i]));
          polygon(corners, 'rgb(' + rgb.join(',') + ')', '#2a3240');
          if (bodyNormal[2] !== 0) {
            // the forward arrow on the top (or bottom) face
            const z = bodyNormal[2] * (half[2] + 0.001);
            const body = [[-0.55, 0], [0.25, 0], [0.25, 0.09], [0.6, 0], [0.25, -0.09], [0.25, 0]];
            const shaft = body.map(([x, y]) => project(rotate(m, [x * half[0] * 1.5, y * 1.5, z])));
            polygon(shaft, '#ffffff', '#ffffff');
          }
        }
        if (noseVisible) arrow(noseFace, noseTip, '#8f2f27', 3, 'x');

        ctx.font = '12px system-ui, sans-serif';
        for (const [text, colour, x, y] of labels) {
          ctx.fillStyle = colour;
          ctx.fillText(text, x, y);
        }
        ctx.fillStyle = '#66707c';
        ctx.font = '12px ui-monospace, monospace';
        const caption = q ? 'q = [' + q.map((v) => fixed(v, 3)).join(', ') + ']'
          : 'no attitude yet';
        ctx.fillText(caption, 8, 16);
      }

      /** The convex hull of 2D points (Andrew's monotone chain). */
      function hull(points) {
        const p = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        const turn = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
        const chain = (points) => {
          const kept = [];
          for (const point of points) {
            while (kept.length >= 2
              && turn(kept[kept.length - 2], kept[kept.length - 1], point) <= 0) {
              kept.pop();
            }
            kept.push(point);
          }
          return kept.slice(0, -1);
        };
        return chain(p).concat(chain(p.slice().reverse()));
      }

      // ---- plots

      /** A tick step of 1, 2 or 5 × 10^n giving about `count` ticks over `span`. */
      function tickStep(span, count) {
        const raw = span / count;
        const power = Math.pow(10, Math.floor(Math.log10(raw)));
        const unit = raw / power;
        return power * (unit < 1.5 ? 1 : unit < 3.5 ? 2 : unit < 7.5 ? 5 : 10);
      }

      /**
       * Draws the columns of `ring` from `t0` to `t1` in the box `area`, one trace each; points
       * more than `breakAfter` seconds apart are not joined (the stream paused).
       */
      function strip(ctx, ring, traces, area, t0, t1, minimumSpan, breakAfter, title) {
        const [left, top, w, h] = area;
        let low = Infinity;
        let high = -Infinity;
        for (let k = 0; k < ring.count; k++) {
          const i = ring.index(k);
          if (ring.t[i] < t0) continue;
          for (const [name] of traces) {
            const v = ring.columns[name][i];
            if (isFinite(v)) { low = Math.min(low, v); high = Math.max(high, v); }
          }
        }
        if (!isFinite(low)) { low = -minimumSpan / 2; high = minimumSpan / 2; }
        if (high - low < minimumSpan) {
          const middle = (high + low) / 2;
          low = middle - minimumSpan / 2;
          high = middle + minimumSpan / 2;
        }
        const pad = (high - low) * 0.08;
        low -= pad;
        high += pad;
        const x = (t) => left + (t - t0) / (t1 - t0) * w;
        const y = (v) => top + (high - v) / (high - low) * h;

        ctx.strokeStyle = '#e6e9ee';
        ctx.fillStyle = '#66707c';
        ctx.lineWidth = 1;
        ctx.font = '11px ui-monospace, monospace';
        ctx.textAlign = 'right';
        const step = tickStep(high - low, 3);
        for (let v = Math.ceil(low / step) * step; v <= high; v += step) {
          ctx.beginPath();
          ctx.moveTo(left, y(v));
          ctx.lineTo(left + w, y(v));
          ctx.stroke();
          const digits = step < 0.01 ? 3 : step < 0.1 ? 2 : step < 1 ? 1 : 0;
          ctx.fillText(fixed(v, digits), left - 4, y(v) + 4);
        }
        ctx.strokeStyle = '#c4cbd4';
        ctx.strokeRect(left, top, w, h);

        ctx.save();
        ctx.beginPath();
        ctx.rect(left, top, w, h);
        ctx.clip();
        for (const [name, colour] of traces) {
          const column = ring.columns[name];
          ctx.strokeStyle = colour;
          ctx.lineWidth = 1.6;
          ctx.beginPath();
          let previous = null;
          for (let k = 0; k < ring.count; k++) {
            const i = ring.index(k);
            const t = ring.t[i];
            const v = column[i];
            if (t < t0 || !isFinite(v)) { previous = null; continue; }
            if (previous === null || t - previous > breakAfter) ctx.moveTo(x(t), y(v));
            else ctx.lineTo(x(t), y(v));
            previous = t;
          }
          ctx.stroke();
        }
        ctx.restore();
        ctx.textAlign = 'left';
        ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
        ctx.fillRect(left + 1, top + 1, ctx.measureText(title).width + 8, 15);
        ctx.fillStyle = '#66707c';
        ctx.fillText(title, left + 4, top + 12);
      }

      function drawPlot() {
        const { ctx, width, height } = context2d($('plot'), 0.72);
        const t1 = history.lastTime();
        const left = 44;
        const w = width - left - 8;
        const gap = 10;
        const h = (height - 24 - 2 * gap) / 3;
        const t0 = t1 === null ? -HISTORY_SECONDS : t1 - HISTORY_SECONDS;
        const end = t1 === null ? 0 : t1;
        const rows = [
          ['roll', '--roll', 'roll °'], ['pitch', '--pitch', 'pitch °'],
          ['yaw', '--yaw', 'yaw ° (unwrapped)'],
        ];
        const style = getComputedStyle(document.documentElement);
        rows.forEach(([name, colour, title], row) => {
          strip(ctx, history, [[name, style.getPropertyValue(colour).trim()]],
            [left, 4 + row * (h + gap), w, h], t0, end, 10, 0.5, title);
        });
        ctx.fillStyle = '#66707c';
        ctx.font = '11px ui-monospace, monospace';
        ctx.textAlign = 'center';
        for (let s = 0; s <= HISTORY_SECONDS; s += 5) {
          const label = s === 0 ? 'now' : '−' + s + ' s';
          ctx.fillText(label, left + w - s / HISTORY_SECONDS * w, height - 6);
        }
        ctx.textAlign = 'left';
      }

      function drawBiasPlot() {
        const { ctx, width, height } = context2d($('bias-plot'), 0.2);
        const t1 = biasHistory.lastTime();
        const end = t1 === null ? 0 : t1;
        const first = biasHistory.count ? biasHistory.t[biasHistory.index(0)] : end;
        // the span of what is kept, at least a minute (at most 10, the ring's size)
        const span = Math.max(60, end - first);
        strip(ctx, biasHistory, [['x', '#d0453a'], ['y', '#17925a'], ['z', '#2c6fd6']],
          [44, 4, width - 52, height - 10], end - span, end, 0.2, 3 * BIAS_STEP_SECONDS,
          'bias °/s over the last ' + Math.round(span / 60) + ' min: x red, y green, z blue');
      }

      window.addEventListener('resize', () => {
        dirty.box = dirty.plot = true;
        schedule();
      });
      connect();
      updateState();
      schedule();
    })();
    </script>
    </body>
    </html>
    """#
}
