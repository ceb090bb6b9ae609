"""What a model cannot check soundly it says (``Model.caveats``): every run shows each
line as a warning, on standard error and in its JSON."""
import json

import pytest

from kmc import api
from kmc.cli import main

MODEL = '''
from kmc.model.contract import Model


class Counter(Model):
    name = "counter-with-caveat"

    def init_states(self):
        return [0]

    def actions(self, s):
        return ["inc"] if s < 3 else []

    def next_state(self, s, a):
        return s + 1

    def properties(self):
        return []

    def caveats(self):
        return ("Bounded: the counter stops at 3, so nothing above 3 is checked",)


def make():
    return Counter()
'''


@pytest.fixture
def model_file(user_model_file):
    return user_model_file(MODEL, "caveat_model")


def test_the_api_lists_a_models_caveats_as_warnings(model_file):
    r = api.check(f"{model_file}.py:make")
    assert r.extra["warnings"] == ["Bounded: the counter stops at 3, so nothing above 3 "
                                   "is checked"]
    assert r.unique_states == 4


def test_the_command_line_prints_the_caveat(model_file, capsys):
    code = main(["check", f"{model_file}.py:make", "--json"])
    out, err = capsys.readouterr()
    (line,) = [x for x in err.splitlines() if x.startswith("kmc: warning: ")]
    assert "the counter stops at 3" in line
    assert json.loads(out)["warnings"] == [line[len("kmc: warning: "):]]
    assert code == json.loads(out)["exit_code"] == 0


def test_the_kafka_models_check_everything_they_declare():
    """The ZooKeeper plane checks NoAcknowledgedLoss with two crashes and two records
    (records carry their leader epoch: ``model.kafka.zk.epochs``), the KRaft plane runs
    crashes with failovers (a lost registration is sent again): no caveat is left."""
    zk = api.build("failover-mid-delete", "zk-3.9", {"crashes": 2, "records": 2})
    assert zk.caveats() == () and "NoAcknowledgedLoss" in {p.name for p in zk.properties()}
    assert api.build("failover-mid-delete", params={"plane": "kraft"}).caveats() == ()
