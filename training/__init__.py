"""The seed-parallel training engine.

* :mod:`training.rngs`       per-seed keys, derived from ``jax.random.key(seed)`` alone
* :mod:`training.optimizers` optax optimisers and L2 from config
* :mod:`training.objectives` losses and metrics
* :mod:`training.state`      the seed-stacked train state and its initialisation
* :mod:`training.steps`      the jitted seed-parallel train / eval / selection steps
* :mod:`training.loop`       epochs, resume, outputs (``train`` and ``evaluate`` modes)
* :mod:`training.checkpoints`, :mod:`training.outputs`, :mod:`training.describe`
"""
