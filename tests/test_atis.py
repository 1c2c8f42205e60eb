"""Tests of the ATIS readers for the slotgated and jointslu formats (data/atis.py)."""
import collections
import os

import pytest

from seedsweep.data import atis
from seedsweep.errors import UserError
from tests.conftest import SHARED_DATA as DATA


@pytest.fixture(scope='module')
def real():
  root = os.path.join(DATA, 'atis')
  if not os.path.isdir(DATA):
    pytest.skip(f'no shared data folder at {DATA}')
  splits = ('train', 'dev', 'test')
  return {'slotgated': {s: atis.read_slotgated(root, s) for s in splits},
          'jointslu': {w: atis.read_jointslu(root, w) for w in atis.JOINTSLU_FILES}}


def test_counts(real):
  assert {s: len(v) for s, v in real['slotgated'].items()} == atis.SLOTGATED_SIZES
  assert {s: len(v) for s, v in real['slotgated'].items()} == {
      'train': 4478, 'dev': 500, 'test': 893}
  assert {w: len(v) for w, v in real['jointslu'].items()} == {
      'atis.train': 4978, 'atis.test': 893, 'atis-2.train': 4478, 'atis-2.dev': 500}
  assert atis.JOINTSLU_SIZES == {w: len(v) for w, v in real['jointslu'].items()}


def test_examples_are_well_formed(real):
  for examples in [*real['slotgated'].values(), *real['jointslu'].values()]:
    for e in examples:
      assert isinstance(e['tokens'], tuple) and isinstance(e['tags'], tuple)
      assert len(e['tokens']) == len(e['tags']) > 0
      assert 'BOS' not in e['tokens'][:1] and 'EOS' not in e['tokens'][-1:]
      assert '#' not in e['intent'] and e['intent'].startswith('atis_')
  first = real['slotgated']['train'][0]
  assert first == {
      'tokens': tuple('i want to fly from baltimore to dallas round trip'.split()),
      'tags': ('O', 'O', 'O', 'O', 'O', 'B-fromloc.city_name', 'O',
               'B-toloc.city_name', 'B-round_trip', 'I-round_trip'),
      'intent': 'atis_flight'}


def test_formats_agree_line_for_line(real):
  sg, js = real['slotgated'], real['jointslu']
  assert sg['train'] == js['atis-2.train']
  assert sg['dev'] == js['atis-2.dev']
  assert sg['test'] == js['atis.test']
  key = lambda e: (e['tokens'], e['tags'], e['intent'])
  assert (collections.Counter(map(key, js['atis.train']))
          == collections.Counter(map(key, js['atis-2.train'] + js['atis-2.dev'])))


def test_intent_statistics(real):
  sg, js = real['slotgated'], real['jointslu']
  assert [len(atis.intent_names(sg[s])) for s in ('train', 'dev', 'test')] == [21, 16, 20]
  assert [len(atis.intent_names(js[w])) for w in atis.JOINTSLU_FILES] == [22, 20, 21, 16]
  multi = [sum('+' in e['intent'] for e in sg[s]) for s in ('train', 'dev', 'test')]
  assert multi == [23, 3, 15]
  assert len(atis.intent_names(*sg.values())) == 26
  assert atis.intent_names(*sg.values()) == atis.intent_names(*js.values())
  # Four test intents never occur in training.
  unseen = set(atis.intent_names(sg['test'])) - set(atis.intent_names(sg['train']))
  assert unseen == {'atis_day_name', 'atis_airfare+atis_flight',
                    'atis_flight+atis_airline', 'atis_flight_no+atis_airline'}
  tags = {t for v in sg.values() for e in v for t in e['tags']}
  assert len(tags) == 127 and len({t[2:] for t in tags if t != 'O'}) == 83


def test_multi_intent_normalisation(real):
  assert atis.normalize_intent('atis_flight#atis_airfare') == 'atis_flight+atis_airfare'
  assert atis.normalize_intent('a#b#c') == 'a+b+c'
  assert atis.normalize_intent('atis_flight') == 'atis_flight'
  counts = collections.Counter(e['intent'] for e in real['slotgated']['train'])
  assert counts['atis_flight+atis_airfare'] == 19
  assert counts['atis_aircraft+atis_flight+atis_flight_no'] == 1


