"""Tests for the SST PTB-tree reader (data/sst.py) on the real files and bad input."""
import collections
import os

import pytest

from seedsweep.data import sst
from seedsweep.errors import UserError
from tests.conftest import in_tier
from tests.conftest import SHARED_DATA as DATA

ROOT = os.path.join(DATA, 'sst')
needs_data = pytest.mark.skipif(not os.path.isdir(DATA),
                                reason=f'{DATA} (shared datasets) is absent')

SIZES_FINE = {'train': 8544, 'dev': 1101, 'test': 2210}
SIZES_BINARY = {'train': 6920, 'dev': 872, 'test': 1821}
ROOT_LABELS = {'train': (1092, 2218, 1624, 2322, 1288),
               'dev': (139, 289, 229, 279, 165),
               'test': (279, 633, 389, 510, 399)}


@pytest.fixture(scope='module')
def trees():
  """Each split parsed once (train takes ~1 s); examples are derived from these."""
  return {split: sst.read_trees(ROOT, split) for split in sst.SPLITS}


def _write(tmp_path, split, text):
  (tmp_path / 'trees').mkdir(exist_ok=True)
  (tmp_path / 'trees' / f'{split}.txt').write_text(text, encoding='utf-8')
  return str(tmp_path / 'trees' / f'{split}.txt')


def test_parse_tree_structure():
  tree = sst.parse_tree("(3 (2 It) (4 (2 's) (3 fine)))\n")
  assert tree.label == 3 and not tree.is_leaf
  assert tree.leaves() == ['It', "'s", 'fine']
  assert [n.label for n in tree.nodes()] == [3, 2, 4, 2, 3]
  assert tree.phrases() == [("It 's fine", 3), ('It', 2), ("'s fine", 4), ("'s", 2),
                            ('fine', 3)]
  assert sst.parse_tree('(1 word)') == sst.Tree(1, (), 'word')


def test_unescape_ptb():
  tree = sst.parse_tree(r'(2 (2 -LRB-) (2 (2 and\/or) (2 (2 \*\*) (2 -RRB-))))')
  assert tree.text() == '( and/or ** )'
  assert tree.text(unescape=False) == r'-LRB- and\/or \*\* -RRB-'
  assert [sst.unescape_ptb(t) for t in ('-LSB-', '-RSB-', '-LCB-', '-RCB-')] == [
      '[', ']', '{', '}']
  assert sst.unescape_ptb('-LRB-', keep_escapes=True) == '-LRB-'
  assert sst.unescape_ptb('co-writer') == 'co-writer'


