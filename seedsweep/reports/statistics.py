"""The numbers of a report: per-metric summaries of the seeds' values, the best-dev
seed's value, the confidence interval of a mean (Student's t: outputs.mean_interval), tests
between rows (Welch's t, Mann-Whitney's rank test) with Holm's adjustment, the
minimum detectable difference for the seeds at hand, and the expected maximum over
sweep points (Dodge et al., 2019; unbiased, with a bootstrap band: Tang et al.,
2020). scipy does the distributions."""
from typing import Dict, List, Optional, Sequence, Tuple
import warnings

import numpy as np
from scipy import special

from seedsweep.run import outputs


lower_is_better = outputs.lower_is_better
dev_metric = outputs.dev_metric


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
  # Two constant samples give nan, said as 'nan'. One constant sample (every seed
  # the same accuracy) is a well-defined test, but scipy warns of precision loss
  # in its variance, which is exactly 0.
  with np.errstate(all='ignore'), warnings.catch_warnings():
    warnings.simplefilter('ignore', RuntimeWarning)
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def cohens_d(a: Sequence[float], b: Sequence[float], sign: float = 1.0
             ) -> Optional[float]:
  """Cohen's d of ``a`` over ``b``: ``sign * (mean a - mean b)`` over the pooled
  sample std; None when a side has < 2 values or both are constant."""
  a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  if len(a) < 2 or len(b) < 2:
    return None
  pooled = ((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / (
      len(a) + len(b) - 2)
  if pooled == 0:
    return None
  return float(sign * (a.mean() - b.mean()) / np.sqrt(pooled))


def tost_p(a: Sequence[float], b: Sequence[float], margin: float) -> Optional[float]:
  """Two one-sided Welch t-tests of equivalence: the p-value of "the means differ by
  at least ``margin``" (the larger of the two one-sided p's; small: equivalent within
  +-``margin``). None when a side has < 2 values or both sides are constant."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  if len(a) < 2 or len(b) < 2:
    return None
  va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
  se = np.sqrt(va + vb)
  diff = a.mean() - b.mean()
  if se == 0:
    return None if abs(diff) >= margin else 0.0
  df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
  above = stats.t.sf((diff + margin) / se, df)  # H0: diff <= -margin
  below = stats.t.cdf((diff - margin) / se, df)  # H0: diff >= +margin
  return float(max(above, below))


def tost_power(std: float, n: int, m: int, margin: float, alpha: float = 0.05
               ) -> Optional[float]:
  """The probability that :func:`tost_p` finds equivalence within +-``margin`` at
  ``alpha`` when both sides come from one distribution of spread ``std`` (``n`` and
  ``m`` values; the t bound with pooled degrees of freedom)."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  if n < 2 or m < 2 or not std:
    return None
  se = std * np.sqrt(1 / n + 1 / m)
  df = n + m - 2
  reach = margin - stats.t.ppf(1 - alpha, df) * se  # |diff| must stay under this
  if reach <= 0:
    return 0.0
  return float(stats.t.cdf(reach / se, df) - stats.t.cdf(-reach / se, df))


def resolvable_margin(std: float, n: int, m: int, power: float = 0.8,
                      alpha: float = 0.05) -> Optional[float]:
  """The smallest equivalence margin at which ``n`` and ``m`` values of one
  distribution of spread ``std`` pass :func:`tost_p` with probability ``power``."""
  from scipy import optimize  # pylint: disable=g-import-not-at-top
  if n < 2 or m < 2 or not std:
    return None
  high = std
  while tost_power(std, n, m, high, alpha) < power:
    high *= 2
  return float(optimize.brentq(lambda d: tost_power(std, n, m, d, alpha) - power,
                               1e-12, high, xtol=1e-10))


# The report's one interval of a mean (table, CSV, plots; the terminal's too).
mean_ci = outputs.mean_interval
CI_METHOD = outputs.CI_METHOD


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
               best_dev_test=best_dev_test, ci95=mean_ci(values),
               mdd=min_detectable_difference(entry['std'], len(values)),
               p_value=None, p_holm=None, p_rank=None, aso=None, effect=None,
               cohens_d=None)
  return entry



BOOTSTRAP_SEED = 0  # fixed: the same runs give the same report bytes (ASO, bands)
FEW_SEEDS = 5       # fewer seeds than this: p-values are flagged as not meaningful


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


def expected_max_unbiased(scores: Sequence[float], n: int,
                          follow: Sequence[float] = None) -> Optional[float]:
  """The expected best of ``n`` points, unbiased (Tang et al., 2020): the mean over
  every subset of ``n`` of the ``N`` points tried of its best, so the i-th smallest
  score is the best with probability C(i-1, n-1) / C(N, n) (Dodge et al.'s
  estimator draws with replacement and is biased low for n > 1). With ``follow``,
  the expected ``follow`` of the point best by ``scores``. None for n > N."""
  total = len(scores)
  if not 1 <= n <= total:
    return None
  order = np.argsort(np.asarray(scores, np.float64), kind='stable')
  values = np.asarray(scores if follow is None else follow, np.float64)[order]
  i = np.arange(1, total + 1)
  # C(i-1, n-1) / C(N, n) in logs: no overflow at hundreds of points.
  log_w = (special.gammaln(i) - special.gammaln(n) - special.gammaln(i - n + 1)
           - special.gammaln(total + 1) + special.gammaln(n + 1)
           + special.gammaln(total - n + 1))
  weights = np.where(i >= n, np.exp(np.where(i >= n, log_w, 0.0)), 0.0)
  return float(np.dot(weights, values))


def expected_max_band(scores: Sequence[float], n: int, follow: Sequence[float] = None,
                      level: float = 0.95, resamples: int = 1000
                      ) -> Optional[Tuple[float, float]]:
  """A bootstrap band for :func:`expected_max_unbiased`: its percentiles over
  resamples of the points (with replacement; fixed seed). None for n > N."""
  total = len(scores)
  if not 1 <= n <= total:
    return None
  scores = np.asarray(scores, np.float64)
  follow = scores if follow is None else np.asarray(follow, np.float64)
  rng = np.random.default_rng(BOOTSTRAP_SEED)
  draws = rng.integers(0, total, (resamples, total))
  values = [expected_max_unbiased(scores[d], n, follow[d]) for d in draws]
  low, high = np.percentile(values, [50 * (1 - level), 50 * (1 + level)])
  return float(low), float(high)


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


ASO_THRESHOLD = 0.2  # under it, A is almost stochastically better (deep-significance)


def _aso_parts(a: Sequence[float], b: Sequence[float]):
  """``(violation ratio, sigma, scale)`` of ASO (None with fewer than 2 values a
  side or two samples of one distribution): the estimate, the bootstrap spread of
  ``scale * (resample's ratio - estimate)`` and ``scale = sqrt(n m / (n + m))``."""
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
  return estimate, sigma, scale


def aso(a: Sequence[float], b: Sequence[float], alpha: float = ASO_ALPHA,
        threshold: float = ASO_THRESHOLD) -> Optional[Tuple[float, float]]:
  """``(epsilon, power)`` of Almost Stochastic Order (Dror et al., 2019) from one
  bootstrap: :func:`aso_epsilon` and :func:`aso_power` (None as they are)."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  parts = _aso_parts(a, b)
  if parts is None:
    return None
  estimate, sigma, scale = parts
  z = stats.norm.ppf(1 - alpha)
  epsilon = float(min(1.0, max(0.0, estimate + z * sigma / scale)))
  if sigma == 0:
    power = 1.0 if estimate < threshold else 0.0
  else:
    power = float(stats.norm.cdf((threshold - estimate) * scale / sigma - z))
  return epsilon, power


def aso_epsilon(a: Sequence[float], b: Sequence[float], alpha: float = ASO_ALPHA
                ) -> Optional[float]:
  """Almost Stochastic Order (Dror et al., 2019): the smallest epsilon for which "A
  is almost stochastically larger than B" holds at confidence 1 - ``alpha``. 0: A's
  scores lie above B's at every quantile; 1: below; under :data:`ASO_THRESHOLD`
  (0.2, as deep-significance recommends; Dror et al. used 0.5) A is called better.
  The violation ratio of the empirical quantile functions plus the one-sided normal
  bound from its bootstrap spread, ``eps + sqrt((n + m) / (n m)) * sigma *
  z_(1-alpha)``, capped at 1. A fixed seed: the same samples give the same number.
  None with fewer than 2 values a side or two samples of one distribution."""
  found = aso(a, b, alpha)
  return None if found is None else found[0]


def aso_power(a: Sequence[float], b: Sequence[float], alpha: float = ASO_ALPHA,
              threshold: float = ASO_THRESHOLD) -> Optional[float]:
  """The chance that as many seeds again give an epsilon under ``threshold``, were
  the violation ratio what these samples show: from the bootstrap's spread,
  ``Phi((threshold - eps) / (sigma / scale) - z_(1-alpha))``. Low power says a
  verdict of "not better" means little (more seeds would decide it)."""
  found = aso(a, b, alpha, threshold)
  return None if found is None else found[1]


# Random-effects ANOVA of a fully crossed seed design with one run per cell (e.g. a
# test accuracy for every (init seed, data-order seed, dropout seed)): how much of
# the spread each source of randomness, and each interaction of them, accounts for.
# An effect is a non-empty subset of the factors, a tuple of axis numbers in
# increasing order; the full set (the top-order interaction) is confounded with the
# run-to-run error and is reported as 'residual'.


def _design_array(values: Sequence[float], levels: Sequence[Sequence],
                  names: Sequence[str]) -> np.ndarray:
  """The runs' ``values`` [n] as an array of shape [l_1, ..., l_k], one axis per
  factor of ``names`` [k], each factor's levels in the order they first appear in
  ``levels`` [n][k]. Raises ValueError unless every combination of the observed
  levels is there exactly once, every factor has at least 2 levels and the values
  are finite."""
  names = tuple(names)
  k = len(names)
  if k < 2:
    raise ValueError(f'variance_components needs at least 2 factors, got names={names!r}')
  if len(set(names)) != k:
    raise ValueError(f'factor names must be distinct, got {names!r}')
  if len(values) != len(levels):
    raise ValueError(f'{len(values)} values but {len(levels)} level tuples: '
                     'give one tuple of factor levels per run')
  cells = [tuple(cell) for cell in levels]
  for cell in cells:
    if len(cell) != k:
      raise ValueError(f'level tuple {cell!r} has {len(cell)} entries, expected one '
                       f'per factor of {names!r}')
  values = np.asarray(values, np.float64)
  if not np.all(np.isfinite(values)):
    raise ValueError('values must be finite (found nan or inf)')
  axes = [list(dict.fromkeys(cell[i] for cell in cells)) for i in range(k)]
  for name, seen in zip(names, axes):
    if len(seen) < 2:
      raise ValueError(f'factor {name!r} has {len(seen)} level(s) {seen!r}; each '
                       'factor needs at least 2 levels')
  index = [{level: j for j, level in enumerate(seen)} for seen in axes]
  shape = tuple(len(seen) for seen in axes)
  counts = np.zeros(shape, np.int64)
  table = np.zeros(shape, np.float64)
  for value, cell in zip(values, cells):
    position = tuple(index[i][level] for i, level in enumerate(cell))
    counts[position] += 1
    table[position] = value

  def said(position):
    return '(' + ', '.join(f'{name}={axes[i][j]!r}'
                           for i, (name, j) in enumerate(zip(names, position))) + ')'

  repeated = np.argwhere(counts > 1)
  if len(repeated):
    position = tuple(repeated[0])
    raise ValueError(f'unbalanced design: cell {said(position)} has '
                     f'{counts[position]} runs ({len(repeated)} cell(s) repeated); '
                     'need exactly one run per combination of levels')
  missing = np.argwhere(counts == 0)
  if len(missing):
    raise ValueError(f'incomplete design: {len(missing)} of {counts.size} combinations '
                     f'of levels have no run, e.g. {said(tuple(missing[0]))}; need '
                     'exactly one run per combination of levels')
  return table


def _effects(k: int) -> List[Tuple[int, ...]]:
  """All non-empty subsets of the k factors' axes: the main effects in axis order,
  then the two-way interactions, ..., the full set (the residual) last."""
  from itertools import combinations  # pylint: disable=g-import-not-at-top
  return [subset for size in range(1, k + 1)
          for subset in combinations(range(k), size)]


def _effect_table(table: np.ndarray, effect: Tuple[int, ...]) -> np.ndarray:
  """The estimated effect of ``effect`` at every cell of ``table`` [l_1, ..., l_k]
  (same shape): inclusion-exclusion over the marginal means of the subsets of
  ``effect``, sum_{T in effect} (-1)^(|effect| - |T|) mean over the axes not in T.
  The grand mean is the empty T; the full set gives the residual."""
  from itertools import combinations  # pylint: disable=g-import-not-at-top
  k = table.ndim
  out = np.zeros_like(table)
  for size in range(len(effect) + 1):
    for kept in combinations(effect, size):
      other = tuple(axis for axis in range(k) if axis not in kept)
      mean = table.mean(axis=other, keepdims=True) if other else table
      out = out + (-1) ** (len(effect) - size) * mean
  return out


def anova_table(table: np.ndarray) -> Dict[Tuple[int, ...], Tuple[float, int]]:
  """The balanced crossed ANOVA with one observation per cell of ``table``
  [l_1, ..., l_k]: for every effect (a tuple of axes; the full set is the residual)
  its sum of squares (over all the cells) and degrees of freedom prod (l_i - 1).
  The sums of squares add up to the total sum of squares about the grand mean."""
  out = {}
  for effect in _effects(table.ndim):
    ss = float(np.sum(_effect_table(table, effect) ** 2))
    out[effect] = ss, int(np.prod([table.shape[axis] - 1 for axis in effect]))
  return out


def moment_coefficients(shape: Sequence[int], effect: Tuple[int, ...]
                        ) -> Dict[Tuple[int, ...], float]:
  """The ANOVA (method of moments) estimator of the variance component of
  ``effect`` in a random-effects crossed design of ``shape`` [k] with one run per
  cell, as coefficients of the mean squares it combines: {effect T containing
  ``effect``: (-1)^(|T| - |effect|) / m}, m = prod of the levels of the factors not
  in ``effect`` (the runs per level of ``effect``). This inverts the expected mean
  squares E[MS_S] = sum_{T containing S} m_T sigma2_T (sigma2 of the full set being
  the top interaction plus the error)."""
  from itertools import combinations  # pylint: disable=g-import-not-at-top
  k = len(shape)
  runs_per_level = float(np.prod([shape[axis] for axis in range(k)
                                  if axis not in effect]))
  rest = [axis for axis in range(k) if axis not in effect]
  out = {}
  for size in range(len(rest) + 1):
    for extra in combinations(rest, size):
      out[tuple(sorted(effect + extra))] = (-1) ** size / runs_per_level
  return out


def _lower_limit_df(level: float) -> float:
  """The df at which the factor df / chi2_(1 - alpha/2, df) of the lower limit of
  a ``level`` chi-square interval is smallest (about 0.082 at 95%, 0.41 at 80%):
  it falls as df falls down to there and rises again below, past 1 near df =
  0.012 at 95%, an artefact of the chi-square shape at tiny df."""
  from scipy import optimize  # pylint: disable=g-import-not-at-top
  from scipy import stats  # pylint: disable=g-import-not-at-top
  upper = 1 - (1 - level) / 2

  def log_factor(log_df):
    with np.errstate(all='ignore'):
      quantile = stats.chi2.ppf(upper, np.exp(log_df))
      return np.where(quantile > 0, log_df - np.log(quantile), np.inf)

  grid = np.linspace(np.log(1e-8), np.log(100.0), 241)
  best = int(np.argmin(log_factor(grid)))
  low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
  result = optimize.minimize_scalar(lambda x: float(log_factor(x)), bounds=(low, high),
                                    method='bounded', options={'xatol': 1e-6})
  return float(np.exp(result.x))


def satterthwaite_ci(coefficients: Sequence[float], mean_squares: Sequence[float],
                     dfs: Sequence[int], level: float = 0.95) -> Tuple[float, float]:
  """The ``level`` interval of a variance estimated as sum_i c_i MS_i (each MS_i
  an independent chi-square_df_i multiple; all [m]) by Satterthwaite's
  approximation: (df_s est / chi2_(1-alpha/2, df_s), df_s est / chi2_(alpha/2,
  df_s)), df_s = est^2 / sum_i (c_i MS_i)^2 / df_i. With a single term that is the
  exact chi-square interval. The estimate must be > 0; (0, 0) when every term is
  0. When est is small beside its noise df_s gets tiny: the upper limit grows
  without bound (inf once the quantile underflows), and the lower limit, whose
  factor df / chi2_(1-alpha/2, df) is not monotone in df (see
  ``_lower_limit_df``), takes df_s no lower than that factor's minimiser, so that
  less information never raises it (it would exceed est itself below df_s ~
  0.012 at 95%)."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  terms = np.asarray(coefficients, np.float64) * np.asarray(mean_squares, np.float64)
  estimate = float(np.sum(terms))
  spread = float(np.sum(terms ** 2 / np.asarray(dfs, np.float64)))
  if spread == 0.0:
    return 0.0, 0.0
  if estimate <= 0:
    raise ValueError(f'satterthwaite_ci needs a positive estimate, got {estimate}')
  df = estimate ** 2 / spread
  alpha = 1.0 - level
  lower_df = max(df, _lower_limit_df(level))
  low = lower_df * estimate / stats.chi2.ppf(1 - alpha / 2, lower_df)
  quantile = stats.chi2.ppf(alpha / 2, df)
  with np.errstate(over='ignore'):
    high = df * estimate / quantile if quantile > 0 else np.inf
  return float(low), float(high)


def variance_components(values: Sequence[float], levels: Sequence[Sequence],
                        names: Sequence[str], level: float = 0.95) -> dict:
  """Random-effects ANOVA variance decomposition of a fully crossed factorial
  seed design with one run per cell.

  Args:
    values: [n] one number per run (e.g. its test accuracy).
    levels: [n] per run a tuple [k] of its factors' levels (any hashables), e.g.
      (init_seed, data_seed, dropout_seed).
    names: [k] the factors' names, e.g. ('init', 'data', 'dropout'); k >= 2.
    level: the confidence level of the intervals.

  Returns:
    {'rows': [row, ...], 'total_variance': float, 'dominant': str or None,
    'n': int}. A row per source: the main effects in ``names`` order, the two-way
    interactions, ..., the (k-1)-way ones, then 'residual' (the k-way interaction,
    confounded with the run-to-run error since each cell has one run). A row is
    {'source': 'init' | 'init x data' | ... | 'residual', 'df': int, 'ss': float,
    'ms': float, 'variance': float, 'share': float, 'ci': (lo, hi), 'truncated':
    bool}: the sum of squares, degrees of freedom and mean square of the classical
    balanced ANOVA; the ANOVA (method of moments) estimate of the variance
    component from the expected mean squares, e.g. for factors A, B, C of a, b, c
    levels sigma2_A = (MS_A - MS_AB - MS_AC + MS_res) / (b c), sigma2_AB =
    (MS_AB - MS_res) / c, sigma2_res = MS_res; negative estimates are set to 0 with
    'truncated' True. 'share' is the variance over 'total_variance' (the sum of
    the rows' variances; every share is 0 when that is 0). 'dominant' is the
    source with the largest share (the first on ties; None when the total is 0).

    'ci' is the ``level`` interval of the component: for the residual the exact
    chi-square interval (df MS / chi2_(1-alpha/2, df), df MS / chi2_(alpha/2,
    df)); for a positive estimate Satterthwaite's (see ``satterthwaite_ci``).
    For an estimate <= 0 (truncated or exactly 0) it is (0, hi), hi the upper
    end of Satterthwaite's interval for the sum of the positive terms alone
    (e.g. (MS_A + MS_res) / (b c) for A): since the component is at most the
    positive terms' expectation, hi is a conservative upper bound; it is 0 when
    those mean squares are all 0.

  Raises:
    ValueError: unless every combination of the observed levels has exactly one
      run, each factor has >= 2 levels, the values are finite and ``levels`` and
      ``names`` agree in length.
  """
  names = tuple(names)
  table = _design_array(values, levels, names)
  k = table.ndim
  anova = anova_table(table)
  mean_square = {effect: ss / df for effect, (ss, df) in anova.items()}
  rows = []
  for effect, (ss, df) in anova.items():
    coefficients = moment_coefficients(table.shape, effect)
    parts = list(coefficients)
    c = [coefficients[part] for part in parts]
    ms = [mean_square[part] for part in parts]
    dfs = [anova[part][1] for part in parts]
    estimate = float(np.dot(c, ms))
    if estimate > 0:
      ci = satterthwaite_ci(c, ms, dfs, level)
    else:
      positive = [i for i, coefficient in enumerate(c) if coefficient > 0]
      ci = 0.0, satterthwaite_ci([c[i] for i in positive], [ms[i] for i in positive],
                                 [dfs[i] for i in positive], level)[1]
    rows.append({'source': 'residual' if len(effect) == k
                           else ' x '.join(names[axis] for axis in effect),
                 'df': int(df), 'ss': ss, 'ms': mean_square[effect],
                 'variance': max(estimate, 0.0), 'share': 0.0,
                 'ci': (float(ci[0]), float(ci[1])), 'truncated': estimate < 0})
  total = float(sum(row['variance'] for row in rows))
  dominant = None
  if total > 0:
    for row in rows:
      row['share'] = row['variance'] / total
    dominant = max(rows, key=lambda row: row['share'])['source']
  return {'rows': rows, 'total_variance': total, 'dominant': dominant,
          'n': int(table.size)}
