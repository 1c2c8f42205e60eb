"""ATIS intents and BIO slot tags: raw-file readers for its two public formats.

Files under ``root`` (the ``atis`` folder):

* ``slotgated/{train,valid,test}/{seq.in,seq.out,label}`` (Goo et al. 2018; 4478 / 500
  / 893 utterances): line ``i`` of the three files holds the tokens, their BIO tags and
  the intent of utterance ``i``. Split ``'dev'`` is the ``valid`` folder.
* ``jointslu/{atis.train,atis.test,atis-2.train,atis-2.dev}.w-intent.iob`` (Hakkani-Tür
  et al. 2016; 4978 / 893 / 4478 / 500): one utterance per line,
  ``BOS w1 .. wn EOS<TAB>O t1 .. tn INTENT`` (the intent sits in the ``EOS`` slot).

Both readers return, in file order, dicts ``{'tokens': tuple[str], 'tags': tuple[str],
'intent': str}`` with one tag per token. Both formats join the intents of a
multi-intent utterance with ``#``; they are normalised to ``+`` (e.g.
``'atis_flight+atis_airfare'``), and every distinct intent string is one class.
Tokens and tags are split on whitespace.
"""
import os
from typing import Dict, Iterable, List, Tuple

import tensorflow_datasets as tfds

from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.inputs import raw as raw_lib
from seedsweep.inputs import tfds_base

SLOTGATED_SPLITS = {'train': 'train', 'dev': 'valid', 'test': 'test'}
JOINTSLU_FILES = ('atis.train', 'atis.test', 'atis-2.train', 'atis-2.dev')
SLOTGATED_SIZES = {'train': 4478, 'dev': 500, 'test': 893}
JOINTSLU_SIZES = {'atis.train': 4978, 'atis.test': 893, 'atis-2.train': 4478,
                  'atis-2.dev': 500}

Example = Dict[str, object]


def normalize_intent(intent: str) -> str:
  """``'a#b'`` -> ``'a+b'``: one spelling of multi-intent labels for both formats."""
  return intent.replace('#', '+')


def intent_names(*example_lists: Iterable[Example]) -> Tuple[str, ...]:
  """Sorted distinct intent strings of the given examples (one class each)."""
  return tuple(sorted({e['intent'] for examples in example_lists for e in examples}))


def _read_lines(path: str) -> List[str]:
  """Lines of a UTF-8 (in practice ASCII) file, without line ends."""
  if not os.path.isfile(path):
    raise UserError(f'{path}: file not found; expected the raw ATIS file there '
                    '(check the data root)')
  with open(path, 'rb') as f:
    data = f.read()
  try:
    text = data.decode('utf-8')
  except UnicodeDecodeError as e:
    line = data[:e.start].count(b'\n') + 1
    raise UserError(f'{path}:{line}: not valid UTF-8 ({e.reason}); expected an '
                    'ASCII text file') from None
  lines = text.split('\n')
  if lines and not lines[-1]:
    lines.pop()  # the final line's newline
  return [line.rstrip('\r') for line in lines]


def read_slotgated(root: str, split: str) -> List[Example]:
  """Utterances of one split (``'train'``, ``'dev'`` or ``'test'``) in file order."""
  if split not in SLOTGATED_SPLITS:
    raise UserError(f'ATIS split {split!r} is unknown; expected one of '
                    f'{tuple(SLOTGATED_SPLITS)} (data/atis.py)')
  folder = os.path.join(root, 'slotgated', SLOTGATED_SPLITS[split])
  paths = [os.path.join(folder, name) for name in ('seq.in', 'seq.out', 'label')]
  columns = [_read_lines(p) for p in paths]
  counts = [len(c) for c in columns]
  if len(set(counts)) != 1:
    raise UserError(f'{folder}: seq.in, seq.out and label have {counts} lines; expected '
                    'the same number (one utterance per line)')
  examples = []
  for number, (words, tags, intent) in enumerate(zip(*columns), 1):
    tokens, tags, intent = tuple(words.split()), tuple(tags.split()), intent.strip()
    if not tokens:
      raise UserError(f'{paths[0]}:{number}: empty utterance; expected at least one '
                      'token')
    if len(tags) != len(tokens):
      raise UserError(f'{paths[1]}:{number}: {len(tags)} tags for the {len(tokens)} '
                      f'tokens of {paths[0]}:{number}; expected one tag per token')
    if not intent or ' ' in intent:
      raise UserError(f'{paths[2]}:{number}: intent {intent!r}; expected one intent '
                      "name (several joined by '#')")
    examples.append({'tokens': tokens, 'tags': tags,
                     'intent': normalize_intent(intent)})
  return examples


def read_jointslu(root: str, which: str) -> List[Example]:
  """Utterances of ``jointslu/<which>.w-intent.iob`` in file order.

  Args:
    root: the ``atis`` folder.
    which: one of ``JOINTSLU_FILES``.
  """
  if which not in JOINTSLU_FILES:
    raise UserError(f'ATIS jointslu file {which!r} is unknown; expected one of '
                    f'{JOINTSLU_FILES} (data/atis.py)')
  path = os.path.join(root, 'jointslu', f'{which}.w-intent.iob')
  examples = []
  for number, line in enumerate(_read_lines(path), 1):
    where = f'{path}:{number}'
    if line.count('\t') != 1:
      raise UserError(f'{where}: {line.count(chr(9))} tabs; expected exactly one, '
                      "between 'BOS w1 .. wn EOS' and 'O t1 .. tn INTENT'")
    words, tags = (part.split() for part in line.split('\t'))
    if len(words) < 3 or words[0] != 'BOS' or words[-1] != 'EOS':
      raise UserError(f'{where}: words {" ".join(words[:3])!r}..; expected '
                      "'BOS w1 .. wn EOS' with at least one word")
    if len(tags) != len(words):
      raise UserError(f'{where}: {len(tags)} tags for {len(words)} words (BOS and EOS '
                      "included); expected 'O t1 .. tn INTENT', one entry per word")
    if tags[0] != 'O':
      raise UserError(f'{where}: the tag of BOS is {tags[0]!r}; expected \'O\'')
    examples.append({'tokens': tuple(words[1:-1]), 'tags': tuple(tags[1:-1]),
                     'intent': normalize_intent(tags[-1])})
  return examples


