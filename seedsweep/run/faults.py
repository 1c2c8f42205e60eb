"""Named moments of a run, where the fault-injection tests signal it.

``$SEEDSWEEP_FAULT=<moment>[:<n>][@<SIGNAL>]`` makes the process send itself the
signal (``KILL`` by default: a real ``kill -9``) the ``n``-th time (default 1) it
reaches ``moment``: an instant a test cannot hit by timing alone
(tests/test_faults.py). It first writes ``fault: SIG<NAME> at <moment>:<n>`` on
stderr, so a test can tell where it happened. Unset (always, outside those tests) a
moment costs one environment lookup.

Moments: ``build``, ``step`` (after a train step is dispatched, in training: a
chunk's steps are all reached once the chunk is, in the loop's per-chunk callback,
so the epoch's phases carry none of it), ``eval`` (after an eval chunk is
dispatched), ``metrics_row`` (after each row of metrics.jsonl),
``tensorboard``, ``checkpoint_saving`` (an asynchronous save in flight),
``checkpoints_removing`` (a superseded folder renamed, not yet deleted),
``restored``, ``group`` (a group of a split run done), ``finished``,
``search_ask`` (a search's trial asked, its round not yet marked asked), and
``write:<file name>`` (an atomic write's temporary file complete, not yet renamed).
"""
import collections
import os
import signal
import sys

ENV = 'SEEDSWEEP_FAULT'
_reached = collections.Counter()


def parse(spec: str):
  """``(moment, n, signal)`` of a ``$SEEDSWEEP_FAULT`` value."""
  spec, _, name = spec.partition('@')
  moment, count = spec, 1
  head, _, tail = spec.rpartition(':')
  if head and tail.isdigit():
    moment, count = head, int(tail)
  return moment, count, signal.Signals[f'SIG{name or "KILL"}']


def reached(moment: str, times: int = 1) -> None:
  """Marks ``moment``, reached ``times`` times in a row (a chunk's steps); signals
  this process when ``$SEEDSWEEP_FAULT`` names it and one of these is its ``n``-th."""
  spec = os.environ.get(ENV)
  if not spec:
    return
  name, count, signum = parse(spec)
  if name != moment:
    return
  before = _reached[moment]
  _reached[moment] += times
  if before < count <= _reached[moment]:
    sys.stderr.write(f'fault: {signum.name} at {moment}:{count}\n')
    sys.stderr.flush()
    os.kill(os.getpid(), signum)
