"""One run and its files: build it, train and resume it, evaluate and verify it.

* :mod:`~seedsweep.run.prepare`     one door: the config checked and the workdir read once
* :mod:`~seedsweep.run.pieces`      the run's values (data, members, programs,
  provenance), each built once from the config
* :mod:`~seedsweep.run.epoch`       an epoch's phases as functions of those values:
  ``train_steps``, ``evaluate``, ``keep_best``, ``run_epoch`` (train, verify)
* :mod:`~seedsweep.run.loop`        ``train`` and ``evaluate`` (epochs, resume, results)
* :mod:`~seedsweep.run.workdir`     a workdir read: config.json, results, checkpoints
* :mod:`~seedsweep.run.verify`      ``--mode=verify``: re-run epochs, compare bitwise
* :mod:`~seedsweep.run.checkpoints`, :mod:`~seedsweep.run.outputs` the workdir's files
* :mod:`~seedsweep.run.provenance`  what produced a result (the determinism record)
* :mod:`~seedsweep.run.runtime`     process settings (the pinned XLA:CPU thread pool)
* :mod:`~seedsweep.run.describe`, :mod:`~seedsweep.run.timing`
"""
