"""The numbers of a report: per-metric summaries of the seeds' values, the best-dev
seed's value, the t confidence interval of a mean, and Welch's t-test between rows
(scipy)."""
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from seedsweep.run import outputs


def lower_is_better(metric: str) -> bool:
  return metric.endswith(('_error', '_loss'))


def dev_metric(metric: str) -> str:
  """The dev metric whose best seed is reported: test_X -> dev_X, else dev_accuracy."""
  return metric.replace('test_', 'dev_', 1) if 'test_' in metric else 'dev_accuracy'


def best_index(scores: Sequence[float], lower: bool) -> int:
  """Index of the best score (the first on ties)."""
  scores = np.asarray(scores, np.float64)
  return int(np.argmin(scores) if lower else np.argmax(scores))


def best_dev_value(values: Dict[str, Sequence[float]], metric: str) -> Optional[float]:
  """``metric`` of the seed with the best dev score (None without dev values)."""
  dev = dev_metric(metric)
  test = values.get(metric) or []
  scores = values.get(dev) or []
  if not test or len(scores) != len(test):
    return None
  return float(test[best_index(scores, lower_is_better(dev))])


def welch_p(a: Sequence[float], b: Sequence[float]) -> Optional[float]:
  """Two-sided p-value of Welch's t-test; None when a side has < 2 values."""
  if len(a) < 2 or len(b) < 2:
    return None
  from scipy import stats  # pylint: disable=g-import-not-at-top
  with np.errstate(all='ignore'):  # two constant samples give nan, said as 'nan'
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def mean_ci(values: Sequence[float], level: float = 0.95) -> Tuple[float, float]:
  """The ``level`` confidence interval of the mean of ``values`` (Student's t over
  the seeds, sample std); ``(mean, mean)`` for fewer than two values."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  values = np.asarray(values, np.float64)
  mean = float(values.mean()) if len(values) else float('nan')
  if len(values) < 2:
    return mean, mean
  half = float(stats.t.ppf(0.5 + level / 2, len(values) - 1)
               * values.std(ddof=1) / np.sqrt(len(values)))
  return mean - half, mean + half


def metric_entry(values: Sequence[float], paper, best_dev_test) -> dict:
  """Summary of one metric's per-seed ``values`` [n] beside the paper's number."""
  values = [float(v) for v in values]
  entry = {'values': values, 'n': len(values), 'mean': None, 'std': None,
           'min': None, 'max': None}
  if values:
    entry.update(outputs.summarize(values))
  number = paper if isinstance(paper, (int, float)) and not isinstance(
      paper, bool) else None
  entry.update(paper=number,
               diff=None if number is None or not values else entry['mean'] - number,
               best_dev_test=best_dev_test, p_value=None)
  return entry

