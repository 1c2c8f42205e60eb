"""The pure-JAX engine: no file is read or written here.

* :mod:`~seedsweep.engine.rngs`           per-seed keys from ``jax.random.key(seed)`` alone
* :mod:`~seedsweep.engine.state`          the seed-stacked train state and its initialisation
* :mod:`~seedsweep.engine.optimizers`     optax optimisers and L2 from config
* :mod:`~seedsweep.engine.embedding_rows` the embedding table's sparse row update
* :mod:`~seedsweep.engine.objectives`     losses and metrics (``conlleval``: slot F1)
* :mod:`~seedsweep.engine.steps`          the jitted seed-parallel train/eval/select steps
* :mod:`~seedsweep.engine.hosts`          stacked results gathered across hosts
"""
