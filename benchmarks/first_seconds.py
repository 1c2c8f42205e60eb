r"""A first run's first seconds as a timeline: imports, build, data, each program's
compile (and in which thread), the first chunk of steps.

  python benchmarks/first_seconds.py                      # Bi-LSTM SST-2, 10 seeds
  python benchmarks/first_seconds.py --config=experiments/demo.py:quick --seeds=1,2

A child process runs ``seedsweep --mode=train`` (seedsweep.cli, as a user does) with
an empty compilation cache and ``JAX_LOG_COMPILES=1``, pinned to ``--cores``. It
times the top-level packages it imports (a meta-path hook), the run's pieces (the
functions below wrapped in place, nothing in the library changed) and, from jax's
log lines, each program's tracing, lowering and XLA compile with the thread that
ran it. It stops once the first chunk of steps has ended (or after ``--seconds``).
Writes ``first_seconds_<date>_<label>.json`` and ``.md`` (a table and a text
timeline) under ``--out``. Wall seconds follow the machine's load; the overlap
(what runs in which thread while what else runs) is what the timeline shows.
"""
import argparse
import datetime
import importlib.abc
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = 'experiments/bilstm.py:sst/binary'
T0_VARIABLE = 'FIRST_SECONDS_T0'
# jax's messages under jax_log_compiles: (phase, program, seconds).
JAX_LINES = (
    ('trace', re.compile(r'Finished tracing (\S+) for jit in ([\d.]+) s')),
    ('lower', re.compile(r'Finished jaxpr to MLIR module conversion jit\((\S+)\) in '
                         r'([\d.]+) s')),
    ('compile', re.compile(r'Finished XLA compilation of jit\((\S+)\) in ([\d.]+) s')),
)


# ----------------------------------------------------------------------- the child

class _Recorder:
  """Events ``{name, kind, thread, start, end}`` in seconds since the process was
  spawned (the parent's clock, passed in the environment)."""

  def __init__(self, t0: float):
    self.t0, self.events, self.lock = t0, [], threading.Lock()

  def now(self) -> float:
    return time.time() - self.t0

  def add(self, name: str, kind: str, start: float, end: float) -> None:
    with self.lock:
      self.events.append({'name': name, 'kind': kind, 'start': round(start, 3),
                          'end': round(end, 3),
                          'thread': threading.current_thread().name,
                          'process_cpu': round(time.process_time(), 2)})

  def wrap(self, owner, attr: str, name: str, kind: str = 'run'):
    """``owner.attr`` timed as ``name`` at every call."""
    fn = getattr(owner, attr)

    def timed(*args, **kwargs):
      start = self.now()
      try:
        return fn(*args, **kwargs)
      finally:
        self.add(name, kind, start, self.now())

    setattr(owner, attr, timed)


class _ImportTimer(importlib.abc.MetaPathFinder):
  """Times each top-level package's first import (its submodules included)."""

  def __init__(self, rec: _Recorder):
    self.rec, self.busy = rec, False

  def find_spec(self, name, path, target=None):
    if '.' in name or self.busy:
      return None
    self.busy = True
    try:
      import importlib.util  # pylint: disable=g-import-not-at-top
      spec = importlib.util.find_spec(name)
    finally:
      self.busy = False
    if spec is None or spec.loader is None or not hasattr(spec.loader, 'exec_module'):
      return spec
    loader, rec = spec.loader, self.rec
    exec_module = loader.exec_module

    def timed_exec(module):
      start = rec.now()
      try:
        exec_module(module)
      finally:
        if rec.now() - start >= 0.02:
          rec.add(f'import {name}', 'import', start, rec.now())

    try:
      loader.exec_module = timed_exec
    except (AttributeError, TypeError):
      return spec
    return spec


