"""Stanford Sentiment Treebank (SST-1 / SST-2): reader for the original PTB trees.

Reads ``<root>/trees/{train,dev,test}.txt`` from ``trainDevTestTrees_PTB.zip``
(https://nlp.stanford.edu/sentiment/): one fully labelled, binarized PTB-style tree
per line, e.g. ``(3 (2 It) (4 (2 's) (3 fine)))``; every node carries a sentiment label
0..4 (very negative .. very positive) and the root label is the sentence label.

Pure Python: :func:`parse_tree` parses one line, :func:`read_trees` one split file and
:func:`read_split` turns a split into ``(text, label)`` examples, sentence- or
phrase-level, fine-grained (5 classes) or binary (SST-2: neutral dropped).
"""
import contextlib
import functools
import gc
import os
import re
from typing import Iterator, List, NamedTuple, Optional, Sequence, Tuple

import tensorflow_datasets as tfds

from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.inputs import raw as raw_lib
from seedsweep.inputs import tfds_base

SPLITS = ('train', 'dev', 'test')
LABEL_NAMES_FINE = ('very negative', 'negative', 'neutral', 'positive',
                    'very positive')
LABEL_NAMES_BINARY = ('negative', 'positive')
NEUTRAL = 2
SOURCE = ('the PTB trees file of the Stanford Sentiment Treebank: '
          'trainDevTestTrees_PTB.zip from https://nlp.stanford.edu/sentiment/, '
          'unpacked into {root}/trees/')

# PTB bracket escapes -> the characters they stand for.
_BRACKETS = {'-LRB-': '(', '-RRB-': ')', '-LSB-': '[', '-RSB-': ']',
             '-LCB-': '{', '-RCB-': '}'}
_BRACKET_RE = re.compile('|'.join(re.escape(k) for k in _BRACKETS))
_BACKSLASH_RE = re.compile(r'\\(.)', re.DOTALL)
# Tree items: a whole leaf "(LABEL TOKEN)", "(LABEL", ")" or a stray word. Tokens and
# labels are runs of anything but ASCII space and parentheses, so a U+00A0 no-break
# space stays inside its token (as in train.txt's "8\u00a01\\/2").
_ITEM_RE = re.compile(r'\(([^() ]*) ([^() ]+)\)|\(([^() ]*)|(\))|([^() ]+)')
_LABELS = {str(i): i for i in range(5)}


class Tree(NamedTuple):
  """One labelled node: a leaf holds ``token`` (raw PTB text), an inner node
  ``children`` (non-empty); never both. A NamedTuple: the train file has 318,582
  nodes and tuples build fast."""
  label: int  # sentiment 0..4
  children: Tuple['Tree', ...] = ()
  token: Optional[str] = None

  @property
  def is_leaf(self) -> bool:
    """Whether the node is a token (not a phrase)."""
    return self.token is not None

  def nodes(self) -> Iterator['Tree']:
    """All nodes in pre-order (this node first, then children left to right)."""
    stack = [self]
    while stack:
      node = stack.pop()
      yield node
      stack.extend(reversed(node.children))

  def leaves(self) -> List[str]:
    """The leaf tokens left to right, as in the file (PTB escapes kept)."""
    return [n.token for n in self.nodes() if n.token is not None]

  def text(self, unescape: bool = True) -> str:
    """The leaf tokens joined by single ASCII spaces (see :func:`unescape_ptb`)."""
    return ' '.join(unescape_ptb(t, keep_escapes=not unescape) for t in self.leaves())

  def phrases(self, unescape: bool = True) -> List[Tuple[str, int]]:
    """``(text, label)`` of every node, in pre-order (so the sentence comes first)."""
    nodes = list(self.nodes())
    texts = {}  # id(node) -> text; children follow their parent in pre-order
    for node in reversed(nodes):
      texts[id(node)] = (
          unescape_ptb(node.token, keep_escapes=not unescape) if node.token is not None
          else ' '.join(texts[id(c)] for c in node.children))
    return [(texts[id(n)], n.label) for n in nodes]


