"""A level's Spark job, built with few py4j calls.

Through PySpark's API (``mapPartitionsWithIndex(...).partitionBy(...)``) one level's job
took ~80 py4j round trips: a class lookup before every constructor, the environment
and the include list converted to Java entry by entry, the partition-function wrapper,
call-site bookkeeping. A TwoPhase rm=8 run made ~1,470 of them (541 releasing JVM
objects), 0.14-0.18 CPU s of the JVM's py4j threads and ~3.3 ms of the driver's per job,
all of it during the tasks of the level before (the job is submitted ahead), where on
local[2] it competes with them for the two cores. ``LevelJobs`` builds the same JVM
objects PySpark builds — a PythonRDD running the level's task, a PairwiseRDD keyed by
owner, one shuffle with a PythonPartitioner — keeping the unchanging ones (classes,
environment, includes, partitioner) from the first job.

The task's records leave the Python worker as PySpark's ``partitionBy`` sends them (an
8-byte owner, then a pickled one-record batch), but one at a time, as the task yields
them, where ``partitionBy`` held them all until the task ended.
"""
from __future__ import annotations

import contextlib
import struct
import threading
import time
import uuid


def keyed(task, dumps):
    """The level's task, its (owner, record) pairs sent as PairwiseRDD reads them: the
    owner as a big-endian 8-byte integer (pyspark.serializers.pack_long)."""
    pack = struct.pack

    def run(split, iterator):
        for pid, rec in task(split, iterator):
            yield pack("!q", pid)
            yield dumps([(pid, rec)])
    return run


class LevelJobs:
    """Builds each level's RDD and its shuffle (see the module docstring)."""

    def __init__(self, sc, nparts):
        from py4j.java_collections import ListConverter, MapConverter
        from pyspark.serializers import BatchedSerializer, NoOpSerializer

        self.sc = sc
        python = sc._jvm.org.apache.spark.api.python
        self._function, self._rdd = python.SimplePythonFunction, python.PythonRDD
        self._pairwise, self._value_of_pair = python.PairwiseRDD, python.PythonRDD.valueOfPair
        self._partitioner = python.PythonPartitioner(nparts, 0)
        self._threshold = python.PythonUtils.getBroadcastThreshold(sc._jsc)
        client = sc._gateway._gateway_client
        self._env = MapConverter().convert(sc.environment, client)
        self._includes = ListConverter().convert(sc._python_includes, client)
        self._out = NoOpSerializer()  # the task's output is bytes already (``keyed``)
        self._records = sc._unbatched_serializer
        self._batched = BatchedSerializer(self._records)
        # Java serialization for every shuffle of the run (``java_serialized`` says why)
        self._serializer = sc._jvm.org.apache.spark.serializer.JavaSerializer(
            sc._jsc.sc().conf())
        self._submit = sc._jsc.sc().submitMapStage

    def launch(self, parent, task):
        """The RDD of ``task`` run on every partition of ``parent`` and shuffled to its
        owners, and the job of its map side, submitted (a JVM FutureAction)."""
        from pyspark import RDD
        from pyspark.serializers import CloudPickleSerializer

        sc = self.sc
        command = (keyed(task, self._records.dumps), None, parent._jrdd_deserializer,
                   self._out)
        pickled = CloudPickleSerializer().dumps(command)
        if len(pickled) > self._threshold:  # as PySpark does: the command as a broadcast
            pickled = CloudPickleSerializer().dumps(sc.broadcast(pickled))
        broadcasts = [b._jbroadcast for b in sc._pickled_broadcast_vars]
        sc._pickled_broadcast_vars.clear()
        function = self._function(bytearray(pickled), self._env, self._includes,
                                  sc.pythonExec, sc.pythonVer, broadcasts,
                                  sc._javaAccumulator)
        source = getattr(parent, "_kmc_rdd", None) or parent._jrdd.rdd()
        pairs = self._pairwise(self._rdd(source, function, False, False))
        shuffled = pairs.asJavaPairRDD().partitionBy(self._partitioner)
        values = self._value_of_pair(shuffled)
        out = RDD(values, sc, self._batched)
        out._kmc_rdd = values.rdd()  # the next level's source, without another call
        jshuffled = shuffled.rdd()
        jshuffled.setSerializer(self._serializer)
        return out, self._submit(jshuffled.dependencies().head())

    def java_serialized(self, rdd):
        """Set the shuffle behind ``rdd`` (a ``partitionBy`` result no job has run yet:
        blocks read back from a checkpoint) to Java serialization, as ``launch`` sets
        every level's.

        Spark picks Kryo for a shuffle of PySpark's (long, bytes) records, and each task
        gets its own copy of the serializer, so each task built a Kryo instance and
        registered Scala's classes with it, twice (writing and reading): 54% of the
        executor threads' samples in a Java Flight Recording of TwoPhase rm=3 with every
        level on Spark. A handful of large byte arrays per task needs neither Kryo's
        speed nor its set-up: Java serialization writes them as they are."""
        # the values of the ShuffledRDD (PythonRDD.valueOfPair)
        shuffled = rdd._jrdd.rdd().dependencies().head().rdd()
        if shuffled.getClass().getSimpleName() != "ShuffledRDD":
            raise RuntimeError("placed blocks are not a fresh shuffle")
        shuffled.setSerializer(self._serializer)


@contextlib.contextmanager
def job_group(sc, what):
    """Jobs submitted in the block join a fresh job group (yielded), so they can be
    cancelled by it: a time limit, a dropped job ahead."""
    group = f"kmc-{uuid.uuid4().hex}"
    sc.setJobGroup(group, what, interruptOnCancel=True)
    try:
        yield group
    finally:
        sc._jsc.clearJobGroup()


@contextlib.contextmanager
def cancel_at(sc, deadline, group, fired):
    """Cancel the jobs of the job group ``group`` at ``deadline`` (None: never),
    setting ``fired`` (a threading.Event), while the block runs."""
    if deadline is None:
        yield
        return

    def cancel():
        fired.set()
        sc.cancelJobGroup(group)
    timer = threading.Timer(max(0.0, deadline - time.perf_counter()), cancel)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
