"""The random-effects ANOVA of a crossed seed design
(seedsweep/reports/statistics.py: variance_components), checked against least
squares, a worked example and simulated data."""
import itertools

import numpy as np
import pytest
from scipy import stats

from seedsweep.reports import statistics

NAMES3 = ('init', 'data', 'dropout')


def crossed(table, seeds=None):
  """The runs of a full table [l_1, ..., l_k]: (values [n], levels [n][k]), the
  levels of axis i being ``seeds[i]`` (default 0..l_i-1), in a shuffled order
  (the order of the runs must not matter)."""
  table = np.asarray(table, np.float64)
  seeds = seeds or [list(range(size)) for size in table.shape]
  cells = list(itertools.product(*[range(size) for size in table.shape]))
  order = np.random.default_rng(7).permutation(len(cells))
  cells = [cells[i] for i in order]
  values = [float(table[cell]) for cell in cells]
  levels = [tuple(seeds[axis][j] for axis, j in enumerate(cell)) for cell in cells]
  return values, levels


def by_source(result):
  return {row['source']: row for row in result['rows']}


def test_sums_of_squares_add_up_to_the_total():
  for shape, names in (((3, 4, 5), NAMES3), ((4, 6), ('init', 'data')),
                       ((2, 3, 2, 3), ('a', 'b', 'c', 'd'))):
    table = np.random.default_rng(1).normal(size=shape) * np.arange(1, shape[-1] + 1)
    values, levels = crossed(table)
    result = statistics.variance_components(values, levels, names)
    total = float(np.sum((np.asarray(values) - np.mean(values)) ** 2))
    assert sum(row['ss'] for row in result['rows']) == pytest.approx(total, rel=1e-12)
    assert sum(row['df'] for row in result['rows']) == len(values) - 1
    assert result['n'] == len(values) == int(np.prod(shape))
    for row in result['rows']:
      assert row['ms'] == pytest.approx(row['ss'] / row['df'], rel=1e-12)


def dummies(levels, axis):
  """Treatment-coded columns [n, l - 1] of factor ``axis`` (first level dropped)."""
  column = np.asarray([cell[axis] for cell in levels])
  seen = sorted(set(column.tolist()))
  return np.stack([(column == level).astype(np.float64) for level in seen[1:]], 1)


def interaction(levels, axes):
  """The columns of the interaction of ``axes``: all products of their dummies."""
  blocks = [dummies(levels, axis) for axis in axes]
  columns = [np.prod([block[:, j] for block, j in zip(blocks, pick)], axis=0)
             for pick in itertools.product(*[range(b.shape[1]) for b in blocks])]
  return np.stack(columns, 1)


def rss(y, blocks):
  """Residual sum of squares and rank of the least-squares fit of ``y`` [n] on an
  intercept plus the column ``blocks`` ([n, p_j] each)."""
  x = np.concatenate([np.ones((len(y), 1))] + list(blocks), 1)
  beta = np.linalg.lstsq(x, y, rcond=None)[0]
  return float(np.sum((y - x @ beta) ** 2)), int(np.linalg.matrix_rank(x))


