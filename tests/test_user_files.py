"""Your own data (config.data.name='files'): TSV/JSONL parsing, errors with file and
line, and any model training on it through config alone."""
import csv
import dataclasses
import json
import os
import re

import numpy as np
import pytest

from seedsweep.config import base
from seedsweep.config import checks as config_checks
from seedsweep import data as data_lib
from seedsweep.data import user_files
from seedsweep.errors import UserError
from tests.conftest import SHARED_DATA, run_launch


def test_tsv_and_jsonl_with_tags(tmp_path):
  tsv = tmp_path / 'a.tsv'
  tsv.write_text('good\tvery nice film\nbad\tawful\n\n', encoding='utf-8')
  assert user_files.read_file(str(tsv)) == [('very nice film', 'good', None),
                                            ('awful', 'bad', None)]
  jsonl = tmp_path / 'a.jsonl'
  jsonl.write_text(json.dumps({'text': 'fly to boston', 'label': 'flight',
                               'tags': ['O', 'O', 'B-city']}) + '\n' +
                   json.dumps({'text': 'fares', 'label': 'fare', 'tags': 'O'}) + '\n')
  assert user_files.read_file(str(jsonl))[0] == ('fly to boston', 'flight', 'O O B-city')


@pytest.mark.parametrize('name, content, message', [
    ('x.tsv', 'good\tnice\nonly-one-field\n', r'x.tsv:2: 1 TAB-separated field, but the '
     r'first row \(line 1\) has 2'),
    ('x.tsv', 'good\tnice film\tO\n', r'x.tsv:1: 1 tags for 2 tokens'),
    ('x.tsv', 'sentence\tgrade\nnice film\t1\n', r"x.tsv:1: the header .* no label "
     r"column 'label'"),
    ('x.tsv', 'sentence\tlabel\nnice film\n', r'x.tsv:2: 1 TAB-separated field, but the '
     r'header \(line 1\) has 2'),
    ('x.csv', 'text,label\n"nice, film,1\n', r'x.csv:2: unexpected end of data; expected CSV rows'),
    ('x.tsv', b'good\tnice \xff film\n', r'x.tsv:1: not utf-8 text \(byte 11 of the line'),
    ('x.jsonl', '{"text": "a", "label": "b"}\n{"text": "a"\n', r'x.jsonl:2: not valid JSON'),
    ('x.jsonl', '{"text": "a"}\n', r'x.jsonl:1: expected an object with "text" and'),
    ('x.xlsx', 'a,b\n', r"unknown extension '.xlsx'"),
])
def test_malformed_files_name_file_and_line(tmp_path, name, content, message):
  path = tmp_path / name
  if isinstance(content, bytes):
    path.write_bytes(content)
  else:
    path.write_text(content, encoding='utf-8')
  with pytest.raises(UserError, match=message):
    user_files.read_file(str(path))


def test_header_rows_name_the_columns_and_csv_quoting_is_read(tmp_path):
  glue = tmp_path / 'glue.tsv'  # GLUE's SST-2 layout: header, sentence first
  glue.write_text('sentence\tlabel\nit \'s a " charming film \t1\ndull\t0\n')
  assert user_files.read_file(str(glue)) == [('it \'s a " charming film', '1', None),
                                             ('dull', '0', None)]
  quoted = tmp_path / 'q.csv'
  quoted.write_text('id,Label,Text,tags\n7,pos,"nice, ""warm"" film",O O O\n')
  assert user_files.read_file(str(quoted)) == [('nice, "warm" film', 'pos', 'O O O')]
  named = tmp_path / 'n.tsv'
  named.write_text('review\tstars\nnice film\t5\n')
  columns = user_files.Columns(text='review', label='stars')
  assert user_files.read_file(str(named), columns) == [('nice film', '5', None)]
  jsonl = tmp_path / 'n.jsonl'
  jsonl.write_text('{"review": "nice film", "stars": 5}\n')
  assert user_files.read_file(str(jsonl), columns) == [('nice film', '5', None)]
  headerless = tmp_path / 'h.tsv'  # naming columns needs a header naming them
  headerless.write_text('5\tnice film\n')
  with pytest.raises(UserError, match=r"h.tsv:1: the header \['5', 'nice film'\] has "
                     r"no text column 'review' and no label column 'stars'"):
    user_files.read_file(str(headerless), columns)