def unescape_ptb(token: str, *, keep_escapes: bool = False) -> str:
  """Undoes PTB escapes: ``-LRB-`` -> ``(`` (likewise -RRB- -LSB- -RSB- -LCB- -RCB-)
  and a backslash before any character -> that character (``\\/`` -> ``/``,
  ``\\*`` -> ``*``).

  Unescaping is the default of this module because the tokens then read as the text
  was written and match the other corpora here (MR, Subj), whose files have literal
  ``(`` and ``/``.
  ``keep_escapes=True`` returns the token unchanged, e.g. to compare with Kim's
  ``stsa.*`` files, which keep ``-lrb-`` and ``\\/`` (lower-cased).
  """
  if keep_escapes or ('-' not in token and '\\' not in token):
    return token
  token = _BRACKET_RE.sub(lambda m: _BRACKETS[m.group(0)], token)
  return _BACKSLASH_RE.sub(r'\1', token)


def _malformed(line, path, line_number, index, what, expected):
  """UserError at the ``index``-th item of ``line`` (None: end of line)."""
  starts = [m.start() for m in _ITEM_RE.finditer(line)]
  column = (len(line) if index is None or index >= len(starts) else starts[index]) + 1
  return UserError(f'{path}:{line_number}: malformed SST tree at column {column}: '
                   f'{what}; expected {expected}')


def _bad_label(line, path, line_number, index, label):
  what = (f'label {label} is outside 0..4' if label.isascii() and label.isdigit()
          else f'label {label!r} is not an integer' if label else 'no label after "("')
  return _malformed(line, path, line_number, index, what, 'a sentiment label 0..4')


def parse_tree(line: str, *, path: str = '<string>', line_number: int = 0) -> Tree:
  """Parses one PTB tree line such as ``(3 (2 a) (3 (3 good) (2 film)))``.

  Grammar: ``tree := '(' LABEL (TOKEN | tree tree*) ')'`` with LABEL in 0..4;
  tokens are separated by ASCII spaces and parentheses only. A trailing newline is
  ignored. Raises UserError naming ``path`` and ``line_number`` on malformed input
  (unbalanced parentheses, a bad label, a leaf with several tokens, trailing text).
  """
  line = line.rstrip('\n').rstrip('\r')
  stack = []  # open nodes: [label, children, token]
  root = None
  # Each item: (leaf label, leaf token, open label, close, word); one part is set.
  for i, (leaf_label, leaf_token, open_label, close, word) in enumerate(
      _ITEM_RE.findall(line)):
    if root is not None:
      raise _malformed(line, path, line_number, i,
                       'unbalanced ")"' if close else 'trailing text after the tree',
                       'one tree per line')
    if leaf_token:  # "(LABEL TOKEN)" in one go: the common case.
      if leaf_label not in _LABELS:
        raise _bad_label(line, path, line_number, i, leaf_label)
      node = Tree(_LABELS[leaf_label], (), leaf_token)
      if stack:
        if stack[-1][2] is not None:
          raise _malformed(line, path, line_number, i, 'a subtree after a leaf token',
                           'either one token or subtrees in a node')
        stack[-1][1].append(node)
      else:
        root = node
    elif close:
      if not stack:
        raise _malformed(line, path, line_number, i, 'unbalanced ")"',
                         'a tree "(LABEL ...)"')
      label, children, token = stack.pop()
      if token is None and not children:
        raise _malformed(line, path, line_number, i, 'an empty node',
                         'a token or subtrees after the label')
      node = Tree(label, tuple(children), token)
      if stack:
        stack[-1][1].append(node)
      else:
        root = node
    elif word:
      if not stack:
        raise _malformed(line, path, line_number, i, f'text {word!r} outside any tree',
                         'a tree "(LABEL ...)"')
      top = stack[-1]
      if top[2] is not None or top[1]:
        raise _malformed(line, path, line_number, i,
                         f'a second token {word!r} in a node',
                         'a leaf "(LABEL TOKEN)" with exactly one token')
      top[2] = word
    else:  # "(LABEL" of an inner node (or of a leaf the fast path did not match).
      if open_label not in _LABELS:
        raise _bad_label(line, path, line_number, i, open_label)
      if stack and stack[-1][2] is not None:
        raise _malformed(line, path, line_number, i, 'a subtree after a leaf token',
                         'either one token or subtrees in a node')
      stack.append([_LABELS[open_label], [], None])
  if stack:
    raise _malformed(line, path, line_number, None,
                     f'end of line with {len(stack)} unclosed "("',
                     'balanced parentheses')
  if root is None:
    raise _malformed(line, path, line_number, 0, 'no tree on this line',
                     'one tree per line')
  return root