@pytest.mark.parametrize('shape', [(3, 4, 5), (4, 3)])
def test_sums_of_squares_are_least_squares_reductions(shape):
  """Balanced => the effects' column spaces are orthogonal once the lower-order
  effects they contain are in the model: an effect's SS is the drop of the RSS
  when it is added to the effects of its order and below, in any order; the
  residual is the RSS of the model with every effect but the top one. (Treatment
  dummies: a main effect added after its own interactions would not do.)"""
  k = len(shape)
  names = NAMES3[:k]
  rng = np.random.default_rng(2)
  table = rng.normal(size=shape) + rng.normal(size=shape[:1] + (1,) * (k - 1)) * 2
  if k == 3:
    table += rng.normal(size=shape[:2] + (1,))
  values, levels = crossed(table)
  y = np.asarray(values)
  rows = by_source(statistics.variance_components(values, levels, names))
  effects = [e for size in range(1, k) for e in itertools.combinations(range(k), size)]
  block = {e: interaction(levels, e) for e in effects}
  source = {e: ' x '.join(names[a] for a in e) for e in effects}
  total = float(np.sum((y - y.mean()) ** 2))
  assert rss(y, [])[0] == pytest.approx(total, rel=1e-12)
  for e in effects:
    upto = [f for f in effects if len(f) <= len(e)]
    with_e, rank_with = rss(y, [block[f] for f in upto])
    without, rank_without = rss(y, [block[f] for f in upto if f != e])
    assert rows[source[e]]['ss'] == pytest.approx(without - with_e, rel=1e-9)
    assert rows[source[e]]['df'] == rank_with - rank_without
    if len(e) == 1:  # first after the intercept: the same reduction
      alone, _ = rss(y, [block[e]])
      assert rows[source[e]]['ss'] == pytest.approx(total - alone, rel=1e-9)
  # Sequential fits in every order of the main effects give the same reductions.
  mains = [e for e in effects if len(e) == 1]
  for order in itertools.permutations(mains):
    before = total
    for i, e in enumerate(order):
      after, _ = rss(y, [block[f] for f in order[:i + 1]])
      assert rows[source[e]]['ss'] == pytest.approx(before - after, rel=1e-9)
      before = after
  full_rss, full_rank = rss(y, [block[e] for e in effects])
  assert rows['residual']['ss'] == pytest.approx(full_rss, rel=1e-9)
  assert rows['residual']['df'] == len(y) - full_rank
  if k == 3:  # the main-effects model leaves the two-way interactions + residual
    mains_rss, mains_rank = rss(y, [block[e] for e in mains])
    two_way = [e for e in effects if len(e) == 2]
    assert mains_rss == pytest.approx(
        sum(rows[source[e]]['ss'] for e in two_way) + rows['residual']['ss'], rel=1e-9)
    assert len(y) - mains_rank == (sum(rows[source[e]]['df'] for e in two_way)
                                   + rows['residual']['df'])


def test_a_two_by_two_worked_by_hand():
  # init \ data:  d0  d1 | row mean
  #   i0           2   4 |  3
  #   i1           6  12 |  9
  #   col mean     4   8 |  grand mean 6
  # SS_init = 2 ((3-6)^2 + (9-6)^2) = 36, SS_data = 2 ((4-6)^2 + (8-6)^2) = 16,
  # residuals y - row - col + grand = (1, -1, -1, 1): SS_res = 4; total
  # (16 + 4 + 0 + 36) = 56 = 36 + 16 + 4. Every df is 1, so MS = SS.
  # sigma2_res = 4, sigma2_init = (36 - 4) / 2 = 16, sigma2_data = (16 - 4) / 2 = 6,
  # total 26. Satterthwaite for init: terms (36/2, -4/2) = (18, -2), df_s = 16^2 /
  # (18^2 + 2^2) = 256/328; for data: (8, -2), df_s = 36/68.
  values, levels = crossed([[2, 4], [6, 12]], seeds=[[11, 22], ['x', 'y']])
  result = statistics.variance_components(values, levels, ('init', 'data'))
  assert [row['source'] for row in result['rows']] == ['init', 'data', 'residual']
  rows = by_source(result)
  expected = {'init': (36, 16), 'data': (16, 6), 'residual': (4, 4)}
  for source, (ss, variance) in expected.items():
    assert rows[source]['df'] == 1
    assert rows[source]['ss'] == pytest.approx(ss, rel=1e-12)
    assert rows[source]['ms'] == pytest.approx(ss, rel=1e-12)
    assert rows[source]['variance'] == pytest.approx(variance, rel=1e-12)
    assert rows[source]['share'] == pytest.approx(variance / 26, rel=1e-12)
    assert rows[source]['truncated'] is False
  assert result['total_variance'] == pytest.approx(26, rel=1e-12)
  assert result['dominant'] == 'init'
  assert result['n'] == 4
  chi2 = stats.chi2.ppf
  assert rows['residual']['ci'] == pytest.approx((4 / chi2(0.975, 1), 4 / chi2(0.025, 1)))
  for source, estimate, df in (('init', 16, 256 / 328), ('data', 6, 36 / 68)):
    assert rows[source]['ci'] == pytest.approx(
        (df * estimate / chi2(0.975, df), df * estimate / chi2(0.025, df)), rel=1e-9)
  # At level 0.5 the intervals are narrower and still hold the estimates.
  narrow = by_source(statistics.variance_components(values, levels, ('init', 'data'),
                                                    level=0.5))
  for source in expected:
    low, high = narrow[source]['ci']
    assert rows[source]['ci'][0] < low < narrow[source]['variance'] < high
    assert high < rows[source]['ci'][1]