def _refused(path, columns=user_files.Columns(), read=user_files.read_file) -> str:
  """The message ``read`` refuses ``path`` with: one line."""
  with pytest.raises(UserError) as e:
    read(str(path), columns)
  assert '\n' not in str(e.value), str(e.value)
  return str(e.value)


def test_a_row_wider_or_narrower_than_the_header_names_its_line_and_the_fix(tmp_path):
  """An unquoted comma in a CSV text used to cut the text there and take the next
  piece for the label; a row is now as wide as the header, or refused."""
  path = tmp_path / 'train.csv'
  path.write_text('text,label\na fine film,pos\na fine, warm film,pos\n')
  assert _refused(path) == (
      f"{path}:3: 3 comma-separated fields, but the header (line 1) has 2 ('text', "
      "'label'); a comma in a text splits it: quote that text (\"a fine, warm film\"), "
      'or write the file as TSV')
  path.write_text('text,label\n"a fine, warm\nfilm",pos\ndull\n')  # a quoted line break
  assert _refused(path).startswith(f"{path}:4: 1 comma-separated field, but the header "
                                   "(line 1) has 2 ('text', 'label'); expected a value "
                                   'for every column')
  tsv = tmp_path / 'train.tsv'
  tsv.write_text('pos\ta fine film\npos\ta fine\twarm film\n')  # headerless
  assert _refused(tsv).startswith(f"{tsv}:2: 3 TAB-separated fields, but the first row "
                                  "(line 1) has 2 ('label', 'text'); a tab in a text")
  # Predict reads its input by the same rule: it never cuts a text at a comma.
  inputs = tmp_path / 'texts.csv'
  inputs.write_text('text\na fine film\na fine, warm film\n')
  assert _refused(inputs, read=user_files.read_inputs).startswith(
      f"{inputs}:3: 2 comma-separated fields, but the header (line 1) has 1 ('text')")
  inputs.write_text('a fine film\na fine, warm film\n')  # texts alone, headerless
  assert _refused(inputs, read=user_files.read_inputs).startswith(
      f"{inputs}:2: 2 comma-separated fields, but the first row (line 1) has 1")


def _trec_questions():
  """TREC's training questions with their coarse labels (``(text, label)``)."""
  with open(os.path.join(SHARED_DATA, 'trec', 'train_5500.label'),
            encoding='latin-1') as f:
    return [(text.strip(), label.split(':')[0])
            for label, text in (line.split(' ', 1) for line in f)]


def test_a_csv_with_unquoted_commas_trains_no_class_of_text_pieces(tmp_path):
  """The issue's case: questions written as ``f'{text},{label}'`` lines trained as a
  problem of hundreds of classes (here 391, TREC having 6), the words after a
  question's first comma taken for its label. Now the first such line is refused,
  for training and for predict, and quoted the same rows read as 6 classes."""
  questions = _trec_questions()
  path = tmp_path / 'trec.csv'
  path.write_text('text,label\n' + ''.join(f'{t},{l}\n' for t, l in questions),
                  encoding='utf-8')
  first = 2 + next(i for i, (text, _) in enumerate(questions) if ',' in text)
  for read in (user_files.read_file, user_files.read_inputs):
    assert re.match(rf"{re.escape(str(path))}:{first}: \d comma-separated fields, but "
                    r"the header \(line 1\) has 2 \('text', 'label'\); a comma in a "
                    r'text splits it: quote that text', _refused(path, read=read))
  with open(path, 'w', encoding='utf-8', newline='') as f:
    csv.writer(f).writerows([('text', 'label'), *questions])
  assert sorted({e.label for e in user_files.read_file(str(path))}) == [
      'ABBR', 'DESC', 'ENTY', 'HUM', 'LOC', 'NUM']