@contextlib.contextmanager
def _gc_paused():
  """Pauses the cyclic garbage collector: parsing makes ~10^6 acyclic containers,
  which would trigger many useless full collections (parsing train takes ~2x longer)."""
  was_enabled = gc.isenabled()
  gc.disable()
  try:
    yield
  finally:
    if was_enabled:
      gc.enable()


def tree_path(root: str, split: str) -> str:
  """``<root>/trees/<split>.txt``; ``split`` is one of :data:`SPLITS`."""
  if split not in SPLITS:
    raise ValueError(f'SST split {split!r}; expected one of {SPLITS}')
  return os.path.join(root, 'trees', f'{split}.txt')


def read_trees(root: str, split: str) -> List[Tree]:
  """All trees of ``<root>/trees/<split>.txt`` in file order (one per line).

  Parsed once per process and file version (path, size, mtime): the four SST
  configurations read the same trees.
  """
  path = tree_path(root, split)
  if not os.path.isfile(path):
    raise UserError(f'{path} not found; expected {SOURCE.format(root=root)}')
  st = os.stat(path)
  return list(_parse_file(os.path.abspath(path), st.st_size, st.st_mtime_ns, root))


@functools.lru_cache(maxsize=6)
def _parse_file(path: str, size: int, mtime_ns: int, root: str) -> Tuple[Tree, ...]:
  del size, mtime_ns  # part of the cache key only
  trees = []
  with open(path, 'rb') as f, _gc_paused():
    for line_number, raw in enumerate(f, 1):
      try:
        line = raw.decode('utf-8')
      except UnicodeDecodeError as e:
        raise UserError(f'{path}:{line_number}: not valid UTF-8 ({e.reason} at byte '
                        f'{e.start}); expected {SOURCE.format(root=root)}') from None
      trees.append(parse_tree(line, path=path, line_number=line_number))
  return tuple(trees)


def binary_label(label: int) -> Optional[int]:
  """SST-2 label: 0, 1 -> 0; 3, 4 -> 1; neutral 2 -> None (dropped)."""
  return None if label == NEUTRAL else int(label > NEUTRAL)


def read_split(root: str, split: str, *, fine: bool, phrases: bool,
               unescape: bool = True) -> List[Tuple[str, int]]:
  """Examples ``(text, label)`` of one split; text = leaf tokens joined by spaces.

  Args:
    root: folder holding ``trees/{train,dev,test}.txt``.
    split: 'train', 'dev' or 'test'.
    fine: True: labels 0..4 (SST-1). False: binary SST-2 (0 negative, 1 positive),
      neutral (2) examples dropped.
    phrases: False: one example per tree (its root label), in file order.
      True: every labelled node (root, inner phrases and single-word leaves)
      becomes an example, *deduplicated*: each distinct (text, label) pair is kept
      once, at its first occurrence (trees in file order, nodes in pre-order, so a
      tree's sentence comes before its phrases). Train yields 159,274 fine pairs
      (77,616 binary) from its 318,582 nodes: common phrases ("the", ",", ...) recur
      across sentences, always with the same label. Meant for 'train' (Socher et al.
      2013, Kim 2014 train on phrases, evaluate on sentences); allowed for any split.
    unescape: undo PTB escapes (``-LRB-`` -> ``(``, ``\\/`` -> ``/``; see
      :func:`unescape_ptb`). False keeps the file's tokens.

  Returns:
    A list of (text str, label int) pairs.
  """
  return examples_from_trees(read_trees(root, split), fine=fine, phrases=phrases,
                             unescape=unescape)


