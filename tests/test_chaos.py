"""A whole sweep killed as a preemptible cluster kills it (benchmarks/chaos_sweep.py,
short form): two jobs through --launcher=local and a report process now and then, the
launch's process group killed at seeded random moments by SIGKILL and SIGTERM and
relaunched; the end equals the undisturbed sweep. The long form (100 kills) runs on
demand: python benchmarks/chaos_sweep.py --kills=100."""
import pytest

from benchmarks import chaos_sweep


def test_chaos_sweep_compares_reports_without_their_wall_times():
  md = '| run | wall |\n| a | 1 min 05 s |\n| b | 12.5 s |\n'
  blanked = chaos_sweep._without_wall(md)  # pylint: disable=protected-access
  assert blanked == '| run | wall |\n| a | WALL |\n| b | WALL |\n'
  assert chaos_sweep.LEFTOVERS.search('.results.json.abc123.tmp')
  assert chaos_sweep.LEFTOVERS.search('3.orbax-checkpoint-tmp-1700000000')
  assert not chaos_sweep.LEFTOVERS.search('metrics.jsonl')


@pytest.mark.slow
def test_a_sweep_killed_three_times_ends_as_the_undisturbed_one(tmp_path):
  # The jobs kill themselves at rows (a timed group kill can miss a fast sweep).
  figures = chaos_sweep.chaos(kills=3, seed=0, tmp=str(tmp_path), kinds=('jobs',),
                              echo=lambda *a: None)
  assert figures['differences'] == []
  assert figures['kills'] == 3 and figures['relaunches'] == 3, figures