def test_a_header_naming_no_text_column_names_its_columns_and_the_fix(tmp_path):
  path = tmp_path / 'reviews.csv'
  path.write_text('review,label\na fine film,pos\ndull,neg\n')
  for read in (user_files.read_file, user_files.read_inputs):
    assert _refused(path, read=read) == (
        f"{path}:1: the header ['review', 'label'] has no text column 'text'/"
        "'sentence'; set config.data.files.text_column='review' (the likeliest "
        "column), or name the column 'text'")
  # The "tags" error: three columns, none named text or label, were read as
  # headerless label,text,tags rows. The error now says so and what names them.
  path.write_text('id,review,sentiment\n1,a fine film,pos\n2,dull,neg\n')
  assert _refused(path) == (
      f"{path}:2: 1 tags for 3 tokens; expected one tag per token (line 1 ['id', "
      "'review', 'sentiment'] has no text column 'text'/'sentence' and no label "
      "column 'label', so each row is read as label,text,tags; if that line is a "
      "header, set config.data.files.text_column='review' and "
      "config.data.files.label_column='sentiment' (the likeliest columns), or name "
      "the columns 'text' and 'label')")
  # A first row unlike the rows below (its "label" in no other row, theirs
  # repeating) is a header, refused before any row is read as data.
  rows = ''.join(f'{"ab"[i % 2]},sentence number {i}\n' for i in range(30))
  path.write_text('sentiment,review\n' + rows)
  assert _refused(path).startswith(
      f"{path}:1: the first row ['sentiment', 'review'] is a header (its first value "
      "'sentiment' is the label of no row below it), and it has no text column")
  named = user_files.Columns(text='review', label='sentiment')
  assert user_files.read_file(str(path), named)[0] == ('sentence number 0', 'a', None)
  path.write_text(rows)  # headerless, the same rows read
  assert len(user_files.read_file(str(path))) == 30


def test_a_label_column_of_about_as_many_values_as_rows_is_refused(tmp_path):
  """More distinct labels than half the rows (from 20 rows): fewer than two
  examples a class, a column of texts or ids; the file, the column, the count and
  the field to set."""
  path = tmp_path / 'train.csv'
  path.write_text('id,text,label\n' + ''.join(f'{i},sentence number {i},{"ab"[i % 2]}\n'
                                              for i in range(30)))
  for read in (user_files.read_file, user_files.read_inputs):
    assert _refused(path, user_files.Columns(label='id'), read) == (
        f"{path}: the label column 'id' has 30 distinct values in 30 rows (e.g. '0'); "
        'expected a few classes, each with several examples: it holds texts or ids. '
        'Set config.data.files.label_column to the column of the classes (the header '
        "has ['id', 'text', 'label'])")
  assert len(user_files.read_file(str(path))) == 30
  jsonl = tmp_path / 'train.jsonl'
  jsonl.write_text(''.join(json.dumps({'text': f'sentence {i}', 'label': f'c{i // 2}'})
                           + '\n' for i in range(30)))  # 15 classes of 2: classes
  assert len(user_files.read_file(str(jsonl))) == 30
  jsonl.write_text(''.join(json.dumps({'text': f'sentence {i}', 'label': f'c{i}'})
                           + '\n' for i in range(30)))
  assert _refused(jsonl).startswith(f"{jsonl}: the label column 'label' has 30 distinct "
                                    'values in 30 rows')


def test_non_utf8_bytes_name_the_line_and_the_encoding_field_reads_them(tmp_path):
  path = tmp_path / 'train.tsv'
  path.write_bytes('label\ttext\npos\tun film\nneg\tun café triste\n'.encode('cp1252'))
  fix = ("expected utf-8 text: set config.data.files.encoding to the file's encoding "
         "(e.g. 'cp1252' or 'latin-1'), or convert the file to utf-8")
  assert _refused(path) == (f"{path}:3: not utf-8 text (byte 11 of the line, b'\\xe9': "
                            f'invalid continuation byte); {fix}')
  cp1252 = user_files.Columns(encoding='cp1252')
  assert user_files.read_file(str(path), cp1252)[1] == ('un café triste', 'neg', None)
  # Every reader of a user's own files takes it: JSONL, predict's inputs, text files.
  for name, content in (('t.jsonl', '{"text": "un café", "label": "pos"}\n'),
                        ('t.text', 'un film\nun café\n')):  # one text a line
    other = tmp_path / name
    other.write_bytes(content.encode('cp1252'))
    for read in ((user_files.read_inputs,) if name.endswith('.text') else
                 (user_files.read_file, user_files.read_inputs)):
      assert re.match(rf'{re.escape(str(other))}:\d: not utf-8 text',
                      _refused(other, read=read))
      assert 'un café' in str(read(str(other), cp1252))
  # A UTF-8 byte order mark (Excel's "CSV UTF-8") is no part of the first column.
  bom = tmp_path / 'bom.csv'
  bom.write_bytes('\ufefftext,label\nun café,pos\n'.encode('utf-8'))
  assert user_files.read_file(str(bom)) == [('un café', 'pos', None)]
  # The field: declared once, checked before anything runs, in the cache key when
  # it is not UTF-8 (the reading changes; runs before it read UTF-8).
  config = base.get_base_config()
  assert config.data.files.encoding == 'utf-8'
  config.data.files.encoding = 'utf8x'
  with pytest.raises(UserError, match=r"^config.data.files.encoding='utf8x' is not a "
                     r"text encoding Python knows \(did you mean 'utf_8'\?\)"):
    config_checks.check_fields(config, ['data.files.encoding'])
  assert user_files.Columns(encoding='UTF8').key() == user_files.Columns().key()
  assert user_files.Columns(encoding='cp1252').key() != user_files.Columns().key()


