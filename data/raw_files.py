"""The raw files of the registered datasets: their layout and recorded sha256.

One setting says where raw data lives, for every builder and command: the environment
variable ``SEEDSWEEP_DATA`` (``launch.py --data_dir`` and ``python -m seedsweep.data --data_dir``
set it). It names a folder with the layout of the project's offline copy::

  $SEEDSWEEP_DATA/sst/trees/{train,dev,test}.txt
  $SEEDSWEEP_DATA/trec/{train_5500.label,TREC_10.label}
  $SEEDSWEEP_DATA/mr/{rt-polarity.neg,rt-polarity.pos}
  $SEEDSWEEP_DATA/subj/{plot.tok.gt9.5000,quote.tok.gt9.5000}
  $SEEDSWEEP_DATA/imdb/aclImdb_labeled.tar.gz      (or the original aclImdb_v1.tar.gz)
  $SEEDSWEEP_DATA/atis/slotgated/{train,valid,test}/{seq.in,seq.out,label}
  $SEEDSWEEP_DATA/atis/jointslu/{atis.train,atis.test,atis-2.train,atis-2.dev}.w-intent.iob

Unset, builders download the files from their original addresses (each reader's
``DOWNLOADS``) and assemble the same layout (:mod:`seedsweep.inputs.raw`).

Every raw file of that layout has a recorded sha256 (:data:`RECORDED`, the offline
copy's ``SHA256SUMS``). Before a dataset is prepared, its files are hashed and compared
with the record; a mismatch is an error unless ``config.data.verify_checksums`` is
False. A new dataset's raw files are recorded here.
"""
from typing import Dict

# sha256 of every raw file, relative to the data root (= ../shared/data/SHA256SUMS).
RECORDED: Dict[str, str] = {
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
    'imdb/aclImdb_labeled.tar.gz':
        '303c3113354d16f21cbd94d7392f82c924ff8af86e67f292bd3a56cf6cadd37f',
    'mr/rt-polarity.neg':
        '4af43bf489620b498a0852c5a8c6a535155dec7985fdfea782b8f7756b957ccc',
    'mr/rt-polarity.pos':
        'd79ef14009bbf87cd6be21f91c3ea1a3cbcb73b34dfb4231aef7bbcd7677abc4',
    'sst/trees/dev.txt':
        '0e9336aed6e4730e19f58d00a77b3f0297efdb755f7b5e598c98a05e3f97ea40',
    'sst/trees/test.txt':
        '6e54806dee95cf80cd918e7dfb3f6770f6df24bf826f289a4d1f709e1c8f6761',
    'sst/trees/train.txt':
        'e2f3f41b0b1e6d4dddc0effe3bfc2d27ed8928079aa9a03d652311614fc5feb7',
    'subj/plot.tok.gt9.5000':
        '5ddc9b44dc60d64d651347fcd7bdd489b0c70661e3f768215c16eea36f51204a',
    'subj/quote.tok.gt9.5000':
        '73a2dcf8dc3cbcc7f068a70ef9f021c86b2a8e4dac81566b7fd015b3e938f2c5',
    'trec/TREC_10.label':
        '033f22c028c2bbba9ca682f68ffe204dc1aa6e1cf35dd6207f2d4ca67f0d0e8e',
    'trec/train_5500.label':
        '9e4c8bdcaffb96ed61041bd64b564183d52793a8e91d84fc3a8646885f466ec3',
}