def examples_from_trees(trees: Sequence[Tree], *, fine: bool, phrases: bool,
                        unescape: bool = True) -> List[Tuple[str, int]]:
  """:func:`read_split` on already parsed trees (parse a file once, derive
  several configurations)."""
  with _gc_paused():
    return _examples(trees, fine, phrases, unescape)


def _examples(trees, fine, phrases, unescape):
  examples = []
  if not phrases:
    for tree in trees:
      label = tree.label if fine else binary_label(tree.label)
      if label is not None:
        examples.append((tree.text(unescape), label))
    return examples
  seen = set()
  for tree in trees:
    for text, label in tree.phrases(unescape):
      example = (text, label if fine else binary_label(label))
      if example[1] is not None and example not in seen:
        seen.add(example)
        examples.append(example)
  return examples


# --- TFDS builder -------------------------------------------------------------------

RAW_FILES = tuple(f'sst/trees/{s}.txt' for s in SPLITS)
_ZIP = 'https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip'


class SeedsweepSst(tfds_base.RawTextBuilder):
  """Stanford Sentiment Treebank from the PTB trees: fine (SST-1) or binary (SST-2).

  Configs ``fine``, ``binary``: one example per sentence. ``fine_phrases``,
  ``binary_phrases``: training on every distinct labelled phrase of the training trees
  (sentences included); dev and test stay sentence-level.
  """
  name = 'seedsweep_sst'
  HOMEPAGE = 'https://nlp.stanford.edu/sentiment/'
  BUILDER_CONFIGS = [
      tfds.core.BuilderConfig(name=n, description=n)
      for n in ('fine', 'binary', 'fine_phrases', 'binary_phrases')]

  def read(self, root):
    """The config's train, dev and test examples from the trees under ``root/sst``
    (training phrases under a ``*_phrases`` config)."""
    fine = self.builder_config.name.startswith('fine')
    phrases = self.builder_config.name.endswith('_phrases')
    names = LABEL_NAMES_FINE if fine else LABEL_NAMES_BINARY
    out = {}
    for split in SPLITS:
      trees = read_trees(os.path.join(root, 'sst'), split)
      rows = examples_from_trees(trees, fine=fine, phrases=phrases and split == 'train')
      out[split] = [tfds_base.Example(text, names[label]) for text, label in rows]
    return out


DOWNLOADS = {rel: raw_lib.Download(_ZIP, rel[len('sst/'):]) for rel in RAW_FILES}
# Each raw file, relative to the data root, and the sha256 it must have (the offline
# copy's SHA256SUMS; data/raw_files.py).
SHA256 = {
    'sst/trees/dev.txt':
        '0e9336aed6e4730e19f58d00a77b3f0297efdb755f7b5e598c98a05e3f97ea40',
    'sst/trees/test.txt':
        '6e54806dee95cf80cd918e7dfb3f6770f6df24bf826f289a4d1f709e1c8f6761',
    'sst/trees/train.txt':
        'e2f3f41b0b1e6d4dddc0effe3bfc2d27ed8928079aa9a03d652311614fc5feb7',
}


# The registry's names of this module (data/spec.py): one per builder config.
DATASETS = {
    f'sst/{config}': DatasetSpec(SeedsweepSst, config, RAW_FILES, DOWNLOADS,
                                 LABEL_NAMES_FINE if config.startswith('fine')
                                 else LABEL_NAMES_BINARY)
    for config in ('fine', 'binary', 'fine_phrases', 'binary_phrases')}