def _rows(pairs):
  return [user_files.tfds_base.Example(t, l, None) for t, l in pairs]


SENTENCES = [f'sentence number {w} is here' for w in
             ('one two three four five six seven eight nine ten eleven twelve thirteen '
              'fourteen fifteen sixteen seventeen eighteen nineteen twenty').split()]


@pytest.mark.parametrize('splits, message', [
    # text<TAB>label read as label<TAB>text: every "label" distinct.
    ({'train': [(str(i % 2), s) for i, s in enumerate(SENTENCES)]},
     r'train.tsv: the label column has 20 distinct values in 20 rows'),
    ({'train': [(str(i % 2), s) for i, s in enumerate(SENTENCES[:6])]},
     r'train.tsv: the text column is numeric in 6 of 6 rows'),
    ({'train': [(s, 'pos') for s in SENTENCES[:6]]},
     r"train.tsv: every train example has the label 'pos'"),
    ({'train': [(s, 'ab'[i % 2]) for i, s in enumerate(SENTENCES[:6])],
      'dev': [('fine', 'a'), ('good', 'c'), ('ok', 'c')]},
     r"dev.tsv: 2 examples have labels that .*train.tsv lacks \('c'\)"),
])
def test_files_that_look_misread_are_refused(splits, message):
  paths = {split: f'/data/{split}.tsv' for split in splits}
  with pytest.raises(UserError, match=message):
    user_files.check_splits({k: _rows(v) for k, v in splits.items()}, paths)
  # A good train split passes.
  user_files.check_splits({'train': _rows([(s, 'ab'[i % 2])
                                           for i, s in enumerate(SENTENCES)])},
                          {'train': '/data/train.tsv'})


def test_files_dataset_builds_from_config_and_encodes_tags(tmp_path, monkeypatch):
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  jsonl = tmp_path / 'train.jsonl'
  jsonl.write_text('\n'.join(json.dumps({'text': t, 'label': l, 'tags': g}) for t, l, g in [
      ('fly to boston', 'flight', 'O O B-city'), ('fares to denver', 'fare',
                                                  'O O B-city'),
      ('cheapest fare', 'fare', 'O O')]) + '\n')
  config = base.get_base_config().data
  config.name = 'files'
  config.files.train = str(jsonl)
  dataset = data_lib.load_dataset(config)
  assert dataset.label_names == ('fare', 'flight') and dataset.sizes() == {'train': 3}
  assert dataset.tag_names == ('B-city', 'O')
  np.testing.assert_array_equal(dataset.tags[:3], [1, 1, 0])
  # The line every run starts with (run/loop.py): classes and examples per split.
  assert dataset.summary() == ("dataset 'files': 2 classes ('fare', 'flight'); "
                               'examples: train 3; 2 tags')
  many = dataclasses.replace(dataset, num_classes=669,
                             label_names=tuple(f'c{i:03}' for i in range(669)))
  assert many.summary().startswith("dataset 'files': 669 classes ('c000', 'c001', "
                                   "'c002', 'c003', 'c004', 'c005', 'c006', 'c007', "
                                   "'c008', 'c009', ... 659 more); examples: train 3")
  config.files.train = ''
  with pytest.raises(UserError, match='config.data.files.train'):
    data_lib.load_dataset(config)