def test_negative_estimates_are_truncated_to_zero():
  # init \ data:  d0  d1 | row mean
  #   i0           0   3 |  1.5
  #   i1           6   5 |  5.5
  #   col mean     3   4 |  grand mean 3.5
  # SS_init = 2 (2^2 + 2^2) = 16, SS_data = 2 (0.5^2 + 0.5^2) = 1, residuals
  # (-1, 1, 1, -1): SS_res = 4. sigma2_data = (1 - 4) / 2 = -1.5 -> 0;
  # sigma2_init = (16 - 4) / 2 = 6; total 6 + 0 + 4 = 10.
  # The truncated row's CI: (0, upper end for the positive term MS_data / 2 alone)
  # = (0, 1 * 0.5 / chi2_(0.025, 1)).
  values, levels = crossed([[0, 3], [6, 5]])
  result = statistics.variance_components(values, levels, ('init', 'data'))
  rows = by_source(result)
  assert rows['data']['truncated'] is True
  assert rows['data']['variance'] == 0.0
  assert rows['data']['share'] == 0.0
  assert rows['data']['ss'] == pytest.approx(1.0)
  assert rows['data']['ci'][0] == 0.0
  assert rows['data']['ci'][1] == pytest.approx(0.5 / stats.chi2.ppf(0.025, 1), rel=1e-9)
  assert rows['init']['truncated'] is False
  assert rows['init']['variance'] == pytest.approx(6.0)
  assert rows['residual']['variance'] == pytest.approx(4.0)
  assert result['total_variance'] == pytest.approx(10.0)
  assert rows['init']['share'] == pytest.approx(0.6)
  assert result['dominant'] == 'init'


def test_truncated_three_factor_interaction():
  """A two-way interaction whose mean square falls below the residual's."""
  shape = (4, 4, 4)
  rng = np.random.default_rng(5)
  table = (rng.normal(size=(4, 1, 1)) * 3 + rng.normal(size=(1, 4, 1))
           + rng.normal(size=shape))
  values, levels = crossed(table)
  rows = by_source(statistics.variance_components(values, levels, NAMES3))
  ms = {source: row['ms'] for source, row in rows.items()}
  for source in ('init x data', 'init x dropout', 'data x dropout'):
    raw = (ms[source] - ms['residual']) / 4
    assert rows[source]['truncated'] is (raw < 0)
    assert rows[source]['variance'] == pytest.approx(max(raw, 0.0), abs=1e-12)
  assert any(row['truncated'] for row in rows.values())  # this seed has one
  for row in rows.values():
    if row['truncated']:
      assert row['ci'][0] == 0.0 and row['ci'][1] > 0


def simulate(rng, shape, sigma2):
  """A table [a, b, c] from the random-effects model: a normal effect of variance
  ``sigma2[effect]`` per level combination of every effect (tuple of axes)."""
  table = np.zeros(shape)
  for effect, variance in sigma2.items():
    size = tuple(shape[axis] if axis in effect else 1 for axis in range(len(shape)))
    table = table + rng.normal(scale=np.sqrt(variance), size=size)
  return table + 70.0  # a mean accuracy, irrelevant to the variances


def estimator_sd(effect, shape, sigma2):
  """The standard deviation of the ANOVA estimate of ``effect``'s component under
  the random-effects model ``sigma2`` (one run per cell), worked out apart from
  the module: E[MS_S] = sum over T containing S of (n / prod_T l) sigma2_T, each
  MS_S an E[MS_S] chi2_df / df, the estimate sum over T containing S of
  (-1)^|T - S| MS_T / (n / prod_S l)."""
  n = int(np.prod(shape))
  cells = lambda e: int(np.prod([shape[a] for a in e]))
  variance = 0.0
  for t in sigma2:
    if set(effect) <= set(t):
      ems = sum(n / cells(u) * sigma2[u] for u in sigma2 if set(t) <= set(u))
      df = int(np.prod([shape[a] - 1 for a in t]))
      variance += 2 * (ems / (n / cells(effect))) ** 2 / df
  return float(np.sqrt(variance))


TRUTH = {(0,): 0.2, (1,): 2.0, (2,): 0.3, (0, 1): 0.1, (0, 2): 0.05, (1, 2): 0.15,
         (0, 1, 2): 0.5}