# --- TFDS builder -------------------------------------------------------------------

_SLOTGATED_URL = ('https://raw.githubusercontent.com/MiuLab/SlotGated-SLU/master/data/'
                  'atis/')
_JOINTSLU_URL = 'https://raw.githubusercontent.com/yvchen/JointSLU/master/data/'
RAW_FILES = {
    'slotgated': tuple(f'atis/slotgated/{folder}/{name}'
                       for folder in SLOTGATED_SPLITS.values()
                       for name in ('seq.in', 'seq.out', 'label')),
    'jointslu': tuple(f'atis/jointslu/{which}.w-intent.iob'
                      for which in ('atis.train', 'atis.test')),
}
DOWNLOADS = {
    **{rel: raw_lib.Download(_SLOTGATED_URL + rel[len('atis/slotgated/'):])
       for rel in RAW_FILES['slotgated']},
    **{rel: raw_lib.Download(_JOINTSLU_URL + rel[len('atis/jointslu/'):])
       for rel in RAW_FILES['jointslu']},
}

# Each raw file, relative to the data root, and the sha256 it must have (the offline
# copy's SHA256SUMS; data/raw_files.py).
SHA256 = {
    'atis/jointslu/atis-2.dev.w-intent.iob':
        '99385eebb9295a214ed8a1c0cc547eb8e8d0618c2a4f1094720d52d8902f7ffc',
    'atis/jointslu/atis-2.train.w-intent.iob':
        'c4b1fe74c23b226814ca0cb905eb68190226f3954799277a873a7d29347b7d0e',
    'atis/jointslu/atis.test.w-intent.iob':
        '744bc272bce1c6a828df7b5580b47a4aee2ad2019e5d2376c348bea1c15f0d6e',
    'atis/jointslu/atis.train.w-intent.iob':
        'e0a1e3de978345b4fbfa4f2eefa8bb974460f0f7f38330e179ccaecc80d68178',
    'atis/slotgated/test/label':
        'ce4bfe6590d9498e1078f30b4137d3e8b3e94277b444b26360c0bf2e9e282761',
    'atis/slotgated/test/seq.in':
        '4b2119fc59c37f9398c6605db435d4f467505009e6ee3e5af04fed09f39dc397',
    'atis/slotgated/test/seq.out':
        'a4690d6bceadc06876d1ff99bc401744aa981cb321e598ae12a3859d7be53254',
    'atis/slotgated/train/label':
        'd0a771547665eecbdf9f96ea015ef07d1f6ee9f063e861020dafabb3c2a04377',
    'atis/slotgated/train/seq.in':
        '3a670980841b21ab39088b2595efc17d487cdc45769c075a3e5f9458bba28c7f',
    'atis/slotgated/train/seq.out':
        '14c7131bd66562f797dbd7189bc7358f0cf354c6afb0785a9ab973c35b58f34c',
    'atis/slotgated/valid/label':
        '06957cfe6fdffac84f8280bc3a1f8ca85c85631b363817aa4543aac611f8addf',
    'atis/slotgated/valid/seq.in':
        'c7435b96e7948393608c34819628e863c5338f11ca68e8f896d2cc041d8e17f8',
    'atis/slotgated/valid/seq.out':
        '83ccff3e36f83a993f8e5b5b82adf3256076f234abda4d784051381d7ac76922',
}


class SeedsweepAtis(tfds_base.RawTextBuilder):
  """ATIS utterances with an intent label and one BIO slot tag per token.

  Configs: ``slotgated`` (Goo et al. 2018 split: train 4478 / dev 500 / test 893) and
  ``jointslu`` (Hakkani-Tür et al. 2016 files ``atis.train`` 4978 / ``atis.test`` 893,
  no dev). Multi-intent labels are one class each, joined with ``+``.
  """
  name = 'seedsweep_atis'
  HOMEPAGE = 'https://github.com/MiuLab/SlotGated-SLU'
  HAS_TAGS = True
  BUILDER_CONFIGS = [tfds.core.BuilderConfig(name=n, description=n)
                     for n in ('slotgated', 'jointslu')]

  def read(self, root):
    """The utterances of the config's files under ``root/atis``, each with its intent and
    its tags."""
    root = os.path.join(root, 'atis')
    if self.builder_config.name == 'slotgated':
      splits = {s: read_slotgated(root, s) for s in SLOTGATED_SPLITS}
    else:
      splits = {'train': read_jointslu(root, 'atis.train'),
                'test': read_jointslu(root, 'atis.test')}
    return {split: [tfds_base.Example(' '.join(e['tokens']), e['intent'],
                                      ' '.join(e['tags'])) for e in rows]
            for split, rows in splits.items()}


# The registry's names of this module (data/spec.py).
DATASETS = {'atis': DatasetSpec(SeedsweepAtis, 'slotgated', RAW_FILES['slotgated'], DOWNLOADS),
            'atis/jointslu': DatasetSpec(SeedsweepAtis, 'jointslu', RAW_FILES['jointslu'],
                                         DOWNLOADS)}
