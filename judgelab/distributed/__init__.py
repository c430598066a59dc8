"""Judge runs beyond one machine: :class:`RayExecutor` runs ``judgelab.run(..., executor=...)`` on Ray actors.

executor (the driver: blocks, partitions, progress, the cache merge), worker (one actor: blocks through
judgelab's engine), ledger (the run's one budget and progress count, an actor), partitions (the Parquet
partitions of a run folder and their manifest), data (a rubric as map steps of a Ray Data pipeline in front
of an OpenAI-compatible endpoint: :func:`judgelab.distributed.data.request_rows`, ``judgment_rows``,
``assemble``). Ray itself is imported only when an executor is built:
without it, ``RayExecutor(...)`` says how to install it.
"""

from judgelab.distributed.executor import BlocksLostError, RayExecutor, RayNotInstalledError
from judgelab.distributed.partitions import PartitionsError

__all__ = ["BlocksLostError", "PartitionsError", "RayExecutor", "RayNotInstalledError"]
