"""Word vectors trained by the framework (data/word2vec.py): determinism, the file
inputs/vectors.py reads, PTB tokens, the corpus rule, one-line errors."""
import hashlib
import json
import os
import platform
import re
import subprocess
import sys

import numpy as np
import pytest

from seedsweep.data import imdb
from seedsweep.data import word2vec
from seedsweep.errors import UserError
from seedsweep.inputs import vectors
from tests.conftest import in_tier
from tests.conftest import REPO
from tests.conftest import SHARED_DATA as DATA

SMALL = dict(dim=16, window=3, min_count=2, epochs=2)


@pytest.fixture(scope='module')
def corpus(tmp_path_factory):
  """300 lines of 3-30 words drawn from 400 words with Zipf-like frequencies, so many
  words tie in count and their order must not depend on the process."""
  rng = np.random.default_rng(0)
  vocab = [f'w{i}' for i in range(400)] + ["don't", 'Mixed', 'mixed']
  p = 1.0 / np.arange(1, len(vocab) + 1)
  lines = [' '.join(rng.choice(vocab, size=rng.integers(3, 31), p=p / p.sum()))
           for _ in range(300)]
  path = tmp_path_factory.mktemp('corpus') / 'corpus.txt'
  path.write_text('\n'.join(lines[:150]) + '\n\n' + '\n'.join(lines[150:]) + '\n')
  return str(path)


def cli(*args, env=None):
  return subprocess.run([sys.executable, '-m', 'seedsweep.data.word2vec', *args],
                        cwd=REPO, capture_output=True, text=True, check=False,
                        env=dict(os.environ, OPENBLAS_NUM_THREADS='1', **(env or {})))


def _core_of_this_process() -> str:
  """The OpenBLAS core gensim's calls run in this process ('native' if unnamed)."""
  word2vec._gensim()  # pylint: disable=protected-access
  cores = [b['core'] for b in word2vec.blas_record()
           if b['api'] == 'openblas' and 'scipy' in b['folder']]
  return cores[0] if cores and cores[0] else 'native'


@pytest.mark.slow
@pytest.mark.parametrize('algorithm', in_tier(['cbow', 'skipgram'], 'skipgram'))
def test_same_seed_same_file_in_processes_with_other_hash_seeds(algorithm, corpus,
                                                                tmp_path):
  # The core this process's BLAS loaded with (an earlier test may have loaded it):
  # the children run it too, so that their file can be compared with this one's.
  core = _core_of_this_process()
  flags = [f'--corpus={corpus}', '--dim=16', '--window=3', '--min_count=2',
           '--epochs=2', '--seed=3', f'--algorithm={algorithm}', f'--blas_core={core}']
  for i, hash_seed in enumerate(('1', '2')):
    done = cli(*flags, f'--out={tmp_path / f"{i}.txt"}',
               env={'PYTHONHASHSEED': hash_seed})
    assert done.returncode == 0, done.stderr
  first = (tmp_path / '0.txt').read_bytes()
  assert first == (tmp_path / '1.txt').read_bytes()
  # ... and the same as this process gives.
  word2vec.train_file(corpus, str(tmp_path / 'here.txt'), seed=3, algorithm=algorithm,
                      blas_core=core, **SMALL)
  assert (tmp_path / 'here.txt').read_bytes() == first
  record = json.loads((tmp_path / '0.txt.json').read_text())
  assert record['sha256'] == json.loads((tmp_path / '1.txt.json').read_text())['sha256']
  assert record['hyperparameters']['algorithm'] == algorithm
  assert record['hyperparameters']['sg'] == (algorithm == 'skipgram')


@pytest.mark.slow
@pytest.mark.skipif(platform.machine().lower() not in ('x86_64', 'amd64'),
                    reason='OpenBLAS x86-64 core names')
def test_blas_core_pins_the_kernels_and_a_core_that_does_not_take_is_an_error(
    corpus, tmp_path):
  """--blas_core=Sandybridge (AVX, which any x86-64 machine this runs on has, and
  no machine's own choice here): scipy's OpenBLAS, the one gensim calls, runs that
  core and the record says so; a name OpenBLAS does not run is a one-line error
  before training, with no file."""
  flags = [f'--corpus={corpus}', '--dim=16', '--window=3', '--min_count=2',
           '--epochs=1']
  done = cli(*flags, '--blas_core=Sandybridge', f'--out={tmp_path / "s.txt"}')
  assert done.returncode == 0, done.stderr
  record = json.loads((tmp_path / 's.txt.json').read_text())
  assert record['blas_core'] == 'Sandybridge'
  assert [b['core'] for b in record['blas'] if 'scipy' in b['folder']] == ['Sandybridge']
  done = cli(*flags, '--blas_core=Pentium9', f'--out={tmp_path / "p.txt"}')
  assert done.returncode == 1
  assert re.fullmatch(r'error: --blas_core=Pentium9: OpenBLAS runs core \S.*; expected '
                      r'the named core .*\n', done.stderr), done.stderr
  assert not (tmp_path / 'p.txt').exists()