def test_a_train_file_alone_is_refused_before_training(tmp_path, monkeypatch):
  """Nothing to evaluate on: one line saying what to add (it used to end in an
  IndexError inside the eval plan)."""
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  from tests.conftest import small_config  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  with open(tmp_path / 'train.tsv', 'w', encoding='utf-8') as f:
    f.writelines(f'{label}\t{text}\n' for text, label in _sst2('train', 50))
  config = small_config()
  config.data.name = 'files'
  config.data.files.train = str(tmp_path / 'train.tsv')
  config.train.selection = 'last'
  with pytest.raises(UserError, match=r"dataset 'files' has a train split only: .*"
                     r'config.data.files.test'):
    pieces.build(config)


def _sst2(split, n):
  """The first ``n`` ``(sentence, label)`` pairs of the real SST-2 ``split``."""
  with open(os.path.join(SHARED_DATA, 'sst', 'stsa', f'stsa.binary.{split}'),
            encoding='utf-8') as f:
    return [(line[2:].strip(), line[0]) for line in f][:n]


@pytest.mark.slow
@pytest.mark.full  # a user's data trained: test_user_code.py; these files read: above
def test_glue_csv_and_headerless_sst2_files_train_end_to_end(tmp_path):
  """Real SST-2 sentences in the layouts people have them: GLUE's TSV (header,
  ``sentence<TAB>label``), a quoted CSV with a header, and headerless label<TAB>text."""
  with open(tmp_path / 'train.tsv', 'w', encoding='utf-8') as f:
    f.write('sentence\tlabel\n')
    f.writelines(f'{text} \t{label}\n' for text, label in _sst2('train', 600))
  with open(tmp_path / 'dev.csv', 'w', encoding='utf-8', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(['label', 'text'])
    writer.writerows((label, text) for text, label in _sst2('dev', 150))
  with open(tmp_path / 'test.tsv', 'w', encoding='utf-8') as f:
    f.writelines(f'{label}\t{text}\n' for text, label in _sst2('test', 150))
  out = run_launch('--config=experiments/demo.py:quick', f'--workdir={tmp_path / "run"}',
                   '--config.data.name=files', '--config.seeds=(1,2)',
                   f'--config.data.files.train={tmp_path / "train.tsv"}',
                   f'--config.data.files.dev={tmp_path / "dev.csv"}',
                   f'--config.data.files.test={tmp_path / "test.tsv"}',
                   '--config.train.num_epochs=1', '--config.train.progress=False',
                   env={'SEEDSWEEP_TFDS_DIR': str(tmp_path / 'tfds')})
  assert out.returncode == 0, out.stderr[-3000:]
  # Nothing is downloaded: no TFDS "Downloading and preparing" lines or warnings.
  assert 'preparing dataset seedsweep_files once' in out.stdout  # through print_fn
  assert ("dataset 'files': 2 classes ('0', '1'); examples: train 600, dev 150, "
          'test 150') in out.stdout
  assert 'Downloading' not in out.stderr + out.stdout, out.stderr
  assert 'dataset_info' not in out.stderr, out.stderr
  results = json.loads((tmp_path / 'run' / 'results.json').read_text())
  assert len(results['metrics']['test_accuracy']) == 2
  assert results['provenance']['data']['sizes'] == {'train': 600, 'dev': 150,
                                                    'test': 150}
  assert results['provenance']['data']['classes'] == ['0', '1']


def test_swapped_columns_stop_the_run_before_training(tmp_path, monkeypatch):
  """The common ``text<TAB>label`` order without a header used to train on the
  labels as text (0 % accuracy, no warning)."""
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  with open(tmp_path / 'train.tsv', 'w', encoding='utf-8') as f:
    f.writelines(f'{text}\t{label}\n' for text, label in _sst2('train', 300))
  config = base.get_base_config().data
  config.name = 'files'
  config.files.train = str(tmp_path / 'train.tsv')
  with pytest.raises(UserError, match=r'train.tsv: the label column has 300 distinct '
                     r'values in 300 rows'):
    data_lib.load_dataset(config)