@pytest.mark.parametrize('line, what', [
    ('(3 (2 a) (2 b)', 'unclosed'),
    ('(3 (2 a) (2 b)))', 'unbalanced'),
    ('(x (2 a) (2 b))', "label 'x' is not an integer"),
    ('(3 (7 a) (2 b))', 'label 7 is outside 0..4'),
    ('(3 (2 a) (2 b)) extra', 'trailing text'),
    ('(3 (2 a) (2 b))(2 c)', 'trailing text'),
    ('(2 a b)', 'second token'),
    ('(2)', 'empty node'),
    ('', 'no tree'),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, what):
  path = _write(tmp_path, 'dev', f'(2 (2 fine) (2 .))\n{line}\n')
  with pytest.raises(UserError, match=what) as e:
    sst.read_split(str(tmp_path), 'dev', fine=True, phrases=False)
  assert f'{path}:2:' in str(e.value)


def test_parse_tree_error_names_path_and_line():
  with pytest.raises(UserError, match=r'^x\.txt:7: .*column 10'):
    sst.parse_tree('(3 (2 a) (9 b))', path='x.txt', line_number=7)


def test_not_utf8_names_line(tmp_path):
  (tmp_path / 'trees').mkdir()
  (tmp_path / 'trees' / 'test.txt').write_bytes(b'(2 ok)\n(2 caf\xe9)\n')
  with pytest.raises(UserError, match=r'test\.txt:2: not valid UTF-8'):
    sst.read_trees(str(tmp_path), 'test')


def test_missing_file_names_path_and_source(tmp_path):
  with pytest.raises(UserError) as e:
    sst.read_split(str(tmp_path), 'train', fine=True, phrases=False)
  message = str(e.value)
  assert os.path.join(str(tmp_path), 'trees', 'train.txt') in message
  assert 'trainDevTestTrees_PTB.zip' in message
  assert 'https://nlp.stanford.edu/sentiment/' in message


def test_binary_and_phrases_on_a_small_file(tmp_path):
  _write(tmp_path, 'train', '(4 (2 a) (4 (4 good) (2 film)))\n'
         '(1 (2 a) (0 (0 bad) (2 film)))\n'
         '(2 (2 a) (2 film))\n(4 (2 a) (4 (4 good) (2 film)))\n')
  root = str(tmp_path)
  assert sst.read_split(root, 'train', fine=False, phrases=False) == [
      ('a good film', 1), ('a bad film', 0), ('a good film', 1)]
  # Deduplicated (text, label) pairs in first-occurrence, pre-order.
  assert sst.read_split(root, 'train', fine=True, phrases=True) == [
      ('a good film', 4), ('a', 2), ('good film', 4), ('good', 4), ('film', 2),
      ('a bad film', 1), ('bad film', 0), ('bad', 0), ('a film', 2)]
  assert sst.read_split(root, 'train', fine=False, phrases=True) == [
      ('a good film', 1), ('good film', 1), ('good', 1), ('a bad film', 0),
      ('bad film', 0), ('bad', 0)]


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize('fine', in_tier([True, False], False))
@pytest.mark.parametrize('phrases', in_tier([True, False], False))  # small file: above
def test_read_split_is_examples_from_trees(trees, fine, phrases):
  assert sst.read_split(ROOT, 'dev', fine=fine, phrases=phrases) == (
      sst.examples_from_trees(trees['dev'], fine=fine, phrases=phrases))


@needs_data
def test_split_sizes_and_root_label_distributions(trees):
  for split in sst.SPLITS:
    examples = sst.examples_from_trees(trees[split], fine=True, phrases=False)
    assert len(examples) == SIZES_FINE[split]
    counts = collections.Counter(label for _, label in examples)
    assert tuple(counts[k] for k in range(5)) == ROOT_LABELS[split]
    # Binary = fine minus neutral, {0, 1} -> 0, {3, 4} -> 1, order kept.
    binary = sst.examples_from_trees(trees[split], fine=False, phrases=False)
    assert len(binary) == SIZES_BINARY[split]
    assert binary == [(t, int(l > 2)) for t, l in examples if l != 2]


@needs_data
def test_train_phrases_deduplicated(trees):
  train = trees['train']
  assert sum(1 for t in train for _ in t.nodes()) == 318_582
  phrases = sst.examples_from_trees(train, fine=True, phrases=True)
  assert len(phrases) == 159_274  # unique (phrase, label) pairs, as in the README
  assert len(set(phrases)) == len(phrases)
  assert phrases[0] == (train[0].text(), train[0].label)
  # No phrase text carries two labels, so there are as many unique texts.
  assert len({text for text, _ in phrases}) == 159_274
  binary = sst.examples_from_trees(train, fine=False, phrases=True)
  assert len(binary) == 77_616  # the unique pairs whose label is not neutral
  assert {label for _, label in binary} == {0, 1}


@needs_data
def test_no_break_space_stays_inside_tokens(trees):
  with open(os.path.join(ROOT, 'trees', 'train.txt'), encoding='utf-8') as f:
    line_numbers = [n for n, line in enumerate(f, 1) if '\u00a0' in line]
  assert line_numbers == [4342, 5799, 7409]
  train = trees['train']
  tokens = [t for n in line_numbers for t in train[n - 1].leaves() if '\u00a0' in t]
  assert len(tokens) == 3
  assert '8\u00a01\\/2' in tokens
  tree = next(train[n - 1] for n in line_numbers
              if '8\u00a01\\/2' in train[n - 1].leaves())
  assert '8\u00a01/2' in tree.text().split(' ')  # unescaped, still one token


@needs_data
def test_texts_match_kim_stsa_files(trees):
  # Kim's stsa.* files hold the same sentences lower-cased with PTB escapes kept
  # (-lrb-, \/), in another order. The (text, label) multisets agree exactly for
  # every split, fine and binary (binary derived as read_split does; see above).
  for split in sst.SPLITS:
    fine = [(text.lower(), label) for text, label in
            sst.examples_from_trees(trees[split], fine=True, phrases=False,
                                    unescape=False)]
    binary = [(text, int(label > 2)) for text, label in fine if label != 2]
    for name, ours in (('fine', fine), ('binary', binary)):
      path = os.path.join(ROOT, 'stsa', f'stsa.{name}.{split}')
      with open(path, encoding='utf-8') as f:
        theirs = collections.Counter(
            (text, int(label)) for label, text in
            (line.rstrip('\n').split(' ', 1) for line in f))
      ours = collections.Counter(ours)
      assert ours == theirs, (path, list((ours - theirs).elements())[:3])
