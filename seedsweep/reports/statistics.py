"""The numbers of a report: per-metric summaries of the seeds' values, the best-dev
seed's value, confidence intervals of a mean (Student's t; bootstrap BCa), tests
between rows (Welch's t, Mann-Whitney's rank test) with Holm's adjustment, the
minimum detectable difference for the seeds at hand, and the expected maximum over
sweep points (Dodge et al., 2019). scipy does the distributions."""
from typing import Dict, List, Optional, Sequence, Tuple

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
               best_dev_test=best_dev_test, ci95=bootstrap_ci(values),
               mdd=min_detectable_difference(entry['std'], len(values)),
               p_value=None, p_holm=None, p_rank=None, aso=None)
  return entry



BOOTSTRAP_RESAMPLES = 9999
BOOTSTRAP_SEED = 0  # fixed: the same runs give the same report bytes
FEW_SEEDS = 5       # fewer seeds than this: p-values are flagged as not meaningful


def bootstrap_ci(values: Sequence[float], level: float = 0.95
                 ) -> Optional[Tuple[float, float]]:
  """The BCa bootstrap ``level`` interval of the mean of ``values``
  (``scipy.stats.bootstrap``, 9999 resamples, a fixed seed); None for fewer than 3
  values, ``(v, v)`` when they are all ``v``."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  values = np.asarray(values, np.float64)
  if len(values) < 3:
    return None
  if np.all(values == values[0]):
    return float(values[0]), float(values[0])
  result = stats.bootstrap((values,), np.mean, confidence_level=level, method='BCa',
                           n_resamples=BOOTSTRAP_RESAMPLES,
                           rng=np.random.default_rng(BOOTSTRAP_SEED))
  low, high = result.confidence_interval
  return float(low), float(high)


def rank_p(a: Sequence[float], b: Sequence[float]) -> Optional[float]:
  """Two-sided p-value of the Mann-Whitney U test (no normality assumed); None when
  a side has < 2 values."""
  if len(a) < 2 or len(b) < 2:
    return None
  from scipy import stats  # pylint: disable=g-import-not-at-top
  return float(stats.mannwhitneyu(a, b, alternative='two-sided').pvalue)


def holm(p_values: Sequence[Optional[float]]) -> List[Optional[float]]:
  """Holm's step-down adjustment of a family of p-values (None entries stay None
  and do not count): the k-th smallest of m is multiplied by m - k + 1, made
  non-decreasing, capped at 1."""
  present = [(p, i) for i, p in enumerate(p_values) if p is not None]
  out: List[Optional[float]] = [None] * len(p_values)
  running = 0.0
  for rank, (p, i) in enumerate(sorted(present)):
    running = max(running, min(1.0, p * (len(present) - rank)))
    out[i] = running
  return out


def min_detectable_difference(std: float, n: int, alpha: float = 0.05,
                              power: float = 0.8) -> Optional[float]:
  """The smallest true difference of means that a two-sided two-sample t-test at
  ``alpha`` finds with probability ``power``, for two rows of ``n`` seeds each with
  standard deviation ``std`` (the noncentral t; G*Power's "a priori" answer). None
  for n < 2."""
  from scipy import optimize  # pylint: disable=g-import-not-at-top
  from scipy import stats  # pylint: disable=g-import-not-at-top
  if n < 2 or std is None:
    return None
  df = 2 * n - 2
  critical = stats.t.ppf(1 - alpha / 2, df)

  def shortfall(d):  # power at effect size d (in units of std), minus the target
    nc = d * np.sqrt(n / 2)
    reached = stats.nct.sf(critical, df, nc) + stats.nct.cdf(-critical, df, nc)
    return (1.0 if np.isnan(reached) else reached) - power  # NaN: nc far in the tail

  high = 1.0
  while shortfall(high) < 0:
    high *= 2
  return float(optimize.brentq(shortfall, 1e-9, high, xtol=1e-10) * std)


def expected_max(scores: Sequence[float], n: int, follow: Sequence[float] = None
                 ) -> float:
  """The expected best of ``n`` points drawn with replacement from ``scores``
  (Dodge et al., 2019): with the scores sorted, the i-th of N is the maximum with
  probability (i/N)^n - ((i-1)/N)^n. With ``follow`` (a second score per point, e.g.
  its test value), the expected ``follow`` of the point that is best by ``scores``."""
  scores = np.asarray(scores, np.float64)
  order = np.argsort(scores, kind='stable')
  values = scores[order] if follow is None else np.asarray(follow, np.float64)[order]
  total = len(scores)
  i = np.arange(1, total + 1)
  weights = (i / total) ** n - ((i - 1) / total) ** n
  return float(np.dot(weights, values))


ASO_GRID = 1000       # points of (0, 1) the quantile functions are compared on
ASO_RESAMPLES = 1000  # bootstrap resamples for the spread of the violation ratio
ASO_ALPHA = 0.05
_ASO_LEVELS = (np.arange(ASO_GRID) + 0.5) / ASO_GRID  # midpoints of the grid cells


def _quantiles(sorted_values: np.ndarray, t: np.ndarray) -> np.ndarray:
  """The empirical quantile function (the inverse of the step CDF) of each row of
  ``sorted_values`` ``[..., n]`` at the levels ``t``: the ceil(t n)-th smallest."""
  n = sorted_values.shape[-1]
  index = np.clip(np.ceil(t * n).astype(int) - 1, 0, n - 1)
  return sorted_values[..., index]


def _violation_ratio(qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
  """Of the squared distance between two quantile functions (``[..., grid]``), the
  share where A's is below B's (A worse): del Barrio et al.'s epsilon_W2."""
  diff = qa - qb
  total = np.sum(diff ** 2, axis=-1)
  below = np.sum(np.where(diff < 0, diff ** 2, 0.0), axis=-1)
  with np.errstate(invalid='ignore', divide='ignore'):
    return below / total


def violation_ratio(a: Sequence[float], b: Sequence[float]) -> Optional[float]:
  """ASO's point estimate: of the squared distance between the empirical quantile
  functions of ``a`` and ``b``, the share where ``a``'s is below (None when they
  are equal)."""
  ratio = float(_violation_ratio(_quantiles(np.sort(np.asarray(a, np.float64)), _ASO_LEVELS),
                                 _quantiles(np.sort(np.asarray(b, np.float64)), _ASO_LEVELS)))
  return None if np.isnan(ratio) else ratio


def aso_epsilon(a: Sequence[float], b: Sequence[float], alpha: float = ASO_ALPHA
                ) -> Optional[float]:
  """Almost Stochastic Order (Dror et al., 2019): the smallest epsilon for which "A
  is almost stochastically larger than B" holds at confidence 1 - ``alpha``. 0: A's
  scores lie above B's at every quantile; 1: below; under 0.5 is Dror et al.'s
  threshold for calling A better. The violation ratio of the empirical quantile
  functions plus the one-sided normal bound from its bootstrap spread,
  ``eps + sqrt((n + m) / (n m)) * sigma * z_(1-alpha)``, capped at 1. A fixed seed:
  the same samples give the same number. None with fewer than 2 values a side or
  two samples that are the same distribution."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  a = np.sort(np.asarray(a, np.float64))
  b = np.sort(np.asarray(b, np.float64))
  n, m = len(a), len(b)
  if n < 2 or m < 2:
    return None
  estimate = violation_ratio(a, b)
  if estimate is None:
    return None
  rng = np.random.default_rng(BOOTSTRAP_SEED)
  boot_a = np.sort(a[rng.integers(0, n, (ASO_RESAMPLES, n))], axis=-1)
  boot_b = np.sort(b[rng.integers(0, m, (ASO_RESAMPLES, m))], axis=-1)
  ratios = _violation_ratio(_quantiles(boot_a, _ASO_LEVELS),
                            _quantiles(boot_b, _ASO_LEVELS))
  ratios = ratios[~np.isnan(ratios)]  # resamples that drew two equal samples
  scale = np.sqrt(n * m / (n + m))
  sigma = float(np.std(scale * (ratios - estimate), ddof=1)) if len(ratios) > 1 else 0.0
  bound = estimate + stats.norm.ppf(1 - alpha) * sigma / scale
  return float(min(1.0, max(0.0, bound)))