def test_the_portable_core_is_haswell_wherever_avx2_and_fma_are(monkeypatch):
  monkeypatch.setattr(word2vec.platform, 'machine', lambda: 'x86_64')
  avx2 = frozenset({'avx', 'avx2', 'fma'})
  assert word2vec.resolve_blas_core('portable', avx2) == 'Haswell'
  assert word2vec.resolve_blas_core('portable', avx2 | {'avx512f'}) == 'Haswell'
  assert word2vec.resolve_blas_core('portable', frozenset({'avx'})) == ''
  assert word2vec.resolve_blas_core('native', avx2) == ''
  assert word2vec.resolve_blas_core('SkylakeX', avx2) == 'SkylakeX'
  monkeypatch.setattr(word2vec.platform, 'machine', lambda: 'aarch64')
  assert word2vec.resolve_blas_core('portable', None) == ''


def test_the_blas_core_check_reads_scipys_openblas_not_numpys():
  """numpy's OpenBLAS loads before the pin and keeps this CPU's own core: running the
  named core there proves nothing about the copy gensim calls."""
  numpy_copy = {'api': 'openblas', 'folder': 'site-packages/numpy.libs', 'core': 'Haswell'}
  scipy_copy = {'api': 'openblas', 'folder': 'site-packages/scipy.libs', 'core': 'Zen'}
  with pytest.raises(UserError, match='--blas_core=Haswell: OpenBLAS runs core Zen;'):
    word2vec.check_blas_core('Haswell', [numpy_copy, scipy_copy])
  word2vec.check_blas_core('zen', [numpy_copy, scipy_copy])
  shared = {'api': 'openblas', 'folder': 'envs/lib', 'core': 'Haswell'}  # conda: one copy
  word2vec.check_blas_core('Haswell', [shared])
  with pytest.raises(UserError, match='runs core \\?; expected'):
    word2vec.check_blas_core('Haswell', [{'api': 'mkl', 'folder': 'lib', 'core': ''}])


def test_a_core_whose_instructions_the_cpu_lacks_is_refused_before_loading(
    corpus, tmp_path, monkeypatch, capsys):
  """OpenBLAS loads a forced core without asking the CPU, and its kernels would stop
  the process on an illegal instruction inside gensim's loop: on a CPU without
  AVX-512, --blas_core=SkylakeX (the campaign's recipe) is a one-line error naming
  what is missing, before OPENBLAS_CORETYPE is set or a file is written."""
  monkeypatch.delenv('OPENBLAS_CORETYPE', raising=False)
  monkeypatch.setattr(word2vec, 'cpu_flags', lambda: frozenset({'sse2', 'avx', 'avx2',
                                                                 'fma'}))
  out = tmp_path / 'v.txt'
  assert word2vec.main([f'--corpus={corpus}', f'--out={out}', '--dim=8',
                        '--blas_core=SkylakeX']) == 1
  assert capsys.readouterr().err == (
      'error: --blas_core=SkylakeX: this CPU lacks avx512f, avx512cd, avx512bw, '
      "avx512dq, avx512vl (/proc/cpuinfo flags), which that core's kernels use; "
      'expected a core this CPU runs: --blas_core=portable (the default: the same '
      "bytes on every CPU with AVX2 and FMA) or native (this CPU's own choice, and the "
      'record says so)\n')
  assert 'OPENBLAS_CORETYPE' not in os.environ
  assert not out.exists() and not list(tmp_path.iterdir())


