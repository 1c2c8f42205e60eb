"""The bottom layer beside :mod:`seedsweep.errors`: configs and what is done to them.

* :mod:`seedsweep.config.base`   the base config every experiment file overrides
  (every field and its default) and the helpers experiment files share
* :mod:`seedsweep.config.checks` validation before anything is built; JSON form
* :mod:`seedsweep.config.keys`   dotted keys (``model.hidden``): get, set, format
"""