def _instrument(rec: _Recorder, stop_after_first_chunk: bool, out: str) -> None:
  """Wraps the run's pieces once ``seedsweep.run.loop`` has been imported."""
  from seedsweep import data as data_lib  # pylint: disable=g-import-not-at-top
  rec.wrap(data_lib, 'load_dataset', 'data: load_dataset', 'data')
  try:  # the run as values and phases (since 2026-12-04)
    from seedsweep.run import epoch  # pylint: disable=g-import-not-at-top
    from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
    built, phases, record = pieces, epoch, (epoch, 'determinism')
    rec.wrap(pieces.Pieces, 'init_state', 'init_state', 'init')
  except ImportError:  # an older checkout: the Experiment class
    from seedsweep.run import experiment  # pylint: disable=g-import-not-at-top
    from seedsweep.run import workdir  # pylint: disable=g-import-not-at-top
    built, phases, record = experiment, experiment.Experiment, (workdir,
                                                                'record_program')
    rec.wrap(experiment.Experiment, 'init_state', 'init_state', 'init')
  rec.wrap(built, 'build', 'build (all)', 'build')
  rec.wrap(built, 'make_learner', 'build: model + optimiser', 'build')
  rec.wrap(built, 'put_on_device', 'data: put on device', 'data')
  rec.wrap(*record, 'the program record (train HLO)', 'init')
  rec.wrap(phases, 'train_steps', 'train_steps (epoch)', 'train')
  ahead = sys.modules.get('seedsweep.run.ahead')
  if ahead is not None:
    rec.wrap(ahead, 'start', 'ahead: start', 'ahead')
    rec.wrap(ahead, 'abstract_state', 'ahead: the state\'s shapes', 'ahead')
    rec.wrap(ahead.Ahead, 'wait_train', 'ahead: wait for the train programs', 'ahead')
  sizes = getattr(phases, 'ChunkSizes', None) or built.ChunkSizes
  ended = sizes.ended
  first = []

  def ended_once(self, cursor, steps):
    ended(self, cursor, steps)
    if not first:
      first.append(rec.now())
      rec.add('first chunk ended', 'mark', first[0], first[0])
      if stop_after_first_chunk:
        _dump(rec, out)
        os._exit(0)  # pylint: disable=protected-access

  sizes.ended = ended_once


class _JaxLog:
  """jax's compile log lines as events (their end and duration; the thread)."""

  def __init__(self, rec: _Recorder):
    import logging  # pylint: disable=g-import-not-at-top
    rec_ = rec

    class Handler(logging.Handler):
      def emit(self, record):
        message = record.getMessage()
        for phase, pattern in JAX_LINES:
          match = pattern.search(message)
          if match:
            end = record.created - rec_.t0
            with rec_.lock:
              rec_.events.append({
                  'name': f'{phase} {match[1]}', 'kind': phase,
                  'start': round(end - float(match[2]), 3), 'end': round(end, 3),
                  'thread': record.threadName})
    logging.getLogger('jax').addHandler(Handler(logging.DEBUG))


def _dump(rec: _Recorder, out: str) -> None:
  with rec.lock:
    events = sorted(rec.events, key=lambda e: (e['start'], e['end']))
  with open(out, 'w') as f:
    json.dump({'events': events}, f)


def child(args) -> None:
  """Runs the train command in this process, instrumented; writes ``args.events``."""
  rec = _Recorder(float(os.environ[T0_VARIABLE]))
  sys.path.insert(0, args.checkout)
  rec.add('python started', 'mark', rec.now(), rec.now())
  sys.meta_path.insert(0, _ImportTimer(rec))
  _JaxLog(rec)
  started = rec.now()
  from seedsweep import cli  # pylint: disable=g-import-not-at-top
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top,unused-import
  rec.add('imports (cli + run.loop)', 'import', started, rec.now())
  _instrument(rec, not args.whole, args.events)
  timer = threading.Timer(args.seconds, lambda: (_dump(rec, args.events), os._exit(0)))
  timer.daemon = True
  timer.start()
  sys.argv = ['seedsweep', f'--config={args.config}',
              f'--config.seeds=({args.seeds},)', '--config.train.num_epochs=1',
              '--config.train.progress=False', f'--workdir={args.workdir}']
  try:
    cli.run()
  except SystemExit:
    pass
  _dump(rec, args.events)


# ---------------------------------------------------------------------- the parent

