"""Exploration engines. They know the Model and Property contracts, never Kafka or z3."""
from __future__ import annotations

import importlib

#: explorer name -> "module:function"; every engine takes (model, **options) and returns
#: a CheckResult. Spark is imported lazily so local runs never pay for PySpark.
ENGINES = {
    "bfs": "kmc.explorers.bfs:bfs",
    "dfs": "kmc.explorers.dfs:dfs",
    "simulate": "kmc.explorers.simulate:simulate",
    "spark": "kmc.explorers.spark:spark_bfs",
}


def engine(name: str):
    mod, fn = ENGINES[name].split(":")
    return getattr(importlib.import_module(mod), fn)