def test_simulated_variance_components_are_recovered():
  table = simulate(np.random.default_rng(2024), (12, 12, 12), TRUTH)
  values, levels = crossed(table)
  result = statistics.variance_components(values, levels, NAMES3)
  assert [row['source'] for row in result['rows']] == [
      'init', 'data', 'dropout', 'init x data', 'init x dropout', 'data x dropout',
      'residual']
  assert result['dominant'] == 'data'
  assert result['n'] == 12 ** 3
  rows = result['rows']
  for row, effect in zip(rows, TRUTH):
    # Within 2.5 sd of the truth, the sd from the expected mean squares: 0.14 for
    # 'dropout' (df 11: about 0.43 of its E[MS] / 144), 0.02 for 'init x data'.
    error = row['variance'] - TRUTH[effect]
    assert abs(error) < 2.5 * estimator_sd(effect, (12, 12, 12), TRUTH), row['source']
  # data: (MS_data - MS_init x data - MS_data x dropout + MS_res) / 144, the E[MS]
  # 144 * 2 + 12 * 0.1 + 12 * 0.15 + 0.5, 12 * 0.1 + 0.5, 12 * 0.15 + 0.5 and 0.5.
  assert estimator_sd((1,), (12, 12, 12), TRUTH) == pytest.approx(np.sqrt(
      2 * (291.5 ** 2 / 11 + 1.7 ** 2 / 121 + 2.3 ** 2 / 121 + 0.5 ** 2 / 1331))
                                                                  / 144, rel=1e-12)
  data = by_source(result)['data']
  assert data['ci'][0] < TRUTH[(1,)] < data['ci'][1]
  assert data['share'] > 0.5
  residual = by_source(result)['residual']
  assert residual['ci'][0] < TRUTH[(0, 1, 2)] < residual['ci'][1]
  assert sum(row['share'] for row in rows) == pytest.approx(1.0)


@pytest.mark.slow
@pytest.mark.full  # simulations; the intervals: the tests above
def test_interval_coverage_over_repeated_simulations():
  """The intervals of the dominant main effect (Satterthwaite) and of the
  residual (exact) hold the truth about 95% of the time."""
  rng = np.random.default_rng(11)
  repeats = 400
  hits = {'data': 0, 'residual': 0}
  truth = {'data': TRUTH[(1,)], 'residual': TRUTH[(0, 1, 2)]}
  for _ in range(repeats):
    values, levels = crossed(simulate(rng, (6, 6, 6), TRUTH))
    rows = by_source(statistics.variance_components(values, levels, NAMES3))
    for row in rows.values():  # every interval is ordered and holds its estimate
      assert 0.0 <= row['ci'][0] <= row['variance'] <= row['ci'][1]
      assert row['ci'][0] < row['ci'][1]
    for source, true in truth.items():
      hits[source] += rows[source]['ci'][0] < true < rows[source]['ci'][1]
  assert 0.91 < hits['residual'] / repeats < 0.99
  assert 0.88 < hits['data'] / repeats < 0.99


def test_four_factors_and_order_of_rows():
  table = simulate(np.random.default_rng(3), (2, 3, 2, 3), {(0,): 1.0, (0, 1, 2, 3): 1.0})
  values, levels = crossed(table)
  result = statistics.variance_components(values, levels, ('a', 'b', 'c', 'd'))
  assert [row['source'] for row in result['rows']] == [
      'a', 'b', 'c', 'd', 'a x b', 'a x c', 'a x d', 'b x c', 'b x d', 'c x d',
      'a x b x c', 'a x b x d', 'a x c x d', 'b x c x d', 'residual']
  rows = by_source(result)
  ms = {source: row['ms'] for source, row in rows.items()}
  # A, with inclusion-exclusion over the effects containing it, / (3 * 2 * 3).
  raw = (ms['a'] - ms['a x b'] - ms['a x c'] - ms['a x d'] + ms['a x b x c']
         + ms['a x b x d'] + ms['a x c x d'] - ms['residual']) / 18
  assert rows['a']['variance'] == pytest.approx(max(raw, 0.0), abs=1e-12)
  raw = (ms['b x d'] - ms['a x b x d'] - ms['b x c x d'] + ms['residual']) / 4
  assert rows['b x d']['variance'] == pytest.approx(max(raw, 0.0), abs=1e-12)


