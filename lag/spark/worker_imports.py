"""The Python workers' environment: cheap per-task import-cache invalidation (CPython gh-103200).

PySpark's worker calls ``importlib.invalidate_caches()`` before every task; on Python 3.10 and
3.11 that re-reads every zip archive on the worker's path. :func:`lazy_zip_invalidation` builds
the function a ``mapInArrow`` function calls first in each worker to make that cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["lazy_zip_invalidation"]


def lazy_zip_invalidation() -> Callable[[], bool]:
    """A function that makes ``importlib.invalidate_caches`` cheap in a Python 3.10-3.11 worker.

    PySpark's worker calls ``importlib.invalidate_caches()`` before every task
    (``pyspark.worker_util.setup_spark_files``). On Python 3.10 and 3.11 each ``zipimporter``
    then re-reads its archive's whole central directory (CPython gh-103200, made lazy in 3.12),
    and a worker holds about sixteen of them (``pyspark.zip`` and its packages, the py4j zip,
    Spark's core jar): measured about 0.14 CPU-s per task, 70 % of the worker's CPU in the
    merge's stage. The returned function, called once per worker process, replaces
    ``zipimport.zipimporter.invalidate_caches`` with one that re-reads an archive only when its
    size or modification time changed since that importer last read it (a changed archive is
    still re-read); the importers the worker holds are stamped as read, since the
    worker re-read them all just before the task that patches. It does nothing on Python 3.12
    and later or outside a PySpark worker (no ``pyspark.worker`` module loaded), and returns
    whether it patched. The function is nested, so Spark pickles it by value with the
    ``mapInArrow`` function that calls it (:func:`lag.job.asof_join.merge_as_of_join`'s forward
    fill): executors need no copy of this package.
    """

    def make_lazy() -> bool:
        import os
        import sys
        import zipimport

        importer: Any = zipimport.zipimporter
        if (
            sys.version_info >= (3, 12)
            or "pyspark.worker" not in sys.modules  # not a PySpark worker: leave it alone
            or getattr(importer, "_lag_lazy_invalidation", False)
        ):
            return False
        reload_directory = importer.invalidate_caches

        def stamp(archive: str) -> tuple[int, int] | None:
            try:
                status = os.stat(archive)
            except OSError:
                return None
            return status.st_mtime_ns, status.st_size

        def invalidate_caches(self: Any) -> None:
            now = stamp(self.archive)
            if now is None or self.__dict__.get("_lag_stamp") != now:
                reload_directory(self)
                self.__dict__["_lag_stamp"] = now

        importer.invalidate_caches = invalidate_caches
        importer._lag_lazy_invalidation = True
        # The worker re-read every archive just before this task: stamp the importers it has.
        for cached in list(sys.path_importer_cache.values()):
            if isinstance(cached, importer):
                cached.__dict__["_lag_stamp"] = stamp(cached.archive)
        return True

    return make_lazy
