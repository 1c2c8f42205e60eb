"""Where a run's wall time goes: compilation, training steps, evaluation.

``results.json`` records a ``timing`` block (seconds) so that a result says what it
cost, and ``benchmarks/compare.py`` reads it instead of timing a run from outside.
Compilation is what JAX reports through ``jax.monitoring`` (tracing, lowering and
XLA compilation; a persistent-cache hit costs only its tracing and lowering).
"""
import contextlib
import dataclasses
import sys
import threading
import time

COMPILE_EVENTS = ('/jax/core/compile/jaxpr_trace_duration',
                  '/jax/core/compile/jaxpr_to_mlir_module_duration',
                  '/jax/core/compile/backend_compile_duration')

_lock = threading.Lock()
_compile_seconds = [0.0]
_listening = [False]


def _on_event(event: str, duration: float, **_):
  if event in COMPILE_EVENTS:
    with _lock:
      _compile_seconds[0] += duration


def compile_seconds() -> float:
  """Seconds this process has spent compiling since the first call (listens from
  then on)."""
  if not _listening[0]:
    import jax  # pylint: disable=g-import-not-at-top
    jax.monitoring.register_event_duration_secs_listener(_on_event)
    _listening[0] = True
  return _compile_seconds[0]


def peak_rss_mib() -> float:
  """This process's peak resident memory (0 where the platform does not say)."""
  try:
    import resource  # pylint: disable=g-import-not-at-top
  except ImportError:
    return 0.0
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  return peak / (1024 * 1024 if sys.platform == 'darwin' else 1024)


@dataclasses.dataclass
class Timer:
  """Accumulates wall seconds per phase: ``with timer('train'): ...``.

  ``as_dict()`` adds ``compile``: compilation seconds since the timer was made, summed
  over threads (the evaluation compiles in a thread while epoch 1 trains), so it can
  exceed a single phase; ``train`` and ``eval`` include the compilations they waited on.
  """
  seconds: dict = dataclasses.field(default_factory=dict)  # {phase: wall seconds}
  compile_start: float = dataclasses.field(default_factory=compile_seconds)

  @contextlib.contextmanager
  def __call__(self, phase: str):
    start = time.perf_counter()
    try:
      yield
    finally:
      self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start

  def as_dict(self) -> dict:
    """Seconds per phase, ``compile`` (compilation seconds since the timer was made) and
    ``peak_rss_mib``."""
    out = {k: round(v, 3) for k, v in self.seconds.items()}
    out['compile'] = round(compile_seconds() - self.compile_start, 3)
    out['peak_rss_mib'] = round(peak_rss_mib(), 1)
    return out