def test_the_cpu_check_knows_the_cores_and_reads_cpuinfo(tmp_path):
  avx2 = frozenset({'avx', 'avx2', 'fma'})
  word2vec.check_cpu_runs_core('Haswell', avx2)
  word2vec.check_cpu_runs_core('skylakex', avx2 | set(word2vec.CORE_INSTRUCTIONS[
      'skylakex']))
  with pytest.raises(UserError, match='lacks avx512_bf16 '):
    word2vec.check_cpu_runs_core('Cooperlake', avx2 | set(word2vec.CORE_INSTRUCTIONS[
        'skylakex']))
  with pytest.raises(UserError, match='lacks avx2, fma '):
    word2vec.check_cpu_runs_core('Zen', frozenset({'avx'}))
  # Flags unknown (another OS or architecture) or a core not listed: left to the
  # check after loading (check_blas_core).
  word2vec.check_cpu_runs_core('SkylakeX', None)
  word2vec.check_cpu_runs_core('Prescott', frozenset())
  cpuinfo = tmp_path / 'cpuinfo'
  cpuinfo.write_text('processor\t: 0\nflags\t\t: fpu sse2 avx2\n\nprocessor\t: 1\n'
                     'flags\t\t: fpu\n')
  assert word2vec.cpu_flags(str(cpuinfo)) == {'fpu', 'sse2', 'avx2'}
  cpuinfo.write_text('processor\t: 0\nFeatures\t: fp asimd\n')  # aarch64
  assert word2vec.cpu_flags(str(cpuinfo)) is None
  assert word2vec.cpu_flags(str(tmp_path / 'none')) is None


def test_skipgram_and_cbow_give_other_vectors(corpus):
  sentences = word2vec.corpus_sentences(corpus)
  words1, m1 = word2vec.train_vectors(sentences, algorithm='cbow', **SMALL)
  words2, m2 = word2vec.train_vectors(sentences, algorithm='skipgram', **SMALL)
  assert words1 == words2
  assert not np.allclose(m1, m2, atol=1e-3)
  with pytest.raises(UserError, match=r"--algorithm='glove'; expected one of cbow, "
                     'skipgram'):
    word2vec.train_vectors(sentences, algorithm='glove', **SMALL)


def test_another_seed_gives_other_vectors_for_the_same_words(corpus):
  sentences = word2vec.corpus_sentences(corpus)
  words1, m1 = word2vec.train_vectors(sentences, seed=1, **SMALL)
  words2, m2 = word2vec.train_vectors(sentences, seed=2, **SMALL)
  assert words1 == words2
  assert m1.shape == m2.shape == (len(words1), 16)
  assert not np.allclose(m1, m2, atol=1e-3)


def test_the_file_reads_back_with_its_words_dim_and_record(corpus, tmp_path):
  out = str(tmp_path / 'vectors.txt')
  # This process loaded BLAS already: its own core, not the portable one.
  record = word2vec.train_file(corpus, out, blas_core='native', **SMALL)
  sentences = word2vec.corpus_sentences(corpus)
  words, matrix = word2vec.train_vectors(sentences, **SMALL)
  assert vectors.detect_format(out) == 'word2vec_text'
  loaded, found = vectors.load_vectors(out, words + ['absent'])
  assert found[:-1].all() and not found[-1]
  np.testing.assert_allclose(loaded[:-1], matrix, rtol=1e-5, atol=1e-7)
  # Lower-cased PTB tokens by default: "Mixed" and "mixed" are one word; do n't.
  assert 'mixed' in words and 'Mixed' not in words
  assert "n't" in words and "don't" not in words
  assert record['vocabulary_size'] == len(words) and record['dim'] == 16
  assert record['corpus']['documents'] == 300  # the blank line is skipped
  assert record['corpus']['tokens'] == sum(map(len, sentences))
  assert record['hyperparameters']['min_count'] == 2
  assert record['hyperparameters']['workers'] == 1
  assert record['corpus']['source_sha256'] == vectors_sha(corpus)
  assert record['sha256'] == vectors_sha(out)
  # The BLAS gensim's loop runs on, and the core it picked: it decides the bits.
  assert record['blas'] and all(b['library'] and b['version'] for b in record['blas'])
  assert all(b['core'] for b in record['blas'] if b['api'] == 'openblas')
  assert json.load(open(out + '.json')) == record
  assert sorted(os.listdir(tmp_path)) == ['vectors.txt', 'vectors.txt.json']


def vectors_sha(path):
  return hashlib.sha256(open(path, 'rb').read()).hexdigest()


