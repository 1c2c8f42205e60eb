"""What the package installs, listed by name (seedsweep/catalog.py, ``--mode=list``),
and the closest packaged names for one that is none of them."""
import os

from seedsweep import catalog
from seedsweep import data as data_lib
from seedsweep import models as models_lib
from tests.conftest import REPO


def _files(folder, function):
  """The names of the files of ``folder`` in this checkout that define ``function``."""
  names = []
  for file in sorted(os.listdir(os.path.join(REPO, folder))):
    with open(os.path.join(REPO, folder, file), encoding='utf-8') as f:
      if file.endswith('.py') and f'\ndef {function}(' in f.read():
        names.append(file[:-3])
  return names


def test_the_listing_has_every_packaged_name_with_a_line_of_what_it_is():
  text = catalog.listing()
  lines = text.splitlines()
  for folder, _, _, function in catalog.FOLDERS:
    listed = catalog.packaged_files(folder, function)
    assert [name for name, _ in listed] == _files(folder, function)
    assert all(summary for _, summary in listed), folder
  assert 'experiments' in text and 'clstm_common' not in text  # recipes are not ones
  named = {line.split()[0] for line in lines if line.startswith('  ')}
  assert set(models_lib.REGISTRY) <= named and set(data_lib.REGISTRY) <= named
  demo = next(line for line in lines if line.startswith('  demo '))
  assert demo.split(None, 1)[1] == ('Bi-LSTM on the embedded synthetic demo dataset, '
                                    'ten seeds in one jitted program')
  assert any(l.split()[:2] == ['lstm', 'RecurrentClassifier,'] and
             'bidirectional=False' in l for l in lines)
  assert any(l.split()[:1] == ['sst/fine'] and l.endswith('(config fine, 5 classes)')
             for l in lines)
  assert all(len(line) < 200 for line in lines)


def test_a_summary_is_the_docstrings_first_sentence():
  assert catalog.summary('C-LSTM on SST (Zhou et al. 2015, Table 1). More.\n\nx') == (
      'C-LSTM on SST (Zhou et al. 2015, Table 1)')
  assert catalog.summary('Uses ``x``\nover two lines.') == 'Uses x over two lines'
  assert len(catalog.summary('word ' * 60)) == catalog.WIDTH
  assert catalog.summary(None) == ''


def test_an_unknown_name_gets_the_closest_packaged_ones(tmp_path, monkeypatch):
  assert catalog.unknown_name('--config', 'dmo:quick') == (
      "--config=dmo:quick: no file 'dmo' here and no packaged experiment 'dmo'; "
      'closest packaged: demo (seedsweep --mode=list lists each with a line)')
  assert 'closest packaged: demo_lr, demo, ' in catalog.unknown_name('--sweep',
                                                                   'demo_lrr')
  assert 'closest packaged: demo_search ' in catalog.unknown_name('--search', 'demo')
  # Nothing close: every packaged one.
  assert 'packaged experiments: bilstm, ' in catalog.unknown_name('--config', 'zzz')
  # A packaged name, a file that exists, or a path elsewhere is not this error's.
  monkeypatch.chdir(tmp_path)
  (tmp_path / 'mine.py').write_text('')
  for flag, value in (('--config', 'demo:quick'), ('--config', 'experiments/demo.py'),
                      ('--config', 'mine.py:x'), ('--config', 'elsewhere/nope.py'),
                      ('--sweep', 'demo_lr'), ('--workdir', 'nope')):
    assert catalog.unknown_name(flag, value) is None, (flag, value)
  assert "packaged experiment 'dmo'" in catalog.unknown_name('--config',
                                                            'experiments/dmo.py')


def test_a_file_that_does_not_parse_is_listed_as_such(tmp_path, monkeypatch):
  (tmp_path / 'good.py').write_text('"""A good one. More."""\ndef sweep(arg):\n  pass\n')
  (tmp_path / 'half.py').write_text('def sweep(arg:\n')
  (tmp_path / 'helper.py').write_text('"""Not a sweep."""\n')
  monkeypatch.setattr(catalog, '_folder_path', lambda folder: str(tmp_path))
  assert catalog.packaged_files('sweeps', 'sweep') == [
      ('good', 'A good one'), ('half', '(does not parse: SyntaxError at line 1)')]