def run_child(args, tmp: str) -> dict:
  """The events of one instrumented first run (an empty cache in ``tmp``)."""
  sys.path.insert(0, REPO)
  from benchmarks import compare  # pylint: disable=g-import-not-at-top
  events = os.path.join(tmp, 'events.json')
  env = dict(os.environ, **compare.framework_env(os.path.join(tmp, 'cache')),
             JAX_LOG_COMPILES='1', SEEDSWEEP_NO_REEXEC='1')
  env[T0_VARIABLE] = repr(time.time())
  argv = [sys.executable, os.path.abspath(__file__), '--child', f'--events={events}',
          f'--config={args.config}', f'--seeds={args.seeds}',
          f'--seconds={args.seconds}', f'--workdir={os.path.join(tmp, "run")}',
          f'--checkout={args.checkout}']
  if args.whole:
    argv.append('--whole')
  cores = {int(c) for c in args.cores.split(',')} if args.cores else None
  proc = subprocess.run(argv, cwd=args.checkout, env=env, capture_output=True, text=True,
                        check=False, preexec_fn=(lambda: os.sched_setaffinity(0, cores))
                        if cores else None)
  if not os.path.exists(events):
    raise RuntimeError(f'child failed ({proc.returncode}):\n{proc.stderr[-3000:]}')
  with open(events) as f:
    return json.load(f)


COMPILING = ('trace', 'lower', 'compile')


def lanes(events):
  """The timeline's rows ``(label, [events])``: the imports, the main thread's run
  pieces and its compiling (trace, lower, XLA), then each other thread's."""
  rows = {}
  for e in events:
    if e['kind'] == 'mark':
      continue
    if e['kind'] == 'import':
      key = 'imports'
    elif e['kind'] in COMPILING:
      key = f'{e["thread"]}: compiling'
    else:
      key = f'{e["thread"]}: run'
    rows.setdefault(key, []).append(e)
  first = ('imports', 'MainThread: run', 'MainThread: compiling')
  return sorted(rows.items(), key=lambda kv: (first.index(kv[0]) if kv[0] in first
                                              else len(first), kv[0]))


GLYPH = {'compile': '#', 'trace': '-', 'lower': '-', 'import': 'i'}


def text_timeline(events, width: int = 72) -> str:
  """A row of characters per lane, one column per ``end / width`` seconds; the
  marks (python started, the first chunk ended) below."""
  end = max(e['end'] for e in events)
  scale = width / end
  out = [f'{"":24s}0 s{"":{width - 8}s}{end:.0f} s']
  for label, row in lanes(events):
    line = [' '] * width
    for e in sorted(row, key=lambda e: e['kind'] == 'compile'):  # XLA on top
      a = min(width - 1, int(e['start'] * scale))
      b = max(a + 1, min(width, int(round(e['end'] * scale))))
      for i in range(a, b):
        line[i] = GLYPH.get(e['kind'], '=')
    out.append(f'{label[:23]:24s}{"".join(line)}')
  for m in (e for e in events if e['kind'] == 'mark'):
    out.append(f'{m["name"][:23]:24s}{" " * min(width - 1, int(m["start"] * scale))}|'
               f' {m["start"]:.1f} s')
  return '\n'.join(out)


def compiles(events):
  """``{program: {'count', 'xla_s', 'threads'}}``: each program's XLA compiles."""
  out = {}
  for e in events:
    if e['kind'] == 'compile':
      p = out.setdefault(e['name'].split(' ', 1)[1], {'count': 0, 'xla_s': 0.0,
                                                      'threads': []})
      p['count'] += 1
      p['xla_s'] = round(p['xla_s'] + e['end'] - e['start'], 2)
      if e['thread'] not in p['threads']:
        p['threads'].append(e['thread'])
  return out


def overlap(events):
  """``(span s, XLA s, CPU s)``: from the end of the build to the first chunk's end,
  the XLA compile seconds inside that span summed over threads, and the process's
  CPU seconds in it (None where not recorded); None before a first chunk ended."""
  built = [e['end'] for e in events if e['name'] == 'build (all)']
  first = [e['start'] for e in events if e['name'] == 'first chunk ended']
  if not built or not first:
    return None
  a, b = built[0], first[0]
  cpu = [e.get('process_cpu') for e in events
         if e['name'] in ('build (all)', 'first chunk ended')]
  xla = sum(max(0.0, min(e['end'], b) - max(e['start'], a))
            for e in events if e['kind'] == 'compile')
  return b - a, xla, (cpu[1] - cpu[0] if None not in cpu and len(cpu) == 2 else None)