def _slotgated(tmp_path, seq_in, seq_out, label, split='valid'):
  folder = tmp_path / 'slotgated' / split
  folder.mkdir(parents=True)
  for name, text in (('seq.in', seq_in), ('seq.out', seq_out), ('label', label)):
    (folder / name).write_text(text)
  return str(tmp_path)


def _jointslu(tmp_path, text, which='atis.test'):
  (tmp_path / 'jointslu').mkdir(exist_ok=True)
  (tmp_path / 'jointslu' / f'{which}.w-intent.iob').write_text(text)
  return str(tmp_path)


def test_small_files_in_both_formats_agree(tmp_path):
  root = _slotgated(tmp_path, 'fly to boston\nfares\n', 'O O B-toloc\nO\n',
                    'atis_flight\natis_flight#atis_airfare\n', split='test')
  _jointslu(tmp_path, 'BOS fly to boston EOS\tO O O B-toloc atis_flight\n'
            'BOS fares EOS\t O O atis_flight#atis_airfare\n')
  expected = [{'tokens': ('fly', 'to', 'boston'), 'tags': ('O', 'O', 'B-toloc'),
               'intent': 'atis_flight'},
              {'tokens': ('fares',), 'tags': ('O',),
               'intent': 'atis_flight+atis_airfare'}]
  assert atis.read_slotgated(root, 'test') == expected
  assert atis.read_jointslu(root, 'atis.test') == expected


def test_slotgated_tag_count_mismatch(tmp_path):
  root = _slotgated(tmp_path, 'a b\nc d\n', 'O O\nO\n', 'x\ny\n')
  with pytest.raises(UserError, match=r'valid[/\\]seq\.out:2: 1 tags for the 2 tokens'):
    atis.read_slotgated(root, 'dev')


def test_slotgated_line_count_mismatch(tmp_path):
  root = _slotgated(tmp_path, 'a\nb\n', 'O\nO\n', 'x\n')
  with pytest.raises(UserError, match=r'\[2, 2, 1\] lines'):
    atis.read_slotgated(root, 'dev')


def test_slotgated_missing_file_and_bad_split(tmp_path):
  with pytest.raises(UserError, match=r'train[/\\]seq\.in: file not found'):
    atis.read_slotgated(str(tmp_path), 'train')
  with pytest.raises(UserError, match="'valid'.*expected one of"):
    atis.read_slotgated(str(tmp_path), 'valid')


@pytest.mark.parametrize('line,message', [
    ('BOS a b EOS O O O O x', r':2: 0 tabs; expected exactly one'),
    ('BOS a b EOS\tO O O x\tz', r':2: 2 tabs'),
    ('a b EOS\tO O O x', r":2: words 'a b EOS'.*expected 'BOS w1 .. wn EOS'"),
    ('BOS a b\tO O O x', r":2: words .*expected 'BOS"),
    ('BOS EOS\tO x', r":2: words .*at least one word"),
    ('BOS a b EOS\tO O x', r':2: 3 tags for 4 words'),
    ('BOS a b EOS\tO O O O x', r':2: 5 tags for 4 words'),
    ('BOS a b EOS\tB-x O O x', r":2: the tag of BOS is 'B-x'"),
])
def test_jointslu_malformed_lines(tmp_path, line, message):
  root = _jointslu(tmp_path, f'BOS ok EOS\tO O atis_flight\n{line}\n')
  with pytest.raises(UserError, match=r'atis\.test\.w-intent\.iob' + message):
    atis.read_jointslu(root, 'atis.test')


def test_jointslu_missing_file_and_unknown_name(tmp_path):
  with pytest.raises(UserError, match=r'jointslu[/\\]atis-2\.dev\.w-intent\.iob: file '
                     'not found'):
    atis.read_jointslu(str(tmp_path), 'atis-2.dev')
  with pytest.raises(UserError, match="'atis.dev'.*expected one of"):
    atis.read_jointslu(str(tmp_path), 'atis.dev')


def test_non_utf8_file_names_the_line(tmp_path):
  root = _jointslu(tmp_path, '')
  path = tmp_path / 'jointslu' / 'atis.test.w-intent.iob'
  path.write_bytes(b'BOS a EOS\tO O x\nBOS \xff EOS\tO O x\n')
  with pytest.raises(UserError, match=r'atis\.test\.w-intent\.iob:2: not valid UTF-8'):
    atis.read_jointslu(root, 'atis.test')
