"""The engine: items x conditions x repeats -> requests -> model calls -> the judgments table.

runner (``arun``/``run``/``estimate``), grid (``run_grid``/``arun_grid``), rows (the one request+reply
-> rows builder and the request plan), config (the frozen :class:`~judgelab.engine.config.RunConfig`),
batch (provider batch APIs), reparse (parse stored raw outputs again), cache, budget, items, logprobs,
sync (notebook-safe sync wrappers). The public names are re-exported by :mod:`judgelab` (``judgelab.run``, ...); the modules
are imported on first use, because litellm takes seconds to import.
"""

__all__: list[str] = []