def markdown(result: dict) -> str:
  events = result['events']
  first = [e['start'] for e in events if e['name'] == 'first chunk ended']
  span = overlap(events)
  lines = [f'# A first run\'s first seconds, {result["date"]} ({result["label"]})', '',
           f'`{result["command"]}`; {result["machine"]}', '',
           f'The first chunk of steps ended {first[0]:.1f} s after the process was '
           'spawned.' if first else 'The first chunk of steps had not ended.', '']
  if span:
    cpu = (f'; the process used {span[2]:.1f} CPU s in it ({span[2] / span[0]:.2f} '
           'cores on average)' if span[2] is not None else '')
    lines += [f'From the end of the build to then: {span[0]:.1f} s, holding '
              f'{span[1]:.1f} s of XLA compiling summed over threads '
              f'({span[1] / span[0]:.2f} compiles at once on average){cpu}.', '']
  lines += [
           '| program | XLA compiles | XLA s (summed) | threads |',
           '| --- | ---: | ---: | --- |']
  for name, p in sorted(compiles(events).items(), key=lambda kv: -kv[1]['xla_s']):
    lines.append(f'| {name} | {p["count"]} | {p["xla_s"]:.1f} | '
                 f'{", ".join(p["threads"])} |')
  lines += ['', '```', text_timeline(events), '```', '',
            '`#`: XLA compiling; `-`: tracing and lowering; `=`: a piece of the run '
            '(build, data, init_state, the program record, train_steps); `i`: an import.',
            '', '| s from spawn | until | seconds | thread | what |',
            '| ---: | ---: | ---: | --- | --- |']
  for e in events:
    short = e['end'] - e['start'] < (0.05 if e['kind'] == 'compile' else 0.1)
    if e['kind'] != 'mark' and e['kind'] not in ('run', 'build', 'data', 'init',
                                                   'train', 'ahead') and short:
      continue
    lines.append(f'| {e["start"]:.2f} | {e["end"]:.2f} | {e["end"] - e["start"]:.2f} | '
                 f'{e["thread"]} | {e["name"]} |')
  return '\n'.join(lines) + '\n'


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default=CONFIG)
  parser.add_argument('--seeds', default='1,2,3,4,5,6,7,8,9,10')
  parser.add_argument('--cores', default='', help='e.g. 0,1 (default: unpinned)')
  parser.add_argument('--seconds', type=float, default=300.0,
                      help='the child stops after this long whatever it reached')
  parser.add_argument('--whole', action='store_true',
                      help='go on to the end of the epoch (default: stop after the '
                           'first chunk of steps)')
  parser.add_argument('--label', default='now')
  parser.add_argument('--out', default=os.path.join(REPO, 'benchmarks', 'results'))
  parser.add_argument('--checkout', default=REPO,
                      help='the seedsweep checkout to run (another worktree: a '
                           'profile before a change)')
  parser.add_argument('--render', default='',
                      help="a result's .json: write its .md again, run nothing")
  parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
  parser.add_argument('--events', help=argparse.SUPPRESS)
  parser.add_argument('--workdir', help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    child(args)
    return
  if args.render:
    with open(args.render) as f:
      text = markdown(json.load(f))
    with open(args.render[:-len('.json')] + '.md', 'w') as f:
      f.write(text)
    print(text)
    return
  sys.path.insert(0, REPO)
  from benchmarks import compare  # pylint: disable=g-import-not-at-top
  with tempfile.TemporaryDirectory() as tmp:
    result = run_child(args, tmp)
  date = datetime.date.today().isoformat()
  result.update(date=date, label=args.label, machine=compare.machine(),
                command=' '.join(['python benchmarks/first_seconds.py'] + sys.argv[1:]))
  os.makedirs(args.out, exist_ok=True)
  stem = os.path.join(args.out, f'first_seconds_{date}_{args.label}')
  with open(stem + '.json', 'w') as f:
    json.dump(result, f, indent=1)
  text = markdown(result)
  with open(stem + '.md', 'w') as f:
    f.write(text)
  print(text)


if __name__ == '__main__':
  main()
