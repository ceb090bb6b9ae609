"""One embedded local[2] SparkContext per test module of this directory."""
import pytest


@pytest.fixture(scope="module")
def sc():
    from kmc.explorers.spark.session import shutdown_gateway, spark_context

    with spark_context(None, 2) as context:
        yield context
    shutdown_gateway()  # leave no JVM running behind this module