def three_by_two_runs():
  cells = list(itertools.product([1, 2, 3], [10, 20]))
  return [float(i + j) for i, j in cells], cells


@pytest.mark.parametrize('change, message', [
    (lambda v, l: (v[:-1], l[:-1]), r'incomplete design: 1 of 6 .*\(init=3, data=20\)'),
    (lambda v, l: (v + [1.0], l + [(1, 10)]),
     r'unbalanced design: cell \(init=1, data=10\) has 2 runs'),
    (lambda v, l: (v[:-1] + [1.0], l[:-1] + [(1, 10)]),
     r'unbalanced design: cell \(init=1, data=10\) has 2 runs'),
    (lambda v, l: (v[:-1] + [1.0], l[:-1] + [(4, 10)]), r'incomplete design'),
    (lambda v, l: (v[:2], l[:2]), r"factor 'init' has 1 level\(s\) \[1\]"),
    (lambda v, l: (v[::2], l[::2]), r"factor 'data' has 1 level\(s\) \[10\]"),
    (lambda v, l: (v[:-1], l), r'5 values but 6 level tuples'),
    (lambda v, l: (v, l[:-1] + [(3, 20, 0)]), r'level tuple \(3, 20, 0\) has 3 entries'),
    (lambda v, l: (v[:-1] + [float('nan')], l), r'finite'),
])
def test_bad_designs_raise_a_helpful_error(change, message):
  values, levels = three_by_two_runs()
  statistics.variance_components(values, levels, ('init', 'data'))  # fine as is
  values, levels = change(list(values), list(levels))
  with pytest.raises(ValueError, match=message):
    statistics.variance_components(values, levels, ('init', 'data'))


def test_bad_names_raise():
  values, levels = three_by_two_runs()
  with pytest.raises(ValueError, match='at least 2 factors'):
    statistics.variance_components(values, [(i,) for i, _ in levels], ('init',))
  with pytest.raises(ValueError, match='distinct'):
    statistics.variance_components(values, levels, ('init', 'init'))
  with pytest.raises(ValueError, match='has 2 entries'):
    statistics.variance_components(values, levels, NAMES3)


def test_constant_values_give_zero_everywhere():
  values, levels = crossed(np.full((3, 3), 0.9))
  result = statistics.variance_components(values, levels, ('init', 'data'))
  assert result['total_variance'] == pytest.approx(0.0, abs=1e-20)
  for row in result['rows']:
    assert row['variance'] == pytest.approx(0.0, abs=1e-20)
    assert row['ci'][0] == pytest.approx(0.0, abs=1e-20)


def test_satterthwaite_interval_at_large_and_tiny_df():
  chi2 = stats.chi2.ppf
  # One term: the exact chi-square interval of MS, here of 3 MS / 2 with df 7.
  assert statistics.satterthwaite_ci([1.5], [2.0], [7]) == pytest.approx(
      (7 * 3.0 / chi2(0.975, 7), 7 * 3.0 / chi2(0.025, 7)), rel=1e-12)
  # Two terms, df_s = 1^2 / (2^2 / 10 + 1^2 / 20) = 1 / 0.45.
  df = 1 / 0.45
  assert statistics.satterthwaite_ci([1, -1], [2.0, 1.0], [10, 20]) == pytest.approx(
      (df / chi2(0.975, df), df / chi2(0.025, df)), rel=1e-9)
  # An estimate of 1e-4 beside mean squares of 1: df_s ~ 1e-7. The upper limit is
  # unbounded; the lower one uses the df where its factor is smallest (~0.082).
  floor = statistics._lower_limit_df(0.95)  # pylint: disable=protected-access
  assert 0.08 < floor < 0.085
  factor = floor / chi2(0.975, floor)
  for lowest in (floor * 1.001, floor * 0.999, floor * 0.1):  # a minimum indeed
    assert lowest / chi2(0.975, lowest) > factor
  low, high = statistics.satterthwaite_ci([1, -1], [1.0001, 1.0], [10, 10])
  assert low == pytest.approx(1e-4 * factor, rel=1e-6)
  assert high == np.inf
  with pytest.raises(ValueError, match='positive estimate'):
    statistics.satterthwaite_ci([1, -1], [1.0, 2.0], [10, 10])
  assert statistics.satterthwaite_ci([1, -1], [0.0, 0.0], [3, 3]) == (0.0, 0.0)
