"""Search files (``seedsweep.searches``): each ``search(arg)`` returns a
:class:`seedsweep.sweep.space.Search`; ``seedsweep --search=searches/X.py[:arg]``."""