def test_ptb_tokens_split_clitics_as_sst_does():
  text = ('He said "I can\'t stand it" -- it\'s Mr. Smith\'s film... they\'re, '
          'we\'ve, you\'ll, I\'d, I\'m; we cannot won\'t J. Edgar’s')
  # data/imdb.py keeps clitics attached: the IMDB dataset's own tokens.
  assert word2vec.document_tokens(text, tokens='imdb', lowercase=False,
                                  pretokenized=False) == imdb.tokenize(text)
  assert word2vec.document_tokens(text, tokens='ptb', lowercase=False,
                                  pretokenized=False) == [
      'He', 'said', '``', 'I', 'ca', "n't", 'stand', 'it', "''", '--', 'it', "'s",
      'Mr.', 'Smith', "'s", 'film', '...', 'they', "'re", ',', 'we', "'ve", ',', 'you',
      "'ll", ',', 'I', "'d", ',', 'I', "'m", ';', 'we', 'can', 'not', 'wo', "n't",
      'J.', 'Edgar', "'s"]
  # Text already in PTB tokens (an SST sentence) keeps them.
  sst = "It 's not `` Mr. Bean '' -- it does n't ... ca n't"
  assert word2vec.document_tokens(sst, tokens='ptb', lowercase=True,
                                  pretokenized=True) == sst.lower().split(' ')


@pytest.mark.parametrize('flags, message', [
    (['--corpus=imbd'], r"--corpus=imbd: no such file \(did you mean 'imdb'\?\); "
     'expected one of imdb, imdb_train or a UTF-8 text file'),
    (['--corpus={missing}'], '--corpus=.*missing.txt: no such file'),
    (['--corpus={blank}'], 'the corpus is empty'),
    (['--dim=0'], r'--dim=0; expected an integer >= 1'),
    (['--epochs=0'], r'--epochs=0; expected an integer >= 1'),
    (['--min_count=1000'], '--min_count=1000: no word of the corpus occurs that often'),
    (['--out={tmp}/no/such/dir/v.txt'], '--out=.*/no/such/dir/v.txt: the directory '
     '.*/no/such/dir does not exist'),
    (['--out={tmp}'], '--out=.* is a directory'),
    (['--blas_core=sky lake'], "--blas_core='sky lake'; expected an OpenBLAS core "
     'name such as Haswell or SkylakeX'),
])
def test_bad_input_is_one_line_naming_the_flag(flags, message, corpus, tmp_path, capsys):
  (tmp_path / 'blank.txt').write_text('\n  \n\n')
  names = dict(missing=tmp_path / 'missing.txt', blank=tmp_path / 'blank.txt',
               tmp=tmp_path)
  argv = [f'--corpus={corpus}', f'--out={tmp_path / "v.txt"}', '--dim=8', '--epochs=1',
          '--blas_core=native']  # in this process BLAS is loaded already
  argv += [f.format(**names) for f in flags]
  assert word2vec.main(argv) == 1
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: '), err
  assert re.search(message, err), err
  assert set(os.listdir(tmp_path)) <= {'blank.txt'}  # nothing written


def test_without_gensim_the_error_says_what_to_install(corpus, monkeypatch):
  monkeypatch.setitem(sys.modules, 'gensim', None)  # `import gensim` raises ImportError
  with pytest.raises(UserError, match=r"^training word vectors needs gensim: pip "
                     r"install 'seedsweep\[word2vec\]' \(or pip install gensim "
                     r"threadpoolctl\)$"):
    word2vec.train_vectors([['a', 'b']], min_count=1)


class _Failing(list):
  """Words whose second chunk cannot be read: the write fails half-way."""

  def __getitem__(self, i):
    if isinstance(i, slice) and i.start:
      raise OSError('disk full')
    return super().__getitem__(i)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
  out = tmp_path / 'v.txt'
  out.write_text('old')
  words = _Failing(f'w{i}' for i in range(5000))
  with pytest.raises(OSError, match='disk full'):
    word2vec.write_word2vec_text(str(out), words, np.zeros((5000, 2)))
  assert out.read_text() == 'old' and os.listdir(tmp_path) == ['v.txt']


@pytest.mark.slow
@pytest.mark.full  # IMDB whole
def test_imdb_train_holds_the_training_reviews_only():
  if not os.path.isdir(DATA):
    pytest.skip(f'no shared data folder at {DATA}')
  train = word2vec.corpus_documents('imdb_train', DATA)
  both = word2vec.corpus_documents('imdb', DATA)
  assert len(train) == 25000 and len(both) == 50000
  assert both[:25000] == train
  # imdb_train is the train split: test reviews enter it only where the dataset itself
  # holds the same text in both splits (123 duplicated reviews).
  train_texts = set(train)
  assert sum(text in train_texts for text in both[25000:]) == 123
  assert both[25000].startswith('Once again Mr. Costner has dragged out a movie')
  assert word2vec.corpus_documents('imdb_train', DATA, max_documents=3) == train[:3]
