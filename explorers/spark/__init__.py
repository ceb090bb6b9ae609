"""The Spark explorer: level-synchronous BFS with hash partitioning (docs/spark.md).

PySpark is imported only when a check runs, so local explorers never pay for it.
"""
from kmc.explorers.spark.explore import spark_bfs  # noqa: F401
